"""A client that floods the server before `hello` and never reads what it is sent is let go within the
handshake's deadline: every wait (for room in its outbox, for its unread writes) is bounded, so a few
such sockets from one address cannot hold that address's connections for good (issue 22, item 2).
A real server process on 127.0.0.1."""

from __future__ import annotations

import socket
from pathlib import Path

import trio

from protocol.messages import Ping
from protocol.wire import encode
from tests.hostile.peer import Peer
from tests.hostile.proc import ServerProcess

FLOODERS = 8
HANDSHAKE_S = 2


async def flood(port: int, pings: bytes) -> trio.socket.SocketType:
    """A socket with a small receive buffer that sends `pings` (as much as the server takes within a
    second) and then never reads."""
    sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    await sock.connect(("127.0.0.1", port))
    view = memoryview(pings)
    with trio.move_on_after(1.0):
        while view:
            sent = await sock.send(view[:65536])
            view = view[sent:]
    return sock


def gone(server: ServerProcess) -> int:
    """How many connections the server has let go (its `disconnected` log lines)."""
    return sum('"disconnected"' in line for line in server.logs().splitlines())


async def test_flooders_that_never_read_are_let_go_and_their_address_is_served(
    tmp_path: Path,
) -> None:
    args = ("--no-ladder", "--handshake-timeout", str(HANDSHAKE_S), "--max-per-address", "8")
    pings = b"".join(encode(Ping(id=i)) for i in range(1, 30_001))
    with ServerProcess(tmp_path / "s.db", *args) as server, trio.fail_after(60):
        flooders: list[trio.socket.SocketType] = []

        async def one() -> None:
            flooders.append(await flood(server.port, pings))

        try:
            # All at once: together they hold every connection the address may have.
            async with trio.open_nursery() as nursery:
                for _ in range(FLOODERS):
                    nursery.start_soon(one)
            # Each is let go within its handshake (2 s), reading nothing: waited for in the
            # server's log (another process: a bounded poll of its file).
            for _ in range(400):  # 20 s at most, a look every 50 ms
                if gone(server) >= FLOODERS:
                    break
                await trio.sleep(0.05)
            assert gone(server) >= FLOODERS, server.log_tail()
            # The address's connections are free again: a new client from it is welcomed.
            async with await Peer.connect(server.port) as newcomer:
                welcome = await newcomer.hello()
                assert welcome.session, welcome
        finally:
            for sock in flooders:
                sock.close()
        assert server.alive()
