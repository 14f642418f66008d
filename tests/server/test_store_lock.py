"""One server per database (issue #15, item 3): the lock, its release by a killed holder, the
commands that still work beside a running server, and a `--db` folder that does not exist."""

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from server.cli import app
from server.storage import (
    SCHEMA_VERSION,
    DatabaseFolderMissing,
    DatabaseInUse,
    NoDatabase,
    NotADatabase,
    StorageError,
    open_store,
    read_transaction,
    write_transaction,
)
from server.storage.lock import lock_path_of
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


async def test_a_second_store_in_this_process_is_refused_naming_the_holder(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    with trio.fail_after(10):
        async with open_store(path):
            with pytest.raises(DatabaseInUse) as info:
                async with open_store(path):
                    pass  # pragma: no cover - never opened
            assert info.value.pid == os.getpid()
            assert info.value.host == socket.gethostname()
            assert f"pid {os.getpid()}" in str(info.value) and str(path) in str(info.value)
            holder = json.loads(lock_path_of(path).read_text())
            assert holder["pid"] == os.getpid()
        # Released at a clean close: the next server opens it.
        async with open_store(path) as store:
            assert await store.call(lambda tx: tx.game_ids()) == []
    assert lock_path_of(path).read_text() == ""  # the file stays, emptied


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


def test_a_second_serve_is_refused_naming_the_first(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with ServerProcess(db).start() as first:
        second = subprocess.run(
            [*server_command(), "serve", "--host", "127.0.0.1", "--port", "0", "--db", str(db)],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        # Refused before it touched anything. (That the CLI prints it as one line with its own
        # exit code is the CLI's part: tests/server/test_server_cli.py.)
        assert second.returncode != 0
        assert f"is in use by spades-server pid {first.pid}" in second.stderr
        assert first.alive()
        # A read-only command still works while it serves.
        exported = subprocess.run(
            [*server_command(), "export", "--all", "--db", str(db)],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert exported.returncode == 0, exported.stderr
        assert "0 hand records" in exported.stderr
        assert first.stop() == 0


async def test_a_missing_folder_is_a_clear_error_and_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "s.db"
    with trio.fail_after(10):
        with pytest.raises(DatabaseFolderMissing, match=r"the folder .* does not exist"):
            async with open_store(path):
                pass  # pragma: no cover - never opened
    with pytest.raises(DatabaseFolderMissing), read_transaction(path):
        pass  # pragma: no cover - never opened
    with pytest.raises(DatabaseFolderMissing), write_transaction(path):
        pass  # pragma: no cover - never opened
    assert not (tmp_path / "no").exists()


def test_serve_on_a_missing_folder_is_refused_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "missing" / "s.db"
    result = CliRunner().invoke(
        app, ["serve", "--host", "127.0.0.1", "--port", "0", "--db", str(missing)]
    )
    assert result.exit_code != 0
    assert isinstance(result.exception, BaseException)
    assert not missing.parent.exists()


async def test_reads_beside_a_running_store_see_what_it_committed_and_never_write(
    tmp_path: Path,
) -> None:
    path = tmp_path / "s.db"
    with pytest.raises(NoDatabase), read_transaction(path):
        pass  # pragma: no cover - never opened
    assert not path.exists()  # a read never creates the file
    with trio.fail_after(10):
        async with open_store(path) as store:
            await store.call(lambda tx: tx.insert_table("t1", {"game": "spades"}))
            game = await store.call(lambda tx: tx.insert_game("t1", "spades", {}, [None] * 4))
            await store.call(lambda tx: tx.insert_hand_record(game, 0, {"hand": 0}))
            with read_transaction(path) as tx:
                assert list(tx.hand_records()) == [{"hand": 0}]
                # One snapshot for the whole command: a commit meanwhile is not seen.
                await store.call(lambda tx: tx.insert_hand_record(game, 1, {"hand": 1}))
                assert tx.hand_count(game) == (0, 1)
            with pytest.raises(StorageError, match="cannot read"), read_transaction(path) as tx:
                tx.insert_account("nobody", None, None, is_bot=False, is_guest=False)
            assert await store.call(lambda tx: tx.account_by_name("nobody")) is None
            # A command that adds to the database writes beside the server.
            with write_transaction(path) as tx:
                tx.insert_account("added", None, None, is_bot=True, is_guest=False)
            added = await store.call(lambda tx: tx.account_by_name("added"))
            assert added is not None and added.is_bot


async def test_a_write_beside_a_server_on_another_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with trio.fail_after(10):
        async with open_store(path):
            raw = sqlite3.connect(path)
            raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION - 1}")  # as an older server's
            raw.close()
            refused = pytest.raises(DatabaseInUse, match=f"schema is version {SCHEMA_VERSION - 1}")
            with refused, write_transaction(path):
                pass  # pragma: no cover - never opened
            raw = sqlite3.connect(path)
            raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            raw.close()


def test_commands_on_a_file_that_is_not_a_database(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("shopping list\n" * 200)
    with pytest.raises(NotADatabase), read_transaction(path):
        pass  # pragma: no cover - never opened
    with pytest.raises(NotADatabase), write_transaction(path):
        pass  # pragma: no cover - never opened
    assert path.read_text() == "shopping list\n" * 200
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    with pytest.raises(NoDatabase), read_transaction(empty):
        pass  # pragma: no cover - never opened
