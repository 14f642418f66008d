"""The writer across an outage of its database (issue 38 item 1): a batch that cannot be committed is
kept and tried again until the database is back; nothing is answered before it is stored, nothing
is written twice, and the store says when it is down and when it is back."""

from pathlib import Path

import pytest
import trio

from server.cluster import membership
from server.storage import Durability, StorageError, open_store, writer
from server.storage.engine import Job
from server.storage.postgres import PostgresDatabase, connect, migrate, open_for_serving
from server.storage.sqlite import SqliteDatabase
from tests.postgres import Cluster


async def test_a_request_waits_out_a_restart_and_is_written_once(own_pg: Cluster) -> None:
    url = own_pg.fresh_database()
    seen: list[bool] = []
    with trio.fail_after(60):
        async with open_store(url) as store:
            store.health.watch(seen.append)
            went_down = trio.Event()
            store.health.watch(lambda up: None if up else went_down.set())
            await store.call(lambda tx: tx.insert_table("before", {}))
            await trio.to_thread.run_sync(own_pg.stop_server)
            done = trio.Event()

            async def during() -> None:
                await store.call(lambda tx: tx.insert_table("during", {}))
                done.set()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(during)
                await went_down.wait()  # the writer finds the database gone at its first try
                assert not done.is_set()  # and the request is not answered: it is not stored
                await trio.to_thread.run_sync(own_pg.start_server)
                await done.wait()
            assert store.health.available and store.health.outages == 1
            assert seen == [False, True]
            await store.call(lambda tx: tx.insert_table("after", {}))
            database = store.database
            assert isinstance(database, PostgresDatabase)
            rows = database.conn.execute("SELECT id FROM tables ORDER BY id").fetchall()
    assert rows == [("after",), ("before",), ("during",)]


def test_a_batch_cut_off_after_its_commit_is_not_run_again(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The connection lost once the COMMIT went out: whether it was made is asked of PostgreSQL
    (`txid_status`), so a batch that was committed is answered as it was, never written twice, and
    one that was not is run again."""
    database = open_for_serving(pg_url, Durability.normal)
    ids: list[int] = []
    own_id = PostgresDatabase._begin

    def noted(self: PostgresDatabase) -> int:
        ids.append(own_id(self))
        return ids[-1]

    monkeypatch.setattr(PostgresDatabase, "_begin", noted)
    try:
        first = Job(lambda tx: tx.insert_table("t", {}))
        database.commit_batch([first])
        assert first.error is None
        # As if the answer to that COMMIT had been lost: the same batch is handed in again.
        database._unsettled = ids[-1]
        again = Job(lambda tx: tx.insert_table("t", {}))  # would fail if it ran: "t" exists
        database.commit_batch([again])
        assert again.error is None and database._unsettled is None
        assert len(ids) == 1  # no transaction was begun for it
        # A batch whose transaction was rolled back is run again.
        database.conn.execute("BEGIN")
        rolled_back = int(database.conn.execute("SELECT txid_current()").fetchone()[0])
        database.conn.execute("ROLLBACK")
        database._unsettled = rolled_back
        other = Job(lambda tx: tx.insert_table("u", {}))
        database.commit_batch([other])
        assert other.error is None
        rows = database.conn.execute("SELECT id FROM tables ORDER BY id").fetchall()
        assert rows == [("t",), ("u",)]
    finally:
        database.close()


async def test_a_full_sqlite_disk_pauses_the_store_until_there_is_room(tmp_path: Path) -> None:
    """A disk that fills under a SQLite store (simulated: `max_page_count` at the file's size) is
    an outage too: the request waits, the store says it is down, and once there is room again it
    is written, once."""
    with trio.fail_after(30):
        async with open_store(tmp_path / "s.db") as store:
            database = store.database
            assert isinstance(database, SqliteDatabase)
            pages = database.conn.execute("PRAGMA page_count").fetchone()[0]
            database.conn.execute(f"PRAGMA max_page_count = {pages}")
            went_down = trio.Event()
            store.health.watch(lambda up: None if up else went_down.set())
            big = {"note": "x" * 200_000}  # needs pages the file may not grow by
            done = trio.Event()

            async def write() -> None:
                await store.call(lambda tx: tx.insert_table("big", big))
                done.set()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(write)
                await went_down.wait()
                assert not done.is_set()
                assert "full" in store.health.reason
                database.conn.execute("PRAGMA max_page_count = 1073741823")  # room again
                await done.wait()
            assert store.health.available
            rows = [tuple(r) for r in database.conn.execute("SELECT id FROM tables")]
    assert rows == [("big",)]


async def test_a_server_declared_dead_in_its_outage_never_commits_after(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 38 item 3, the fence across an outage: a server cut off from the database long enough
    to be declared dead by the others finds, on reconnecting, its fence refusing every commit. Its
    writer waits (the refusal may be a lapsed lease its node is about to renew) but never commits:
    the node's renewal fails and the server stops; what was waiting is then not written."""
    monkeypatch.setattr(writer, "CLOSE_WAIT", 0.5)
    conn = connect(pg_url)
    migrate(conn, pg_url)
    membership.register(conn, "w1", "127.0.0.1:1")
    with trio.fail_after(30):
        async with open_store(pg_url, fence=(membership.FENCE, ("w1",))) as store:
            await store.call(lambda tx: tx.insert_table("before", {}))
            database = store.database
            assert isinstance(database, PostgresDatabase)
            # Cut off (its connection ended), and declared dead by another server meanwhile.
            conn.execute("SELECT pg_terminate_backend(%s)", (database.conn.info.backend_pid,))
            conn.execute("UPDATE cluster_workers SET lease_until = 0 WHERE id = 'w1'")
            assert membership.expire(conn) == ["w1"]
            refused: list[BaseException] = []

            async def write() -> None:
                try:
                    await store.call(lambda tx: tx.insert_table("after", {}))
                except StorageError as exc:
                    refused.append(exc)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(write)
                went_down = trio.Event()
                store.health.watch(lambda up: None if up else went_down.set())
                await went_down.wait()  # reconnected, and the fence refused it
                assert not membership.renew(conn, "w1")  # the node finds it dead: it stops
                store.close()
        assert len(refused) == 1 and "not written" in str(refused[0])
    rows = conn.execute("SELECT id FROM tables ORDER BY id").fetchall()
    assert rows == [("before",)]
    conn.close()
