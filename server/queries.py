"""The SQL of the store: plain functions over a `sqlite3.Connection`.

They run inside the writer's transaction (see `server.storage`) or, for the synchronous `export`
command, on a connection of their own. JSON columns hold the engine's own JSON shapes.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


def _now() -> float:
    return round(time.time(), 3)


@dataclass(frozen=True)
class AccountRow:
    id: int
    name: str
    token_salt: bytes | None
    token_hash: bytes | None
    is_bot: bool
    is_guest: bool


@dataclass(frozen=True)
class StoredAction:
    seq: int
    seat: int
    action: Any
    source: str
    bank_left_ms: int | None = None  # the actor's time bank left after it (None: no bank)


@dataclass(frozen=True)
class StoredHand:
    hand_no: int
    seed: str
    commitment: str
    first_seq: int


@dataclass(frozen=True)
class StoredGame:
    """An unfinished game as persisted: enough to rebuild it by replaying its actions."""

    id: int
    table_id: str
    table_config: Any
    game: str
    ruleset: Any
    seats: Any
    hands: list[StoredHand]
    actions: list[StoredAction]


# Accounts


def insert_account(
    conn: sqlite3.Connection,
    name: str,
    salt: bytes | None,
    token_hash: bytes | None,
    *,
    is_bot: bool,
    is_guest: bool,
) -> int:
    """Create an account; raises `ValueError` when the name is taken (nothing written)."""
    try:
        cur = conn.execute(
            "INSERT INTO accounts (name, token_salt, token_hash, is_bot, is_guest, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (name, salt, token_hash, int(is_bot), int(is_guest), _now()),
        )
    except sqlite3.IntegrityError as exc:
        raise ValueError(f"the name {name!r} is taken") from exc
    assert cur.lastrowid is not None
    return cur.lastrowid


def _account(row: sqlite3.Row | None) -> AccountRow | None:
    if row is None:
        return None
    return AccountRow(
        id=row["id"],
        name=row["name"],
        token_salt=row["token_salt"],
        token_hash=row["token_hash"],
        is_bot=bool(row["is_bot"]),
        is_guest=bool(row["is_guest"]),
    )


def account_by_id(conn: sqlite3.Connection, account_id: int) -> AccountRow | None:
    return _account(conn.execute("SELECT * FROM accounts WHERE id = ?", (account_id,)).fetchone())


def account_by_name(conn: sqlite3.Connection, name: str) -> AccountRow | None:
    return _account(conn.execute("SELECT * FROM accounts WHERE name = ?", (name,)).fetchone())


def guest_seen(conn: sqlite3.Connection, account_ids: list[int]) -> None:
    """Note that these guests were seen now (a login, a live connection, a seat)."""
    now = _now()
    conn.executemany(
        "UPDATE accounts SET last_seen_at = ? WHERE id = ? AND is_guest = 1",
        [(now, account_id) for account_id in account_ids],
    )


def expire_guests(conn: sqlite3.Connection, cutoff: float, in_use: list[int]) -> int:
    """Delete every guest account not seen since `cutoff` (Unix time) that has no game results
    and no ladder or rating rows, after noting the guests `in_use` (connected or seated) as seen
    now; returns how many went. The newest account is never deleted, so SQLite never hands a
    deleted account's id to a new one (it reuses a rowid only above the largest left)."""
    guest_seen(conn, in_use)
    cur = conn.execute(
        "DELETE FROM accounts WHERE is_guest = 1"
        " AND COALESCE(last_seen_at, created_at) < ?"
        " AND id < (SELECT MAX(id) FROM accounts)"
        " AND NOT EXISTS (SELECT 1 FROM results r WHERE r.account_id = accounts.id)"
        " AND NOT EXISTS (SELECT 1 FROM ratings g WHERE g.account_id = accounts.id)"
        " AND NOT EXISTS (SELECT 1 FROM ladder_entrants e WHERE e.account_id = accounts.id)",
        (cutoff,),
    )
    return int(cur.rowcount)


# Tables and games


@dataclass(frozen=True)
class WaitingTable:
    """A table that was open with no game yet: reopened on start with its seated accounts."""

    id: str
    config: Any
    seats: list[int | None]  # account id per seat (None: free)
    creator: int | None


def insert_table(
    conn: sqlite3.Connection,
    table_id: str,
    config: Any,
    *,
    seats: list[int | None] | None = None,
    creator: int | None = None,
) -> None:
    """Store a table's configuration. With `seats` (a list, even of free seats) the table is
    reopened after a restart for as long as it is open with no game."""
    conn.execute(
        "INSERT INTO tables (id, config, created_at, seats, creator) VALUES (?, ?, ?, ?, ?)",
        (
            table_id,
            json.dumps(config),
            _now(),
            None if seats is None else json.dumps(seats),
            creator,
        ),
    )


def update_table_seats(conn: sqlite3.Connection, table_id: str, seats: list[int | None]) -> None:
    """Who sits at a table that is still waiting for players (only for a reopened-on-restart one)."""
    conn.execute(
        "UPDATE tables SET seats = ? WHERE id = ? AND seats IS NOT NULL",
        (json.dumps(seats), table_id),
    )


def waiting_tables(conn: sqlite3.Connection) -> list[WaitingTable]:
    """Every table to reopen on start: open (not closed), stored with its seats, and no game yet."""
    rows = conn.execute(
        "SELECT id, config, seats, creator FROM tables t WHERE closed_at IS NULL"
        " AND seats IS NOT NULL AND NOT EXISTS (SELECT 1 FROM games g WHERE g.table_id = t.id)"
        " ORDER BY created_at, rowid"
    ).fetchall()
    return [
        WaitingTable(r["id"], json.loads(r["config"]), json.loads(r["seats"]), r["creator"])
        for r in rows
    ]


def table_creator(conn: sqlite3.Connection, table_id: str) -> int | None:
    row = conn.execute("SELECT creator FROM tables WHERE id = ?", (table_id,)).fetchone()
    return None if row is None or row["creator"] is None else int(row["creator"])


def close_table(conn: sqlite3.Connection, table_id: str) -> None:
    conn.execute("UPDATE tables SET closed_at = ? WHERE id = ?", (_now(), table_id))


def insert_game(
    conn: sqlite3.Connection, table_id: str, game: str, ruleset: Any, seats: Any
) -> int:
    cur = conn.execute(
        "INSERT INTO games (table_id, game, ruleset, seats, status, created_at)"
        " VALUES (?, ?, ?, ?, 'running', ?)",
        (table_id, game, json.dumps(ruleset), json.dumps(seats), _now()),
    )
    assert cur.lastrowid is not None
    return cur.lastrowid


def update_game_seats(conn: sqlite3.Connection, game_id: int, seats: Any) -> None:
    conn.execute("UPDATE games SET seats = ? WHERE id = ?", (json.dumps(seats), game_id))


def insert_hand(
    conn: sqlite3.Connection,
    game_id: int,
    *,
    hand_no: int,
    seed: str,
    commitment: str,
    first_seq: int,
) -> None:
    """Record a hand's secret seed before its deal is shown to anyone."""
    conn.execute(
        "INSERT INTO hands (game_id, hand_no, seed, commitment, first_seq) VALUES (?, ?, ?, ?, ?)",
        (game_id, hand_no, seed, commitment, first_seq),
    )


def insert_action(
    conn: sqlite3.Connection,
    game_id: int,
    seq: int,
    *,
    seat: int,
    action: Any,
    source: str,
    bank_left_ms: int | None = None,
) -> None:
    """Append one applied action (with the actor's time bank left after it, if the table has
    one); raises `ValueError` on a duplicate `seq` (nothing written)."""
    try:
        conn.execute(
            "INSERT INTO actions (game_id, seq, seat, action, source, created_at, bank_left_ms)"
            " VALUES (?, ?, ?, ?, ?, ?, ?)",
            (game_id, seq, seat, json.dumps(action), source, _now(), bank_left_ms),
        )
    except sqlite3.IntegrityError as exc:
        raise ValueError(f"game {game_id} already has an action {seq}") from exc


def insert_hand_record(conn: sqlite3.Connection, game_id: int, hand_no: int, record: Any) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO hand_records (game_id, hand_no, record, created_at)"
        " VALUES (?, ?, ?, ?)",
        (game_id, hand_no, json.dumps(record), _now()),
    )


def finish_game(
    conn: sqlite3.Connection,
    game_id: int,
    status: str,
    results: list[tuple[int, int | None, int, int]],
) -> None:
    """Mark a game finished or aborted with (seat, account_id, score, place) rows."""
    conn.execute(
        "UPDATE games SET status = ?, finished_at = ? WHERE id = ?", (status, _now(), game_id)
    )
    conn.executemany(
        "INSERT OR REPLACE INTO results (game_id, seat, account_id, score, place)"
        " VALUES (?, ?, ?, ?, ?)",
        [(game_id, *row) for row in results],
    )


def unfinished_games(conn: sqlite3.Connection) -> list[StoredGame]:
    """Every game still `running`, with its hands and actions in order, for crash recovery."""
    rows = conn.execute("SELECT id FROM games WHERE status = 'running' ORDER BY id").fetchall()
    return [game for row in rows if (game := load_game(conn, row["id"])) is not None]


def load_game(conn: sqlite3.Connection, game_id: int) -> StoredGame | None:
    """One game as persisted (any status): its table's config, deals and actions in order."""
    row = conn.execute(
        "SELECT g.*, t.config AS table_config FROM games g JOIN tables t ON t.id = g.table_id"
        " WHERE g.id = ?",
        (game_id,),
    ).fetchone()
    if row is None:
        return None
    hands = [
        StoredHand(r["hand_no"], r["seed"], r["commitment"], r["first_seq"])
        for r in conn.execute("SELECT * FROM hands WHERE game_id = ? ORDER BY hand_no", (game_id,))
    ]
    actions = [
        StoredAction(
            r["seq"],
            r["seat"],
            json.loads(r["action"]),
            r["source"],
            # Absent from a file not yet migrated (`export` reads files as they are).
            r["bank_left_ms"] if "bank_left_ms" in r.keys() else None,  # noqa: SIM118 (a Row)
        )
        for r in conn.execute("SELECT * FROM actions WHERE game_id = ? ORDER BY seq", (game_id,))
    ]
    return StoredGame(
        id=row["id"],
        table_id=row["table_id"],
        table_config=json.loads(row["table_config"]),
        game=row["game"],
        ruleset=json.loads(row["ruleset"]),
        seats=json.loads(row["seats"]),
        hands=hands,
        actions=actions,
    )


def game_ids(conn: sqlite3.Connection, status: str | None = None) -> list[int]:
    if status is None:
        return [r[0] for r in conn.execute("SELECT id FROM games ORDER BY id")]
    return [
        r[0] for r in conn.execute("SELECT id FROM games WHERE status = ? ORDER BY id", (status,))
    ]


def hand_count(conn: sqlite3.Connection, game_id: int) -> tuple[int, int]:
    """(deals persisted, hand records persisted) of a game."""
    deals = conn.execute("SELECT COUNT(*) FROM hands WHERE game_id = ?", (game_id,)).fetchone()[0]
    records = conn.execute(
        "SELECT COUNT(*) FROM hand_records WHERE game_id = ?", (game_id,)
    ).fetchone()[0]
    return int(deals), int(records)


def game_status(conn: sqlite3.Connection, game_id: int) -> str | None:
    row = conn.execute("SELECT status FROM games WHERE id = ?", (game_id,)).fetchone()
    return None if row is None else str(row["status"])


def action_count(conn: sqlite3.Connection, game_id: int) -> int:
    row = conn.execute("SELECT COUNT(*) FROM actions WHERE game_id = ?", (game_id,)).fetchone()
    return int(row[0])


def hand_records(conn: sqlite3.Connection, game_id: int | None = None) -> Iterator[Any]:
    """Hand records in (game, hand) order, as the engine's JSON objects; all games when None."""
    if game_id is None:
        cursor = conn.execute("SELECT record FROM hand_records ORDER BY game_id, hand_no")
    else:
        cursor = conn.execute(
            "SELECT record FROM hand_records WHERE game_id = ? ORDER BY hand_no", (game_id,)
        )
    for row in cursor:
        yield json.loads(row["record"])


def results(conn: sqlite3.Connection, game_id: int) -> list[tuple[int, int | None, int, int]]:
    return [
        (r["seat"], r["account_id"], r["score"], r["place"])
        for r in conn.execute("SELECT * FROM results WHERE game_id = ? ORDER BY seat", (game_id,))
    ]


# Ladder


def rating(conn: sqlite3.Connection, account_id: int, game: str) -> tuple[float, float, int] | None:
    row = conn.execute(
        "SELECT mu, sigma, games FROM ratings WHERE account_id = ? AND game = ?", (account_id, game)
    ).fetchone()
    return None if row is None else (float(row["mu"]), float(row["sigma"]), int(row["games"]))


def set_rating(
    conn: sqlite3.Connection, account_id: int, game: str, *, mu: float, sigma: float, games: int
) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO ratings (account_id, game, mu, sigma, games, updated_at)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        (account_id, game, mu, sigma, games, _now()),
    )


def record_ladder_game(conn: sqlite3.Connection, game_id: int, changes: Any) -> None:
    conn.execute(
        "INSERT OR REPLACE INTO ladder_games (game_id, rated_at, changes) VALUES (?, ?, ?)",
        (game_id, _now(), json.dumps(changes)),
    )
