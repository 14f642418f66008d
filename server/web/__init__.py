"""The web port: the browser client's page and the protocol over WebSocket, on one HTTP port.

`serve_web()` is the one entry point the server calls. Each accepted connection is HTTP/1.1
(`server.web.http`): the page's files, or an upgrade at `/ws` to a WebSocket, which becomes one more
stream into the server's sessions (`server.web.websocket.WebSocketStream`), started in the
server's own connection nursery with the peer's real address (for the per-address limits). Until
it is answered or upgraded, a connection holds one of the HTTP slots, shared between addresses
(`server.web.slots`). The page itself is `server/web/static/` (docs/web.md).
"""

from __future__ import annotations

import contextlib
import errno
import ssl
from collections.abc import Awaitable, Callable, Iterable, Sequence
from functools import partial

import structlog
import trio

from server.web.http import HttpConnection, WebLimits
from server.web.names import HostNames
from server.web.ops import Routes
from server.web.slots import HttpSlots, Refusal, Slot
from server.web.static_files import StaticFile, load_site

__all__ = ["RunSession", "WebLimits", "WebPortError", "serve_web"]

log = structlog.get_logger("server.web")

REFUSE_TIMEOUT = 2.0  # seconds to write the answer to a connection refused for want of a slot
# Then what it sent is read for at most this long (and this much) before it is closed: short, since
# a refused connection holds no slot and a flood of them must not hold descriptors for long.
REFUSE_LINGER = 0.25
MAX_LINGERING_REFUSALS = 64  # beyond these at once (a flood), a refused connection is just closed
REFUSE_DRAIN_BYTES = 16 * 1024
ACCEPT_RETRY_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}
ACCEPT_RETRY_SLEEP = 0.1

# Runs one session over a stream, given the peer's address as "host:port"; returns when it is over.
RunSession = Callable[[trio.abc.Stream, str], Awaitable[None]]


class WebPortError(OSError):
    """The web port cannot be listened on (`errno` and `strerror` are the system's); `web_port`
    names it, so the one line the operator reads names the right port."""

    def __init__(self, code: int | None, reason: str, web_port: int) -> None:
        super().__init__(code, reason)
        self.web_port = web_port


async def serve_web(
    run_session: RunSession,
    *,
    host: str,
    port: int,
    tls: ssl.SSLContext | None,
    max_message_bytes: int,
    session_nursery: trio.Nursery,
    optional: bool = False,
    limits: WebLimits | None = None,
    names: Iterable[str] = (),
    ops: Routes | None = None,
    listeners: Sequence[trio.SocketListener] | None = None,
    task_status: trio.TaskStatus[int | None] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Listen on `host:port` (0: any free port) until cancelled; `task_status.started(port)`.
    `listeners`: already bound (`bind_web_port`), instead.

    Sessions are started in `session_nursery` (so they outlive this listener until the server says
    `bye`); HTTP connections not yet upgraded belong to this task and end with it. Raises
    `OSError` naming the web port if it cannot be bound, unless `optional`: then it logs why,
    reports `started(None)` and returns (the server goes on without its page). `names`: the DNS
    names it answers for besides IP addresses, `localhost` and `host` if it is a name
    (`--web-name`; server/web/names.py). `ops` answers `/healthz`, `/readyz` and `/metrics`
    (`server.health`).
    """
    web = _WebListener(
        run_session,
        tls,
        max_message_bytes,
        session_nursery,
        limits or WebLimits(),
        names=HostNames(names, listening_on=host),
        ops=ops,
    )
    if listeners is None:
        listeners = await bind_web_port(host, port, optional=optional)
        if listeners is None:
            task_status.started(None)
            return
    bound = int(listeners[0].socket.getsockname()[1])
    log.info("web_listening", host=host, port=bound, tls=tls is not None)
    async with trio.open_nursery() as http_nursery:
        for listener in listeners:
            http_nursery.start_soon(web.accept, listener, http_nursery)
        task_status.started(bound)


async def bind_web_port(
    host: str, port: int, *, optional: bool = False
) -> list[trio.SocketListener] | None:
    """The web port, bound (`serve` binds it before it opens the database, as the game port: a
    busy port is one line and nothing is created). Raises `WebPortError` naming the port if it
    cannot be bound, unless `optional`: then it logs why and returns None."""
    try:
        return await trio.open_tcp_listeners(port, host=host)
    except OSError as exc:
        if optional:
            log.warning("web_port_unavailable", port=port, error=exc.strerror or str(exc))
            return None
        raise WebPortError(exc.errno, f"web port {port}: {exc.strerror or exc}", port) from None


class _WebListener:
    def __init__(
        self,
        run_session: RunSession,
        tls: ssl.SSLContext | None,
        max_message_bytes: int,
        session_nursery: trio.Nursery,
        limits: WebLimits,
        *,
        names: HostNames,
        ops: Routes | None = None,
    ) -> None:
        self.run_session = run_session
        self.names = names
        self.ops = ops
        self.tls = tls
        self.max_message_bytes = max_message_bytes
        self.session_nursery = session_nursery
        self.limits = limits
        self.site: dict[str, StaticFile] = load_site()
        self.slots = HttpSlots(limits.max_connections, limits.per_address)
        self.lingering_refusals = 0

    async def accept(self, listener: trio.SocketListener, nursery: trio.Nursery) -> None:
        """Accept connections until cancelled. (Not `trio.serve_listeners`: it closes a stream
        when its handler returns, and an upgraded one lives on in its session.)"""
        async with listener:
            while True:
                try:
                    tcp = await listener.accept()
                except OSError as exc:
                    if exc.errno not in ACCEPT_RETRY_ERRNOS:
                        raise
                    # Out of descriptors or memory: wait for some to be freed, as trio does.
                    log.warning("web_accept_failed", error=str(exc))
                    await trio.sleep(ACCEPT_RETRY_SLEEP)
                    continue
                nursery.start_soon(self.handle, tcp)

    async def handle(self, tcp: trio.SocketStream) -> None:
        """One HTTP connection: refused, answered and closed, or upgraded and made a session."""
        try:
            address = tcp.socket.getpeername()
            peer = (str(address[0]), int(address[1]))
        except OSError:
            await trio.aclose_forcefully(tcp)
            return
        slot = self.slots.take(peer[0])
        if isinstance(slot, Refusal):
            await self._refuse(tcp, slot)
            return
        upgraded = None
        http: HttpConnection | None = None
        try:
            stream = await self._secure(tcp, slot)
            if stream is not None:
                http = HttpConnection(
                    stream,
                    f"{peer[0]}:{peer[1]}",
                    self.site,
                    self.limits,
                    slot=slot,
                    max_message_bytes=self.max_message_bytes,
                    names=self.names,
                    ops=self.ops,
                )
                upgraded = await http.serve()
        except Exception:
            # One connection's failure is its own; the listener goes on.
            log.exception("web_connection_failed", peer=f"{peer[0]}:{peer[1]}")
            http = None
            await trio.aclose_forcefully(tcp)
        except BaseException:  # cancelled: the web port is closing
            await trio.aclose_forcefully(tcp)
            raise
        finally:
            # Counted out before the socket closes, so a client that sees the close may connect
            # again at once.
            self.slots.release(slot)
        if upgraded is None and http is not None:
            await http.close()
        if upgraded is not None:
            # From here on it is a session like any other (its own limits and timeouts), in the
            # server's nursery of sessions, which says `bye` to it when the server stops.
            self.session_nursery.start_soon(
                partial(self.run_session, upgraded, f"{peer[0]}:{peer[1]}")
            )

    async def _secure(self, tcp: trio.SocketStream, slot: Slot) -> trio.abc.Stream | None:
        """The TLS handshake (when serving https), within the request deadline (its slot may
        be taken back meanwhile); None if it fails (nothing can be said to a peer that does not
        speak TLS)."""
        if self.tls is None:
            return tcp
        stream = trio.SSLStream(tcp, self.tls, server_side=True)
        with slot.waiting(self.limits.request_timeout):
            try:
                await stream.do_handshake()
            except trio.BrokenResourceError:
                await trio.aclose_forcefully(tcp)
                return None
            return stream
        await trio.aclose_forcefully(tcp)
        return None

    async def _refuse(self, tcp: trio.SocketStream, why: Refusal) -> None:
        """Too many HTTP connections (from this address, or at all): a plain 503 (over TLS
        nothing can be said before a handshake we will not spend time on), then close."""
        if self.tls is None:
            if why is Refusal.ADDRESS_FULL:
                body = (
                    f"503 too many connections from your address "
                    f"({self.slots.per_address} at most); try again\n"
                ).encode()
            else:
                body = b"503 the server has too many connections open; try again\n"
            head = (
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
                b"Connection: close\r\nRetry-After: 5\r\nContent-Length: "
                + str(len(body)).encode()
                + b"\r\n\r\n"
            )
            try:
                with (
                    trio.move_on_after(REFUSE_TIMEOUT),
                    contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError),
                ):
                    await tcp.send_all(head + body)
                if self.lingering_refusals < MAX_LINGERING_REFUSALS:
                    self.lingering_refusals += 1
                    try:
                        await _linger(tcp)
                    finally:
                        self.lingering_refusals -= 1
            finally:
                await trio.aclose_forcefully(tcp)
        else:
            await trio.aclose_forcefully(tcp)


async def _linger(tcp: trio.SocketStream) -> None:
    """Half-close and read what the client sent until it closes too (a little, briefly): closing
    with its request unread would reset the connection, and the reset can destroy the answer
    before the client reads it."""
    with (
        trio.move_on_after(REFUSE_LINGER),
        contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError),
    ):
        await tcp.send_eof()
        drained = 0
        while drained < REFUSE_DRAIN_BYTES:
            data = await tcp.receive_some(REFUSE_DRAIN_BYTES)
            if not data:
                break
            drained += len(data)
