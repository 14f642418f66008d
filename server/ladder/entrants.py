"""The ladder's records of who is on it and what is being played: an entrant, a running match,
and two small helpers of the service's tasks (`server.ladder.service`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import trio

from server.accounts import Account
from server.ladder.duplicate import TableResult
from server.peers import Peer
from server.table import Table
from server.table_commands import TableError


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


class closed_table_ok:
    """Suppress `TableError` from a table that closed under us (it is over either way)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: object, tb: object) -> bool:
        return isinstance(exc, TableError)


async def first_of(*events: trio.Event) -> None:
    """Return as soon as any of `events` is set."""
    async with trio.open_nursery() as nursery:

        async def wait(event: trio.Event) -> None:
            await event.wait()
            nursery.cancel_scope.cancel()

        for event in events:
            nursery.start_soon(wait, event)
