"""The operator's hand on a running server: its requests (docs/protocol.md, Operator) and the bans.

A connection becomes the operator's by `operator_login` with a token made by `spades-server admin
token` on the machine that holds the database: the database keeps the token's SHA-256 digest only
(the token is 256 random bits, so a fast digest is as good as a slow one, and a guess is hopeless),
so nothing that reaches the game port can become the operator without the token. Then it may
announce, list and kick this server's connections, ban and unban accounts and addresses (stored:
every server of the database enforces them), and close this server's tables.

`Operator` is built by the composition root (`server.app`) with the server's connections, lobby,
store and `BanList`; sessions reach it through `SessionServices.operator` (`server.requests`).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING, Any, Protocol

import structlog
import trio

from protocol.errors import ErrorCode
from protocol.messages import (
    Announce,
    Announcement,
    Ban,
    BanInfo,
    Bans,
    CloseTable,
    Error,
    Kick,
    ListBans,
    ListSessions,
    Message,
    Ok,
    OperatorLogin,
    SessionInfo,
    Sessions,
    Unban,
)
from protocol.operator_messages import MAX_BANS_LISTED, MAX_SESSIONS_LISTED
from server.accounts import Account
from server.bans import ACCOUNT, ADDRESS, BanList, fold, network
from server.connection import Outbox
from server.metrics import transport_of
from server.requests import Refused
from server.storage import StorageError
from server.storage.rows import BanRow
from server.table import Table
from server.table_commands import OperatorCloseCommand

if TYPE_CHECKING:
    from server.lobby import Lobby
    from server.storage import Store

log = structlog.get_logger("server.operator")

#: How often a server reads the bans again (a ban made on another server of the database holds
#: here within this many seconds; one made here holds at once).
BAN_RELOAD_S = 5.0
#: The prefix of an operator token, so one is told apart from an account's at a glance.
TOKEN_PREFIX = "op-"

OPERATOR_REQUESTS = (
    OperatorLogin,
    Announce,
    ListSessions,
    Kick,
    Ban,
    Unban,
    ListBans,
    CloseTable,
)


def new_token() -> tuple[str, bytes]:
    """A new operator token and the digest the database keeps of it."""
    token = TOKEN_PREFIX + secrets.token_urlsafe(32)
    return token, digest_of(token)


def digest_of(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


class Connected(Protocol):
    """A connection as the operator sees it (a `server.session.Session`)."""

    id: str
    host: str
    account: Account | None
    seats: dict[str, int]
    watching: set[str]
    operator: bool
    stream: trio.abc.Stream
    connection: Outbox
    opened: float

    @property
    def welcomed(self) -> bool: ...

    def deliver(self, message: Message) -> None: ...

    def say_bye(self, reason: str) -> None: ...


class Operator:
    """What the operator's requests do, on this server's connections, lobby and database."""

    def __init__(
        self, store: Store, lobby: Lobby, connections: Collection[Connected], bans: BanList
    ) -> None:
        self.store = store
        self.lobby = lobby
        self.connections = connections  # the server's own set: it changes as they come and go
        self.bans = bans

    # ---------------------------------------------------------------- the bans, kept fresh

    async def load_bans(self) -> None:
        """Read the bans from the database (raises `StorageError` if it cannot)."""
        self.bans.load(await self.store.call(lambda tx: tx.bans()))

    async def keep_bans(self) -> None:
        """Read the bans again every `BAN_RELOAD_S`, and close the connections a ban made on
        another server now covers, until cancelled. A store that cannot answer keeps the list
        as it was."""
        while True:  # until the server's nursery is cancelled
            await trio.sleep(BAN_RELOAD_S)
            try:
                await self.load_bans()
            except StorageError as exc:
                log.warning("bans_not_read", error=str(exc))
                continue
            self._enforce(self._all_connections())

    def _all_connections(self) -> list[Connected]:
        return list(self.connections)

    def _enforce(self, connections: Iterable[Connected]) -> int:
        """Close every connection of `connections` a ban covers (a closing `banned`)."""
        closed = 0
        for peer in connections:
            name = peer.account.name if peer.account is not None else None
            why = self.bans.why(peer.host, name)
            if why is None or peer.connection.close_reason is not None:
                continue
            if peer.welcomed:
                peer.deliver(Error(code=ErrorCode.BANNED.value, message=why))
                peer.connection.finish(reason="banned")
            else:
                peer.connection.abort("banned")
            closed += 1
        return closed

    # ---------------------------------------------------------------- the requests

    async def handle(self, who: Any, request: Message) -> None:
        """Carry out one operator request from `who` (a `Connected`), or raise `Refused`."""
        if isinstance(request, OperatorLogin):
            await self._login(who, request)
            return
        if not who.operator:
            raise Refused(
                ErrorCode.NOT_OPERATOR, "send operator_login with an operator token first"
            )
        log.info("operator_request", request=request.TYPE, session=who.id, peer=who.host)
        if isinstance(request, Announce):
            self._announce(who, request)
        elif isinstance(request, ListSessions):
            self._list_sessions(who, request)
        elif isinstance(request, Kick):
            self._kick(who, request)
        elif isinstance(request, Ban):
            await self._ban(who, request)
        elif isinstance(request, Unban):
            await self._unban(who, request)
        elif isinstance(request, ListBans):
            await self._list_bans(who, request)
        elif isinstance(request, CloseTable):
            await self._close(who, request)
        else:  # pragma: no cover - every type of OPERATOR_REQUESTS is handled above
            raise Refused(ErrorCode.UNEXPECTED_MESSAGE, f"a {request.TYPE} is not accepted")

    async def _login(self, who: Any, request: OperatorLogin) -> None:
        digest = digest_of(request.token)
        if not await self.store.call(lambda tx: tx.operator_token_known(digest)):
            log.warning("operator_login_refused", session=who.id, peer=who.host)
            raise Refused(ErrorCode.BAD_TOKEN, "that is not an operator token of this server")
        who.operator = True
        log.info("operator_login", session=who.id, peer=who.host)
        who.deliver(Ok(id=request.id, note="this connection is the operator's"))

    def _announce(self, who: Any, request: Announce) -> None:
        told = 0
        message = Announcement(text=request.text)
        for peer in self._all_connections():
            if peer.welcomed and peer.connection.close_reason is None:
                peer.deliver(message)
                told += 1
        log.info("announced", text=request.text, told=told)
        # Answered after the announcement, so the operator's own copy comes first.
        who.deliver(Ok(id=request.id, note=f"told {told} connections"))

    def _list_sessions(self, who: Any, request: ListSessions) -> None:
        peers = sorted(
            (p for p in self._all_connections() if p.welcomed), key=lambda p: (p.opened, p.id)
        )
        infos = [
            SessionInfo(
                session=p.id,
                account=p.account.name if p.account is not None else None,
                address=p.host[:64],
                transport=transport_of(p.stream),
                tables=sorted(p.seats)[:64],
                watching=sorted(p.watching)[:64],
                operator=p.operator,
            )
            for p in peers[:MAX_SESSIONS_LISTED]
        ]
        who.deliver(Sessions(id=request.id, sessions=infos, total=len(peers)))

    def _kick(self, who: Any, request: Kick) -> None:
        target = request.target
        found = [
            p
            for p in self._all_connections()
            if p.id == target or (p.account is not None and fold(p.account.name) == fold(target))
        ]
        if not found:
            raise Refused(
                ErrorCode.NO_SUCH_SESSION,
                f"no connection of this server is session or account {target!r}",
            )
        said = "kicked by the operator" + (f": {request.reason}" if request.reason else "")
        for peer in found:
            peer.say_bye(said)
        log.info("kicked", target=target, connections=len(found), reason=request.reason)
        who.deliver(Ok(id=request.id, note=f"kicked {len(found)} connection(s)"))

    @staticmethod
    def _target(account: str | None, address: str | None) -> tuple[str, str]:
        if account is not None:
            return ACCOUNT, account
        assert address is not None  # the message's invariant: exactly one
        try:
            return ADDRESS, network(address)
        except ValueError as exc:
            raise Refused(ErrorCode.INVALID_FIELD, str(exc), detail="address") from None

    async def _ban(self, who: Any, request: Ban) -> None:
        kind, target = self._target(request.account, request.address)
        row = BanRow(kind, target, request.reason)
        await self.store.call(lambda tx: tx.set_ban(kind, target, request.reason))
        self.bans.add(row)
        closed = self._enforce(p for p in self._all_connections() if p is not who)
        log.info("banned", kind=kind, target=target, reason=request.reason, closed=closed)
        who.deliver(
            Ok(id=request.id, note=f"{kind} {target} banned; {closed} connection(s) closed")
        )

    async def _unban(self, who: Any, request: Unban) -> None:
        kind, target = self._target(request.account, request.address)
        if kind == ACCOUNT:
            # Stored as it was typed: find it however it is spelt now.
            stored = self.bans.of_account(target)
            target = stored.target if stored is not None else target
        was = await self.store.call(lambda tx: tx.remove_ban(kind, target))
        self.bans.remove(kind, target)
        log.info("unbanned", kind=kind, target=target, was_banned=was)
        note = f"{kind} {target} " + ("unbanned" if was else "was not banned")
        who.deliver(Ok(id=request.id, note=note))

    async def _list_bans(self, who: Any, request: ListBans) -> None:
        await self.load_bans()
        rows = self.bans.rows()
        infos = [
            BanInfo(
                account=row.target if row.kind == ACCOUNT else None,
                address=row.target if row.kind == ADDRESS else None,
                reason=row.reason,
            )
            for row in rows[:MAX_BANS_LISTED]
        ]
        who.deliver(Bans(id=request.id, bans=infos, total=len(rows)))

    async def _close(self, who: Any, request: CloseTable) -> None:
        table = self.lobby.tables.get(request.table)
        if not isinstance(table, Table):
            where = "" if self.lobby.cluster is None else " (in a cluster: ask its own server)"
            raise Refused(ErrorCode.NO_SUCH_TABLE, f"no table {request.table!r} here{where}")
        reason = request.reason or "closed by the server's operator"
        await self.lobby.submit(
            table, OperatorCloseCommand(peer=who, reason=reason, request_id=request.id)
        )
