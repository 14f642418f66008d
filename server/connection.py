"""The sending half of one client connection: a bounded outbox and the writer task that drains it.

(The reading half, which feeds the protocol's `MessageDecoder`, is the session's own task; see
`server.session`.) The connection knows msgpack maps, not what they mean. Sending never blocks the
sender: `send()` puts an encoded frame in the outbox or, when the outbox is full,
declares the peer a slow consumer and aborts the connection, so a stalled reader can never hold up
a table. The peer may reconnect and resync from a snapshot.
"""

from __future__ import annotations

import contextlib
from typing import Any

import structlog
import trio

from protocol.codec import pack_body
from protocol.errors import ErrorCode
from protocol.framing import frame

log = structlog.get_logger("server.connection")

# The writer sends every frame waiting in the outbox in one `send_all`, up to about this many bytes
# (a frame bigger than that goes alone): one syscall and one wake-up per burst, not per frame.
MAX_WRITE_BYTES = 64 * 1024
FLUSH_TIMEOUT = 2.0  # how long a closing connection may take to flush its last frames
# After the last frame, a closing connection half-closes and reads (and drops) what the peer still
# sends, for at most this long or this many bytes, before it closes the socket.
LINGER_TIME = 1.0
LINGER_BYTES = 64 * 1024


class Outbox:
    """A framed, bounded outbox over a trio stream (the protocol's state is the session's:
    `protocol.connection.Connection`; this is only where its frames wait to be written).

    Run `run_writer()` in the connection's nursery; call `abort()` to drop it at once, or
    `finish()` to flush what is queued and then close.
    """

    def __init__(
        self,
        stream: trio.abc.Stream,
        *,
        outbox_size: int,
        peer: str = "?",
        write_timeout: float = 10.0,
    ) -> None:
        self.stream = stream
        self.peer = peer
        # How long the writer may make no progress while it has something to write: a peer that
        # reads nothing for this long is a slow consumer and is let go (nothing it does can hold
        # a connection forever). Checked by the server's sweep (`check_progress`), not by a timer
        # per write, which would cost every connection on every frame.
        self.write_timeout = write_timeout
        self._writing = False
        self._seen_sent = 0
        self._stall_start: float | None = None  # when the sweep first saw no progress
        self._send, self._receive = trio.open_memory_channel[bytes](outbox_size)
        self._size = outbox_size
        self._queued = 0  # frames in the outbox (cheaper to count than to ask the channel)
        self._room = trio.Event()
        self.cancel_scope = trio.CancelScope()
        self.close_reason: str | None = None
        self.frames_sent = 0
        self.closed = trio.Event()

    def send(self, message: dict[str, Any]) -> bool:
        """Queue one message; False if the connection is closing or was just dropped as too slow.

        Never blocks. A full outbox aborts the connection with reason `slow_consumer`.
        """
        if self.close_reason is not None:
            return False
        return self.send_frame(frame(pack_body(message)))

    def send_frame(self, data: bytes) -> bool:
        """Queue one whole frame, already encoded (length prefix included); as `send()`."""
        if self.close_reason is not None:
            return False
        try:
            self._send.send_nowait(data)
            self._queued += 1
        except trio.WouldBlock:
            log.warning("slow_consumer", peer=self.peer)
            self.abort(ErrorCode.SLOW_CONSUMER)
            return False
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            return False
        return True

    async def wait_for_room(self) -> None:
        """Wait while the outbox is at least half full (or until the connection closes). Bounded:
        while frames wait, `check_progress` drops a peer that reads nothing for `write_timeout`."""
        while self.close_reason is None and self._used() * 2 >= self._size:
            if self._room.is_set():
                self._room = trio.Event()
            await self._room.wait()

    def check_progress(self, now: float) -> None:
        """The server's sweep (about once a second): drop the peer as a slow consumer if the
        writer has had something to write and sent nothing for `write_timeout` seconds."""
        if self.close_reason is not None:
            return
        busy = self._writing or self._queued > 0
        if not busy or self.frames_sent != self._seen_sent or self._stall_start is None:
            self._seen_sent = self.frames_sent
            self._stall_start = now
            return
        if now - self._stall_start >= self.write_timeout:
            log.warning(
                "slow_consumer", peer=self.peer, stalled_s=round(now - self._stall_start, 1)
            )
            self.abort(ErrorCode.SLOW_CONSUMER)

    def _used(self) -> int:
        return self._queued

    @property
    def queued(self) -> int:
        """Frames waiting to be written (for the metrics)."""
        return self._queued

    def finish(self, last: dict[str, Any] | None = None, reason: str = "closed") -> None:
        """Queue `last` (if room), then close the outbox: the writer flushes it and hangs up."""
        if self.close_reason is not None:
            return
        if last is not None:
            self.send(last)
        if self.close_reason is None:
            self.close_reason = reason
        self._send.close()
        self._room.set()

    def abort(self, reason: str) -> None:
        """Drop the connection now, without flushing: its task group is cancelled."""
        if self.close_reason is None:
            self.close_reason = reason
        self._send.close()
        self._room.set()
        self.cancel_scope.cancel()

    async def run_writer(self) -> None:
        """Drain the outbox into the stream until it is closed and empty, then close the stream.

        Each time it wakes it takes every frame already waiting (a table queues all it has to say
        about an action before it yields), up to `MAX_WRITE_BYTES`, and sends them together.
        """
        flushed = False
        receive = self._receive
        try:
            async with receive:
                while True:
                    try:
                        data = await receive.receive()
                    except trio.EndOfChannel:
                        break
                    self._queued -= 1
                    count = 1
                    if self._queued:
                        chunks = [data]
                        size = len(data)
                        while size < MAX_WRITE_BYTES:
                            try:
                                more = receive.receive_nowait()
                            except (trio.WouldBlock, trio.EndOfChannel):
                                break
                            self._queued -= 1
                            chunks.append(more)
                            size += len(more)
                        count = len(chunks)
                        data = b"".join(chunks)
                        del chunks
                    self._writing = True
                    await self.stream.send_all(data)
                    self._writing = False
                    del data  # an idle connection keeps no copy of what it last sent
                    self.frames_sent += count
                    if self._used() * 2 < self._size:
                        self._room.set()
            flushed = True
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.abort("peer_gone")
        finally:
            with trio.move_on_after(FLUSH_TIMEOUT) as scope:
                scope.shield = True
                if flushed:
                    await self._linger()
                await self.stream.aclose()
            self.closed.set()
            self._room.set()
            # The reader has nothing more to do once the writer has hung up.
            self.cancel_scope.cancel()

    async def _linger(self) -> None:
        """Half-close, then drain the peer's input briefly (`LINGER_TIME`, `LINGER_BYTES`).

        Closing a socket with unread input makes the kernel answer with a reset, which can destroy
        the frames not yet delivered (the `error` that says why we hang up) before the peer reads
        them. The peer sees the end of the stream after our last frame; we read until its own end,
        or the bounds, and only then close. Not for TLS (which cannot half-close) or when another
        task is still reading (the session reads until it stops for good).
        """
        stream = self.stream
        if not isinstance(stream, trio.abc.HalfCloseableStream):
            return
        with (
            trio.move_on_after(LINGER_TIME),
            contextlib.suppress(
                trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError, OSError
            ),
        ):
            await stream.send_eof()
            drained = 0
            while drained < LINGER_BYTES:
                data = await stream.receive_some(16 * 1024)
                if not data:
                    return
                drained += len(data)
