"""The store: migrations, group commit, durability on return, a whole file after shutdown.

Tests taking the `store` fixture run once per engine (tests/server/stores.py): a real SQLite file,
`:memory:` and PostgreSQL; those that need a second connection to the same database (another
process, in effect) run on the file and on PostgreSQL (`shared_target`).
"""

import sqlite3
from functools import partial
from pathlib import Path

import pytest
import trio

from server.storage import (
    MIGRATIONS,
    SCHEMA_VERSION,
    Durability,
    NotADatabase,
    SchemaTooNew,
    StorageError,
    Store,
    StoreClosed,
    Tx,
    open_store,
    read_transaction,
)
from server.storage.engine import Job
from server.storage.sqlite import SYNCHRONOUS_LEVEL, SqliteDatabase, connect
from server.storage.target import Target


def _sqlite(store: Store) -> SqliteDatabase:
    assert isinstance(store.database, SqliteDatabase)
    return store.database


def test_connect_migrates_and_uses_wal(tmp_path: Path) -> None:
    conn = connect(tmp_path / "s.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    # Opening again finds the schema current and changes nothing.
    conn = connect(tmp_path / "s.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    conn.close()


def test_connect_commits_with_synchronous_normal_unless_asked_for_full(tmp_path: Path) -> None:
    conn = connect(tmp_path / "default.db")
    assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    conn.close()
    for durability in Durability:
        conn = connect(tmp_path / f"{durability.value}.db", durability)
        level = conn.execute("PRAGMA synchronous").fetchone()[0]
        assert level == SYNCHRONOUS_LEVEL[durability]
        conn.close()
    assert SYNCHRONOUS_LEVEL[Durability.normal] == 1
    assert SYNCHRONOUS_LEVEL[Durability.full] == 2


@pytest.mark.parametrize("durability", list(Durability))
async def test_the_store_writes_with_the_durability_asked_for(
    tmp_path: Path, durability: Durability
) -> None:
    path = tmp_path / "s.db"
    with trio.fail_after(10):
        async with open_store(path, durability) as store:
            assert store.synchronous == SYNCHRONOUS_LEVEL[durability]
            # The writer's own connection: the level every commit uses.
            conn = _sqlite(store).conn
            assert conn.execute("PRAGMA synchronous").fetchone()[0] == SYNCHRONOUS_LEVEL[durability]
            game_id = await _make_game(store)
            await _append(store, game_id, 0)
            other = sqlite3.connect(path)
            assert other.execute("SELECT COUNT(*) FROM actions").fetchone()[0] == 1
            other.close()


async def test_normal_commits_inline_and_checkpoints_off_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with trio.fail_after(60):
        async with open_store(path) as store:
            database = _sqlite(store)
            assert store.inline  # normal: no fsync to wait for, so no worker thread per batch
            assert database.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
            game_id = await _make_game(store)
            # One batch each (nothing else is queued), until the store has checkpointed the WAL
            # in full: bounded by count, not by time.
            seq = 0
            for seq in range(20_000):
                await _append(store, game_id, seq)
                if database.checkpoints:
                    break
            assert database.checkpoints >= 1
            other = sqlite3.connect(path)
            count = other.execute("SELECT COUNT(*) FROM actions").fetchone()[0]
            other.close()
            assert count == seq + 1
        async with open_store(path, Durability.full) as store:
            assert not store.inline  # full: every batch's fsync happens in a worker thread
            assert await store.call(lambda tx: tx.action_count(game_id)) == seq + 1
    conn = connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_the_ladder_tables_are_a_migration_and_an_older_file_with_them_moves_on(
    tmp_path: Path,
) -> None:
    assert "CREATE TABLE IF NOT EXISTS ladder_matches" in MIGRATIONS[1]  # the second
    fresh = connect(tmp_path / "fresh.db")
    names = {row[0] for row in fresh.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"ladder_matches", "ladder_entrants", "ladder_games"} <= names
    fresh.close()
    # A file from before: schema 1, the ladder's tables made by the ladder itself at its start.
    path = tmp_path / "old.db"
    raw = sqlite3.connect(path, isolation_level=None)
    for statement in (MIGRATIONS[0] + ";" + MIGRATIONS[1]).split(";"):
        if statement.strip():
            raw.execute(statement)
    raw.execute("PRAGMA user_version = 1")
    raw.execute("INSERT INTO ladder_entrants (account_id, house_spec, added_at) VALUES (1, 'x', 0)")
    raw.close()
    conn = connect(path)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("SELECT house_spec FROM ladder_entrants").fetchall()[0][0] == "x"
    conn.close()


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    raw = sqlite3.connect(path)
    raw.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    raw.close()
    with pytest.raises(SchemaTooNew, match="newer than this server") as info:
        connect(path)
    assert info.value.found == SCHEMA_VERSION + 1
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION + 1  # untouched
    raw.close()


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    text = b"this is not sqlite at all, just some text" * 100
    path.write_bytes(text)
    with pytest.raises(NotADatabase, match="cannot open database"):
        connect(path)
    assert path.read_bytes() == text


async def _make_game(store: Store, table_id: str = "t1") -> int:
    await store.call(lambda tx: tx.insert_table(table_id, {"game": "spades"}))
    return await store.call(lambda tx: tx.insert_game(table_id, "spades", {}, [None] * 4))


async def _append(store: Store, game_id: int, seq: int, seat: int = 0) -> None:
    await store.call(
        lambda tx: tx.insert_action(game_id, seq, seat=seat, action={"card": "2C"}, source="p")
    )


async def test_actions_arriving_together_share_one_transaction(store: Store) -> None:
    with trio.fail_after(10):
        game_id = await _make_game(store)
        before = store.batches
        async with trio.open_nursery() as nursery:
            for seq in range(40):
                nursery.start_soon(_append, store, game_id, seq, seq % 4)
        # 40 concurrent appends needed far fewer than 40 commits.
        assert store.batches - before < 40
        assert await store.call(lambda tx: tx.action_count(game_id)) == 40


async def test_duplicate_action_fails_alone(store: Store) -> None:
    with trio.fail_after(10):
        game_id = await _make_game(store)
        await _append(store, game_id, 0)
        results: list[str] = []

        async def append(seq: int) -> None:
            try:
                await _append(store, game_id, seq)
                results.append(f"ok{seq}")
            except ValueError:
                results.append(f"dup{seq}")

        async with trio.open_nursery() as nursery:
            nursery.start_soon(append, 0)
            nursery.start_soon(append, 1)
        assert sorted(results) == ["dup0", "ok1"]
        assert await store.call(lambda tx: tx.action_count(game_id)) == 2


async def test_a_job_that_fails_otherwise_is_a_storage_error_and_writes_nothing(
    store: Store,
) -> None:
    with trio.fail_after(10):
        game_id = await _make_game(store)

        def half_then_fail(tx: Tx) -> None:
            tx.insert_action(game_id, 0, seat=0, action={}, source="p")
            raise RuntimeError("a bug in the job")

        with pytest.raises(StorageError, match="a bug in the job"):
            await store.call(half_then_fail)
        assert await store.call(lambda tx: tx.action_count(game_id)) == 0


@pytest.fixture(params=["sqlite-file", "postgresql"])
def shared_target(request: pytest.FixtureRequest, tmp_path: Path) -> Target:
    """A fresh database another connection can open too: a SQLite file, or PostgreSQL."""
    if request.param == "postgresql":
        url: str = request.getfixturevalue("pg_url")
        return url
    return tmp_path / "s.db"


def _actions(target: Target, game_id: int) -> list[tuple[int, object]]:
    """The game's actions as another connection reads them (seat, action)."""
    with read_transaction(target) as tx:
        stored = tx.load_game(game_id)
        return [] if stored is None else [(a.seat, a.action) for a in stored.actions]


async def test_append_returns_only_when_durable(shared_target: Target) -> None:
    with trio.fail_after(10):
        async with open_store(shared_target) as store:
            game_id = await _make_game(store)
            await store.call(
                lambda tx: tx.insert_action(game_id, 0, seat=2, action={"card": "QS"}, source="p")
            )
            # Another connection (another process, in effect) sees it at once.
            assert _actions(shared_target, game_id) == [(2, {"card": "QS"})]


@pytest.mark.parametrize("durability", list(Durability))
async def test_a_cancelled_caller_still_waits_for_its_write(
    shared_target: Target, durability: Durability
) -> None:
    with trio.fail_after(10):
        async with open_store(shared_target, durability) as store:
            game_id = await _make_game(store)
            done_before = store.jobs
            finished = False
            with trio.CancelScope() as scope:
                scope.cancel()  # already cancelled when the request is made
                await _append(store, game_id, 0)
                finished = True
            assert scope.cancelled_caught and not finished
            # The cancellation reached the caller only once its write had committed.
            assert store.jobs == done_before + 1
            assert await store.call(lambda tx: tx.action_count(game_id)) == 1


async def test_queued_writes_finish_when_cancelled(shared_target: Target) -> None:
    with trio.fail_after(10):
        with trio.CancelScope() as scope:
            async with open_store(shared_target) as store:
                game_id = await _make_game(store)
                for seq in range(5):
                    # Queue without waiting, then cancel everything around the store.
                    store._send.send_nowait(Job(partial(_insert, game_id=game_id, seq=seq)))
                scope.cancel()
                await trio.sleep_forever()
        with pytest.raises(StoreClosed):
            await _append(store, game_id, 9)
    assert len(_actions(shared_target, game_id)) == 5
    if not isinstance(shared_target, str):  # the SQLite file is whole
        conn = connect(shared_target)
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        conn.close()


def _insert(tx: Tx, *, game_id: int, seq: int) -> None:
    tx.insert_action(game_id, seq, seat=0, action={}, source="p")


async def test_unfinished_games_and_hand_records(store: Store) -> None:
    with trio.fail_after(10):
        g1 = await _make_game(store, "t1")
        g2 = await _make_game(store, "t2")
        await store.call(
            lambda tx: tx.insert_hand(g1, hand_no=0, seed="ab", commitment="cd", first_seq=0)
        )

        def bids(tx: Tx) -> None:
            for seq in range(3):
                tx.insert_action(g1, seq, seat=seq, action={"bid": seq}, source="player")

        await store.call(bids)
        await store.call(lambda tx: tx.insert_hand_record(g2, 0, {"hand": 0}))
        await store.call(lambda tx: tx.finish_game(g2, "finished", [(0, None, 500, 1)]))
        games = await store.call(lambda tx: tx.unfinished_games())
        assert [g.id for g in games] == [g1]
        assert [a.action for a in games[0].actions] == [{"bid": 0}, {"bid": 1}, {"bid": 2}]
        assert games[0].hands[0].seed == "ab"
        assert await store.call(lambda tx: list(tx.hand_records())) == [{"hand": 0}]
        assert await store.call(lambda tx: tx.results(g2)) == [(0, None, 500, 1)]


async def test_memory_store_is_private_and_whole() -> None:
    """`:memory:` (issue #15, item 8): the whole store without a file, and each one its own."""
    with trio.fail_after(10):
        async with open_store(":memory:") as first, open_store(":memory:") as second:
            assert first.inline and _sqlite(first).path is None
            game_id = await _make_game(first)
            await _append(first, game_id, 0)
            assert await first.call(lambda tx: tx.action_count(game_id)) == 1
            assert await second.call(lambda tx: tx.game_ids()) == []
