"""`ClusterNode`: this server as one of several sharing one PostgreSQL database as one server.

What it does, beside the server's own parts (it is handed the lobby; the lobby is handed it, as
`server.cluster.hooks.LobbyCluster`, and calls it where a lone server's lobby would stop at its
own tables):

- Membership (`server.cluster.membership`): it registers with the address of its link, renews its
  lease every second, and stops the server at once if the lease was lost. Every second it also
  declares dead the servers whose lease ran out and claims their tables, a batch at a time, and
  opens them from the store as a restart would (`Lobby.take_over`).
- The lobby: every table's listing line is in `cluster_tables`; a server publishes its own tables'
  changes there and on a NOTIFY channel, and keeps the others' in memory from those notices, so a
  listing and the lobby notices cover every table of every server. Lobby chat goes the same way.
- The hop: a session's command for a table another server runs is forwarded over the link
  (`server.cluster.remote`), and what the table delivers comes back the same way.
- Logins: a login's resume is asked of every server; when a server takes tables over it says so,
  and every server asks it again for its logged-in connections, so a player whose table moved
  gets the seat back without doing anything.
- The ladder runs in one server only: the one holding the ladder's advisory lock (another takes
  it when that one dies); the others forward ladder requests to it (`server.cluster.ladder`).
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import psycopg
import structlog
import trio

from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import (
    ChatMessage,
    Message,
    Sender,
    TableChanged,
    TableClosed,
)
from protocol.types import TableInfo, TableStatus
from protocol.wire import EventFrames, decode, encode_body, from_wire, to_wire
from server.accounts import Account
from server.cluster import membership
from server.cluster.ladder import ClusterLadder
from server.cluster.link import LinkConfig, Links
from server.cluster.link_protocol import (
    Deliver,
    Established,
    Forward,
    Gone,
    LadderAnswer,
    LadderAsk,
    LinkError,
    Resume,
)
from server.cluster.membership import UNREACHABLE
from server.cluster.remote import RemotePeer, RemoteTable, command_from_link, command_to_link
from server.cluster.secret import from_file, kept
from server.peers import Peer, SharedEvent
from server.quotas import network_of
from server.storage import StorageError
from server.storage.postgres import connect, migrate
from server.table_commands import (
    CloseUnoccupiedCommand,
    Command,
    JoinCommand,
    LeaveCommand,
    LeaveReason,
    TableConfig,
    answer_unserved,
    error_for,
)

if TYPE_CHECKING:
    from server.lobby import Lobby
    from server.table import Table

log = structlog.get_logger("server.cluster")

#: Seconds between readings of the secret kept in the database (a rotation takes this long).
SECRET_REFRESH = 10.0
#: Seconds before the notices' connection is opened again, doubling up to the last.
RECONNECT_FIRST = 0.1
RECONNECT_MAX = 1.0


class LeaseLost(Exception):
    """This server's lease ran out or it was declared dead: its tables are another's now."""


class ClusterNode:
    """This server's part in the cluster (see the module's doc)."""

    def __init__(
        self,
        url: str,
        host: str,
        advertise: str | None = None,
        *,
        link: LinkConfig | None = None,
    ) -> None:
        self.url = url
        self.host = host
        self.advertise = advertise or host
        self.link = link or LinkConfig()
        self.worker = secrets.token_hex(6)
        self._secret = b""  # the cluster's (`server.cluster.secret`), loaded in `running`
        self.links = Links(
            self.worker,
            lambda: self._secret,
            handle=self._on_link,
            on_lost=self._on_lost,
            address_of=self._address_of,
            is_member=self._is_member,
            on_undelivered=self._undelivered,
            member_hosts=self._member_hosts,
            tls_server=self.link.tls_server,
            tls_client=self.link.tls_client,
            connect=self.link.connect,
        )
        self._conn: psycopg.Connection[Any] | None = None
        self._db = trio.Lock()  # one statement at a time on the bookkeeping connection
        self.lobby: Lobby | None = None
        self.remote: dict[str, RemoteTable] = {}  # other servers' tables by id
        self._addresses: dict[str, str] = {}
        self._peers: dict[tuple[str, str], RemotePeer] = {}  # (origin, local id) -> peer
        self._touched: dict[RemotePeer, set[str]] = {}  # tables a remote peer was given to
        self._sessions: dict[str, tuple[Peer, Account | None]] = {}  # our peers others hold
        self._dirty: dict[str, dict[str, Any] | None] = {}  # our listing lines to publish
        self._publish_wanted = trio.Event()
        self._chat: list[dict[str, Any]] = []
        # The operator's orders for every server (server.operator), published as chat is, and
        # what to do with another server's.
        self._orders: list[dict[str, Any]] = []
        self.on_operator: Callable[[dict[str, Any]], None] = lambda order: None
        self.ladder = ClusterLadder(self)  # where the one ladder runs, and the way to it
        self._last_sent: Message | None = None
        self._last_body = b""
        self._last_body_in = b""
        self._last_in: SharedEvent | Message | None = None
        # Commands for a table being looked up in the store, in the order they came.
        self._looking_up: dict[str, list[tuple[RemoteTable, Command]]] = {}
        self.claimed = 0  # tables taken over from dead servers, for tests and stats
        self.stopping = False  # set as the server stops: its tables are handed over
        self.on_lease_lost: Callable[[], None] = lambda: None
        self._nursery: trio.Nursery | None = None
        # When the lease was last registered or renewed (trio time): /readyz reads `lease_held`.
        self.lease_renewed_at: float | None = None
        self._reconnected_at = -math.inf  # trio time the bookkeeping connection was last reopened
        self._connect_at = -math.inf  # no attempt to reconnect before this (trio time)
        self._connect_after = RECONNECT_FIRST / 2  # doubled before each wait
        self._db_reachable = True

    # ---------------------------------------------------------------- the database

    async def run_statement(self, fn: Callable[[psycopg.Connection[Any]], Any]) -> Any:
        """Run `fn` on the bookkeeping connection (in a thread, one at a time). A connection
        PostgreSQL dropped is opened again first; raises `psycopg.Error` or `StorageError` (the
        `UNREACHABLE` pair) when the database cannot be reached: the caller tries again later.
        After a failed attempt the next waits `RECONNECT_FIRST` seconds, doubling to
        `RECONNECT_MAX` (statements asked for meanwhile fail at once)."""
        async with self._db:
            held = self._conn
            if held is None or held.broken or held.closed:
                if trio.current_time() < self._connect_at:
                    raise StorageError("the database is unreachable (tried again shortly)")
                try:
                    conn, alive = await trio.to_thread.run_sync(self._connect_again)
                except UNREACHABLE:
                    self._connect_after = min(self._connect_after * 2, RECONNECT_MAX)
                    self._connect_at = trio.current_time() + self._connect_after
                    raise
                self._connect_after = RECONNECT_FIRST / 2
                self._reconnected_at = trio.current_time()
                log.warning("cluster_reconnected", worker=self.worker, alive=alive)
                if alive:
                    self.lease_renewed_at = self._reconnected_at
                else:
                    self.lease_renewed_at = None
                    log.error("lease_lost", worker=self.worker)
                    self.on_lease_lost()
            else:
                conn = held
            try:
                return await trio.to_thread.run_sync(fn, conn)
            except psycopg.Error:
                if conn.broken or conn.closed:
                    self._reachable(False)
                raise

    def _connect_again(self) -> tuple[psycopg.Connection[Any], bool]:
        """A new bookkeeping connection, and the lease renewed on it at once (the writer's
        batches wait for that: see `server.storage.postgres.LEASE_REGAINED`); False if this
        server was declared dead meanwhile."""
        old = self._conn
        if old is not None:
            with contextlib.suppress(psycopg.Error):
                old.close()
        try:
            conn = connect(
                self.url, purpose=f"spades-server cluster {self.worker} pid {os.getpid()}"
            )
            conn.execute("SET lock_timeout = '2s'")
            alive = membership.renew(conn, self.worker)
        except (psycopg.Error, StorageError):
            self._reachable(False)
            raise
        self._conn = conn
        return conn, alive

    def _reachable(self, reachable: bool) -> None:
        """Log the bookkeeping connection's changes once each, not once a second."""
        if reachable == self._db_reachable:
            return
        self._db_reachable = reachable
        if reachable:
            log.warning("cluster_database_back", worker=self.worker)
        else:
            log.error("cluster_database_unreachable", worker=self.worker)

    def _in_grace(self) -> bool:
        """Just reconnected: the other servers lost the database too, and may not have renewed
        their leases yet. Nobody is declared dead until they have had a lease's time to."""
        return (
            trio.current_time() - self._reconnected_at < membership.LEASE + membership.RENEW_EVERY
        )

    def send_to(self, worker: str, message: Established) -> None:
        """A message to server `worker` over the link."""
        self.links.send(worker, message)

    def _member_hosts(self) -> set[str]:
        """The addresses the live servers published for their links (as last read)."""
        return {network_of(link.rpartition(":")[0]) for link in self._addresses.values()}

    async def _is_member(self, worker: str) -> bool:
        """Whether `worker` is a live member of the cluster (a link's proven id must be)."""
        try:
            return bool(await self.run_statement(lambda c: membership.is_alive(c, worker)))
        except UNREACHABLE:
            return False  # not known to be one: refused (it dials again on its next need)

    async def _address_of(self, worker: str) -> str | None:
        if worker not in self._addresses:
            try:
                known_now = await self.run_statement(membership.workers)
            except UNREACHABLE:
                return None  # asked again at the link's next attempt
            for known in known_now:
                self._addresses[known.id] = known.link
        return self._addresses.get(worker)

    # ---------------------------------------------------------------- life

    @asynccontextmanager
    async def running(self) -> AsyncIterator[ClusterNode]:
        """Bind the link, register, and keep the lease (the server's store opens after this:
        its writer's fence needs the registration)."""
        self._conn = await trio.to_thread.run_sync(
            lambda: connect(
                self.url, purpose=f"spades-server cluster {self.worker} pid {os.getpid()}"
            )
        )
        try:
            migrate(self._conn, self.url)  # the cluster's tables are in the schema
            self._conn.execute("SET lock_timeout = '2s'")
            file = self.link.secret_file
            self._secret = from_file(file) if file is not None else kept(self._conn)
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                port = await nursery.start(
                    self.links.serve, self.link.host or self.advertise, self.link.port, nursery
                )
                link = f"{self.advertise}:{port}"
                if file is None:
                    nursery.start_soon(self._keep_secret)
                await self.run_statement(lambda c: membership.register(c, self.worker, link))
                self.lease_renewed_at = trio.current_time()
                log.info("cluster_joined", worker=self.worker, link=link)
                nursery.start_soon(self._keep_lease)
                try:
                    yield self
                finally:
                    nursery.cancel_scope.cancel()
        finally:
            with trio.CancelScope(shield=True):
                conn = self._conn
                with contextlib.suppress(psycopg.Error):
                    await trio.to_thread.run_sync(lambda: membership.leave(conn, self.worker))
                await trio.to_thread.run_sync(conn.close)

    async def _keep_secret(self) -> None:
        """Read the kept secret again now and then: rotated in the database (docs/operations.md),
        it is used for the links opened from then on (those up stay up)."""
        while True:
            await trio.sleep(SECRET_REFRESH)
            try:
                self._secret = await self.run_statement(kept)
            except UNREACHABLE:
                continue  # the database is away: the secret held is still the cluster's

    @property
    def lease_held(self) -> bool:
        """Whether this server's lease is still good by its own clock: renewed within the
        lease's length (the database's clock decides for the fence; this is the readiness)."""
        renewed = self.lease_renewed_at
        return renewed is not None and trio.current_time() - renewed < membership.LEASE

    @property
    def fence(self) -> tuple[str, tuple[Any, ...]]:
        """What the store's writer runs first in every batch (`membership.FENCE`)."""
        return membership.FENCE, (self.worker,)

    def attach(self, lobby: Lobby) -> None:
        self.lobby = lobby
        lobby.cluster = self

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The lobby's side, once it has started: load the others' listing, listen to their
        notices, publish ours, and claim the tables of the dead (the first claim before
        `started`, so a cluster's first server opens the previous run's tables at once)."""
        assert self.lobby is not None and self._nursery is not None
        for table_id, (owner, info) in (
            await self.run_statement(lambda c: membership.listing(c, self.worker))
        ).items():
            self._learn(owner, table_id, info)
        async with trio.open_nursery() as nursery:
            await nursery.start(self._listen)
            nursery.start_soon(self._publish)
            await self._claim()
            task_status.started()
            while True:
                await trio.sleep(membership.RENEW_EVERY)
                await self._claim()

    async def _keep_lease(self) -> None:
        """Renew the lease every second. While the database cannot be reached it is tried again
        as often (the lease lapses, but nobody can declare this server dead meanwhile, and the
        fence keeps its writer from committing until it is renewed); once it is back, a lease
        that lapsed is renewed unless another server declared this one dead first."""
        while True:
            await trio.sleep(membership.RENEW_EVERY)
            try:
                alive = await self.run_statement(lambda c: membership.renew(c, self.worker))
            except UNREACHABLE as exc:
                if self._db_reachable:
                    log.warning("lease_not_renewed", error=" ".join(str(exc).split()))
                self._reachable(False)
                continue  # the lease lasts several renewals; the fence guards the writes
            self._reachable(True)
            if not alive:
                self.lease_renewed_at = None
                log.error("lease_lost", worker=self.worker)
                self.on_lease_lost()
                return
            self.lease_renewed_at = trio.current_time()

    async def _claim(self) -> None:
        try:
            self._addresses = {w.id: w.link for w in await self.run_statement(membership.workers)}
            if self._in_grace():
                return
            dead = await self.run_statement(membership.expire)
            if dead:
                log.info("servers_dead", workers=dead)
                for worker in dead:
                    self._forget_server(worker)
            claimed = await self.run_statement(lambda c: membership.claim(c, self.worker))
        except UNREACHABLE as exc:
            if self._db_reachable:
                log.warning("claim_failed", error=" ".join(str(exc).split()))
            return
        if not claimed:
            return
        assert self.lobby is not None
        for table_id in claimed:
            self.remote.pop(table_id, None)
        await self.lobby.take_over(claimed)
        self.claimed += len(claimed)
        log.info("tables_taken_over", tables=len(claimed), ids=claimed)
        try:
            await self.run_statement(
                lambda c: c.execute(
                    "SELECT pg_notify(%s, %s)",
                    (
                        membership.LOBBY_CHANNEL,
                        json.dumps({"adopted": claimed, "worker": self.worker}),
                    ),
                )
            )
        except UNREACHABLE as exc:  # the others find the tables' owner when they use them
            log.warning("adoption_not_announced", error=" ".join(str(exc).split()))
        for peer, account in list(self._sessions.values()):
            if account is not None:
                await self.lobby.resume_here(peer, account)

    # ---------------------------------------------------------------- the lobby across servers

    async def _listen(
        self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        """Every server's lobby notices, from PostgreSQL's NOTIFY, on a connection of their own
        (read when its socket is readable: no thread waits). A lost connection is opened again
        (after `RECONNECT_FIRST`, doubling to `RECONNECT_MAX` seconds while it cannot be), and
        the listing read again, for the notices sent while nobody here listened."""
        delay = RECONNECT_FIRST
        listened = False
        while True:
            try:
                conn = await trio.to_thread.run_sync(
                    lambda: connect(self.url, purpose=f"spades-server listen {self.worker}")
                )
            except StorageError:
                await trio.sleep(delay)
                delay = min(delay * 2, RECONNECT_MAX)
                continue
            try:
                conn.execute(f"LISTEN {membership.LOBBY_CHANNEL}")
                if listened:
                    await self._relearn()
                    log.warning("cluster_listening_again", worker=self.worker)
                else:
                    listened = True
                    task_status.started()
                delay = RECONNECT_FIRST
                pg = conn.pgconn
                while True:
                    pg.consume_input()  # first: libpq may hold notices it read already
                    while (note := pg.notifies()) is not None:
                        self._notice(json.loads(note.extra.decode()))
                    await trio.lowlevel.wait_readable(pg.socket)
            except UNREACHABLE as exc:
                log.warning("cluster_listen_lost", error=" ".join(str(exc).split()))
            finally:
                conn.close()
            await trio.sleep(delay)

    async def _relearn(self) -> None:
        """The other servers' listing as the store has it now (after notices may have been
        missed): tables learnt or changed, and those gone told closed."""
        assert self.lobby is not None
        found = await self.run_statement(lambda c: membership.listing(c, self.worker))
        for table_id, (owner, info) in found.items():
            self._learn(owner, table_id, info)
        for table_id in [t for t, e in self.remote.items() if e.owner and t not in found]:
            gone = self.remote.pop(table_id)
            if gone.config is not None:
                self.lobby.tell(TableClosed(table=table_id), gone.config.game)

    def _notice(self, notice: dict[str, Any]) -> None:
        assert self.lobby is not None
        worker = notice.get("worker")
        if worker == self.worker:
            return
        if "info" in notice:
            table_id = notice["info"]["table"]["table"]
            self._learn(str(worker), table_id, notice["info"])
            message = from_wire(notice["info"])
            assert isinstance(message, TableChanged)
            self.lobby.tell(message, message.table.game.value)
        elif "closed" in notice:
            gone = self.remote.pop(notice["closed"], None)
            if gone is not None and gone.config is not None:
                self.lobby.tell(TableClosed(table=gone.table_id), gone.config.game)
        elif "chat" in notice:
            line = from_wire(notice["chat"])
            assert isinstance(line, ChatMessage)
            self.lobby.tell_members(line)
        elif "operator" in notice and isinstance(notice["operator"], dict):
            self.on_operator(notice["operator"])
        elif "adopted" in notice and self._nursery is not None:
            for table_id in notice["adopted"]:
                entry = self.remote.get(table_id)
                if entry is not None:
                    entry.owner = str(worker)
            self._nursery.start_soon(self._resume_at, str(worker))
        elif "ladder" in notice:
            self.ladder.worker = str(worker)

    async def _resume_at(self, worker: str) -> None:
        """Another server took tables over: ask it to give our logged-in sessions' seats back."""
        for local_id, (_peer, account) in list(self._sessions.items()):
            if account is not None:
                self.links.send(worker, Resume(local_id, account))

    def _learn(self, owner: str, table_id: str, changed: dict[str, Any]) -> None:
        message = from_wire(changed)
        assert isinstance(message, TableChanged)
        config = TableConfig.from_json(changed["config"]) if "config" in changed else None
        known = self.remote.get(table_id)
        if config is None:
            if known is None:
                return
            config = known.config
        self.remote[table_id] = RemoteTable(table_id, config, message.table, owner, self.forward)

    def published(self, table_id: str, info: TableInfo | None, config: TableConfig | None) -> None:
        """One of our tables changed (or closed: `info` None): publish it soon (coalesced). Not
        while this server stops: its tables are then handed over, not closed."""
        if self.stopping:
            return
        if info is None or config is None:
            self._dirty[table_id] = None
        else:
            self._dirty[table_id] = {
                **to_wire(TableChanged(table=info)),
                "config": config.to_json(),
            }
        self._publish_wanted.set()

    def chat(self, line: ChatMessage) -> None:
        self._chat.append(to_wire(line))
        self._publish_wanted.set()

    def tell_servers(self, order: dict[str, Any]) -> None:
        """An operator's order (server.operator) for every other server of the cluster: on the
        lobby's NOTIFY channel, in order, kept while the database is away."""
        self._orders.append(order)
        self._publish_wanted.set()

    async def _publish(self) -> None:
        while True:
            await self._publish_wanted.wait()
            self._publish_wanted = trio.Event()
            changes, self._dirty = self._dirty, {}
            chats, self._chat = self._chat, []
            orders, self._orders = self._orders, []
            try:
                if changes:
                    await self.run_statement(
                        lambda c, changes=changes: membership.publish(c, self.worker, changes)  # type: ignore[misc]
                    )
                for line in chats:
                    await self.run_statement(
                        lambda c, line=line: c.execute(  # type: ignore[misc]
                            "SELECT pg_notify(%s, %s)",
                            (
                                membership.LOBBY_CHANNEL,
                                json.dumps({"chat": line, "worker": self.worker}),
                            ),
                        )
                    )
                while orders:
                    notice = json.dumps({"operator": orders[0], "worker": self.worker})
                    await self.run_statement(
                        lambda c, notice=notice: c.execute(  # type: ignore[misc]
                            "SELECT pg_notify(%s, %s)", (membership.LOBBY_CHANNEL, notice)
                        )
                    )
                    orders.pop(0)
            except UNREACHABLE as exc:
                # Kept, and published once the database is back (a later change of the same
                # table replaces its line; chat keeps its order).
                log.warning("publish_failed", error=" ".join(str(exc).split()))
                self._dirty = {**changes, **self._dirty}
                self._chat = chats + self._chat
                self._orders = orders + self._orders
                await trio.sleep(RECONNECT_MAX)
                self._publish_wanted.set()

    async def opening(self, table_id: str) -> None:
        """A table of ours is about to run: its ownership row first (so no other server ever
        takes it for an orphan). Raises `StorageError` if the database refuses it (nothing opened:
        the client is told the server could not save that, as for the table's own row)."""
        try:
            await self.run_statement(lambda c: membership.own(c, self.worker, table_id))
        except psycopg.Error as exc:
            raise StorageError(f"table {table_id} not owned: {exc}") from None

    def remote_table(self, table_id: str, code: str | None) -> RemoteTable | None:
        entry = self.remote.get(table_id)
        if entry is None:
            # Perhaps opened a moment ago, before its notice reached us: looked up when used.
            return RemoteTable(table_id, None, None, "", self.forward, code)
        return entry

    def listing(
        self, game: str | None, status: TableStatus | None, open_seats: bool, after: str
    ) -> list[TableInfo]:
        found: list[TableInfo] = []
        for table_id in sorted(t for t in self.remote if t >= after):
            info = self.remote[table_id].info
            if info is None:
                continue
            if game is not None and info.game.value != game:
                continue
            if status is not None and info.status is not status:
                continue
            if open_seats and (
                info.status is not TableStatus.WAITING
                or all(seat.player is not None or seat.bot for seat in info.seats)
            ):
                continue
            found.append(info)
        return found

    # ---------------------------------------------------------------- the hop

    def remember(self, peer: Peer, account: Account | None = None) -> None:
        known = self._sessions.get(peer.peer_id)
        if account is None and known is not None:
            account = known[1]
        self._sessions[peer.peer_id] = (peer, account)

    def forward(self, table: RemoteTable, command: Command) -> None:
        """Hand `command` to the server that runs `table` (looked up first if need be)."""
        assert not isinstance(command, CloseUnoccupiedCommand)  # a table's own, never forwarded
        self.remember(command.peer, getattr(command, "account", None))
        waiting = self._looking_up.get(table.table_id)
        if waiting is not None:  # a look-up is under way: after the commands before this one
            waiting.append((table, command))
            return
        if table.pending or not table.owner:
            if self._nursery is not None:
                self._looking_up[table.table_id] = [(table, command)]
                self._nursery.start_soon(self._look_up_and_forward, table.table_id)
            return
        self.links.send(table.owner, command_to_link(table.table_id, command))

    async def _look_up_and_forward(self, table_id: str) -> None:
        """A table not (yet) known here, or whose server died: ask the store who runs it, then
        forward the commands that waited, in order, or refuse them."""
        try:
            found = await self.run_statement(lambda c: membership.find(c, table_id))
        except UNREACHABLE:
            found = None
        for table, command in self._looking_up.pop(table_id, []):
            assert not isinstance(command, CloseUnoccupiedCommand)
            refusal = None
            if found is None or found[0] == self.worker:
                refusal = error_for(
                    ErrorCode.NO_SUCH_TABLE, f"no table {table_id!r}", command.request_id
                )
            elif found[1].private and table.pending and table.code != found[1].code:
                refusal = error_for(
                    ErrorCode.PRIVATE_TABLE,
                    "this table is private: the join code is wrong",
                    command.request_id,
                )
            else:
                known = self.remote.get(table_id)
                if known is not None and not known.owner:
                    known.owner = found[0]
                self.links.send(found[0], command_to_link(table_id, command))
            if refusal is not None and not isinstance(command, LeaveCommand):
                command.peer.deliver(refusal)

    def resume(self, peer: Peer, account: Account) -> None:
        """A login: every other server gives back the account's seats it holds for nobody."""
        self.remember(peer, account)
        for entry in list(self._addresses):
            if entry != self.worker:
                self.links.send(entry, Resume(peer.peer_id, account))

    def forget(self, peer: Peer) -> None:
        """Our session is gone: the servers that held it are told (its tables were told to
        hold its seats by the session's own leave commands, forwarded as any)."""
        if self._sessions.pop(peer.peer_id, None) is None:
            return
        for worker in list(self._addresses):
            if worker != self.worker:
                self.links.send(worker, Gone(peer.peer_id))

    def _on_link(self, origin: str, message: Established) -> None:
        """A message from server `origin` (proved: `server.cluster.link`), checked as it arrived.
        Never blocks: the link's reader calls it for each message in turn."""
        match message:
            case Deliver():
                self._delivered(message.to, message.body)
            case Resume():
                # The account's held seats at our tables, each a join in that table's queue.
                assert self.lobby is not None
                peer = self.peer_at(origin, message.peer)
                for table in self.lobby.tables.values():
                    if table.resumable_by(message.account.id):
                        # Told, like a forwarded join's table, when that session goes.
                        self._touched.setdefault(peer, set()).add(table.table_id)
                        self._submit(
                            peer,
                            table,
                            JoinCommand(peer=peer, account=message.account, reattach=True),
                        )
            case Gone():
                self._drop(self._peers.pop((origin, message.peer), None))
            case LadderAsk():
                assert self._nursery is not None
                self.ladder.request(origin, message, self._nursery)
            case LadderAnswer():
                self.ladder.answered(message)
            case _:
                self._forwarded(origin, message)

    def _undelivered(self, worker: str, messages: list[Established]) -> None:
        """What we queued for server `worker` never left (the link failed, or was refused): the
        requests of our sessions in it are answered, not left waiting (the table may have moved
        by the time they try again: a dead server's tables are taken over within seconds)."""
        for message in messages:
            if not isinstance(message, Forward) or message.rid is None:
                continue
            entry = self._sessions.get(message.peer)
            if entry is not None:
                entry[0].deliver(
                    error_for(
                        ErrorCode.NO_SUCH_TABLE,
                        f"the server running table {message.table!r} cannot be reached; "
                        "try again in a few seconds",
                        message.rid,
                    )
                )

    def _forwarded(self, origin: str, message: Forward) -> None:
        """A command of a session of `origin` for one of our tables. The peer is named within
        `origin`'s own sessions: a server can only ever speak for its own connections."""
        assert self.lobby is not None
        peer = self.peer_at(origin, message.peer)
        command = command_from_link(message, peer)
        table = self.lobby.tables.get(message.table)
        if table is None:
            answer = answer_unserved(command)
            if answer is not None:
                answer[0].deliver(answer[1])
            return
        self._touched.setdefault(peer, set()).add(table.table_id)
        self._submit(peer, table, command)

    def _submit(self, peer: Peer, table: Table, command: Command) -> None:
        """Into the table's inbox, or its bounded queue of commands waiting for room; refused
        `server_full` when that is full too (the table is that far behind)."""
        assert self.lobby is not None
        if not self.lobby.submit_later(table, command):
            request_id = getattr(command, "request_id", None)
            if request_id is not None:
                peer.deliver(
                    error_for(
                        ErrorCode.SERVER_FULL,
                        "the table has too many commands waiting; try again",
                        request_id,
                    )
                )

    def peer_at(self, origin: str, local_id: str) -> RemotePeer:
        key = (origin, local_id)
        peer = self._peers.get(key)
        if peer is None:
            peer = RemotePeer(local_id, origin, self._deliver_back, self._deliver_shared_back)
            self._peers[key] = peer
        return peer

    def _deliver_back(self, peer: RemotePeer, message: Message) -> None:
        # A table tells the same message to several peers, one after the other: it is encoded once
        # for all of them (and decoded once by their server, `_delivered`).
        if message is not self._last_sent:
            self._last_sent = message
            self._last_body = encode_body(message)
        self.links.send(peer.origin, Deliver((peer.local_id,), self._last_body))

    def _deliver_shared_back(self, peer: RemotePeer, shared: SharedEvent) -> None:
        # An event's bytes as the table's own sessions get them (`seq` 0): the same bytes object
        # for everyone it is told to, so the link's writer merges their deliveries (`merge`).
        self.links.send(peer.origin, Deliver((peer.local_id,), shared.frames().body()))

    def _delivered(self, to: tuple[str, ...], body: bytes) -> None:
        """What another server's table told some of our sessions. An event passes through: its
        bytes, undecoded and unchecked (the link is authenticated: only a member of the cluster,
        running this code, could have sent them), each session splicing in its own `seq`. Any
        other message (a reply: `ok`, `error`, `joined`) is decoded once for all of them, and for
        the next deliveries of the same bytes. Raises `LinkError` (the link closes) for bytes
        that are no message a server sends."""
        if body != self._last_body_in:
            received: SharedEvent | Message
            try:
                frames = EventFrames.from_body(body)
                received = SharedEvent(frames) if frames else decode(body, Sender.SERVER)
            except ProtocolError as exc:
                raise LinkError(f"deliver.body: {exc}") from None
            self._last_body_in = body
            self._last_in = received
        received_now = self._last_in
        for local_id in to:
            entry = self._sessions.get(local_id)
            if entry is None:
                continue
            if isinstance(received_now, SharedEvent):
                entry[0].deliver_shared(received_now)
            elif received_now is not None:
                entry[0].deliver(received_now)

    def _drop(self, peer: RemotePeer | None) -> None:
        """A remote connection is gone: its tables hold its seats as for any dropped one."""
        if peer is None or not peer.alive:
            return
        peer.alive = False
        for table_id in self._touched.pop(peer, set()):  # (only a node with a lobby has any)
            assert self.lobby is not None
            table = self.lobby.tables.get(table_id)
            if table is not None:
                self.lobby.submit_later(
                    table, LeaveCommand(peer=peer, reason=LeaveReason.DISCONNECTED)
                )
        self.ladder.connection_closed(peer)

    def _on_lost(self, worker: str) -> None:
        for key in [k for k in self._peers if k[0] == worker]:
            self._drop(self._peers.pop(key))

    def _forget_server(self, worker: str) -> None:
        self._on_lost(worker)
        self._addresses.pop(worker, None)
        if self.ladder.worker == worker:
            self.ladder.worker = None
        for table_id in [t for t, e in self.remote.items() if e.owner == worker]:
            entry = self.remote[table_id]
            entry.owner = ""  # until its new owner says; commands to it are answered by nobody


@asynccontextmanager
async def member_of_cluster(
    url: str | None, host: str, address: str | None, link: LinkConfig | None = None
) -> AsyncIterator[ClusterNode]:
    """`async with member_of_cluster(...) as node:` this server's node, registered, its lease
    kept; the server's store opens inside it with `node.fence`."""
    if url is None:
        raise ValueError("several servers share a PostgreSQL database (--db postgresql://...)")
    if address is None:  # the command line gives this machine's LAN address for 0.0.0.0
        address = "127.0.0.1" if host in ("0.0.0.0", "") else host
    node = ClusterNode(url, "0.0.0.0" if host in ("", "0.0.0.0") else host, address, link=link)
    async with node.running():
        yield node
