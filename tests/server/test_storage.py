"""The store: migrations, group commit, durability on return, a whole file after shutdown."""

import sqlite3
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
import trio

from server import queries
from server.ladder import store as ladder_store
from server.storage import (
    CHECKPOINT_EVERY,
    MIGRATIONS,
    SCHEMA_VERSION,
    SYNCHRONOUS_LEVEL,
    Durability,
    StorageError,
    StoreClosed,
    _Job,
    connect,
    open_store,
)


def test_connect_migrates_and_uses_wal(tmp_path: Path) -> None:
    conn = connect(tmp_path / "a" / "s.db")
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    # Opening again finds the schema current and changes nothing.
    conn = connect(tmp_path / "a" / "s.db")
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
            # The writer's own connection, read inside a batch: the level every commit uses.
            level = await store.call(lambda c: c.execute("PRAGMA synchronous").fetchone()[0])
            assert level == SYNCHRONOUS_LEVEL[durability]
            game_id = await _make_game(store)
            await store.append_action(game_id, 0, 1, {"card": "2C"}, "player")
            other = sqlite3.connect(path)
            assert other.execute("SELECT COUNT(*) FROM actions").fetchone()[0] == 1
            other.close()


async def test_normal_commits_inline_and_checkpoints_off_the_loop(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with trio.fail_after(30):
        async with open_store(path) as store:
            assert store.inline  # normal: no fsync to wait for, so no worker thread per batch
            assert store.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
            game_id = await _make_game(store)
            for seq in range(CHECKPOINT_EVERY + 1):  # one batch each: nothing else is queued
                await store.append_action(game_id, seq, seq % 4, {"card": "2C"}, "player")
            for _ in range(100):  # the checkpoint's worker thread, bounded
                if store.checkpoints:
                    break
                await trio.sleep(0.05)
            assert store.checkpoints >= 1
            other = sqlite3.connect(path)
            count = other.execute("SELECT COUNT(*) FROM actions").fetchone()[0]
            other.close()
            assert count == CHECKPOINT_EVERY + 1
        async with open_store(path, Durability.full) as store:
            assert not store.inline  # full: every batch's fsync happens in a worker thread
            assert await store.get(queries.action_count, game_id) == CHECKPOINT_EVERY + 1
    conn = connect(path)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_the_ladder_tables_are_a_migration_and_an_older_file_with_them_moves_on(
    tmp_path: Path,
) -> None:
    assert MIGRATIONS[1] == ladder_store.LADDER_MIGRATION  # the second; later ones follow it
    fresh = connect(tmp_path / "fresh.db")
    names = {row[0] for row in fresh.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"ladder_matches", "ladder_entrants", "ladder_games"} <= names
    fresh.close()
    # A file from before: schema 1, the ladder's tables made by the ladder itself at its start.
    path = tmp_path / "old.db"
    raw = sqlite3.connect(path, isolation_level=None)
    for statement in MIGRATIONS[0].split(";"):
        if statement.strip():
            raw.execute(statement)
    raw.execute("PRAGMA user_version = 1")
    ladder_store.ensure_schema(raw)
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
    with pytest.raises(StorageError, match="newer"):
        connect(path)


def test_not_a_database_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    path.write_bytes(b"this is not sqlite at all, just some text" * 100)
    with pytest.raises(StorageError, match="cannot open database"):
        connect(path)


async def _make_game(store: object, table_id: str = "t1") -> int:
    from server.storage import Store

    assert isinstance(store, Store)
    await store.call(lambda c: queries.insert_table(c, table_id, {"game": "spades"}))
    return await store.call(lambda c: queries.insert_game(c, table_id, "spades", {}, [None] * 4))


async def test_actions_arriving_together_share_one_transaction(tmp_path: Path) -> None:
    with trio.fail_after(10):
        async with open_store(tmp_path / "s.db") as store:
            game_id = await _make_game(store)
            before = store.batches
            async with trio.open_nursery() as nursery:
                for seq in range(40):
                    nursery.start_soon(store.append_action, game_id, seq, seq % 4, {"n": seq}, "p")
            # 40 concurrent appends needed far fewer than 40 commits.
            assert store.batches - before < 40
            assert await store.get(queries.action_count, game_id) == 40


async def test_duplicate_action_fails_alone(tmp_path: Path) -> None:
    with trio.fail_after(10):
        async with open_store(tmp_path / "s.db") as store:
            game_id = await _make_game(store)
            await store.append_action(game_id, 0, 0, {"bid": 3}, "player")
            results: list[str] = []

            async def append(seq: int) -> None:
                try:
                    await store.append_action(game_id, seq, 0, {}, "player")
                    results.append(f"ok{seq}")
                except ValueError:
                    results.append(f"dup{seq}")

            async with trio.open_nursery() as nursery:
                nursery.start_soon(append, 0)
                nursery.start_soon(append, 1)
            assert sorted(results) == ["dup0", "ok1"]
            assert await store.get(queries.action_count, game_id) == 2


async def test_append_returns_only_when_durable(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with trio.fail_after(10):
        async with open_store(path) as store:
            game_id = await _make_game(store)
            await store.append_action(game_id, 0, 2, {"card": "QS"}, "player")
            # Another connection (another process, in effect) sees it at once.
            other = sqlite3.connect(path)
            row = other.execute("SELECT seat, action FROM actions").fetchone()
            other.close()
            assert row == (2, '{"card": "QS"}')


@pytest.mark.parametrize("durability", list(Durability))
async def test_a_cancelled_caller_still_waits_for_its_write(
    tmp_path: Path, durability: Durability
) -> None:
    with trio.fail_after(10):
        async with open_store(tmp_path / "s.db", durability) as store:
            game_id = await _make_game(store)
            done_before = store.jobs
            finished = False
            with trio.CancelScope() as scope:
                scope.cancel()  # already cancelled when the request is made
                await store.append_action(game_id, 0, 1, {"card": "2C"}, "player")
                finished = True
            assert scope.cancelled_caught and not finished
            # The cancellation reached the caller only once its write had committed.
            assert store.jobs == done_before + 1
            assert await store.get(queries.action_count, game_id) == 1


async def test_queued_writes_finish_when_cancelled(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with trio.fail_after(10):
        with trio.CancelScope() as scope:
            async with open_store(path) as store:
                game_id = await _make_game(store)
                for seq in range(5):
                    # Queue without waiting, then cancel everything around the store.
                    store._send.send_nowait(_job(partial(_insert, game_id=game_id, seq=seq)))
                scope.cancel()
                await trio.sleep_forever()
        with pytest.raises(StoreClosed):
            await store.append_action(game_id, 9, 0, {}, "p")
    conn = connect(path)
    assert queries.action_count(conn, 1) == 5
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def _insert(conn: sqlite3.Connection, *, game_id: int, seq: int) -> None:
    queries.insert_action(conn, game_id, seq, seat=0, action={}, source="p")


def _job(fn: Callable[[sqlite3.Connection], object]) -> _Job:
    return _Job(fn)


async def test_unfinished_games_and_hand_records(tmp_path: Path) -> None:
    with trio.fail_after(10):
        async with open_store(tmp_path / "s.db") as store:
            g1 = await _make_game(store, "t1")
            g2 = await _make_game(store, "t2")
            await store.call(
                lambda c: queries.insert_hand(
                    c, g1, hand_no=0, seed="ab", commitment="cd", first_seq=0
                )
            )
            for seq in range(3):
                await store.append_action(g1, seq, seq, {"bid": seq}, "player")
            await store.call(lambda c: queries.insert_hand_record(c, g2, 0, {"hand": 0}))
            await store.call(lambda c: queries.finish_game(c, g2, "finished", [(0, None, 500, 1)]))
            games = await store.get(queries.unfinished_games)
            assert [g.id for g in games] == [g1]
            assert [a.action for a in games[0].actions] == [{"bid": 0}, {"bid": 1}, {"bid": 2}]
            assert games[0].hands[0].seed == "ab"
            assert list(await store.get(lambda c: list(queries.hand_records(c)))) == [{"hand": 0}]
            assert await store.get(queries.results, g2) == [(0, None, 500, 1)]
