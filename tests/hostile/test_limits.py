"""Limits that end in a refusal the client can live with, and limits that end the connection: the
server's table cap, the idle timeout, the limits `welcome` announces, and a fatal error that must
reach a client which is still sending."""

from __future__ import annotations

from pathlib import Path

import trio

from protocol.messages import CreateTable, Error, TableCreated
from protocol.types import Game
from tests.hostile.peer import errors, round_trip, welcomed
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
