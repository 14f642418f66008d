"""A test client that can speak the protocol correctly (`protocol.encode`) or wrongly (raw bytes).

Every read returns None once the server has closed the connection (EOF or reset), so a test can
tell "answered" from "hung up". Callers bound every wait with `trio.fail_after`.
"""

from __future__ import annotations

import dataclasses
import socket
from collections import deque
from typing import Any, TypeVar

import trio

from protocol.codec import pack_body
from protocol.framing import frame
from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Error,
    Hello,
    Message,
    Ping,
    Pong,
    Register,
    Registered,
    Reply,
    Request,
    Sender,
    Welcome,
)
from protocol.types import ClientKind
from protocol.wire import MessageDecoder, encode

M = TypeVar("M", bound=Message)
HOST = "127.0.0.1"
# Every peer of the running test; the `close_peers` fixture closes whatever a failing test left open.
OPEN_PEERS: list[Peer] = []


class Peer:
    """One TCP connection to the server under test."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        # Generous: we want to read whatever the server sends, not to test our own limits.
        self.decoder = MessageDecoder(Sender.SERVER, max_frame_size=1 << 22)
        self.pending: deque[Message] = deque()
        self.received: list[Message] = []
        self.closed = False
        self._next_id = 1
        OPEN_PEERS.append(self)

    @classmethod
    async def connect(
        cls, port: int, *, source: str | None = None, rcvbuf: int | None = None
    ) -> Peer:
        """Connect to 127.0.0.1:port, optionally from another loopback source address or with a
        small receive buffer (set before connecting, so the advertised window stays small)."""
        sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            if rcvbuf is not None:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
            if source is not None:
                await sock.bind((source, 0))
            await sock.connect((HOST, port))
        except BaseException:
            sock.close()
            raise
        return cls(trio.SocketStream(sock))

    def next_id(self) -> int:
        rid = self._next_id
        self._next_id += 1
        return rid

    async def send(self, message: Message) -> int | None:
        """Send a well-formed message; a request without an id gets a fresh one (returned)."""
        if isinstance(message, Request) and message.id is None:
            message = dataclasses.replace(message, id=self.next_id())
        await self.stream.send_all(encode(message))
        return getattr(message, "id", None)

    async def send_map(self, body: dict[str, Any]) -> None:
        """Send any msgpack map in a correct frame (wrong types, unknown fields, and so on)."""
        await self.stream.send_all(frame(pack_body(body)))

    async def send_raw(self, data: bytes) -> None:
        await self.stream.send_all(data)

    async def receive(self) -> Message | None:
        """The next message, or None once the server closed the connection."""
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
                self.received.append(message)
                self.pending.append(message)
        return self.pending.popleft()

    async def expect(self, kind: type[M]) -> M:
        """Skip other messages until one of `kind`; fails if the connection closes first."""
        while True:
            message = await self.receive()
            assert message is not None, f"connection closed while waiting for {kind.__name__}"
            if isinstance(message, kind):
                return message

    async def reply_to(self, rid: int | None) -> Reply:
        """The reply carrying `rid` (other messages stay queued, in order)."""
        skipped: list[Message] = []
        try:
            while True:
                message = await self.receive()
                assert message is not None, f"connection closed while waiting for reply {rid}"
                if isinstance(message, Reply) and message.id == rid:
                    return message
                skipped.append(message)
        finally:
            self.pending.extendleft(reversed(skipped))

    async def request(self, message: Request) -> Reply:
        return await self.reply_to(await self.send(message))

    async def hello(self, token: str | None = None, kind: ClientKind = ClientKind.HUMAN) -> Welcome:
        reply = await self.request(
            Hello(protocol=PROTOCOL_VERSION_TEXT, client="hostile-tests/1", kind=kind, token=token)
        )
        assert isinstance(reply, Welcome), reply
        return reply

    async def register(self, name: str) -> str:
        """Register `name` and return its token (the session is logged in)."""
        reply = await self.request(Register(name=name))
        assert isinstance(reply, Registered), reply
        return reply.token

    async def drain_until_closed(self, limit: int = 100_000) -> list[Message]:
        """Read until the server hangs up; everything received on the way (bounded by `limit`)."""
        out: list[Message] = []
        for _ in range(limit):
            message = await self.receive()
            if message is None:
                return out
            out.append(message)
        raise AssertionError(f"more than {limit} messages and still open")

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(self.stream)

    @property
    def welcome(self) -> Welcome:
        """The `welcome` this peer got (after `hello`)."""
        found = [m for m in self.received if isinstance(m, Welcome)]
        assert found, "no welcome received"
        return found[0]

    async def __aenter__(self) -> Peer:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


async def welcomed(port: int, name: str | None = None, **connect: Any) -> Peer:
    """A connected peer past `hello` (and registered as `name` when given)."""
    peer = await Peer.connect(port, **connect)
    try:
        await peer.hello()
        if name is not None:
            await peer.register(name)
    except BaseException:
        await peer.aclose()
        raise
    return peer


def errors(messages: list[Message]) -> list[Error]:
    return [m for m in messages if isinstance(m, Error)]


async def round_trip(peer: Peer) -> list[Message]:
    """Send `ping` and wait for its `pong`: every message the server sent before it, in order.

    Proves the connection is still open and the server is still reading this client.
    """
    rid = await peer.send(Ping())
    got: list[Message] = []
    while True:
        message = await peer.receive()
        assert message is not None, "the server closed the connection"
        if isinstance(message, Pong) and message.id == rid:
            return got
        got.append(message)
