"""The database under faults an operator meets: a second server on the same file, a killed
server's lock, and a WAL that must stay bounded under load (issue #15 item 3, issue #22 item 7)."""

import os
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from server.failures import ExitCode
from server.storage import DatabaseInUse, Store, open_store
from server.storage.sqlite import WAL_RESET_PAGES, SqliteDatabase
from tests.hostile.proc import ServerProcess, server_command

# A child process that serves the database from the store's point of view: it opens the store,
# writes one table, says so on stdout and waits (for stdin to close, or to be killed).
HOLDER = """
import sys, trio
from server.storage import open_store

async def main(path):
    async with open_store(path) as store:
        await store.call(lambda tx: tx.insert_table("held", {"game": "spades"}))
        print("held", flush=True)
        await trio.to_thread.run_sync(sys.stdin.read)

trio.run(main, sys.argv[1])
"""


def start_holder(path: Path) -> subprocess.Popen[str]:
    child = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert child.stdout is not None
    seen = []
    for _ in range(50):  # its log lines first; EOF if it fails
        line = child.stdout.readline()
        seen.append(line)
        if line.strip() == "held":
            return child
        if not line:
            break
    with child:  # closes its pipes and waits
        child.kill()
    raise AssertionError(f"the holder did not start: {seen!r}")


async def test_another_process_holding_it_is_named_and_a_killed_holder_lets_go(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    # Leaving `with child` closes its stdin, so a holder still alive ends, and waits for it.
    with start_holder(path) as child:
        with trio.fail_after(20):
            with pytest.raises(DatabaseInUse) as info:
                async with open_store(path):
                    pass  # pragma: no cover - never opened
            assert info.value.pid == child.pid
            assert f"spades-server pid {child.pid} on {socket.gethostname()}" in str(info.value)
            # kill -9: no cleanup of any kind, and the lock goes with the process.
            child.send_signal(signal.SIGKILL)
            await trio.to_thread.run_sync(child.wait)
            async with open_store(path) as store:
                assert store.batches == 0
            # What the killed holder committed is there.
            conn = sqlite3.connect(path)
            assert conn.execute("SELECT id FROM tables").fetchall() == [("held",)]
            conn.close()


async def test_a_second_serve_is_refused_naming_the_first(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    # Ports of its own (0): a default port another program holds would add its warning line.
    serve = [*server_command(), "serve", "--host", "127.0.0.1", "--port", "0", "--web-port", "0"]
    serve += ["--db", str(db)]
    with ServerProcess(db).start() as first, trio.fail_after(120):
        second = await trio.run_process(
            serve, capture_stdout=True, capture_stderr=True, check=False
        )
        # Refused before it touched anything: one line, and the exit code of a database another
        # server holds (5; docs/operations.md, "Exit codes").
        assert second.returncode == ExitCode.DATABASE_IN_USE
        lines = second.stderr.decode().strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"error: database {db} is in use"), lines
        assert f"by spades-server pid {first.pid} on {socket.gethostname()}" in lines[0]
        assert first.alive()
        # A read-only command still works while it serves.
        exported = await trio.run_process(
            [*server_command(), "export", "--all", "--db", str(db)],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
        assert exported.returncode == 0, exported.stderr
        assert b"0 hand records" in exported.stderr
        assert first.stop() == 0


async def test_the_wal_stays_bounded_under_a_steady_load(tmp_path: Path) -> None:
    """Issue #22, item 7: with tables writing all the time the WAL used to grow without bound (a
    checkpoint running beside the writer never catches up, so the WAL never starts again). The
    store now finishes each checkpoint with the writer paused, so the WAL is reused."""
    path = tmp_path / "s.db"
    wal = tmp_path / "s.db-wal"
    tables = 16
    with trio.fail_after(120):
        async with open_store(path) as store:
            games = [await _make_game(store, f"t{i}") for i in range(tables)]
            largest = 0

            async def table(game_id: int, rows: int) -> None:
                nonlocal largest
                for seq in range(rows):
                    await _append(store, game_id, seq)
                    largest = max(largest, wal.stat().st_size)

            async with trio.open_nursery() as nursery:
                for game_id in games:
                    nursery.start_soon(table, game_id, 2_500)
            database = store.database
            assert isinstance(database, SqliteDatabase)
            written = path.stat().st_size + wal.stat().st_size
            assert database.checkpoints >= 2
    # 40,000 actions in groups of 16: without the fix the WAL holds every page of every commit
    # (about 190 MB here); with it, about WAL_RESET_PAGES and what is written while it resets.
    assert largest < 2 * WAL_RESET_PAGES * 4096 + 8 * 1024 * 1024, (largest, written)
    assert not wal.exists() or wal.stat().st_size == 0  # truncated at a clean close


async def _make_game(store: Store, table_id: str) -> int:
    await store.call(lambda tx: tx.insert_table(table_id, {"game": "spades"}))
    return await store.call(lambda tx: tx.insert_game(table_id, "spades", {}, [None] * 4))


async def _append(store: Store, game_id: int, seq: int) -> None:
    await store.call(
        lambda tx: tx.insert_action(game_id, seq, seat=0, action={"card": "2C"}, source="p")
    )
