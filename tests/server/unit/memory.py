"""A whole server over memory streams: a listener that hands out in-memory connections, and a small
client speaking the real protocol over one. No sockets: trio's autojump clock runs the server's time.

    listener = MemoryListener()
    async with running_server(memory_config(), listeners=[listener]):
        client = await MemoryClient.connect(listener)
"""

from __future__ import annotations

import dataclasses
from collections import deque
from typing import Any, TypeVar

import trio
import trio.testing

from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Hello,
    Message,
    Reply,
    Request,
    Sender,
    Welcome,
)
from protocol.types import ClientKind
from protocol.wire import MessageDecoder, encode
from server.app import local_config
from server.config import ServerConfig

M = TypeVar("M", bound=Message)


def memory_config(**overrides: Any) -> ServerConfig:
    """A server config with the store in memory (no file at all), whose built-in bots think in the
    event loop (so trio's autojump clock is the server's whole time)."""
    overrides.setdefault("bots_in_threads", False)
    return local_config(":memory:", **overrides)


class MemoryListener(trio.abc.Listener[trio.abc.Stream]):
    """`accept()` returns the server's end of each `connect()`ed memory stream pair."""

    def __init__(self, *, lockstep: bool = False) -> None:
        self._send, self._receive = trio.open_memory_channel[trio.abc.Stream](64)
        self.lockstep = lockstep  # lockstep pairs: a write waits until the other side reads it

    async def connect(self) -> trio.abc.Stream:
        pair = (
            trio.testing.lockstep_stream_pair if self.lockstep else trio.testing.memory_stream_pair
        )
        client, server = pair()
        await self._send.send(server)
        return client

    async def accept(self) -> trio.abc.Stream:
        return await self._receive.receive()

    async def aclose(self) -> None:
        self._send.close()
        self._receive.close()
        await trio.lowlevel.checkpoint()


class MemoryClient:
    """The protocol over one memory stream: requests numbered, every message kept in `received`."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.decoder = MessageDecoder(Sender.SERVER, max_frame_size=1 << 20)
        self.pending: deque[Message] = deque()
        self.received: list[Message] = []
        self._next_id = 1
        self.closed = False

    @classmethod
    async def connect(cls, listener: MemoryListener) -> MemoryClient:
        return cls(await listener.connect())

    async def send(self, message: Message) -> int | None:
        if isinstance(message, Request) and message.id is None:
            message = dataclasses.replace(message, id=self._next_id)
            self._next_id += 1
        await self.stream.send_all(encode(message))
        return getattr(message, "id", None)

    async def receive(self) -> Message | None:
        """The next message; None once the server has closed the stream."""
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
            self.decoder.receive_data(data)
            for message in self.decoder:
                self.pending.append(message)
                self.received.append(message)
        return self.pending.popleft()

    async def expect(self, kind: type[M]) -> M:
        """Read until a message of `kind` (others are kept in `received`)."""
        for _ in range(10_000):  # bounded: a game's worth of messages
            message = await self.receive()
            assert message is not None, f"closed while waiting for {kind.TYPE}"
            if isinstance(message, kind):
                return message
        raise AssertionError(f"no {kind.TYPE} in 10000 messages")

    async def request(self, message: Request) -> Reply:
        rid = await self.send(message)
        for _ in range(10_000):
            reply = await self.receive()
            assert reply is not None, f"closed before the answer to {message.TYPE}"
            if isinstance(reply, Reply) and reply.id == rid:
                return reply
        raise AssertionError(f"no answer to {message.TYPE}")

    async def hello(self, token: str | None = None, kind: ClientKind = ClientKind.HUMAN) -> Welcome:
        reply = await self.request(
            Hello(protocol=PROTOCOL_VERSION_TEXT, client="tests/1", kind=kind, token=token)
        )
        assert isinstance(reply, Welcome), reply
        return reply

    async def aclose(self) -> None:
        await self.stream.aclose()
