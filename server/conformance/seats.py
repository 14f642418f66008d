"""The kit's own players at a bot's table: a connection each, acting on every `your_turn` with a
scripted choice, after a scripted pause (pinging meanwhile, so a short idle timeout does not let
them go), until the game is over."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import trio

from bots.conformance.target import Player
from protocol.messages import Act, GameOver, Ok, Ping, TableClosed, YourTurn
from protocol.types import Action, ActionKind

Choose = Callable[[YourTurn], Action]
Pause = Callable[[YourTurn], float]


def first_legal(turn: YourTurn) -> Action:
    return turn.legal[0]


def blind_nil_first(turn: YourTurn) -> Action:
    """Bid blind nil when offered (so the partner must exchange), else the first legal action."""
    for action in turn.legal:
        if action.kind is ActionKind.BID and action.tricks == 0 and action.blind:
            return action
    return turn.legal[0]


def no_pause(turn: YourTurn) -> float:
    return 0.0


@dataclass
class KitSeat:
    """Plays `player`'s seat at `table` until the game is over (or the table closes)."""

    player: Player
    table: str
    choose: Choose = first_legal
    pause: Pause = no_pause
    acted: list[YourTurn] = field(default_factory=list)
    applied: int = 0  # acts the server answered `ok`
    changed: trio.Event = field(default_factory=trio.Event)
    ping_every: float = 0.5

    async def run(self) -> None:
        client = self.player.client
        answered: set[int] = set()
        asked: set[int] = set()
        while True:
            with trio.move_on_after(self.ping_every) as quiet:
                message = await client.receive()
            if quiet.cancelled_caught:
                await client.send(Ping())
                continue
            if message is None:
                return
            if isinstance(message, Ok) and message.id in asked:
                asked.discard(message.id)
                self.applied += 1
                self._changed()
                continue
            if isinstance(message, GameOver | TableClosed) and message.table == self.table:
                return
            if not isinstance(message, YourTurn) or message.table != self.table:
                continue
            if message.version in answered:
                continue
            wait = self.pause(message)
            if wait > 0:
                await self._wait_pinging(wait)
            answered.add(message.version)
            rid = await client.send(
                Act(table=self.table, version=message.version, action=self.choose(message))
            )
            if rid is not None:
                asked.add(rid)
            self.acted.append(message)
            self._changed()

    def _changed(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    async def _wait_pinging(self, seconds: float) -> None:
        """Sit on the decision for `seconds`, pinging so the server does not take us for gone."""
        deadline = trio.current_time() + seconds
        while (left := deadline - trio.current_time()) > 0:
            await trio.sleep(min(self.ping_every, left))
            await self.player.client.send(Ping())
