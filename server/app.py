"""The server as a whole: the composition root that builds its parts, and an orderly shutdown.

`serve()` is the task the CLI runs; `running_server()` starts one in-process for tests and tools:

    async with running_server(ServerConfig(host="127.0.0.1", port=0, db_path=tmp_path / "s.db")) as srv:
        stream = await trio.open_tcp_stream("127.0.0.1", srv.port)

`Server` builds the store's users (the lobby, the ladder, the sessions) and hands each only what it
needs (`server.ports`): no part holds the server, and none finds another through a registry. `serve`
accepts listeners of any kind (`listeners=`: a `trio.testing.MemoryListener` in tests), and every
connection is one `Session` over a `trio.abc.Stream`.

Shutdown order (on `request_stop()`, SIGINT/SIGTERM, or leaving `running_server`): stop accepting,
tell every client `bye`, stop the tables (an action already handed to the store still commits), then
drain the store's queue and close the database cleanly.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
import trio

from engine.version import project_version
from server import accounts
from server.bans import BanList
from server.config import DEFAULT_METRICS_PORT, LogFormat, ServerConfig, configure_logging
from server.events.service import EventService
from server.hand_analysis import HandAnalysis
from server.hashing import Hashers
from server.health import Health
from server.ladder.desk import NoLadder
from server.ladder.service import LadderService
from server.lobby import Lobby
from server.metrics import transport_of
from server.operator import Operator
from server.peers import SharedEvent
from server.ports import LadderDesk
from server.quotas import AddressQuotas, TokenGuard, network_of
from server.reviews import Reviews
from server.session import Session, SessionServices, service_notice
from server.stats import StatsJob
from server.storage import StorageError, Store, open_store
from server.storage.target import shown
from server.tls import link_client_context, server_context
from server.web.names import HostNames
from server.web.ops_port import OpsPortError, bind_ops_port, serve_ops

if TYPE_CHECKING:
    import ssl

    from server.cluster.node import ClusterNode

log = structlog.get_logger("server.app")

SHUTDOWN_FLUSH = 2.0  # seconds given to clients to receive `bye` before their sockets close


class Server:
    """The running server's parts and its connections. Built and owned by `serve()`."""

    def __init__(
        self, config: ServerConfig, store: Store, tls: ssl.SSLContext | None = None
    ) -> None:
        self.config = config
        self.store = store
        self.tls = tls  # set: every accepted stream is wrapped in TLS (server side)
        self.lobby = Lobby(store, config)
        self.ladder: LadderService | None = None
        self.sessions: set[Session] = set()
        self._per_host: Counter[str] = Counter()  # open sessions by network (`network_of`)
        self.port = 0
        self.web_port: int | None = None  # the web port once bound (server/web/), if any
        self.stopping = False
        self._stop = trio.Event()
        # Read from the package metadata once: every `welcome` says it.
        self._version = project_version()
        self._services: SessionServices | None = None
        self.ladder_desk: LadderDesk | None = None  # in a cluster: the cluster's (server/cluster/)
        # What one network address may do, whatever its connections (guests made, lobby chat).
        self.quotas = AddressQuotas.from_limits(config.limits)
        self.node: ClusterNode | None = None  # this server's part in a cluster, if clustered
        self.metrics_port: int | None = None  # the operator's port once bound, if any
        # /healthz, /readyz, /metrics (server.health) and the figures counted as the server goes.
        self.health = Health(self, self._version)
        metrics = self.health.metrics
        store.on_commit = metrics.store_commit.observe
        self.lobby.meter = metrics.actions
        # Wrong tokens per address and account; old slow token hashes on threads of their own.
        self.tokens = TokenGuard(config.limits)
        self.hashers = Hashers.make(per_address=config.limits.hash_queue_per_address)
        # The operator's requests and the bans they make (server.operator).
        self.bans = BanList()
        self.operator = Operator(store, self.lobby, self.sessions, self.bans)
        self.operator.guard = self.tokens
        # Player statistics, counted after each hand off the tables' tasks (server.stats).
        self.stats = StatsJob(store)
        self.lobby.on_hand = self.stats.post
        # Events (server/events/): its service resumes the tables of an event after a restart with
        # their event's policy, so the lobby asks it (before the lobby starts). None in a cluster.
        self.events: EventService | None = None
        self.analysis: HandAnalysis | None = None
        # Clients' hand reviews (server.reviews), bounded for all connections together.
        self.reviews = Reviews(config.limits)
        if config.hand_analysis:
            self.analysis = HandAnalysis(store)
            self.stats.on_counted = self.analysis.post

    def tell_service(self, available: bool) -> None:
        """The store went down or came back: every connection is told (`service_paused`), the
        event encoded once for all of them."""
        lasted = self.store.health.periods[-1] if available and self.store.health.periods else None
        notice = service_notice(available, 0.0 if lasted is None else lasted[1] - lasted[0])
        shared = SharedEvent(notice)
        for session in list(self.sessions):
            session.tell_service(shared)

    def request_stop(self) -> None:
        """Begin a graceful shutdown (idempotent)."""
        self._stop.set()

    @property
    def stop_requested(self) -> bool:
        """Whether the server is stopping (or asked to): /readyz says no from then on."""
        return self.stopping or self._stop.is_set()

    def services(self) -> SessionServices:
        """What every session is given (made once the ladder is up, or known not to be)."""
        if self._services is None:
            desk: LadderDesk = self.ladder if self.ladder is not None else NoLadder(self.store)
            if self.ladder_desk is not None:
                desk = self.ladder_desk
            self._services = SessionServices(
                config=self.config,
                server_version=self._version,
                store=self.store,
                lobby=self.lobby,
                ladder=desk,
                is_stopping=lambda: self.stopping,
                quotas=self.quotas,
                refused=self.health.metrics.refused,
                tokens=self.tokens,
                hashers=self.hashers,
                bans=self.bans,
                operator=self.operator,
                events=self.events,
                reviews=self.reviews,
            )
        return self._services

    async def handle_connection(self, stream: trio.abc.Stream, peer: str | None = None) -> None:
        """The task of one connection (one task group: reader here, writer inside the session).

        `peer` is the client's address as `host:port`; when None it is read from the socket (a
        stream with none, as in tests over memory streams, is `memory:0`).
        """
        if peer is None:
            peer = _peer_of(stream)
        # The TLS handshake itself happens on the first read or write, under the session's
        # handshake deadline (or the refusal's flush timeout), so it cannot pin a connection.
        if self.tls is not None and isinstance(stream, trio.SocketStream):
            stream = trio.SSLStream(stream, self.tls, server_side=True)
        session = Session(self.services(), stream, peer)
        self.health.metrics.accepted[transport_of(stream)].inc()
        limits = self.config.limits
        banned = self.bans.why(session.host)
        if banned is not None and not self.stopping:
            await session.refuse_and_close(banned)
            return
        # Counted by network (an IPv6 host by its /64), as every per-address limit is.
        network = network_of(session.host)
        if (
            self.stopping
            or len(self.sessions) >= limits.max_connections
            or self._per_host[network] >= limits.max_connections_per_address
        ):
            # One address cannot take every connection and lock the others out.
            await session.refuse_and_close()
            return
        self.sessions.add(session)
        self._per_host[network] += 1
        try:
            await session.run()
        except Exception:
            # One connection's failure is its own; the listener and the tables go on.
            log.exception("session_failed", peer=session.peer)
        finally:
            self.sessions.discard(session)
            self._per_host[network] -= 1
            if not self._per_host[network]:
                del self._per_host[network]

    async def reap_idle(self) -> None:
        """Let go of every session that has sent no whole message for `limits.idle_timeout`, or
        whose writes made no progress for `limits.write_timeout` (it reads nothing), and close every
        waiting table that has had nobody seated for `waiting_table_ttl`.

        One sweep a second (or four per timeout, if shorter) for the whole server, rather than a
        timer per message on every connection: a timer per message is a deadline added to and
        removed from trio's heap each time, which costs every connection on every message.
        """
        idle = self.config.limits.idle_timeout
        ttl = self.config.waiting_table_ttl
        stall = self.config.limits.write_timeout
        timeouts = [t for t in (idle, ttl, stall) if t > 0]
        if not timeouts:
            return
        period = min(1.0, *(t / 4 for t in timeouts))
        while True:  # until the server's nursery is cancelled
            await trio.sleep(period)
            now = trio.current_time()
            cutoff = now - idle
            for session in self.sessions:  # no await inside: the set cannot change meanwhile
                if idle > 0:
                    session.let_go_if_idle(cutoff, idle)
                if stall > 0:
                    session.connection.check_progress(now)
            if ttl > 0:
                self.lobby.close_unoccupied(now, ttl)

    async def expire_guests(self) -> None:
        """Delete unused guest accounts (`ServerConfig.guest_ttl`), once a minute (or four times
        a ttl, if shorter), until the server stops. The guests of live connections and of seats
        are in use, so they are never deleted, and count as seen."""
        ttl = self.config.guest_ttl
        if ttl <= 0:
            return
        period = min(60.0, ttl / 4)
        while True:  # until the server's nursery is cancelled
            await trio.sleep(period)
            in_use = self.lobby.seated_accounts()
            in_use.update(
                s.account.id for s in self.sessions if s.account is not None and s.account.is_guest
            )
            try:
                gone = await accounts.expire_guests(self.store, ttl, in_use)
            except StorageError as exc:  # the next sweep tries again
                log.warning("guests_not_expired", error=str(exc))
                continue
            if gone:
                log.info("guests_expired", count=gone, ttl_s=ttl)

    async def wait_stopped(self) -> None:
        await self._stop.wait()


def _peer_of(stream: trio.abc.Stream) -> str:
    sock = getattr(stream, "socket", None)
    if sock is None:
        return "memory:0"
    try:
        host, port = sock.getpeername()[:2]
    except OSError:
        return "?:0"
    return f"{host}:{port}"


async def serve(
    config: ServerConfig,
    *,
    listeners: Sequence[trio.abc.Listener[Any]] | None = None,
    task_status: trio.TaskStatus[Server] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run a server until `request_stop()` (or cancellation); `task_status.started(server)`.

    Without `listeners` it listens on `config.host`/`config.port` (the bound port is `server.port`,
    useful with port 0). Raises `OSError` if the address cannot be bound, `StorageError` if the
    database cannot be opened and `TLSConfigError` if `tls_cert`/`tls_key` cannot be loaded;
    nothing is left running then.
    """
    if not structlog.is_configured():
        # Embedded without a logging setup (tests, tools): log to the process's stderr.
        configure_logging(LogFormat.console, process_stderr=True)
    tls = None
    if config.tls_cert is not None or config.tls_key is not None:
        if config.tls_cert is None or config.tls_key is None:
            raise ValueError("TLS needs both tls_cert and tls_key")
        tls = server_context(config.tls_cert, config.tls_key)
    async with contextlib.AsyncExitStack() as cluster:
        if listeners is None:
            # The port first: a busy port (or a host that is not ours) is told before anything
            # else is touched, so a mistyped --port creates no database and migrates nothing.
            # Closed here if what follows fails; closed by `_shut_down` once serving.
            bound = await trio.open_tcp_listeners(config.port, host=config.host)
            for listener in bound:
                cluster.push_async_callback(listener.aclose)
            listeners = bound
        # The operator's port too, if asked for: told before the database is touched.
        ops_listeners = await _bind_ops_port(config)
        for listener in ops_listeners if isinstance(ops_listeners, list) else ():
            cluster.push_async_callback(listener.aclose)
        # And the web page's (None: not wanted, or its default port taken: served without it).
        web_listeners = None
        if config.web_port is not None:
            from server.web import bind_web_port

            web_listeners = await bind_web_port(
                config.host, config.web_port, optional=config.web_port_optional
            )
        for listener in web_listeners or ():
            cluster.push_async_callback(listener.aclose)
        node = None
        if config.cluster:  # one of several servers on one PostgreSQL (server/cluster/)
            from server.cluster.link import LinkConfig
            from server.cluster.node import member_of_cluster

            link = LinkConfig(
                host=config.link_host,
                port=config.link_port,
                secret_file=config.cluster_secret_file,
                tls_server=tls,
                tls_client=None
                if config.tls_cert is None
                else link_client_context(config.tls_cert),
            )
            node = await cluster.enter_async_context(
                member_of_cluster(config.db_url, config.host, config.cluster_address, link)
            )
        await _serve(
            config,
            tls,
            node,
            listeners,
            task_status,
            ops_listeners=ops_listeners,
            web_listeners=web_listeners,
        )


async def _serve(
    config: ServerConfig,
    tls: ssl.SSLContext | None,
    node: ClusterNode | None,
    listeners: Sequence[trio.abc.Listener[Any]],
    task_status: trio.TaskStatus[Server],
    *,
    ops_listeners: list[trio.SocketListener] | OpsPortError | None,
    web_listeners: list[trio.SocketListener] | None,
) -> None:
    fence = None if node is None else node.fence
    async with open_store(config.database, config.durability, fence=fence) as store:
        server = Server(config, store, tls)
        store.health.watch(server.tell_service)
        server.node = node
        if node is not None:
            node.attach(server.lobby)
            node.on_lease_lost = server.request_stop
            # The operator's announce, kick, close and bans reach every server (server.operator).
            node.on_operator = server.operator.obey
            server.operator.cluster = node
            server.ladder_desk = node.ladder.desk(NoLadder(store))
        if node is None:
            server.events = EventService(
                store, server.lobby, config, is_stopping=lambda: server.stopping
            )
            server.lobby.event_policy = server.events.table_policy
        async with trio.open_nursery() as tables_nursery:
            await server.operator.load_bans()  # refused from the first connection on
            await tables_nursery.start(server.stats.run)
            if server.analysis is not None:
                await tables_nursery.start(server.analysis.run)
            await server.lobby.start(tables_nursery)
            if node is not None:
                await tables_nursery.start(node.run)
                if config.ladder:

                    async def start_ladder() -> LadderService | None:
                        server.ladder = await _start_ladder(server, tables_nursery)
                        return server.ladder

                    tables_nursery.start_soon(node.ladder.keep, start_ladder)
            elif config.ladder:
                server.ladder = await _start_ladder(server, tables_nursery)
            if server.events is not None:
                await tables_nursery.start(server.events.run)
            async with trio.open_nursery() as connections:
                if isinstance(listeners[0], trio.SocketListener):  # bound by `serve`, or a worker's
                    server.port = listeners[0].socket.getsockname()[1]
                try:
                    async with trio.open_nursery() as accepting:
                        # Stops with the listener (cancelled once the server is asked to stop).
                        accepting.start_soon(server.reap_idle)
                        accepting.start_soon(server.expire_guests)
                        accepting.start_soon(server.operator.keep_bans)
                        accepting.start_soon(
                            partial(
                                trio.serve_listeners,
                                server.handle_connection,
                                list(listeners),
                                handler_nursery=connections,
                            )
                        )
                        if config.web_port is not None and web_listeners is not None:
                            from server.web import serve_web

                            server.web_port = await accepting.start(
                                partial(
                                    serve_web,
                                    server.handle_connection,
                                    host=config.host,
                                    port=config.web_port,
                                    tls=tls,
                                    max_message_bytes=config.limits.max_frame_bytes,
                                    session_nursery=connections,
                                    optional=config.web_port_optional,
                                    names=config.web_names,
                                    ops=server.health,
                                    listeners=web_listeners,
                                )
                            )
                        # In the tables' nursery: it answers (503 from /readyz) until the
                        # connections are closed, not only until the listeners are.
                        await _start_ops_port(server, tables_nursery, ops_listeners)
                        log.info(
                            "listening",
                            host=config.host,
                            port=server.port,
                            db=shown(config.database),
                            durability=config.durability.value,
                            synchronous=store.synchronous,
                            tls=tls is not None,
                        )
                        task_status.started(server)
                        await server.wait_stopped()
                        accepting.cancel_scope.cancel()
                finally:
                    # Also on cancellation (Ctrl-C in an embedding program): say bye, then close.
                    with trio.CancelScope(shield=True):
                        await _shut_down(server, listeners)
                    server.hashers.close()  # their threads end after the job in hand, if any
            if node is not None:
                node.stopping = True  # its tables are handed over, not closed
            tables_nursery.cancel_scope.cancel()
    log.info("stopped")


async def _bind_ops_port(config: ServerConfig) -> list[trio.SocketListener] | OpsPortError | None:
    """The operator's port, when asked for (`metrics_port`), bound before the database is opened
    (as the game port is: a busy port is one line, and nothing is created). A default port that is
    taken (`metrics_port_optional`) is no error: its `OpsPortError` is returned, to be logged once
    the server is up (a refusal for another reason stays one line)."""
    if config.metrics_port is None:
        return None
    try:
        return await bind_ops_port(config.metrics_host, config.metrics_port)
    except OpsPortError as exc:
        if not config.metrics_port_optional:
            raise
        return exc


async def _start_ops_port(
    server: Server,
    nursery: trio.Nursery,
    bound: list[trio.SocketListener] | OpsPortError | None,
) -> None:
    """Serve /healthz, /readyz and /metrics on the operator's port (`bound`), or, if the web page,
    which answers them too, was wanted but its default port was taken, on the default one (if
    free); a default port that is taken is logged, and the server goes on without it."""
    config = server.config
    host = config.metrics_host
    if bound is None and config.web_port is not None and server.web_port is None:
        try:
            bound = await bind_ops_port(host, DEFAULT_METRICS_PORT)
        except OpsPortError as exc:
            bound = exc
    if isinstance(bound, OpsPortError):
        log.warning("metrics_port_unavailable", address=bound.address, error=bound.strerror)
        return
    if bound is None:
        return
    server.metrics_port = await nursery.start(
        partial(
            serve_ops,
            server.health,
            bound,
            # The web port's names (--web-name) here too, against DNS rebinding as there.
            names=HostNames(config.web_names, listening_on=host),
        )
    )


async def _start_ladder(server: Server, nursery: trio.Nursery) -> LadderService | None:
    """Start the rated bot ladder (server/ladder/) beside the tables.

    The ladder is a service on top of the tables: if it cannot start, the server still serves
    tables (and the stored ladder can still be read), and the log says why.
    """
    try:
        service = LadderService(
            server.store, server.lobby, server.config, is_stopping=lambda: server.stopping
        )
    except ValueError as exc:
        log.error("ladder_not_started", error=str(exc))
        return None

    async def guarded(*, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            await service.run(task_status=task_status)
        except Exception:
            log.exception("ladder_stopped")

    try:
        await nursery.start(guarded)
    except Exception:  # pragma: no cover - a ladder bug at start-up
        log.exception("ladder_not_started")
        return None
    return service


async def _shut_down(server: Server, listeners: Sequence[trio.abc.Listener[Any]]) -> None:
    """Close the listeners, say `bye` to every client, give them a moment, then hang up."""
    server.stopping = True
    for listener in listeners:
        await listener.aclose()
    log.info("shutting_down", sessions=len(server.sessions))
    for session in list(server.sessions):
        session.say_bye("the server is shutting down")
    with trio.move_on_after(SHUTDOWN_FLUSH):
        for session in list(server.sessions):
            await session.connection.closed.wait()
    for session in list(server.sessions):
        session.connection.abort("shutdown")


@asynccontextmanager
async def running_server(
    config: ServerConfig, *, listeners: Sequence[trio.abc.Listener[Any]] | None = None
) -> AsyncIterator[Server]:
    """Start a server in-process (e.g. `port=0` on 127.0.0.1 for tests) and stop it gracefully."""
    async with trio.open_nursery() as nursery:
        server: Server = await nursery.start(partial(serve, config, listeners=listeners))
        try:
            yield server
        finally:
            server.request_stop()


def local_config(db_path: Path | str, **overrides: Any) -> ServerConfig:
    """A config for tests and tools: 127.0.0.1, port 0, the given database file, no ladder (pass
    `ladder=True` for one) and no double-dummy analysis of the hands (`hand_analysis=True`); any
    other `ServerConfig` field can be overridden too."""
    config = ServerConfig(
        host="127.0.0.1", port=0, db_path=Path(db_path), ladder=False, hand_analysis=False
    )
    return replace(config, **overrides)
