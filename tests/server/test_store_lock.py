"""One server per database (issue #15, item 3): the lock, its release by a killed holder, the
commands that still work beside a running server, and a `--db` folder that does not exist."""

import json
import os
import socket
import sqlite3
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


async def test_another_spelling_of_the_same_file_is_the_same_database(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    (tmp_path / "sub").mkdir()
    link = tmp_path / "link.db"
    with trio.fail_after(10):
        async with open_store(path):
            link.symlink_to(path)
            for other in (tmp_path / "sub" / ".." / "s.db", link):
                with pytest.raises(DatabaseInUse):
                    async with open_store(other):
                        pass  # pragma: no cover - never opened


async def test_a_missing_folder_is_a_clear_error_and_is_not_created(tmp_path: Path) -> None:
    path = tmp_path / "no" / "such" / "s.db"
    with trio.fail_after(10):
        with pytest.raises(DatabaseFolderMissing, match=r"the folder .* does not exist"):
            async with open_store(path):
                pass  # pragma: no cover - never opened
    with pytest.raises(NoDatabase), read_transaction(path):  # a read just finds nothing there
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


async def test_commands_take_any_file_name(tmp_path: Path) -> None:
    path = tmp_path / "odd #1?name%20.db"
    with trio.fail_after(10):
        async with open_store(path) as store:
            await store.call(lambda tx: tx.insert_table("t", {}))
    with write_transaction(path) as tx:
        tx.insert_account("odd", None, None, is_bot=True, is_guest=False)
    with read_transaction(path) as tx:
        assert tx.account_by_name("odd") is not None


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
