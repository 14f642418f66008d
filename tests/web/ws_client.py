"""A minimal WebSocket client for the web port's tests: wsproto over a real trio TCP (or TLS)
stream, every wait bounded by the caller. Binary messages carry msgpack bodies (no length
prefix), as docs/protocol.md's WebSocket section says."""

from __future__ import annotations

import dataclasses
import ssl
from collections import deque
from typing import Any, TypeVar

import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import (
    AcceptConnection,
    BytesMessage,
    CloseConnection,
    Message,
    Ping,
    Pong,
    RejectConnection,
    RejectData,
    Request,
    TextMessage,
)

from protocol.codec import pack_body
from protocol.messages import PROTOCOL_VERSION_TEXT, Hello, Sender
from protocol.messages import Message as ProtocolMessage
from protocol.messages import Request as ProtocolRequest
from protocol.types import ClientKind
from protocol.wire import MessageDecoder, to_wire

M = TypeVar("M", bound=ProtocolMessage)


class Rejected(Exception):
    def __init__(self, status: int, body: bytes) -> None:
        super().__init__(f"{status} {body!r}")
        self.status = status
        self.body = body


class WSClient:
    def __init__(self, stream: trio.abc.Stream, ws: WSConnection) -> None:
        self.stream = stream
        self.ws = ws
        self.decoder = MessageDecoder(Sender.SERVER, max_frame_size=1 << 20)
        self.bodies: deque[bytes] = deque()
        self.pending: deque[ProtocolMessage] = deque()
        self.close: CloseConnection | None = None
        self.pongs: list[bytes] = []
        self._next_id = 1

    @classmethod
    async def connect(
        cls,
        port: int,
        *,
        origin: str | None = None,
        tls: ssl.SSLContext | None = None,
        path: str = "/ws",
        host: str | None = None,
    ) -> WSClient:
        """Open a WebSocket to the web port on 127.0.0.1; `host`: the `Host` header to send
        (by default `127.0.0.1:port`, what a browser on this machine sends)."""
        tcp = await trio.open_tcp_stream("127.0.0.1", port)
        stream: trio.abc.Stream = tcp
        if tls is not None:
            stream = trio.SSLStream(tcp, tls, server_hostname="127.0.0.1")
        ws = WSConnection(ConnectionType.CLIENT)
        headers = [(b"Origin", origin.encode())] if origin else []
        await stream.send_all(
            ws.send(Request(host=host or f"127.0.0.1:{port}", target=path, extra_headers=headers))
        )
        try:
            return await cls._handshake(stream, ws)
        except BaseException:
            await trio.aclose_forcefully(stream)
            raise

    @classmethod
    async def _handshake(cls, stream: trio.abc.Stream, ws: WSConnection) -> WSClient:
        status, body = 0, b""
        while True:
            data = await stream.receive_some(65536)
            ws.receive_data(bytes(data) or None)
            for event in ws.events():
                if isinstance(event, AcceptConnection):
                    return cls(stream, ws)
                if isinstance(event, RejectConnection):
                    status = event.status_code
                    if not event.has_body:
                        raise Rejected(status, body)
                elif isinstance(event, RejectData):
                    body += event.data
                    if event.body_finished:
                        raise Rejected(status, body)
            if not data:
                raise Rejected(status, body)

    async def send_body(self, body: bytes) -> None:
        await self.stream.send_all(self.ws.send(Message(data=body)))

    async def send_text(self, text: str) -> None:
        await self.stream.send_all(self.ws.send(Message(data=text)))

    async def send_ping(self, payload: bytes) -> None:
        await self.stream.send_all(self.ws.send(Ping(payload=payload)))

    async def send(self, message: ProtocolMessage) -> int | None:
        if isinstance(message, ProtocolRequest) and message.id is None:
            message = dataclasses.replace(message, id=self._next_id)
            self._next_id += 1
        await self.send_body(pack_body(to_wire(message)))
        return getattr(message, "id", None)

    async def hello(self, token: str | None = None) -> Any:
        await self.send(
            Hello(
                protocol=PROTOCOL_VERSION_TEXT,
                client="ws-test/1",
                kind=ClientKind.HUMAN,
                token=token,
            )
        )
        return await self.receive()

    async def receive_body(self) -> bytes | None:
        """The next binary message's body; None once the server closed."""
        message = bytearray()
        while not self.bodies:
            if self.close is not None:
                return None
            try:
                data = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            self.ws.receive_data(bytes(data) or None)
            for event in self.ws.events():
                if isinstance(event, BytesMessage):
                    message += event.data
                    if event.message_finished:
                        self.bodies.append(bytes(message))
                        message = bytearray()
                elif isinstance(event, TextMessage):
                    raise AssertionError("the server sent a text message")
                elif isinstance(event, CloseConnection):
                    self.close = event
                    if self.ws.state.name == "REMOTE_CLOSING":
                        await self.stream.send_all(self.ws.send(event.response()))
                elif isinstance(event, Pong):
                    self.pongs.append(bytes(event.payload))
            if not data and self.close is None:
                self.close = CloseConnection(code=1006)
        return self.bodies.popleft()

    async def receive(self) -> ProtocolMessage | None:
        while not self.pending:
            body = await self.receive_body()
            if body is None:
                return None
            self.decoder.receive_data(len(body).to_bytes(4, "big") + body)
            self.pending.extend(self.decoder)
        return self.pending.popleft()

    async def expect(self, kind: type[M]) -> M:
        while True:
            message = await self.receive()
            assert message is not None, f"closed while waiting for {kind.__name__}"
            if isinstance(message, kind):
                return message

    async def aclose(self) -> None:
        await trio.aclose_forcefully(self.stream)

    async def __aenter__(self) -> WSClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
