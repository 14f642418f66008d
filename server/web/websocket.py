"""One accepted WebSocket connection as the byte stream a session reads and writes.

The session (`server.session.Session`) speaks length-prefixed frames over any `trio.abc.Stream`.
`WebSocketStream` is such a stream over a WebSocket (wsproto, on the TCP or TLS stream the HTTP
request came on): each binary message received is handed to the session as one frame, its 4-byte
length prefix added here, and each frame the session sends leaves as one binary message, its
prefix taken off (docs/protocol.md, "WebSocket"). So the session's decoder, limits and errors are
the same as over TCP:

- A message above `max_message_bytes` is never held: as soon as it has grown past the limit, the
  session is handed a length prefix announcing its size, which its decoder refuses
  (`frame_too_large`, fatal) exactly as it refuses such a prefix over TCP; the rest is not read.
- An empty message becomes a zero-length prefix (`bad_frame`), as over TCP.
- A text message is not the protocol: the connection is closed with WebSocket code 1003 and a
  sentence saying so.
- WebSocket pings are answered; a close from the peer is the end of the stream.

Sending is the session's writer's (one task); the reader answers pings and closes, so every write
to the transport holds one lock. Control replies are written shielded and bounded in time, so a
cancelled read (the idle sweep) never leaves half a frame on the wire.
"""

from __future__ import annotations

import contextlib

import trio
from wsproto import WSConnection
from wsproto.connection import ConnectionState
from wsproto.events import (
    BytesMessage,
    CloseConnection,
    Message,
    Ping,
    TextMessage,
)
from wsproto.frame_protocol import CloseReason
from wsproto.utilities import LocalProtocolError

from protocol.framing import HEADER, MAX_FRAME_SIZE_LIMIT, FrameDecoder

RECEIVE_CHUNK = 16 * 1024
CONTROL_TIMEOUT = 2.0  # seconds a pong or a close reply may take to write
# After our close frame: read (and drop) what the peer still sends until its own close, for at most
# this long or this many bytes, so the socket is not reset under our last messages.
LINGER_TIME = 1.0
LINGER_BYTES = 64 * 1024
TEXT_REFUSED = "this server speaks binary messages only (docs/protocol.md, WebSocket)"


class WebSocketStream(trio.abc.Stream):
    """A WebSocket whose binary messages are frames of the protocol (see the module docstring).

    `ws` must be a server-side connection whose handshake is done (`AcceptConnection` sent).
    """

    def __init__(
        self,
        transport: trio.abc.Stream,
        ws: WSConnection,
        *,
        max_message_bytes: int,
        trailing: bytes = b"",
    ) -> None:
        self.transport = transport
        self._ws = ws
        self._max = max_message_bytes
        self._message = bytearray()  # the binary message being received
        self._ready = bytearray()  # whole frames (prefix + body) for the session to read
        self._outgoing = FrameDecoder(MAX_FRAME_SIZE_LIMIT)  # cuts what the session sends
        self._send_lock = trio.Lock()
        self._ended = False  # nothing more will be read: the peer closed, or we refused it
        self._peer_closed = trio.Event()
        self._receiving = False
        self._closed = False
        self.close_code: int = CloseReason.NORMAL_CLOSURE
        self.close_reason = ""
        self.messages_received = 0
        self.messages_sent = 0
        # Bytes that came with the upgrade request: read now, answered on the first receive.
        self._replies = self._feed(trailing) if trailing else b""

    # ------------------------------------------------------------------ reading

    async def receive_some(self, max_bytes: int | None = None) -> bytes:
        """Bytes of whole frames, as the session's decoder wants them; b"" at the end."""
        if self._closed:
            raise trio.ClosedResourceError("the WebSocket stream is closed")
        if self._receiving:
            raise trio.BusyResourceError("another task is reading this WebSocket")
        self._receiving = True
        try:
            if self._replies:
                replies, self._replies = self._replies, b""
                await self._send_control(replies)
            while not self._ready:
                if self._ended:
                    return b""
                data = bytes(await self.transport.receive_some(RECEIVE_CHUNK))
                replies = self._feed(data)
                if replies:
                    await self._send_control(replies)
        finally:
            self._receiving = False
        size = len(self._ready) if max_bytes is None else min(max_bytes, len(self._ready))
        out = bytes(self._ready[:size])
        del self._ready[:size]
        return out

    def _feed(self, data: bytes) -> bytes:
        """Take bytes from the transport (b"": it ended); the control bytes to answer with."""
        ws = self._ws
        if not data:
            self._end()
            with contextlib.suppress(LocalProtocolError):
                ws.receive_data(None)
            return b""
        try:
            ws.receive_data(data)
        except LocalProtocolError:  # data after the connection was closed: ignore it
            self._end()
            return b""
        replies = bytearray()
        for event in ws.events():
            if self._ended:
                break
            if isinstance(event, BytesMessage):
                self._message += event.data
                if len(self._message) > self._max:
                    # Announce the size: the session's decoder refuses it from the prefix alone,
                    # as it would over TCP. Nothing more of this connection is read.
                    self._ready += HEADER.pack(min(len(self._message), MAX_FRAME_SIZE_LIMIT))
                    self._message = bytearray()
                    self.close_code = CloseReason.MESSAGE_TOO_BIG
                    self._end()
                elif event.message_finished:
                    self._ready += HEADER.pack(len(self._message)) + self._message
                    self._message = bytearray()
                    self.messages_received += 1
            elif isinstance(event, TextMessage):
                self.close_code = CloseReason.UNSUPPORTED_DATA
                self.close_reason = TEXT_REFUSED
                replies += self._close_bytes()
                self._end()
            elif isinstance(event, Ping):
                with contextlib.suppress(LocalProtocolError):
                    replies += ws.send(event.response())
            elif isinstance(event, CloseConnection):
                if ws.state is ConnectionState.REMOTE_CLOSING:
                    replies += ws.send(event.response())
                elif ws.state is ConnectionState.OPEN:  # a frame wsproto could not parse
                    self.close_code, self.close_reason = event.code, event.reason or ""
                    replies += self._close_bytes()
                self._peer_closed.set()
                self._end()
        return bytes(replies)

    def _end(self) -> None:
        self._ended = True
        self._message = bytearray()

    def _close_bytes(self) -> bytes:
        if self._ws.state not in (ConnectionState.OPEN, ConnectionState.REMOTE_CLOSING):
            return b""
        return self._ws.send(CloseConnection(code=self.close_code, reason=self.close_reason))

    # ------------------------------------------------------------------ writing

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        """Send each whole frame in `data` as one binary message (its prefix taken off)."""
        if self._closed:
            raise trio.ClosedResourceError("the WebSocket stream is closed")
        self._outgoing.receive_data(data)
        out = bytearray()
        while (body := self._outgoing.next_frame()) is not None:
            try:
                out += self._ws.send(Message(data=body))
            except LocalProtocolError:
                raise trio.BrokenResourceError("the peer closed the WebSocket") from None
            self.messages_sent += 1
        if out:
            async with self._send_lock:
                await self.transport.send_all(out)

    async def wait_send_all_might_not_block(self) -> None:
        await self.transport.wait_send_all_might_not_block()

    async def _send_control(self, data: bytes) -> None:
        with trio.move_on_after(CONTROL_TIMEOUT) as scope:
            scope.shield = True
            try:
                async with self._send_lock:
                    await self.transport.send_all(data)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                self._end()
        if scope.cancelled_caught:
            self._end()

    # ------------------------------------------------------------------ closing

    async def aclose(self) -> None:
        """Send a close frame (code `close_code`), wait briefly for the peer's, then hang up."""
        if self._closed:
            return
        self._closed = True
        try:
            with trio.move_on_after(LINGER_TIME + CONTROL_TIMEOUT):
                closing = self._close_bytes()
                if closing:
                    async with self._send_lock:
                        await self.transport.send_all(closing)
                await self._linger()
        except (trio.BrokenResourceError, trio.ClosedResourceError, trio.BusyResourceError):
            pass
        finally:
            await trio.aclose_forcefully(self.transport)

    async def _linger(self) -> None:
        if self._peer_closed.is_set():
            return
        with trio.move_on_after(LINGER_TIME):
            if self._receiving:
                # The session's reader is reading: it sees the peer's close and tells us.
                await self._peer_closed.wait()
                return
            drained = 0
            while drained < LINGER_BYTES:
                data = bytes(await self.transport.receive_some(RECEIVE_CHUNK))
                if not data:
                    return
                drained += len(data)
                try:
                    self._ws.receive_data(data)
                except LocalProtocolError:
                    return
                if any(isinstance(event, CloseConnection) for event in self._ws.events()):
                    return
