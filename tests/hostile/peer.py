"""A test client that can speak the protocol correctly (through `protocol.Connection`) or wrongly
(raw bytes, any map, messages out of their phase).

It is the server tests' `WireClient` (tests/server/wire_client.py) with what the hostile tests add:
connecting from another loopback address or with a small receive buffer, sending any map, and a
generous frame limit. Every read returns None once the server has closed the connection (EOF or
reset), so a test can tell "answered" from "hung up". Callers bound every wait with `trio.fail_after`.
"""

from __future__ import annotations

import socket
from typing import Any

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
    Welcome,
)
from protocol.types import ClientKind
from tests.server.wire_client import WireClient

HOST = "127.0.0.1"
# Every peer of the running test; the `close_peers` fixture closes whatever a failing test left open.
OPEN_PEERS: list[Peer] = []


class Peer(WireClient):
    """One TCP connection to the server under test."""

    stream: trio.SocketStream  # (a TCP stream: tests half-close it)

    def __init__(self, stream: trio.SocketStream) -> None:
        # Generous: we want to read whatever the server sends, not to test our own limits.
        super().__init__(stream, max_frame_size=1 << 22)
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

    async def send_map(self, body: dict[str, Any]) -> None:
        """Send any msgpack map in a correct frame (wrong types, unknown fields, and so on)."""
        await self.send_raw(frame(pack_body(body)))

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
