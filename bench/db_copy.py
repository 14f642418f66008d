"""How long `spades-server db copy` takes: a club's worth of rows, SQLite to PostgreSQL and back.

A SQLite file is filled with synthetic rows shaped like a server's (`--games` finished games of
four accounts, each with its deals, `--actions` actions, a hand record of about 2 KB a hand and
its results), then copied into a database of a throwaway PostgreSQL cluster (tests/postgres.py)
and from there into a new SQLite file, each copy checked as `db copy` checks it (every table read
back, counted and digested inside the copy's transaction). Prints one JSON line: rows, seconds and
rows a second of each copy, and of `db digest` alone on each engine; exits 1 if the digests differ.

Run: .venv/bin/python bench/db_copy.py [--games 2000] [--actions 60]
"""

from __future__ import annotations

import argparse
import json
import logging
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from server.config import configure_logging
from server.storage.dbcopy import copy_database, digest_database
from server.storage.sqlite import connect
from tests.postgres import started

T = TypeVar("T")

HANDS_PER_GAME = 4


def fill(path: Path, games: int, actions: int) -> int:
    """The synthetic rows; returns how many."""
    connect(path).close()  # made and migrated as a server makes it
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    accounts = max(4, games // 10)
    record = json.dumps(
        {"format": "spades-hand/1", "tricks": ["As Ks Qs Js"] * 13, "pad": "x" * 1500}
    )
    conn.executemany(
        "INSERT INTO accounts (id, name, token_salt, token_hash, created_at) VALUES (?, ?, ?, ?, ?)",
        ((i, f"player{i}", b"s" * 16, b"h" * 32, 1.7e9 + i) for i in range(1, accounts + 1)),
    )
    for game in range(1, games + 1):
        table = f"t{game:08d}"
        seats = [1 + (game + k) % accounts for k in range(4)]
        conn.execute(
            "INSERT INTO tables (id, config, created_at, closed_at) VALUES (?, '{}', ?, ?)",
            (table, 1.7e9 + game, 1.7e9 + game + 600.5),
        )
        conn.execute(
            "INSERT INTO games (id, table_id, game, ruleset, seats, status, created_at,"
            " finished_at) VALUES (?, ?, 'spades', '{}', ?, 'finished', ?, ?)",
            (game, table, json.dumps(seats), 1.7e9 + game, 1.7e9 + game + 600.25),
        )
        conn.executemany(
            "INSERT INTO hands VALUES (?, ?, 'c2VlZA', 'ab12cd34', ?)",
            ((game, h, h * actions // HANDS_PER_GAME) for h in range(HANDS_PER_GAME)),
        )
        conn.executemany(
            "INSERT INTO actions (game_id, seq, seat, action, source, created_at)"
            " VALUES (?, ?, ?, '{\"card\":\"As\"}', 'bot', ?)",
            ((game, s, s % 4, 1.7e9 + game + s * 0.1) for s in range(actions)),
        )
        conn.executemany(
            "INSERT INTO hand_records VALUES (?, ?, ?, ?)",
            ((game, h, record, 1.7e9 + game + h) for h in range(HANDS_PER_GAME)),
        )
        conn.executemany(
            "INSERT INTO results VALUES (?, ?, ?, ?, ?)",
            ((game, s, seats[s], 100 - s * 10, 1 + s // 2) for s in range(4)),
        )
    conn.execute("COMMIT")
    rows = sum(
        conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
        for t in ("accounts", "tables", "games", "hands", "actions", "hand_records", "results")
    )
    conn.close()
    return int(rows)


def timed(what: str, figures: dict[str, float], fn: Callable[[], T]) -> T:
    start = time.perf_counter()
    result = fn()
    figures[what] = round(time.perf_counter() - start, 2)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=2000)
    parser.add_argument("--actions", type=int, default=60, help="actions a game")
    args = parser.parse_args()
    configure_logging(level=logging.WARNING)  # as `db copy` does: its migrations are not news
    seconds: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder, started() as cluster:
        source, back = Path(folder) / "source.db", Path(folder) / "back.db"
        rows = fill(source, args.games, args.actions)
        url = cluster.fresh_database()
        _v, there = timed("sqlite_to_postgresql", seconds, lambda: copy_database(source, url))
        _v, again = timed("postgresql_to_sqlite", seconds, lambda: copy_database(url, back))
        on_pg = timed("digest_postgresql", seconds, lambda: digest_database(url))
        on_sqlite = timed("digest_sqlite", seconds, lambda: digest_database(source))
        same = there == again == on_pg == on_sqlite
        size = source.stat().st_size
    emit(
        {
            "bench": "db_copy",
            "games": args.games,
            "rows": rows,
            "sqlite_bytes": size,
            "seconds": seconds,
            "rows_per_second": {k: round(rows / v) for k, v in seconds.items() if v > 0},
            "same_digests": same,
        }
    )
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
