"""Crash recovery: a game rebuilt from what the store holds, by replaying it through the engine.

Pure: the stored deals and actions in, the game as it was after the last committed action out. A
table that recovers resumes from exactly there (nobody was told anything the store does not hold,
since the table tells only after it commits), and replays what was held back: the seed of a deal
still in play stays secret until that deal ends, as if nothing had happened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from engine.actions import action_from_dict
from engine.events import Event
from engine.game import Game, Phase
from server.storage.rows import StoredGame


@dataclass
class Recovered:
    """What a table needs besides the game itself to go on where it stopped."""

    game_id: int
    actions: int  # actions persisted (the next one's `seq`)
    deals: int  # deals persisted (the next one's number)
    seed_in_play: bytes = b""  # the seed of a deal not yet over (revealed when it ends)
    hand_in_play: int = 0
    banks: dict[int, int] = field(default_factory=dict)  # seat -> bank left after its last action


class ReplayObserver(Protocol):
    """Who follows a replay step by step (a delayed table's spectators, `server.table`)."""

    def dealing(self, seed: bytes) -> None:
        """A deal is about to be dealt from `seed` (the game is as it was before it)."""
        ...

    def told(self, events: list[Event]) -> None:
        """A deal or an action has been replayed: its events (the game is as it is after it)."""
        ...


def replay(game: Game, stored: StoredGame, observer: ReplayObserver | None = None) -> Recovered:
    """Replay `stored` into `game` (fresh, from `new_game` with the table's ruleset), telling
    `observer` (if any) each step as the table told it when it was played.

    Raises `EngineError` (or `ValueError`/`KeyError` for a malformed record) if the record does
    not replay; the table is then not opened and the game stays as the store has it.
    """
    deals = sorted(stored.hands, key=lambda h: h.hand_no)
    dealt = 0

    def deal(seed: bytes) -> None:
        if observer is not None:
            observer.dealing(seed)
        events = game.deal(seed)
        if observer is not None:
            observer.told(events)

    for action in stored.actions:
        while dealt < len(deals) and deals[dealt].first_seq <= action.seq:
            deal(bytes.fromhex(deals[dealt].seed))
            dealt += 1
        events = game.apply(action_from_dict(action.action))
        if observer is not None:
            observer.told(events)
    while dealt < len(deals):
        deal(bytes.fromhex(deals[dealt].seed))
        dealt += 1
    recovered = Recovered(game_id=stored.id, actions=len(stored.actions), deals=len(stored.hands))
    if deals and game.phase not in (Phase.DEALING, Phase.GAME_OVER):
        recovered.seed_in_play = bytes.fromhex(deals[-1].seed)
        recovered.hand_in_play = game.hand_number
    players = game.ruleset.players
    for action in stored.actions:
        if action.bank_left_ms is not None and 0 <= action.seat < players:
            recovered.banks[action.seat] = action.bank_left_ms
    return recovered
