"""The link between the servers of a cluster: one TCP connection from each server to each other,
carrying msgpack maps in length-prefixed frames (the protocol's framing), in order.

Each server listens for the others' links (`Links.serve`, on its `--host` and a port of its own,
published in `cluster_workers.link`) and reads what they send; what it sends to one goes out on
its own connection to that one (`Links.send`), opened on first need. A link carries only what
the servers say to each other (commands for a table, what a table delivers to a connection, a
session gone, a login's resume, a ladder request and its answer), never a client's bytes as such.

A link that fails (the other server died or stopped) is reported to `on_lost` with the other's
id; sends to it meanwhile are dropped (there is nobody to give them to: its sessions are gone too,
and its tables are taken over from the store).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgpack
import structlog
import trio

from protocol.framing import FrameDecoder, frame

log = structlog.get_logger("server.cluster")

#: Maps queued for one other server before the link is deemed stuck (and dropped as lost).
QUEUE = 65536
#: The largest frame a link accepts (a snapshot of a table with its spectators fits easily).
MAX_FRAME = 8 * 1024 * 1024
CONNECT_TIMEOUT = 5.0

Handler = Callable[[str, dict[str, Any]], Awaitable[None]]


def pack(data: dict[str, Any]) -> bytes:
    return frame(msgpack.packb(data, use_bin_type=True))


class _Outgoing:
    def __init__(self, peer: str, address: str) -> None:
        self.peer = peer
        self.address = address
        self.send, self.receive = trio.open_memory_channel[bytes](QUEUE)
        self.lost = False


class Links:
    """This server's links: the listener for the others', and a connection to each other."""

    def __init__(
        self,
        worker: str,
        handle: Handler,
        on_lost: Callable[[str], None],
        address_of: Callable[[str], Awaitable[str | None]],
    ) -> None:
        self.worker = worker
        self._handle = handle
        self._on_lost = on_lost
        self._address_of = address_of
        self._out: dict[str, _Outgoing] = {}
        self._nursery: trio.Nursery | None = None
        self.sent = 0  # maps sent, for tests and stats

    async def serve(
        self,
        host: str,
        nursery: trio.Nursery,
        *,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen for the others' links on `host` (port 0: any); `started` with the port."""
        self._nursery = nursery
        listeners = await trio.open_tcp_listeners(0, host=host)
        task_status.started(listeners[0].socket.getsockname()[1])
        await trio.serve_listeners(self._read, listeners, handler_nursery=nursery)

    async def _read(self, stream: trio.SocketStream) -> None:
        frames = FrameDecoder(MAX_FRAME)
        unpacker_opts: dict[str, Any] = {"raw": False, "strict_map_key": False}
        origin: str | None = None
        try:
            async with stream:
                while True:
                    data = await stream.receive_some(1 << 16)
                    frames.receive_data(data)
                    while (body := frames.next_frame()) is not None:
                        message = msgpack.unpackb(body, **unpacker_opts)
                        if origin is None:
                            origin = str(message["hello"])
                            continue
                        await self._handle(origin, message)
                    if not data:
                        return
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        except Exception:
            log.exception("link_failed", origin=origin)
        finally:
            if origin is not None:
                self._on_lost(origin)

    def send(self, peer: str, data: dict[str, Any]) -> None:
        """Queue `data` for server `peer` (never blocks). Dropped if that link is lost."""
        out = self._out.get(peer)
        if out is None or out.lost:
            if self._nursery is None:
                return
            out = _Outgoing(peer, "")
            self._out[peer] = out
            self._nursery.start_soon(self._write, out)
        try:
            out.send.send_nowait(pack(data))
            self.sent += 1
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the link is closing (this server stops, or the other died)
        except trio.WouldBlock:
            log.error("link_stuck", peer=peer)
            self._lose(out)

    def _lose(self, out: _Outgoing) -> None:
        if out.lost:
            return
        out.lost = True
        out.send.close()
        if self._out.get(out.peer) is out:
            del self._out[out.peer]
        self._on_lost(out.peer)

    async def _write(self, out: _Outgoing) -> None:
        try:
            address = await self._address_of(out.peer)
            if address is None:
                raise OSError(f"no address for {out.peer}")
            host, _, port = address.rpartition(":")
            with trio.fail_after(CONNECT_TIMEOUT):
                stream = await trio.open_tcp_stream(host, int(port))
            async with stream, out.receive:
                await stream.send_all(pack({"hello": self.worker}))
                while True:
                    try:
                        first = await out.receive.receive()
                    except trio.EndOfChannel:
                        return
                    chunk = [first]
                    while len(chunk) < 512:
                        try:
                            chunk.append(out.receive.receive_nowait())
                        except (trio.WouldBlock, trio.EndOfChannel):
                            break
                    await stream.send_all(b"".join(chunk))
        except (OSError, trio.TooSlowError, trio.BrokenResourceError, ValueError) as exc:
            log.warning("link_lost", peer=out.peer, error=str(exc) or type(exc).__name__)
        finally:
            self._lose(out)
