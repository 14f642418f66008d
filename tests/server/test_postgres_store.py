"""What is PostgreSQL's own in the store: one schema for both engines, migrations that several
servers may race, durability as asked, the pipelined batch and its job-by-job rerun, a dropped
connection, and reads that never write. (Everything else runs on every engine: the `tx` and
`store` fixtures of tests/server/conftest.py.)"""

import os
import threading
from pathlib import Path

import psycopg
import pytest

from server.storage import (
    SCHEMA_VERSION,
    Durability,
    NoDatabase,
    SchemaTooNew,
    StorageError,
    Tx,
    open_store,
    read_transaction,
    write_transaction,
)
from server.storage.errors import PostgresInUse
from server.storage.postgres import (
    DatabaseUnreachable,
    PostgresDatabase,
    connect,
    migrate,
    schema_version,
)
from server.storage.postgres_driver import PostgresDriver, postgres_tx
from server.storage.sqlite import connect as sqlite_connect
from server.storage.sqlite_driver import sqlite_tx
from server.storage.target import shown


def _pg(tx: Tx) -> psycopg.Connection[object]:
    assert isinstance(tx.driver, PostgresDriver)
    return tx.driver.conn


def test_both_engines_make_the_same_tables_and_columns(pg_url: str, tmp_path: Path) -> None:
    lite = sqlite_connect(tmp_path / "s.db")
    tables = [
        r[0]
        for r in lite.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    ]
    sqlite_columns = {
        table: [row[1] for row in lite.execute(f"PRAGMA table_info({table})")] for table in tables
    }
    lite.close()
    pg = connect(pg_url)
    migrate(pg, pg_url)
    pg_columns: dict[str, list[str]] = {}
    for table, column in pg.execute(
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = 'public' ORDER BY table_name, ordinal_position"
    ):
        pg_columns.setdefault(table, []).append(column)
    pg.close()
    # PostgreSQL spells out SQLite's implicit rowid, and keeps its version in a row.
    assert pg_columns.pop("spades_schema") == ["version"]
    pg_columns["tables"].remove("rowid")
    assert pg_columns == sqlite_columns


def test_servers_starting_together_apply_each_migration_once(pg_url: str) -> None:
    errors: list[BaseException] = []
    found: list[int] = []

    def start() -> None:
        try:
            conn = connect(pg_url)
            try:
                found.append(migrate(conn, pg_url))
            finally:
                conn.close()
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    assert len(found) == 4 and 0 in found
    conn = connect(pg_url)
    assert schema_version(conn) == SCHEMA_VERSION
    assert conn.execute("SELECT COUNT(*) FROM spades_schema").fetchone() == (1,)
    conn.close()


async def test_a_newer_schema_is_refused_by_every_entry(pg_url: str) -> None:
    conn = connect(pg_url)
    migrate(conn, pg_url)
    conn.execute("UPDATE spades_schema SET version = %s", (SCHEMA_VERSION + 1,))
    conn.close()
    with pytest.raises(SchemaTooNew, match="upgrade spades-server"):
        async with open_store(pg_url):
            pass
    with pytest.raises(SchemaTooNew), read_transaction(pg_url):
        pass
    with pytest.raises(SchemaTooNew), write_transaction(pg_url):
        pass


@pytest.mark.parametrize("durability", list(Durability))
async def test_durability_sets_synchronous_commit(pg_url: str, durability: Durability) -> None:
    async with open_store(pg_url, durability) as store:
        level = await store.call(lambda tx: _pg(tx).execute("SHOW synchronous_commit").fetchone())
    assert level == ("on" if durability is Durability.full else "off",)


async def test_a_batch_goes_out_pipelined_and_only_a_failure_runs_it_job_by_job(
    pg_url: str,
) -> None:
    async with open_store(pg_url) as store:
        database = store.database
        assert isinstance(database, PostgresDatabase) and not store.inline
        await store.call(lambda tx: tx.insert_table("t", {}))
        game = await store.call(lambda tx: tx.insert_game("t", "spades", {}, []))
        await store.call(lambda tx: tx.insert_action(game, 0, seat=0, action={}, source="p"))
        assert database.retried == 0
        with pytest.raises(ValueError, match="already has an action 0"):
            await store.call(lambda tx: tx.insert_action(game, 0, seat=1, action={}, source="p"))
        assert database.retried == 1
        assert await store.call(lambda tx: tx.action_count(game)) == 1


async def test_a_dropped_connection_fails_no_batch_and_reconnects(pg_url: str) -> None:
    """Issue 38: the batch that finds its connection gone is not failed (it used to be, with
    `internal` for its table's action): it is kept, the connection opened again, and it commits,
    once."""
    async with open_store(pg_url) as store:
        await store.call(lambda tx: tx.insert_table("t", {}))
        pid = await store.call(lambda tx: _pg(tx).info.backend_pid)
        killer = connect(pg_url)
        killer.execute("SELECT pg_terminate_backend(%s)", (pid,))
        killer.close()
        await store.call(lambda tx: tx.insert_table("u", {}))
        assert store.health.outages == 1 and store.health.available
        with pytest.raises(StorageError):  # "u" is there once: a second is refused
            await store.call(lambda tx: tx.insert_table("u", {}))
        await store.call(lambda tx: tx.insert_table("v", {}))
        assert await store.call(lambda tx: tx.table_creator("v")) is None
        assert await store.call(lambda tx: _pg(tx).info.backend_pid) != pid


async def test_reads_beside_a_running_store_see_its_commits_and_never_write(pg_url: str) -> None:
    with pytest.raises(NoDatabase), read_transaction(pg_url):
        pass  # nothing was ever stored there
    async with open_store(pg_url) as store:
        await store.call(lambda tx: tx.insert_table("t", {"game": "spades"}))
        with read_transaction(pg_url) as tx:
            assert tx.waiting_tables() == [] and tx.latest_game_at("t") is None
        with pytest.raises(StorageError, match="read-only"), read_transaction(pg_url) as tx:
            tx.insert_table("x", {})
        with write_transaction(pg_url) as tx:
            tx.insert_table("w", {}, seats=[None] * 4)
        assert [w.id for w in await store.call(lambda tx: tx.waiting_tables())] == ["w"]


def test_an_unreachable_or_unknown_database_is_one_sentence(pg_url: str) -> None:
    with pytest.raises(DatabaseUnreachable, match=r"postgresql://ada:\*\*\*@127\.0\.0\.1:1/x"):
        connect("postgresql://ada:pw@127.0.0.1:1/x")
    missing = pg_url.rsplit("/", 1)[0] + "/no_such_database"
    with pytest.raises(DatabaseUnreachable, match="does not exist"):
        connect(missing)


def _names(tx: Tx) -> str | None:
    tx.insert_account("Ada", None, None, is_bot=False, is_guest=False)
    with pytest.raises(ValueError, match="taken"):
        tx.insert_account("ADA", None, None, is_bot=False, is_guest=False)
    tx.insert_account("Éva", None, None, is_bot=False, is_guest=False)
    tx.insert_account("éva", None, None, is_bot=False, is_guest=False)  # NOCASE is ASCII-only
    found = tx.account_by_name("éVA")
    return None if found is None else found.name


def test_sqlite_and_postgresql_compare_names_alike(pg_url: str) -> None:
    """Names compare without ASCII case in both; other letters are compared as they are."""
    lite = sqlite_connect(":memory:")
    assert _names(sqlite_tx(lite)) == "éva"
    lite.close()
    conn = connect(pg_url)
    migrate(conn, pg_url)
    assert _names(postgres_tx(conn)) == "éva"
    conn.close()


async def test_a_lone_server_holds_its_database_alone(pg_url: str) -> None:
    """Without a cluster, one server per PostgreSQL database too: a second store is refused,
    naming the first's process, and opens once the first has closed (a killed one lets go as its
    connection goes)."""
    async with open_store(pg_url) as first:
        await first.call(lambda tx: tx.insert_table("t", {}))
        with pytest.raises(PostgresInUse, match=f"spades-server pid {os.getpid()}"):
            async with open_store(pg_url):
                pass
        with read_transaction(pg_url) as tx:  # commands read beside it
            assert tx.table_creator("t") is None
    async with open_store(pg_url) as second:
        assert await second.call(lambda tx: tx.latest_game_at("t")) is None


def test_a_malformed_url_is_shown_without_its_password() -> None:
    assert shown("postgresql://ada:secret@[::1/db") == "postgresql://ada:***@[::1/db"
    assert shown("postgresql://ada:secret@db.lan:5432/spades") == (
        "postgresql://ada:***@db.lan:5432/spades"
    )
    assert shown("postgresql://ada@db.lan/spades") == "postgresql://ada@db.lan/spades"
