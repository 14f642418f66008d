"""kill -9 the server mid-game; on restart completed hands are intact and games resume."""

import sqlite3
import subprocess
import sys
from pathlib import Path

import trio

from protocol.messages import (
    CreateTable,
    Joined,
    ListTables,
    Register,
    Registered,
    Snapshot,
    TableCreated,
    Tables,
)
from protocol.types import Game, TableStatus
from tests.server.players import play_into_second_hand, play_until_over, random_choice
from tests.server.wire_client import WireClient

SERVER = [sys.executable, "-m", "server.cli"]


async def start_server(db: Path, *flags: str) -> tuple[trio.Process, int]:
    """Run `spades-server serve` (and `flags`) as a child process; read the port from its first
    line."""
    process = await trio.lowlevel.open_process(
        [*SERVER, "serve", "--host", "127.0.0.1", "--port", "0", "--db", str(db), *flags],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    line = b""
    while not line.endswith(b"\n"):  # bounded by the caller's fail_after
        chunk = await process.stdout.receive_some(1)
        assert chunk, "the server exited before printing its address"
        line += chunk
    port = int(line.decode().strip().rsplit(":", 1)[1])
    return process, port


def hand_records(db: Path) -> list[str]:
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return [
            r[0] for r in conn.execute("SELECT record FROM hand_records ORDER BY game_id, hand_no")
        ]
    finally:
        conn.close()


async def test_kill_9_then_restart_resumes_every_unfinished_game(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    with trio.fail_after(100):
        process, port = await start_server(db)
        try:
            client = await WireClient.connect(port)
            await client.hello()
            registered = await client.request(Register(name="survivor"))
            assert isinstance(registered, Registered)
            # A bots-only table keeps writing while we kill the server.
            busy = await client.request(
                CreateTable(
                    game=Game.HEARTS,
                    preset="hearts",
                    options={"target_score": 500},
                    bots=[0, 1, 2, 3],
                )
            )
            assert isinstance(busy, TableCreated)
            created = await client.request(
                CreateTable(
                    game=Game.SPADES,
                    preset="standard",
                    options={"target_score": 300},
                    bots=[1, 2, 3],
                    sit=0,
                )
            )
            assert isinstance(created, TableCreated)
            table_id = created.table
            # One hand, then into the next until our turn to play.
            choose = random_choice(5)  # played on with after the restart
            seen_version = await play_into_second_hand(client, table_id, choose)
        finally:
            process.kill()  # SIGKILL: no cleanup of any kind
            await process.wait()
        await client.aclose()
        before = hand_records(db)
        assert before, "a completed hand should be on disk"

        process, port = await start_server(db)
        try:
            back = await WireClient.connect(port)
            await back.hello(token=registered.token)
            joined = await back.expect(Joined)
            assert joined.table == table_id and joined.seat == 0
            snapshot = await back.expect(Snapshot)
            # Nothing the player saw was taken back.
            assert snapshot.version >= seen_version
            listing = await back.request(ListTables())
            assert isinstance(listing, Tables)
            statuses = {info.table: info.status for info in listing.tables}
            assert statuses.get(table_id) == TableStatus.PLAYING
            assert busy.table in statuses  # the bots' game resumed too
            await play_until_over(back, table_id, choose)
            await back.aclose()
        finally:
            process.terminate()
            await process.wait()
        after = hand_records(db)
        # Every hand completed before the crash is there, byte for byte.
        assert set(before) <= set(after)
