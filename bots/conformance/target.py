"""The server under test, as the kit's scenarios use it: connections, accounts, tables, turns.

Every name the kit registers is fresh (`ck` and random hex), so the kit can run again against the
same server; every connection a scenario opens is closed when the scenario ends.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import trio

from bots.conformance import claims
from bots.conformance.report import Failed, check
from bots.conformance.wire import KitClient, ServerSilent
from protocol.messages import (
    Act,
    CreateTable,
    Error,
    Join,
    Joined,
    Message,
    Ok,
    Register,
    Registered,
    Reply,
    Request,
    Snapshot,
    TableCreated,
    Welcome,
    YourTurn,
)
from protocol.types import Action, ClientKind, Clock, Game, Options


def fresh_name(prefix: str = "ck") -> str:
    """An account name nobody has: `prefix` and ten hex digits (well inside a Name's 32)."""
    return f"{prefix}{secrets.token_hex(5)}"


@dataclass
class Player:
    """A logged-in connection of a registered account."""

    client: KitClient
    name: str
    token: str
    welcome: Welcome
    registered: Registered | None = None
    seats: dict[str, int] = field(default_factory=dict)

    async def request(self, message: Request, what: str = "") -> Reply:
        try:
            return await self.client.request(message)
        except ServerSilent as exc:
            raise Failed(f"{what or message.TYPE}: {exc}", claims.ENVELOPE) from None

    async def expect_ok(self, message: Request, section: claims.Section) -> Ok:
        reply = await self.request(message)
        check(
            isinstance(reply, Ok),
            f"{message.TYPE} was answered {_shown(reply)}, not ok",
            section,
        )
        assert isinstance(reply, Ok)
        return reply

    async def create(
        self,
        game: Game,
        preset: str,
        options: Options | None = None,
        *,
        bots: list[int] | None = None,
        sit: int | None = None,
        private: bool = False,
        clock: Clock | None = None,
    ) -> TableCreated:
        """Open a table (and sit, with `sit`: the snapshot that follows stays queued)."""
        reply = await self.request(
            CreateTable(
                game=game,
                preset=preset,
                options=dict(options or {}),
                bots=list(bots or []),
                sit=sit,
                private=private,
                clock=clock,
            )
        )
        check(
            isinstance(reply, TableCreated),
            f"create_table ({preset}) was answered {_shown(reply)}",
            claims.CREATE_TABLE,
        )
        assert isinstance(reply, TableCreated)
        if sit is not None:
            check(
                reply.seat == sit,
                f"create_table with sit {sit} answered seat {reply.seat}",
                claims.CREATE_TABLE,
            )
            self.seats[reply.table] = sit
        return reply

    async def join(
        self,
        table: str,
        seat: int | None = None,
        code: str | None = None,
        *,
        takeover: bool = False,
    ) -> Joined:
        reply = await self.request(Join(table=table, seat=seat, code=code, takeover=takeover))
        check(
            isinstance(reply, Joined) and reply.seat is not None,
            f"join {table} (seat {seat}) was answered {_shown(reply)}",
            claims.JOIN,
        )
        assert isinstance(reply, Joined) and reply.seat is not None
        self.seats[table] = reply.seat
        return reply

    async def turn(self, table: str, within: float = 20.0) -> YourTurn:
        """The next `your_turn` for this connection at `table`."""
        try:
            found = await self.client.wait_for(
                lambda m: isinstance(m, YourTurn) and m.table == table,
                f"`your_turn` at {table}",
                within,
            )
        except ServerSilent as exc:
            raise Failed(f"{self.name}: {exc}", claims.YOUR_TURN) from None
        assert isinstance(found, YourTurn)
        return found

    async def snapshot(self, table: str) -> Snapshot:
        try:
            found = await self.client.wait_for(
                lambda m: isinstance(m, Snapshot) and m.table == table, f"`snapshot` of {table}"
            )
        except ServerSilent as exc:
            raise Failed(f"{self.name}: {exc}", claims.PLAYING) from None
        assert isinstance(found, Snapshot)
        return found

    async def act(self, turn: YourTurn, action: Action | None = None) -> Reply:
        """Answer `turn` (with its first legal action unless told); the reply."""
        chosen = action if action is not None else turn.legal[0]
        return await self.request(Act(table=turn.table, version=turn.version, action=chosen))


def _shown(reply: Message) -> str:
    if isinstance(reply, Error):
        return f"error {reply.code} ({reply.message})"
    return f"`{reply.TYPE}`"


def shown(reply: Message) -> str:
    """A reply as a failure sentence names it."""
    return _shown(reply)


class Target:
    """Where the server is, and what a scenario opened there."""

    def __init__(self, host: str, port: int) -> None:
        self.host = host
        self.port = port

    @asynccontextmanager
    async def session(self) -> AsyncIterator[Visit]:
        visit = Visit(self)
        try:
            yield visit
        finally:
            with trio.CancelScope(shield=True):
                for client in visit.clients:
                    await client.aclose()


#: Accounts a whole run of the kit registers (one per player of every scenario), all from one
#: address: a server limiting registrations per address must allow this many.
KIT_ACCOUNTS = 40


class Visit:
    """One scenario's connections (closed when it ends)."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.clients: list[KitClient] = []

    async def connect(self, name: str = "kit") -> KitClient:
        try:
            client = await KitClient.connect(self.target.host, self.target.port, name=name)
        except (OSError, trio.TooSlowError) as exc:
            raise Failed(
                f"cannot connect to {self.target.host}:{self.target.port}: {exc}", claims.FRAMING
            ) from None
        self.clients.append(client)
        return client

    async def welcomed(
        self, token: str | None = None, kind: ClientKind = ClientKind.HUMAN, name: str = "kit"
    ) -> tuple[KitClient, Welcome]:
        client = await self.connect(name)
        try:
            welcome = await client.hello(token, kind)
        except ServerSilent as exc:
            raise Failed(str(exc), claims.HANDSHAKE) from None
        return client, welcome

    async def player(self, kind: ClientKind = ClientKind.HUMAN, prefix: str = "ck") -> Player:
        """A new account, registered and logged in on a new connection."""
        client, welcome = await self.welcomed(kind=kind, name=prefix)
        name = fresh_name(prefix)
        reply = await client.request(Register(name=name))
        if isinstance(reply, Error) and reply.code == "rate_limited":
            # Not a disagreement with the document: the server limits accounts per address
            # (welcome.limits.register_burst), and the kit makes a fresh one for each player.
            raise Failed(
                f"register {name!r} was refused rate_limited: the server lets one address make "
                f"{welcome.limits.register_burst} accounts at once and the kit makes about "
                f"{KIT_ACCOUNTS}; run it against a server that allows them (spades-server serve "
                f"--max-registrations-per-address {KIT_ACCOUNTS})",
                claims.ACCOUNTS,
            )
        check(
            isinstance(reply, Registered),
            f"register {name!r} was answered {_shown(reply)}",
            claims.ACCOUNTS,
        )
        assert isinstance(reply, Registered)
        return Player(client, reply.name, reply.token, welcome, registered=reply)

    async def again(self, player: Player, kind: ClientKind = ClientKind.HUMAN) -> Player:
        """Another connection of `player`'s account, logged in by `hello.token`."""
        client, welcome = await self.welcomed(player.token, kind, name=player.name)
        check(
            welcome.user == player.name,
            f"hello with {player.name}'s token was welcomed as {welcome.user!r}",
            claims.HANDSHAKE,
        )
        return Player(client, player.name, player.token, welcome)
