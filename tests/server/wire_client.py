"""A minimal protocol client for the server tests: real socket, real codec, every wait bounded."""

from __future__ import annotations

import dataclasses
from collections import deque
from typing import Any, TypeVar

import trio

from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Event,
    Hello,
    Message,
    Reply,
    Request,
    Sender,
)
from protocol.types import ClientKind
from protocol.wire import MessageDecoder, encode

M = TypeVar("M", bound=Message)


class WireClient:
    """Sends requests with fresh ids; keeps every received frame in `received` for leak checks."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.decoder = MessageDecoder(Sender.SERVER, max_frame_size=1 << 20)
        self.pending: deque[Message] = deque()
        self.received: list[Message] = []
        self.raw: list[bytes] = []
        self._next_id = 1
        self.closed = False
        self.last_seq = 0

    @classmethod
    async def connect(cls, port: int) -> WireClient:
        return cls(await trio.open_tcp_stream("127.0.0.1", port))

    async def send(self, message: Request | Message) -> int | None:
        if isinstance(message, Request) and message.id is None:
            message = dataclasses.replace(message, id=self._next_id)
            self._next_id += 1
        await self.stream.send_all(encode(message))
        return getattr(message, "id", None)

    async def send_raw(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def receive(self) -> Message | None:
        """The next message, or None once the server has closed the connection."""
        while not self.pending:
            if self.closed:
                return None
            try:
                data = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if not data:
                self.closed = True
                return None
            self.raw.append(data)
            self.decoder.receive_data(data)
            for message in self.decoder:
                if isinstance(message, Event):
                    # The session numbers its events 1, 2, 3, ... without gaps.
                    assert message.seq == self.last_seq + 1, (message, self.last_seq)
                    self.last_seq = message.seq
                self.received.append(message)
                self.pending.append(message)
        return self.pending.popleft()

    async def expect(self, kind: type[M]) -> M:
        """Skip other messages until one of `kind` arrives (the caller bounds the wait)."""
        while True:
            message = await self.receive()
            assert message is not None, f"connection closed while waiting for {kind.__name__}"
            if isinstance(message, kind):
                return message

    async def request(self, message: Request) -> Reply:
        """Send and wait for the reply with the same id (events in between are kept)."""
        rid = await self.send(message)
        skipped: list[Message] = []
        try:
            while True:
                reply = await self.receive()
                assert reply is not None, "connection closed while waiting for a reply"
                if isinstance(reply, Reply) and reply.id == rid:
                    return reply
                skipped.append(reply)
        finally:
            self.pending.extendleft(reversed(skipped))

    async def hello(self, token: str | None = None, kind: ClientKind = ClientKind.HUMAN) -> Any:
        return await self.request(
            Hello(protocol=PROTOCOL_VERSION_TEXT, client="tests/1", kind=kind, token=token)
        )

    async def aclose(self) -> None:
        await self.stream.aclose()
