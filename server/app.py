"""The server as a whole: store, lobby, listener, connections, and an orderly shutdown.

`serve()` is the task the CLI runs; `running_server()` starts one in-process for tests and tools:

    async with running_server(ServerConfig(host="127.0.0.1", port=0, db_path=tmp_path / "s.db")) as srv:
        stream = await trio.open_tcp_stream("127.0.0.1", srv.port)

Shutdown order (on `request_stop()`, SIGINT/SIGTERM, or leaving `running_server`): stop accepting,
tell every client `bye`, stop the tables (an action already handed to the store still commits), then
drain the store's queue and close the database cleanly.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import structlog
import trio

from engine.version import project_version
from server.config import LogFormat, ServerConfig, configure_logging
from server.lobby import Lobby
from server.session import Session
from server.storage import Store, open_store
from server.tls import server_context

if TYPE_CHECKING:
    import ssl

log = structlog.get_logger("server.app")

SHUTDOWN_FLUSH = 2.0  # seconds given to clients to receive `bye` before their sockets close


class Server:
    """Shared state of a running server. Owned by `serve()`; sessions and tables hold a reference."""

    def __init__(
        self, config: ServerConfig, store: Store, tls: ssl.SSLContext | None = None
    ) -> None:
        self.config = config
        # Read from the package metadata once: every `welcome` says it.
        self.server_version = project_version()
        self.tls = tls  # set: every accepted stream is wrapped in TLS (server side)
        self.store = store
        self.sessions: set[Session] = set()
        self._per_host: Counter[str] = Counter()  # open sessions by peer address
        self.lobby = Lobby(self)
        self.port = 0
        self.web_port: int | None = None  # the web port once bound (server/web/), if any
        self.stopping = False
        self._stop = trio.Event()
        self.connections_nursery: trio.Nursery | None = None

    def request_stop(self) -> None:
        """Begin a graceful shutdown (idempotent)."""
        self._stop.set()

    async def handle_connection(
        self, stream: trio.abc.Stream, peer: tuple[str, int] | None = None
    ) -> None:
        """The task of one connection (one task group: reader here, writer inside the session).

        `peer` (host, port) comes from a listener that has made the stream itself (the web port:
        a WebSocket, its TLS already done); without it the stream is a TCP socket, read here."""
        wrapped: trio.abc.Stream = stream
        if peer is not None:
            host, port = peer
        else:
            assert isinstance(stream, trio.SocketStream)
            try:
                host, port = stream.socket.getpeername()[:2]
            except OSError:
                host, port = "?", 0
            # The TLS handshake itself happens on the first read or write, under the session's
            # handshake deadline (or the refusal's flush timeout), so it cannot pin a connection.
            if self.tls is not None:
                wrapped = trio.SSLStream(stream, self.tls, server_side=True)
        session = Session(self, wrapped, f"{host}:{port}")
        session.host = str(host)
        limits = self.config.limits
        from_there = self._per_host[session.host]
        if (
            self.stopping
            or len(self.sessions) >= limits.max_connections
            or from_there >= limits.max_connections_per_address
        ):
            # One address cannot take every connection and lock the others out.
            await session.refuse_and_close()
            return
        self.sessions.add(session)
        self._per_host[session.host] += 1
        try:
            await session.run()
        except Exception:
            # One connection's failure is its own; the listener and the tables go on.
            log.exception("session_failed", peer=session.peer)
        finally:
            self.sessions.discard(session)
            self._per_host[session.host] -= 1
            if not self._per_host[session.host]:
                del self._per_host[session.host]

    async def reap_idle(self) -> None:
        """Let go of every session that has sent no whole message for `limits.idle_timeout`, and
        close every waiting table that has had nobody seated for `waiting_table_ttl`.

        One sweep a second (or four per timeout, if shorter) for the whole server, rather than a
        timer per message on every connection: a timer per message is a deadline added to and
        removed from trio's heap each time, which costs every connection on every message. (A
        timer per waiting table would be cheap, but the sweep is already here.)
        """
        idle = self.config.limits.idle_timeout
        ttl = self.config.waiting_table_ttl
        timeouts = [t for t in (idle, ttl) if t > 0]
        if not timeouts:
            return
        period = min(1.0, *(t / 4 for t in timeouts))
        while True:  # until the server's nursery is cancelled
            await trio.sleep(period)
            now = trio.current_time()
            if idle > 0:
                cutoff = now - idle
                for session in self.sessions:  # no await inside: the set cannot change meanwhile
                    session.let_go_if_idle(cutoff, idle)
            if ttl > 0:
                self.lobby.close_unoccupied(now, ttl)

    async def wait_stopped(self) -> None:
        await self._stop.wait()


async def serve(
    config: ServerConfig, *, task_status: trio.TaskStatus[Server] = trio.TASK_STATUS_IGNORED
) -> None:
    """Run a server until `request_stop()` (or cancellation); `task_status.started(server)`.

    The bound port is `server.port` (useful with port 0). Raises `OSError` if the address cannot
    be bound, `StorageError` if the database cannot be opened and `TLSConfigError` if
    `tls_cert`/`tls_key` cannot be loaded; nothing is left running then.
    """
    if not structlog.is_configured():
        # Embedded without a logging setup (tests, tools): log to the process's stderr.
        configure_logging(LogFormat.console, process_stderr=True)
    tls = None
    if config.tls_cert is not None or config.tls_key is not None:
        if config.tls_cert is None or config.tls_key is None:
            raise ValueError("TLS needs both tls_cert and tls_key")
        tls = server_context(config.tls_cert, config.tls_key)
    async with open_store(config.db_path, config.durability) as store:
        server = Server(config, store, tls)
        async with trio.open_nursery() as tables_nursery:
            await server.lobby.start(tables_nursery)
            if config.ladder:
                await _start_ladder(server, tables_nursery)
            async with trio.open_nursery() as connections:
                server.connections_nursery = connections
                listeners = await trio.open_tcp_listeners(config.port, host=config.host)
                server.port = listeners[0].socket.getsockname()[1]
                try:
                    async with trio.open_nursery() as accepting:
                        # Stops with the listener (cancelled once the server is asked to stop).
                        accepting.start_soon(server.reap_idle)
                        accepting.start_soon(
                            partial(
                                trio.serve_listeners,
                                server.handle_connection,
                                listeners,
                                handler_nursery=connections,
                            )
                        )
                        if config.web_port is not None:  # the browser page (server/web/)
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
                                )
                            )
                        log.info(
                            "listening",
                            host=config.host,
                            port=server.port,
                            db=str(config.db_path),
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
            tables_nursery.cancel_scope.cancel()
    log.info("stopped")


async def _start_ladder(server: Server, nursery: trio.Nursery) -> None:
    """Start the rated bot ladder (server/ladder/, its own owner) beside the tables.

    The ladder is a service on top of the tables: if it cannot start, the server still serves
    tables, and the log says why.
    """
    from server.ladder import hooks as ladder_hooks

    async def guarded(*, task_status: trio.TaskStatus[Any] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            await ladder_hooks.run_ladder(
                server, settings=server.config.ladder_settings, task_status=task_status
            )
        except Exception:
            log.exception("ladder_stopped")

    try:
        await nursery.start(guarded)
    except Exception:  # pragma: no cover - a ladder bug at start-up
        log.exception("ladder_not_started")


async def _shut_down(server: Server, listeners: list[trio.SocketListener]) -> None:
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
    await server.lobby.stop()


@asynccontextmanager
async def running_server(config: ServerConfig) -> AsyncIterator[Server]:
    """Start a server in-process (e.g. `port=0` on 127.0.0.1 for tests) and stop it gracefully."""
    async with trio.open_nursery() as nursery:
        server: Server = await nursery.start(serve, config)
        try:
            yield server
        finally:
            server.request_stop()


def local_config(db_path: Path | str, **overrides: Any) -> ServerConfig:
    """A config for tests and tools: 127.0.0.1, port 0, the given database file, and no ladder
    (pass `ladder=True` for one); any other `ServerConfig` field can be overridden too."""
    config = ServerConfig(host="127.0.0.1", port=0, db_path=Path(db_path), ladder=False)
    return replace(config, **overrides)
