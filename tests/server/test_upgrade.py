"""Upgrading a server's schema, as docs/operations.md ("Upgrade") describes it, with real `serve`
processes on both engines:

- a database at an older schema version (built from a real game: the columns and tables of the
  later migrations left out) is migrated by a new server, which resumes the game exactly as the
  up-to-date database does;
- an old server (simulated: the database at a version newer than this code knows) refuses to start,
  one line and exit 4, and leaves the database untouched; a `--workers` supervisor too;
- an old server still running when a new one migrates PostgreSQL keeps playing (it names every
  column it writes), and once stopped cannot start again: exit 4.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from contextlib import ExitStack
from pathlib import Path

import psycopg
import pytest
import trio

from protocol.messages import Act, CreateTable, Register, Registered, TableCreated, YourTurn
from protocol.types import Game
from server.failures import ExitCode
from server.storage.dbcopy import End, SqliteEnd
from server.storage.dbcopy_postgres import PostgresEnd
from server.storage.postgres import MIGRATION_LOCK
from server.storage.schema import SCHEMA_VERSION, tables
from server.storage.target import Target, is_postgres
from tests.server.test_crash import start_server
from tests.server.test_db_copy_serve import a_game_into_its_second_hand, resumed
from tests.server.wire_client import WireClient

CLI = [sys.executable, "-m", "server.cli"]
OLD = 2  # the version the older database is at: before waiting tables, guests' expiry, clusters


def at_version(source: Path, version: int, target: Target) -> None:
    """Make `target` the database `source` would be at schema `version`: the tables the first
    `version` migrations make, with the columns they had then, holding `source`'s rows."""
    with ExitStack() as stack:
        src = SqliteEnd.source(source, stack)
        dst: End = (
            PostgresEnd.target(str(target), stack)
            if is_postgres(target)
            else SqliteEnd.target(Path(target), stack)
        )
        dst.migrate(version)
        assert dst.version() == version
        dst.begin()
        for shape in tables(version):
            columns = dst.columns(shape)
            dst.write(shape, columns, src.rows(shape, columns, src.key(shape)))
            dst.move_counters(shape, {})
        dst.commit()


def schema_version(db: Target) -> int:
    if is_postgres(db):
        with psycopg.connect(str(db)) as pg:
            row = pg.execute("SELECT version FROM spades_schema").fetchone()
            assert row is not None
            return int(row[0])
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("PRAGMA user_version").fetchone()[0])
    finally:
        conn.close()


def make_newer(db: Target) -> None:
    """What a newer server's migration would do: a column, a table, the version after ours."""
    statements = [
        "ALTER TABLE actions ADD COLUMN from_the_future TEXT",
        "CREATE TABLE from_the_future (id TEXT PRIMARY KEY)",
    ]
    if is_postgres(db):
        with psycopg.connect(str(db)) as pg, pg.transaction():
            pg.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
            for statement in statements:
                pg.execute(statement)
            pg.execute("UPDATE spades_schema SET version = %s", (SCHEMA_VERSION + 1,))
        return
    import sqlite3

    conn = sqlite3.connect(db, isolation_level=None)
    try:
        for statement in statements:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    finally:
        conn.close()


def serve_refused(db: Target, *flags: str) -> subprocess.CompletedProcess[str]:
    # Every port picked free (--metrics-port 0: without the page it would default to 9777, which
    # another server on the machine may hold), so stderr has nothing but the refusal.
    ports = ["--host", "127.0.0.1", "--port", "0", "--no-web", "--metrics-port", "0"]
    return subprocess.run(
        [*CLI, "serve", *ports, *flags, "--db", str(db)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def test_a_new_server_migrates_an_older_database_and_resumes_its_game(
    tmp_path: Path, pg_url: str
) -> None:
    current = tmp_path / "current.db"
    with trio.fail_after(100):
        token, table = await a_game_into_its_second_hand(current, "upgrader", 5)
    old_sqlite = tmp_path / "old.db"
    at_version(current, OLD, old_sqlite)
    at_version(current, OLD, pg_url)
    assert schema_version(old_sqlite) == schema_version(pg_url) == OLD
    with trio.fail_after(100):
        expected = await resumed(current, token, table)
        for old in (old_sqlite, pg_url):
            # The new server migrates it at start (the old one is stopped) and resumes the game.
            assert await resumed(old, token, table) == expected
            assert schema_version(old) == SCHEMA_VERSION


@pytest.mark.parametrize("engine", ["sqlite", "postgresql"])
def test_an_old_server_refuses_a_newer_schema_and_leaves_it_alone(
    tmp_path: Path, engine: str, request: pytest.FixtureRequest
) -> None:
    db: Target = request.getfixturevalue("pg_url") if engine == "postgresql" else tmp_path / "n.db"
    at_version(_empty_current(tmp_path), SCHEMA_VERSION, db)
    make_newer(db)
    refused = serve_refused(db)
    assert refused.returncode == ExitCode.DATABASE, refused.stderr
    (line,) = refused.stderr.splitlines()
    assert line.startswith("error: database ")
    assert line.endswith(
        f"has schema version {SCHEMA_VERSION + 1}, newer than this server's ({SCHEMA_VERSION}):"
        " upgrade spades-server to open it"
    )
    assert refused.stdout == ""  # it never listened
    assert schema_version(db) == SCHEMA_VERSION + 1
    if engine == "postgresql":
        # A supervisor of the old version: its first worker is refused, and so is it.
        supervised = serve_refused(db, "--workers", "2")
        assert supervised.returncode == 4, supervised.stderr
        assert "newer than this server's" in supervised.stderr
        assert schema_version(db) == SCHEMA_VERSION + 1


def _empty_current(tmp_path: Path) -> Path:
    """An up-to-date SQLite database with nothing in it."""
    from server.storage.sqlite import connect

    path = tmp_path / "empty.db"
    connect(path).close()
    return path


async def test_an_old_server_running_when_a_new_one_migrates_plays_on_then_cannot_restart(
    pg_url: str,
) -> None:
    with trio.fail_after(100):
        process, port = await start_server(pg_url)  # type: ignore[arg-type]
        try:
            client = await WireClient.connect(port)
            await client.hello()
            assert isinstance(await client.request(Register(name="stayer")), Registered)
            created = await client.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
            )
            assert isinstance(created, TableCreated)
            turn = await client.expect(YourTurn)
            make_newer(pg_url)  # a new server, elsewhere, migrated the database
            before = _actions(pg_url)
            for _ in range(3):  # the old server goes on taking and storing actions
                await client.send(
                    Act(table=created.table, version=turn.version, action=turn.legal[0])
                )
                turn = await client.expect(YourTurn)
            assert _actions(pg_url) > before
            await client.aclose()
        finally:
            process.send_signal(signal.SIGTERM)
            assert await process.wait() == 0
    refused = serve_refused(pg_url)
    assert refused.returncode == 4 and len(refused.stderr.splitlines()) == 1, refused.stderr
    assert "newer than this server's" in refused.stderr


def _actions(url: str) -> int:
    with psycopg.connect(url) as pg:
        row = pg.execute("SELECT count(*) FROM actions").fetchone()
        assert row is not None
        return int(row[0])
