"""The operator's port: `/healthz`, `/readyz` and `/metrics` alone, on an address of their own.

`serve --metrics-port N` (bound to `--metrics-host`, 127.0.0.1 unless told), or by default when the
web page is off, so a service manager or Prometheus can always ask. Plain HTTP/1.1, GET and HEAD,
with the web port's own request handling (`server.web.http.HttpConnection`: its deadlines and size
limits, its slots shared between addresses) but no page and no WebSocket, and few connections at
once: a scraper and a probe need one each.
"""

from __future__ import annotations

import contextlib
import errno
from dataclasses import replace

import structlog
import trio

from server.web.http import HttpConnection, WebLimits
from server.web.names import HostNames
from server.web.ops import Routes
from server.web.slots import HttpSlots, Refusal, Slot

log = structlog.get_logger("server.web")

# Fewer than the page's: probes and scrapers, not browsers.
OPS_LIMITS = replace(WebLimits(), max_connections=16)
ACCEPT_RETRY_ERRNOS = {errno.EMFILE, errno.ENFILE, errno.ENOMEM, errno.ENOBUFS}
ACCEPT_RETRY_SLEEP = 0.1


class OpsPortError(OSError):
    """The operator's port cannot be listened on (`errno` and `strerror` are the system's);
    `address` names it, so the one line the operator reads names the right port."""

    def __init__(self, code: int | None, reason: str, address: str) -> None:
        super().__init__(code, reason)
        self.address = address


async def bind_ops_port(host: str, port: int) -> list[trio.SocketListener]:
    """The port's listeners on `host:port` (0: any free port); raises `OpsPortError` if it cannot
    be bound. Bound apart from serving, so `serve` can bind it before it opens the database."""
    try:
        return await trio.open_tcp_listeners(port, host=host)
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise OpsPortError(exc.errno, f"metrics port {port}: {reason}", f"{host}:{port}") from None


async def serve_ops(
    routes: Routes,
    listeners: list[trio.SocketListener],
    *,
    names: HostNames,
    limits: WebLimits = OPS_LIMITS,
    task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Answer `routes` on `listeners` (`bind_ops_port`'s) until cancelled, then close them;
    `started(port)`. `names`: the `Host` names answered besides IP addresses and `localhost`, as
    on the web port (server/web/names.py)."""
    address = listeners[0].socket.getsockname()
    bound = int(address[1])
    log.info("metrics_listening", host=str(address[0]), port=bound)
    answering = _Answering(routes, limits, names)
    async with trio.open_nursery() as nursery:
        for listener in listeners:
            nursery.start_soon(_accept, listener, nursery, answering)
        task_status.started(bound)


class _Answering:
    """What every connection of the port is answered with."""

    def __init__(self, routes: Routes, limits: WebLimits, names: HostNames) -> None:
        self.routes = routes
        self.limits = limits
        self.names = names
        # Shared between addresses as the web port's are (server/web/slots.py).
        self.slots = HttpSlots(limits.max_connections, limits.per_address)


async def _accept(
    listener: trio.SocketListener, nursery: trio.Nursery, answering: _Answering
) -> None:
    async with listener:
        while True:  # until cancelled with the server
            try:
                tcp = await listener.accept()
            except OSError as exc:
                if exc.errno not in ACCEPT_RETRY_ERRNOS:
                    raise
                log.warning("metrics_accept_failed", error=str(exc))
                await trio.sleep(ACCEPT_RETRY_SLEEP)
                continue
            try:
                host, port = tcp.socket.getpeername()[:2]
            except OSError:
                await trio.aclose_forcefully(tcp)
                continue
            slot = answering.slots.take(str(host))
            if isinstance(slot, Refusal):  # a probe or a scraper needs one: no more is owed
                await trio.aclose_forcefully(tcp)
                continue
            nursery.start_soon(_answer, tcp, f"{host}:{port}", slot, answering)


async def _answer(tcp: trio.SocketStream, peer: str, slot: Slot, answering: _Answering) -> None:
    try:
        http = HttpConnection(
            tcp,
            peer,
            {},
            answering.limits,
            slot=slot,
            max_message_bytes=0,
            names=answering.names,
            ops=answering.routes,
            websocket=False,
        )
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            await http.serve()  # never upgrades: no WebSocket here
        await http.close()
    except Exception:
        # One connection's failure is its own; the port goes on.
        log.exception("metrics_connection_failed", peer=peer)
    finally:
        answering.slots.release(slot)
        await trio.aclose_forcefully(tcp)
