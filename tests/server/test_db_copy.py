"""`spades-server db copy` and `db digest` (server/storage/dbcopy.py), on both engines: every table
of the schema, values that differ between the engines' types (floats, bytes, text beyond ASCII,
NULLs, ids with gaps), the counters moved past the copied numbers, the one transaction, and each
refusal as one line and its exit code. The copy a real server resumes is tests/server/test_db_copy_serve.py.
"""

from __future__ import annotations

import sqlite3
from contextlib import ExitStack
from pathlib import Path

import psycopg
import pytest
from typer.testing import CliRunner

from server.cli import app
from server.failures import ExitCode
from server.storage import DatabaseInUse, SchemaTooNew
from server.storage.dbcopy import TableReport, TargetNotEmpty, copy_database, digest_database
from server.storage.dbcopy_postgres import PostgresEnd
from server.storage.digest import TableDigest, encode_value
from server.storage.lock import DatabaseLock
from server.storage.postgres import hold_serving_lock, release_serving_lock
from server.storage.schema import MIGRATIONS, SCHEMA_VERSION, tables
from server.storage.sqlite import connect

# One or more rows for every table of the schema, with what tells the engines apart: ids with
# gaps, NULLs, a float that is not exact in decimal, a whole float, bytes, text beyond ASCII and
# text whose byte order is not its case-blind order. A new table needs rows here (the first test
# says so).
FILL: dict[str, list[str]] = {
    "accounts": [
        "INSERT INTO accounts (id, name, token_salt, token_hash, is_bot, is_guest, created_at)"
        " VALUES (1, 'ada', x'00ff10', x'deadbeef', 0, 0, 1700000000.125)",
        "INSERT INTO accounts (id, name, token_salt, token_hash, is_bot, is_guest, created_at)"
        " VALUES (2, 'Zoë ☃', NULL, NULL, 1, 1, 0.1)",
        "UPDATE accounts SET last_seen_at = 1700000000.0 WHERE id = 2",
        "INSERT INTO accounts (id, name, is_bot, is_guest, created_at) VALUES (7, 'Bob', 0, 0, 3)",
    ],
    "tables": [
        # Made in the order b, a, B: the rowid order is not the id order.
        "INSERT INTO tables (id, config, created_at) VALUES ('t-b', '{\"game\":\"spades\"}', 10.5)",
        "UPDATE tables SET seats = '[1,null,null,null]', creator = 1 WHERE id = 't-b'",
        "INSERT INTO tables (id, config, created_at, closed_at) VALUES ('t-a', '{}', 11, 12.25)",
        "INSERT INTO tables (id, config, created_at) VALUES ('t-B', '{\"é\":1}', 13)",
    ],
    "games": [
        "INSERT INTO games (id, table_id, game, ruleset, seats, status, created_at)"
        " VALUES (3, 't-b', 'spades', '{}', '[1,2,7,null]', 'running', 20)",
        "INSERT INTO games (id, table_id, game, ruleset, seats, status, created_at, finished_at)"
        " VALUES (9, 't-a', 'hearts', '{}', '[]', 'finished', 21, 22.5)",
    ],
    "hands": ["INSERT INTO hands VALUES (3, 0, 'c2VlZA', 'ab12', 0)"],
    "actions": [
        "INSERT INTO actions (game_id, seq, seat, action, source, created_at)"
        " VALUES (3, 0, 1, '{\"bid\":3}', 'player', 30.0)",
        "INSERT INTO actions (game_id, seq, seat, action, source, created_at)"
        " VALUES (3, 1, 2, '{\"card\":\"As\"}', 'bot', 30.5)",
        "UPDATE actions SET bank_left_ms = 9007199254740993 WHERE seq = 1",
    ],
    "hand_records": ['INSERT INTO hand_records VALUES (9, 0, \'{"format":"spades-hand/1"}\', 40)'],
    "results": [
        "INSERT INTO results VALUES (9, 0, 1, 120, 1)",
        "INSERT INTO results VALUES (9, 1, NULL, -50, 2)",
    ],
    "ratings": ["INSERT INTO ratings VALUES (1, 'spades', 25.0, 8.333333333333334, 3, 50)"],
    "ladder_games": ["INSERT INTO ladder_games VALUES (9, 60.75, '{}')"],
    "ladder_matches": [
        "INSERT INTO ladder_matches (seq, status, preset, options, hands, teams, created_at)"
        " VALUES (3, 'running', 'standard', '{}', 4, '[]', 70)",
        # Numbered 5 and then deleted: the counter stays past it, and so must the copy's.
        "INSERT INTO ladder_matches (seq, status, preset, options, hands, teams, created_at)"
        " VALUES (5, 'void', 'standard', '{}', 4, '[]', 71)",
        "DELETE FROM ladder_matches WHERE seq = 5",
    ],
    "ladder_entrants": ["INSERT INTO ladder_entrants VALUES (7, 'random', 80)"],
    "cluster_workers": ["INSERT INTO cluster_workers VALUES ('w-1', '127.0.0.1:1', 90, 0, 1, 91)"],
    "cluster_tables": [
        "INSERT INTO cluster_tables VALUES ('t-b', 'w-1', '{\"x\":1}')",
        "INSERT INTO cluster_tables VALUES ('T-c', 'w-1', NULL)",
    ],
    "cluster_secret": ["INSERT INTO cluster_secret VALUES (1, x'000102fdfeff')"],
    "operator_tokens": ["INSERT INTO operator_tokens VALUES (4, x'00ee11', 100.5)"],
    "bans": [
        "INSERT INTO bans VALUES (2, 'account', 'Zoë', NULL, 101)",
        "INSERT INTO bans VALUES (6, 'address', '198.51.100.0/24', 'flood', 102.25)",
    ],
    "player_stats": [
        "INSERT INTO player_stats VALUES (1, 40, 36, 29, 7, 41, 3, 2, 1, 0, 560,"
        " 9007199254740993, 110.5)",
        "INSERT INTO player_stats VALUES (7, 1, 1, 0, 1, 0, 0, 0, 0, 0, 14, 2400, 111)",
    ],
    "dd_stats": ["INSERT INTO dd_stats VALUES (1, 12, 9, 114.5)"],
    "dd_hands": ["INSERT INTO dd_hands VALUES (9, 2, 115.75)"],
    "stats_hands": [
        "INSERT INTO stats_hands VALUES (9, 2, 112.25)",
        "INSERT INTO stats_hands VALUES (3, 1, 113)",
    ],
    "events": [
        "INSERT INTO events (id, name, host, settings, secret, seed, status, starts_at, round,"
        " created_at) VALUES (4, 'Cup ☃', 1, '{\"format\":\"swiss_pairs\"}', x'00ff', 7,"
        " 'running', 120.5, 2, 119)",
    ],
    "event_entrants": [
        "INSERT INTO event_entrants VALUES (4, 'e1', '[1,7]', NULL, NULL, 121.25, 0, 1)",
        "INSERT INTO event_entrants VALUES (4, 'e2', '[2]', 'ada', 'heuristic', 122, 1, 0)",
    ],
    "event_rounds": ["INSERT INTO event_rounds VALUES (4, 1, '[{\"table\":1}]', 'finished')"],
    "event_tables": [
        "INSERT INTO event_tables VALUES (4, 1, 1, 't-a', 9)",
        "INSERT INTO event_tables VALUES (4, 2, 1, 't-b', NULL)",
    ],
}

#: Columns the migrations after the second add (FILL's rows naming them are left out of an older file).
LATER_COLUMNS = ("last_seen_at", "seats =", "bank_left_ms")


def filled_sqlite(path: Path, version: int = SCHEMA_VERSION) -> Path:
    """A SQLite file at schema `version` with FILL's rows of the tables it has."""
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        conn.execute("PRAGMA foreign_keys=ON")
        for migration in MIGRATIONS[:version]:
            conn.executescript(f"BEGIN; {migration}; COMMIT;")
        conn.execute(f"PRAGMA user_version = {version}")
        present = {shape.name for shape in tables(version)}
        for table, statements in FILL.items():
            if table in present:
                for statement in statements:
                    # An older schema lacks the later columns: those rows wait for it.
                    if version >= SCHEMA_VERSION or not any(
                        later in statement for later in LATER_COLUMNS
                    ):
                        conn.execute(statement)
    finally:
        conn.close()
    return path


def lines(reports: list[TableReport]) -> list[str]:
    return [report.line() for report in reports]


def test_the_schema_names_every_table_a_migrated_database_has(tmp_path: Path, pg_url: str) -> None:
    names = {shape.name for shape in tables()}
    assert names == set(FILL), "every table of the schema needs rows in FILL"
    conn = connect(tmp_path / "fresh.db")
    found = {
        row[0]
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        )
    }
    conn.close()
    assert found == names
    from server.storage.postgres import connect as pg_connect
    from server.storage.postgres import migrate

    with pg_connect(pg_url) as pg:
        migrate(pg, pg_url)
        rows = pg.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
    assert {r[0] for r in rows} == names | {"spades_schema"}
    # What the copy keeps of each: the numbered columns, the serial one, the rowid one.
    shapes = {shape.name: shape for shape in tables()}
    assert shapes["accounts"].numbered == ("id",) and not shapes["accounts"].serial
    assert shapes["ladder_matches"].numbered == ("seq",) and shapes["ladder_matches"].serial
    assert shapes["tables"].rowid and not shapes["games"].rowid
    assert [shape.name for shape in tables(1)][:3] == ["accounts", "tables", "games"]


def test_the_canonical_encoding_tells_every_value_apart() -> None:
    values: list[object] = [None, 0, 1, 1.0, 0.1, "1", "", b"", b"1", "é", -1, 2**63 - 1]
    encoded = [encode_value(v) for v in values]
    assert len(set(encoded)) == len(values)
    assert encode_value(True) == encode_value(1)  # a driver's bool is a 0/1 column
    assert encode_value(memoryview(b"ab")) == encode_value(b"ab") == b"B2:ab"
    assert encode_value(0.1) == b"F20:0x1.999999999999ap-4"
    with pytest.raises(TypeError):
        encode_value(object())
    # Rows do not run into each other: ("ab", "c") is not ("a", "bc").
    one, two = TableDigest(["a", "b"]), TableDigest(["a", "b"])
    one.add(("ab", "c"))
    two.add(("a", "bc"))
    assert one.hexdigest() != two.hexdigest()
    with pytest.raises(ValueError, match="sorted"):
        TableDigest(["b", "a"])


def test_sqlite_to_postgresql_and_back_keeps_every_row_and_digest(
    tmp_path: Path, pg_url: str
) -> None:
    source = filled_sqlite(tmp_path / "source.db")
    before = digest_database(source)
    assert all(report.rows >= 1 for report in before)
    version, copied = copy_database(source, pg_url)
    assert version == SCHEMA_VERSION and lines(copied) == lines(before)
    assert lines(digest_database(pg_url)) == lines(before)
    back = tmp_path / "back.db"
    _version, again = copy_database(pg_url, back)
    assert lines(again) == lines(before) == lines(digest_database(back))
    assert lines(digest_database(source)) == lines(before)  # the source is only read

    with psycopg.connect(pg_url, autocommit=True) as pg:
        # Values as PostgreSQL's own types hold them.
        assert pg.execute(
            "SELECT token_salt, created_at FROM accounts WHERE id = 1"
        ).fetchone() == (
            b"\x00\xff\x10",
            1700000000.125,
        )
        assert pg.execute("SELECT rowid, id FROM tables ORDER BY rowid").fetchall() == [
            (1, "t-b"),
            (2, "t-a"),
            (3, "t-B"),
        ]
        # The counters went past what was copied, and past the deleted match 5.
        assert pg.execute(
            "INSERT INTO accounts (name, created_at) VALUES ('new', 0) RETURNING id"
        ).fetchone() == (8,)
        assert pg.execute(
            "INSERT INTO tables (id, config, created_at) VALUES ('t-new', '{}', 0) RETURNING rowid"
        ).fetchone() == (4,)
        assert pg.execute(
            "INSERT INTO ladder_matches (status, preset, options, hands, teams, created_at)"
            " VALUES ('running', 'standard', '{}', 4, '[]', 0) RETURNING seq"
        ).fetchone() == (6,)
    # And back in SQLite: AUTOINCREMENT's counter too.
    conn = sqlite3.connect(back)
    assert conn.execute("SELECT rowid, id FROM tables ORDER BY rowid").fetchall() == [
        (1, "t-b"),
        (2, "t-a"),
        (3, "t-B"),
    ]
    conn.execute(
        "INSERT INTO ladder_matches (status, preset, options, hands, teams, created_at)"
        " VALUES ('running', 'standard', '{}', 4, '[]', 0)"
    )
    assert conn.execute("SELECT max(seq) FROM ladder_matches").fetchone() == (6,)
    assert conn.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    conn.close()


def test_postgresql_to_postgresql_and_sqlite_to_sqlite(tmp_path: Path, pg_cluster: object) -> None:
    from tests.postgres import Cluster

    assert isinstance(pg_cluster, Cluster)
    source = filled_sqlite(tmp_path / "source.db")
    before = lines(digest_database(source))
    copy_database(source, tmp_path / "second.db")
    one, two = pg_cluster.fresh_database(), pg_cluster.fresh_database()
    copy_database(tmp_path / "second.db", one)
    _v, copied = copy_database(one, two)
    assert lines(copied) == before == lines(digest_database(two))


def test_an_older_source_is_copied_as_it_is_and_the_target_migrated_after(
    tmp_path: Path, pg_url: str
) -> None:
    source = filled_sqlite(tmp_path / "old.db", version=2)
    version, copied = copy_database(source, pg_url)
    assert version == 2 and [r.table for r in copied] == [s.name for s in tables(2)]
    conn = sqlite3.connect(source)
    assert conn.execute("PRAGMA user_version").fetchone() == (2,)  # the source is left as it was
    conn.close()
    with psycopg.connect(pg_url) as pg:
        assert pg.execute("SELECT version FROM spades_schema").fetchone() == (SCHEMA_VERSION,)
        assert pg.execute("SELECT count(*), max(seats) FROM tables").fetchone() == (3, None)


def test_a_target_that_is_not_empty_is_refused_and_left_as_it_was(
    tmp_path: Path, pg_url: str
) -> None:
    source = filled_sqlite(tmp_path / "source.db")
    copy_database(source, pg_url)
    with pytest.raises(TargetNotEmpty, match="its table accounts has rows"):
        copy_database(source, pg_url)
    result = CliRunner().invoke(app, ["db", "copy", "--from", str(source), "--to", pg_url])
    assert result.exit_code == ExitCode.TARGET_NOT_EMPTY
    assert int(ExitCode.TARGET_NOT_EMPTY) == 7  # documented in docs/operations.md
    assert result.stdout == ""
    assert (
        result.stderr.startswith("error: the target postgresql://")
        and len(result.stderr.splitlines()) == 1
    )
    other = filled_sqlite(tmp_path / "other.db")
    result = CliRunner().invoke(app, ["db", "copy", "--from", pg_url, "--to", str(other)])
    assert result.exit_code == 7 and "is not empty" in result.stderr


def test_a_copy_that_fails_midway_leaves_the_target_empty(tmp_path: Path, pg_url: str) -> None:
    source = filled_sqlite(tmp_path / "source.db")
    conn = sqlite3.connect(source)
    # SQLite keeps what it is given; PostgreSQL's BIGINT refuses it, in the last table but one.
    conn.execute("UPDATE cluster_workers SET alive = 'yes'")
    conn.commit()
    conn.close()
    result = CliRunner().invoke(app, ["db", "copy", "--from", str(source), "--to", pg_url])
    assert result.exit_code == ExitCode.DATABASE, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: the copy from") and "(nothing was copied)" in line
    with psycopg.connect(pg_url) as pg:
        assert pg.execute("SELECT count(*) FROM accounts").fetchone() == (0,)
    # Into SQLite: the file the copy made is removed again.
    target = tmp_path / "made.db"
    conn = sqlite3.connect(source)
    # A result naming an account that is not there (foreign keys were off): the target refuses it.
    conn.execute("UPDATE results SET account_id = 99 WHERE seat = 0")
    conn.commit()
    conn.close()
    result = CliRunner().invoke(app, ["db", "copy", "--from", str(source), "--to", str(target)])
    assert result.exit_code == ExitCode.DATABASE and "FOREIGN KEY" in result.stderr
    assert not target.exists()


def test_a_database_a_server_holds_is_refused_exit_5(tmp_path: Path, pg_url: str) -> None:
    source = filled_sqlite(tmp_path / "source.db")
    lock = DatabaseLock.acquire(source)
    try:
        with pytest.raises(DatabaseInUse):
            copy_database(source, pg_url)
        result = CliRunner().invoke(app, ["db", "copy", "--from", str(source), "--to", pg_url])
        assert result.exit_code == ExitCode.DATABASE_IN_USE
        assert "is in use by spades-server pid" in result.stderr
    finally:
        lock.release()
    held = hold_serving_lock(pg_url, shared=True)  # as a cluster's worker holds it
    try:
        result = CliRunner().invoke(app, ["db", "copy", "--from", str(source), "--to", pg_url])
        assert result.exit_code == ExitCode.DATABASE_IN_USE
        assert len(result.stderr.splitlines()) == 1 and "is in use by" in result.stderr
        result = CliRunner().invoke(app, ["db", "digest", "--db", pg_url])
        assert result.exit_code == ExitCode.DATABASE_IN_USE
    finally:
        release_serving_lock(held)
    with psycopg.connect(pg_url) as pg:
        assert pg.execute("SELECT to_regclass('accounts')").fetchone() == (None,)


@pytest.mark.parametrize(
    ("source", "target", "code", "says"),
    [
        ("{tmp}/missing.db", "{tmp}/to.db", ExitCode.DATABASE, "no database at"),
        ("{tmp}/source.db", "{tmp}/no/such/folder/to.db", ExitCode.DATABASE, "does not exist"),
        ("mysql://db/spades", "{tmp}/to.db", ExitCode.USAGE, "neither a SQLite file"),
        ("{tmp}/source.db", "{tmp}/./source.db", ExitCode.USAGE, "the same database"),
        (
            "{tmp}/source.db",
            "postgresql://ada:secret@127.0.0.1:1/nowhere",
            ExitCode.DATABASE,
            "cannot connect to PostgreSQL at postgresql://ada:***@127.0.0.1:1/nowhere",
        ),
        ("{tmp}/text.db", "{tmp}/to.db", ExitCode.DATABASE, "cannot open database"),
        ("{tmp}/newer.db", "{tmp}/to.db", ExitCode.DATABASE, "newer than this server"),
        ("{tmp}/source.db", "{tmp}/newer.db", ExitCode.DATABASE, "newer than this server"),
    ],
)
def test_each_mistake_is_one_line_and_its_exit_code(
    tmp_path: Path, source: str, target: str, code: ExitCode, says: str
) -> None:
    filled_sqlite(tmp_path / "source.db")
    (tmp_path / "text.db").write_bytes(b"not a database at all " * 100)
    newer = sqlite3.connect(tmp_path / "newer.db")
    newer.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    newer.close()
    args = ["--from", source.format(tmp=tmp_path), "--to", target.format(tmp=tmp_path)]
    result = CliRunner().invoke(app, ["db", "copy", *args])
    assert result.exit_code == code, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: ") and says in line and "secret" not in line
    assert result.stdout == ""
    assert not (tmp_path / "to.db").exists()
    assert not (tmp_path / "missing.db.lock").exists()


def test_one_postgresql_database_under_two_urls_is_the_same_database(
    tmp_path: Path, pg_url: str
) -> None:
    copy_database(filled_sqlite(tmp_path / "source.db"), pg_url)
    other = pg_url.replace("@127.0.0.1:", "@localhost:")
    assert other != pg_url
    result = CliRunner().invoke(app, ["db", "copy", "--from", pg_url, "--to", other])
    assert result.exit_code == ExitCode.USAGE, result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: the source and the target are the same database")


def test_a_server_starting_during_a_copy_is_refused_naming_the_copy(
    tmp_path: Path, pg_url: str
) -> None:
    copy_database(filled_sqlite(tmp_path / "source.db"), pg_url)
    with ExitStack() as stack:
        PostgresEnd.source(pg_url, stack)  # as `db copy --from` holds it while it reads
        with pytest.raises(DatabaseInUse, match=r"in use by spades-server db copy pid \d+ on "):
            hold_serving_lock(pg_url, shared=False)  # what a lone server takes at start
        with pytest.raises(DatabaseInUse):
            hold_serving_lock(pg_url, shared=True)  # and a cluster's
    release_serving_lock(hold_serving_lock(pg_url, shared=False))  # let go with the copy


def test_schema_too_new_in_postgresql_is_refused(tmp_path: Path, pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as pg:
        pg.execute("CREATE TABLE spades_schema (version INTEGER NOT NULL)")
        pg.execute("INSERT INTO spades_schema VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(SchemaTooNew):
        copy_database(filled_sqlite(tmp_path / "source.db"), pg_url)


def test_db_digest_prints_a_line_per_table(tmp_path: Path) -> None:
    source = filled_sqlite(tmp_path / "source.db")
    result = CliRunner().invoke(app, ["db", "digest", "--db", str(source)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == lines(digest_database(source))
    assert result.stdout.splitlines()[0].startswith("accounts: 3 rows, sha256 ")
    result = CliRunner().invoke(
        app, ["db", "copy", "--from", str(source), "--to", str(tmp_path / "c.db")]
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == lines(digest_database(source))
    assert "copied 13 tables" in result.stderr or "copied" in result.stderr
