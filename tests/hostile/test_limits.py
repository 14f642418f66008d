"""Limits that end in a refusal the client can live with, and limits that end the connection: the
server's table cap, the idle timeout, the limits `welcome` announces, and a fatal error that must
reach a client which is still sending."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import trio

from protocol.messages import CreateTable, Error, TableCreated
from protocol.types import Game
from tests.hostile.peer import Peer, errors, round_trip, welcomed
from tests.hostile.proc import ServerProcess


async def test_a_full_lobby_refuses_a_table_without_hanging_up(tmp_path: Path) -> None:
    """With every table of the server taken (`--max-tables 3` here; 256 by default),
    `create_table` is refused `table_limit`, a code that does not close, and the connection goes
    on; another account is refused the same way."""
    with (
        ServerProcess(tmp_path / "s.db", "--no-ladder", "--max-tables", "3") as server,
        trio.fail_after(30),
    ):
        waiting = CreateTable(game=Game.SPADES, preset="standard")  # nobody sits: it stays open
        hog = await welcomed(server.port, "lobby-hog")
        for _ in range(3):
            assert isinstance(await hog.request(waiting), TableCreated)
        for peer in (hog, await welcomed(server.port, "latecomer")):
            refused = await peer.request(waiting)
            assert isinstance(refused, Error) and refused.code == "table_limit", refused
            # Still connected and answered.
            assert errors(await round_trip(peer)) == []


async def test_a_fatal_error_reaches_a_client_that_keeps_sending(
    shared_server: ServerProcess,
) -> None:
    """After a fatal error the server stops reading messages, sends `error`, half-closes and
    drains what the client still sends (up to 1 s or 64 KiB) before it closes: a client that goes
    on sending garbage reads the error, then the end of the stream, and its sends meanwhile are
    not met by a reset (which can overtake the error on a real network)."""
    rng = random.Random(7)
    for _ in range(3):
        with trio.fail_after(10):
            peer = await Peer.connect(shared_server.port)
            got: list[object] = []
            ended = trio.Event()
            refused_after_end = 0

            async def read(
                peer: Peer = peer, got: list[object] = got, ended: trio.Event = ended
            ) -> None:
                while (message := await peer.receive()) is not None:
                    got.append(message)
                ended.set()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(read)
                # A zero length prefix is `bad_frame`; garbage follows in the same write and after.
                await peer.send_raw(struct.pack(">I", 0) + rng.randbytes(8192))
                after_end = 0
                for _ in range(200):  # bounded: at most ~1 s of 1 KiB every 5 ms
                    try:
                        await peer.send_raw(rng.randbytes(1024))
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        refused_after_end += 1
                        break
                    if ended.is_set():
                        after_end += 1
                        if after_end == 20:  # 20 KiB sent after the end: drained, not reset
                            break
                    await trio.sleep(0.005)
                await ended.wait()
            await peer.aclose()
            assert [type(m).__name__ for m in got] == ["Error"], got
            assert isinstance(got[0], Error) and got[0].code == "bad_frame", got
            assert refused_after_end == 0 and after_end == 20
