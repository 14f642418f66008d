"""A whole server over memory streams: a listener that hands out in-memory connections, and a small
client speaking the real protocol over one. No sockets: trio's autojump clock runs the server's time.

    listener = MemoryListener()
    async with running_server(memory_config(), listeners=[listener]):
        client = await MemoryClient.connect(listener)

On trio's autojump clock, mind the server's worker threads (opening the store, hashing a token):
while one runs, the clock jumps to the next deadline. Keep deadlines (a `fail_after`, the idle and
write sweeps) out of those moments, or use real time. In particular, open a test's `fail_after`
inside `running_server`, not around it: around it, the clock jumps to its deadline while the store
opens, and the run never comes back (pytest-timeout ends it, with a trio internal error).
"""

from __future__ import annotations

from typing import Any, cast

import trio
import trio.testing

from protocol.messages import PROTOCOL_VERSION_TEXT, Hello, Welcome
from protocol.types import ClientKind
from server.app import local_config
from server.config import ServerConfig
from tests.server.wire_client import WireClient


def memory_config(**overrides: Any) -> ServerConfig:
    """A server config with the store in memory (no file at all), whose built-in bots think in the
    event loop (so trio's autojump clock is the server's whole time)."""
    overrides.setdefault("bots_in_threads", False)
    return local_config(":memory:", **overrides)


class PeerAddress:
    """What the server asks of a socket stream's `socket` to know the peer (`getpeername`): given
    to the server's end of a memory stream, its connection comes from `host` (per-address limits
    and bans then hold over memory streams as over TCP)."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port

    def getpeername(self) -> tuple[str, int]:
        return self.host, self.port


class MemoryListener(trio.abc.Listener[trio.abc.Stream]):
    """`accept()` returns the server's end of each `connect()`ed memory stream pair."""

    def __init__(self, *, lockstep: bool = False) -> None:
        self._send, self._receive = trio.open_memory_channel[trio.abc.Stream](64)
        self.lockstep = lockstep  # lockstep pairs: a write waits until the other side reads it
        self._ports = 40000  # each connection's own port, as a client socket's would be

    async def connect(self, host: str | None = None) -> trio.abc.Stream:
        """A new connection to the server; from `host` (an address the server sees, as if over
        TCP) if given, else from "memory" (every such connection one address)."""
        pair = (
            trio.testing.lockstep_stream_pair if self.lockstep else trio.testing.memory_stream_pair
        )
        client, server = pair()
        if host is not None:
            self._ports += 1
            cast(Any, server).socket = PeerAddress(host, self._ports)
        await self._send.send(server)
        return client

    async def accept(self) -> trio.abc.Stream:
        return await self._receive.receive()

    async def aclose(self) -> None:
        self._send.close()
        self._receive.close()
        await trio.lowlevel.checkpoint()


class MemoryClient(WireClient):
    """The protocol over one memory stream: the tests' `WireClient` (tests/server/wire_client.py:
    `protocol.Connection`, requests numbered, every message kept in `received`)."""

    @classmethod
    async def connect(  # type: ignore[override]
        cls, listener: MemoryListener, host: str | None = None
    ) -> MemoryClient:
        return cls(await listener.connect(host))

    async def hello(self, token: str | None = None, kind: ClientKind = ClientKind.HUMAN) -> Welcome:
        reply = await self.request(
            Hello(protocol=PROTOCOL_VERSION_TEXT, client="tests/1", kind=kind, token=token)
        )
        assert isinstance(reply, Welcome), reply
        return reply
