"""A table run by the real engine in the test itself, telling one seat what the server would.

It follows the server's recipe (server/table.py): a commitment before each deal, every engine event
as `event.for_seat(seat)` through `protocol.wire.game_event` (with the Hearts pass direction on
`hand_dealt`), then `turn` (who must act) to everyone, `your_turn` with the legal actions, and the seed
after the hand. Other seats play their first legal action.
"""

from __future__ import annotations

import dataclasses

from engine.actions import action_to_dict
from engine.deal import commitment
from engine.events import Event
from engine.game import Game, Phase, new_game
from engine.ruleset import Ruleset
from protocol import messages as m
from protocol.schema import from_map
from protocol.types import Action
from protocol.wire import game_event


class EngineTable:
    def __init__(self, ruleset: Ruleset, seat: int | None = 0, table: str = "t1") -> None:
        self.game: Game = new_game(ruleset)
        self.ruleset = ruleset
        self.seat = seat
        self.table = table
        self.outbox: list[m.Message] = []
        self.seeds: list[bytes] = []
        view = self.game.view(seat) if seat is not None else self.game.spectator_view()
        self.outbox.append(
            m.Snapshot(table=table, version=self.game.version, seat=seat, view=view.to_dict())
        )

    def _tell(self, events: list[Event]) -> None:
        for event in events:
            shown = event.for_seat(self.seat)
            if shown is not None:
                message = game_event(self.table, self.game.version, shown)
                direction = getattr(self.game, "pass_direction", None)
                if isinstance(message, m.HandDealt) and direction is not None:
                    message = dataclasses.replace(message, pass_direction=direction)
                self.outbox.append(message)
            if event.kind == "hand_scored":
                data = event.to_dict()
                self.outbox.append(
                    m.DealSeed(
                        table=self.table,
                        version=self.game.version,
                        hand_number=data["hand_number"],
                        seed=data["seed"],
                    )
                )
        acting = sorted(set(self.game.to_act()))
        if acting and not self.game.is_over:
            self.outbox.append(
                m.Turn(
                    table=self.table,
                    version=self.game.version,
                    to_act=acting,
                    deadline_ms=[30000] * len(acting),
                    bank_ms=[0] * len(acting),
                )
            )

    def deal(self, seed: bytes) -> None:
        self.seeds.append(seed)
        self.outbox.append(
            m.DealCommitment(
                table=self.table,
                version=self.game.version,
                hand_number=self.game.hand_number + 1,
                commitment=commitment(seed),
            )
        )
        self._tell(self.game.deal(seed))

    def legal(self) -> list[Action]:
        assert self.seat is not None
        return [
            from_map(Action, action_to_dict(a, with_seat=False))
            for a in self.game.legal_actions(self.seat)
        ]

    def others_until_mine(self) -> bool:
        """Let the other seats act until ours is to act (True) or the hand ends (False)."""
        for _ in range(500):
            if self.game.phase is Phase.DEALING or self.game.is_over:
                return False
            acting = self.game.to_act()
            if self.seat in acting:
                self.outbox.append(
                    m.YourTurn(
                        table=self.table,
                        version=self.game.version,
                        seat=self.seat,
                        legal=self.legal(),
                        deadline_ms=30000,
                    )
                )
                return True
            other = acting[0]
            self._tell(self.game.apply(self.game.legal_actions(other)[0]))
        raise AssertionError("the hand did not come back to our seat")

    def act(self, action: dict[str, object]) -> None:
        from engine.actions import action_from_dict

        assert self.seat is not None
        self._tell(self.game.apply(action_from_dict(action, seat=self.seat)))

    def take(self) -> list[m.Message]:
        out, self.outbox = self.outbox, []
        return out
