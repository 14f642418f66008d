"""The ladder's records of who is on it and what is being played: an entrant and a running match
(`server.ladder.service`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from server.accounts import Account
from server.ladder.duplicate import TableResult
from server.ladder.scheduler import MATCH_SEATS
from server.peers import Peer
from server.table import Table


@dataclass(eq=False)
class Entrant:
    """One account on the ladder: a connection of it, or a house bot (`peer` None)."""

    account: Account
    peer: Peer | None
    house_spec: str | None = None
    owner: str = "house"
    busy: bool = False
    leaving: bool = False
    benched_until: float = 0.0

    @property
    def key(self) -> str:
        return str(self.account.id)


@dataclass(eq=False)
class RunningMatch:
    """One match of a board set while it is played: its row, its four, its table, its result."""

    match: str
    seated: list[Entrant]
    table: Table | None = None
    result: TableResult | None = None  # set once its game is over
    forfeits: dict[int, str] = field(default_factory=dict)  # account id -> why


def waiting_note(entrants: list[Entrant]) -> str:
    """What a newly entered account is told about its wait (the `ok.note` of `ladder_enter`), from
    the connected entrants, itself included.

    A lone author on a server without house bots would otherwise wait with no word of why: a
    match needs four entrants, and only house bots are always there."""
    others = sum(1 for e in entrants if not e.leaving) - 1
    if others + 1 >= MATCH_SEATS:
        return f"waiting for a match; {others} other entrants are on the ladder"
    missing = MATCH_SEATS - 1 - others
    present = {0: "no other entrant is", 1: "1 other entrant is"}.get(
        others, f"{others} others are"
    )
    note = (
        f"waiting for {missing} more entrant{'s' if missing > 1 else ''}: a match needs "
        f"{MATCH_SEATS} and {present} on the ladder"
    )
    if not any(e.house_spec is not None for e in entrants):
        # `ok.note` holds at most 200 characters (docs/protocol.md): this stays under 170.
        note += (
            " (no house bots here: the host adds them with `spades-server ladder add-house-bots`)"
        )
    return note
