"""The narrow interfaces the server's parts are handed by the composition root (`server.app`).

Each part gets only what it may call: the ladder a `TableHost` (open its tables, hand them
commands), a session a `LadderDesk` (ask the ladder, say a connection closed). None of them holds the
`Server` itself, so none can reach past what it is given, and no part imports another's module to
find it (design.md, "A composition root, not a god object").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from protocol.messages import (
    CreateTable,
    EventCancel,
    EventCreate,
    EventPlay,
    EventRecords,
    EventRegister,
    Events,
    EventShow,
    EventWithdraw,
    LadderEnter,
    LadderLeave,
    LadderMatches,
    LadderRecords,
    LadderShow,
    LadderStandings,
    Message,
)
from protocol.types import TableInfo, TableStatus
from server.accounts import Account
from server.listing import LISTING_PAGE
from server.peers import Peer
from server.table import Table
from server.table_commands import Command, TableConfig
from server.table_policy import TablePolicy

LadderRequest = (
    LadderEnter | LadderLeave | LadderStandings | LadderMatches | LadderShow | LadderRecords
)
EventRequest = (
    EventCreate
    | Events
    | EventShow
    | EventRegister
    | EventWithdraw
    | EventPlay
    | EventCancel
    | EventRecords
)


class TableHost(Protocol):
    """Where tables live: what the ladder may do with the lobby."""

    def new_table(self, config: TableConfig, policy: TablePolicy | None = None) -> Table:
        """A table of this server, not yet open."""
        ...

    async def adopt(self, table: Table, *, creator: int | None = None) -> None:
        """Store, list and start `table`; raises `StorageError` with nothing opened."""
        ...

    async def submit(self, table: Table, command: Command) -> None:
        """Queue a command for the table's task; raises `TableError` if it has closed."""
        ...

    def submit_later(self, table: Table, command: Command) -> bool:
        """Queue a command without waiting (from code that may not wait); False if refused
        (the table's backlog is full)."""
        ...

    def free_table_slots(self) -> int:
        """How many more tables may open now."""
        ...


class TableRef(Protocol):
    """A table as a session holds it: one of this server's (`Table`), or, in a cluster, one
    another server runs (`server.cluster.remote.RemoteTable`, whose commands are forwarded)."""

    @property
    def table_id(self) -> str: ...


class LobbyDesk(TableHost, Protocol):
    """What a session may do in the lobby."""

    def get(self, table_id: str) -> TableRef:
        """The open table with this id; raises `TableError` (no_such_table) otherwise."""
        ...

    def find(
        self,
        table_id: str,
        code: str | None = None,
        network: str | None = None,
        *,
        account_id: int | None = None,
    ) -> TableRef:
        """The table, if it exists and `code` opens it (wrong codes from `network` slowed down)
        or `account_id` holds a seat there; raises `TableError` otherwise."""
        ...

    async def submit(self, table: TableRef, command: Command) -> None:
        """Queue a command for the table (forwarded, for another server's); raises `TableError`
        if it has closed."""
        ...

    def submit_later(self, table: TableRef, command: Command) -> bool:
        """Queue a command without waiting; False if refused (the table's backlog is full)."""
        ...

    def listing(
        self,
        game: str | None,
        status: TableStatus | None,
        open_seats: bool,
        *,
        cursor: str | None = None,
        limit: int = LISTING_PAGE,
    ) -> tuple[list[TableInfo], str | None]:
        """A page of the matching tables that fits a frame, and the next page's cursor."""
        ...

    async def create(
        self, request: CreateTable, creator: Account, network: str | None = None
    ) -> Table:
        """Open a table (counted for `creator` and `network`); raises `TableError` with nothing
        opened."""
        ...

    async def resume(self, peer: Peer, account: Account) -> None:
        """Give the account's seats that no live connection holds back to `peer`."""
        ...

    def listen(self, peer: Peer, game: str | None) -> None:
        """`peer` hears lobby notices for tables of `game` (every game when None)."""
        ...

    def enter(self, peer: Peer) -> None:
        """`peer` logged in: it hears lobby chat."""
        ...

    def forget(self, peer: Peer) -> None:
        """`peer`'s connection is gone."""
        ...

    def chat(self, name: str, text: str) -> None:
        """A lobby chat line, to every logged-in connection."""
        ...


@dataclass(frozen=True)
class Client:
    """Who sent a ladder request: the connection, its account and the owner it counts for."""

    peer: Peer
    account: Account | None
    owner: str  # the network address: entrants of one owner count together


class EventDesk(Protocol):
    """What a session may ask of the events (`server.events.service.EventService`)."""

    async def handle(
        self, client: Client, request: EventRequest, *, operator: bool = False
    ) -> Message:
        """The reply to an events request."""
        ...

    def connection_closed(self, peer: Peer) -> None:
        """The connection ended: its check-ins go."""
        ...


class LadderDesk(Protocol):
    """What a session may ask of the ladder."""

    async def handle(self, client: Client, request: LadderRequest) -> Message:
        """The reply to a ladder request (the session delivers it)."""
        ...

    def connection_closed(self, peer: Peer) -> None:
        """`peer` is gone: its ladder entry (if not in a match) goes at once."""
        ...


class OperatorDesk(Protocol):
    """The operator's requests (`server.operator`), as a session hands them on."""

    async def handle(self, who: Any, request: Message) -> None:
        """Carry out `request` for the connection `who`; raises `Refused` (server.requests)."""
        ...
