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
import json
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
from protocol.operator_messages import (
    MAX_BANS_LISTED,
    MAX_SESSIONS_LISTED,
    MAX_TABLES_LISTED,
    MAX_WATCHED_LISTED,
)
from protocol.schema import FieldProblem, from_map, to_map
from server.accounts import Account
from server.bans import ACCOUNT, ADDRESS, BanList, fold, network
from server.connection import Outbox
from server.metrics import transport_of
from server.peers import SharedEvent
from server.quotas import Admission, TokenGuard, network_of
from server.requests import Refused
from server.storage import StorageError
from server.storage.rows import BanRow
from server.table_commands import OperatorCloseCommand

if TYPE_CHECKING:
    from server.lobby import Lobby
    from server.storage import Store

log = structlog.get_logger("server.operator")

#: How often a server reads the bans again (a ban made on another server of the database holds
#: here within this many seconds; one made here holds at once).
BAN_RELOAD_S = 5.0
#: How long a cluster's `sessions` waits for the other servers' lists, and keeps the whole for
#: the pages that follow.
GATHER_S = 1.0
GATHER_KEPT_S = 60.0
#: Sessions in one notice of a server's list (each notice stays under PostgreSQL's 8000-byte
#: NOTIFY payload: `_parts` also measures them).
MAX_PART = 200
PART_BYTES = 6000

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


class ClusterOrders(Protocol):
    """The other servers of a cluster, as the operator reaches them (`server.cluster.node`)."""

    worker: str  # this server's id in the cluster

    def tell_servers(self, order: dict[str, Any]) -> None:
        """Hand `order` to every other server (they apply it with `Operator.obey`)."""
        ...


class _Nobody:
    """The peer of an order another server handed on: its answer was that server's to give."""

    peer_id = "operator-order"
    connected = False

    def deliver(self, message: Message) -> None:
        return None

    def deliver_shared(self, shared: SharedEvent) -> None:
        return None


class Operator:
    """What the operator's requests do, on this server's connections, lobby and database.

    In a cluster (`cluster` set), `announce`, `kick`, `close` and every change of the bans are
    also handed to the other servers (`ClusterOrders`), which apply them to their own
    connections and tables (`obey`); `sessions` lists this server's connections only."""

    def __init__(
        self, store: Store, lobby: Lobby, connections: Collection[Connected], bans: BanList
    ) -> None:
        self.store = store
        self.lobby = lobby
        self.connections = connections  # the server's own set: it changes as they come and go
        self.bans = bans
        self.cluster: ClusterOrders | None = None
        # Cluster-wide `sessions`: the other servers' answers by call, while they are awaited,
        # and the whole list by operator connection, for the pages after the first.
        self._gathering: dict[str, list[SessionInfo]] = {}
        self._gathered: dict[str, tuple[float, list[SessionInfo]]] = {}
        self.guard: TokenGuard | None = None  # the server's wrong-token limits, if any
        self._bans_changed = trio.Event()  # another server of the cluster changed the bans

    def _hand_on(self, order: dict[str, Any]) -> None:
        if self.cluster is not None:
            self.cluster.tell_servers(order)

    def obey(self, order: dict[str, Any]) -> None:
        """Apply an order another server of the cluster handed on (its operator's request): to
        this server's connections and tables. An order of an unknown kind is passed over."""
        log.info("operator_order", order=sorted(order))
        text, target, table = order.get("announce"), order.get("kick"), order.get("close")
        reason = order.get("reason") if isinstance(order.get("reason"), str) else None
        if isinstance(text, str):
            self._tell_everyone(text)
        elif isinstance(target, str):
            for peer in self._matching(target):
                peer.say_bye(_kicked(reason))
        elif isinstance(table, str):
            local = self.lobby.tables.get(table)
            if local is not None:
                command = OperatorCloseCommand(peer=_Nobody(), reason=reason or _CLOSED)
                self.lobby.submit_later(local, command)
        elif order.get("bans"):
            self._bans_changed.set()
        elif isinstance(order.get("sessions"), str):
            # Another server's operator lists the cluster's sessions: ours, in notices that
            # each fit PostgreSQL's payload limit.
            call = order["sessions"]
            ours = [to_map(info) for info in self._local_infos()]
            for part in _parts(ours):
                self._hand_on({"session_list": call, "infos": part})
        elif isinstance(order.get("session_list"), str):
            gathering = self._gathering.get(order["session_list"])
            theirs = order.get("infos")
            if gathering is not None and isinstance(theirs, list):
                for data in theirs[:MAX_PART]:
                    try:
                        gathering.append(from_map(SessionInfo, data))
                    except (FieldProblem, AttributeError, TypeError):  # checked as any input is
                        log.warning("session_list_refused")

    async def _reload_on_order(self) -> None:
        """Read the bans again whenever another server says they changed (`obey`)."""
        while True:  # until the server's nursery is cancelled
            await self._bans_changed.wait()
            self._bans_changed = trio.Event()
            try:
                await self.load_bans()
            except StorageError as exc:
                log.warning("bans_not_read", error=str(exc))
                continue
            self._enforce(self._all_connections())

    # ---------------------------------------------------------------- the bans, kept fresh

    async def load_bans(self) -> None:
        """Read the bans from the database (raises `StorageError` if it cannot)."""
        self.bans.load(await self.store.call(lambda tx: tx.bans()))

    async def keep_bans(self) -> None:
        """Read the bans again every `BAN_RELOAD_S` (and at once when another server of a
        cluster says they changed), and close the connections a ban made on another server now
        covers, until cancelled. A store that cannot answer keeps the list as it was."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._reload_on_order)
            await self._poll_bans()

    async def _poll_bans(self) -> None:
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
            await self._list_sessions(who, request)
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
        # A wrong operator token counts against its address as a wrong account token does (one
        # bucket: guessing at either slows both), so no address can make the database look
        # tokens up faster than the login limits allow (docs/operations.md, Logins).
        network = network_of(who.host)
        admitted: Admission | None = None
        if self.guard is not None:
            admission = self.guard.admit(None, network, trio.current_time())
            if isinstance(admission, int):
                raise Refused(
                    ErrorCode.RATE_LIMITED,
                    "too many wrong tokens from this address; wait and retry",
                    retry_ms=admission,
                )
            admitted = admission
        digest = digest_of(request.token)
        known = request.token.startswith(TOKEN_PREFIX) and await self.store.call(
            lambda tx: tx.operator_token_known(digest)
        )
        if self.guard is not None and admitted is not None:
            self.guard.settle(admitted, trio.current_time(), wrong=not known, known=False)
        if not known:
            log.warning("operator_login_refused", session=who.id, peer=who.host)
            raise Refused(ErrorCode.BAD_TOKEN, "that is not an operator token of this server")
        who.operator = True
        log.info("operator_login", session=who.id, peer=who.host)
        who.deliver(Ok(id=request.id, note="this connection is the operator's"))

    def _tell_everyone(self, text: str) -> int:
        told = 0
        message = Announcement(text=text)
        for peer in self._all_connections():
            if peer.welcomed and peer.connection.close_reason is None:
                peer.deliver(message)
                told += 1
        log.info("announced", text=text, told=told)
        return told

    def _announce(self, who: Any, request: Announce) -> None:
        told = self._tell_everyone(request.text)
        self._hand_on({"announce": request.text})
        # Answered after the announcement, so the operator's own copy comes first.
        who.deliver(Ok(id=request.id, note=f"told {_count(told)}{self._elsewhere}"))

    @property
    def _elsewhere(self) -> str:
        return "" if self.cluster is None else " here, and handed to the cluster's other servers"

    def _local_infos(self) -> list[SessionInfo]:
        """This server's connections that have said `hello`, oldest first."""
        server = self.cluster.worker if self.cluster is not None else None
        peers = sorted(
            (p for p in self._all_connections() if p.welcomed), key=lambda p: (p.opened, p.id)
        )
        return [
            SessionInfo(
                session=p.id,
                account=p.account.name if p.account is not None else None,
                address=p.host[:64],
                transport=transport_of(p.stream),
                tables=sorted(p.seats)[:MAX_TABLES_LISTED],
                watching=sorted(p.watching)[:MAX_WATCHED_LISTED],
                operator=p.operator,
                server=server,
            )
            for p in peers
        ]

    async def _list_sessions(self, who: Any, request: ListSessions) -> None:
        """A page of the sessions: this server's, and in a cluster every server's, asked for
        once (on the first page: the others answer within `GATHER_S`) and kept for the pages
        that follow on the same connection."""
        now = trio.current_time()
        for key in [k for k, (at, _) in self._gathered.items() if now - at > GATHER_KEPT_S]:
            del self._gathered[key]
        kept = self._gathered.get(who.id)
        if request.offset > 0 and kept is not None:
            infos = kept[1]
        else:
            infos = self._local_infos()
            if self.cluster is not None:
                call = secrets.token_hex(8)
                self._gathering[call] = []
                self._hand_on({"sessions": call})
                try:
                    await trio.sleep(GATHER_S)  # a window for the answers, not a synchronisation
                finally:
                    infos += self._gathering.pop(call)
            self._gathered[who.id] = (now, infos)
        page = infos[request.offset : request.offset + MAX_SESSIONS_LISTED]
        who.deliver(Sessions(id=request.id, sessions=page, total=len(infos)))

    def _matching(self, target: str) -> list[Connected]:
        return [
            p
            for p in self._all_connections()
            if p.id == target or (p.account is not None and fold(p.account.name) == fold(target))
        ]

    def _kick(self, who: Any, request: Kick) -> None:
        target = request.target
        found = self._matching(target)
        if not found and self.cluster is None:
            raise Refused(
                ErrorCode.NO_SUCH_SESSION,
                f"no connection of this server is session or account {target!r}",
            )
        for peer in found:
            peer.say_bye(_kicked(request.reason))
        self._hand_on({"kick": target, "reason": request.reason})
        log.info("kicked", target=target, connections=len(found), reason=request.reason)
        who.deliver(Ok(id=request.id, note=f"kicked {len(found)} connection(s){self._elsewhere}"))

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
        self._hand_on({"bans": True})
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
        self._hand_on({"bans": True})
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
            for row in rows[request.offset : request.offset + MAX_BANS_LISTED]
        ]
        who.deliver(Bans(id=request.id, bans=infos, total=len(rows)))

    async def _close(self, who: Any, request: CloseTable) -> None:
        reason = request.reason or _CLOSED
        table = self.lobby.tables.get(request.table)
        if table is None and self.cluster is not None:
            # Perhaps another server's (which this one may not know of yet): the one that runs
            # it closes it.
            self._hand_on({"close": request.table, "reason": reason})
            note = (
                f"table {request.table} is not on this server: handed to the cluster's other"
                " servers (the one running it closes it)"
            )
            who.deliver(Ok(id=request.id, note=note))
            return
        if table is None:
            raise Refused(ErrorCode.NO_SUCH_TABLE, f"no table {request.table!r}")
        await self.lobby.submit(
            table, OperatorCloseCommand(peer=who, reason=reason, request_id=request.id)
        )


_CLOSED = "closed by the server's operator"


def _kicked(reason: str | None) -> str:
    return "kicked by the operator" + (f": {reason}" if reason else "")


def _parts(infos: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """`infos` in runs that each fit one notice (at least one part, empty if there are none)."""
    parts: list[list[dict[str, Any]]] = [[]]
    size = 0
    for info in infos:
        length = len(json.dumps(info)) + 2
        if parts[-1] and (size + length > PART_BYTES or len(parts[-1]) >= MAX_PART):
            parts.append([])
            size = 0
        parts[-1].append(info)
        size += length
    return parts


def _count(connections: int) -> str:
    return f"{connections} connection" + ("" if connections == 1 else "s")
