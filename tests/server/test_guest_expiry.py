"""Which guest accounts expire (`server.queries.expire_guests`), on a real SQLite file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from server import queries
from server.storage import connect


def guest(conn: sqlite3.Connection, name: str, made_at: float) -> int:
    account_id = queries.insert_account(
        conn, name, b"s" * 16, b"h" * 32, is_bot=False, is_guest=True
    )
    conn.execute("UPDATE accounts SET created_at = ? WHERE id = ?", (made_at, account_id))
    return account_id


def names(conn: sqlite3.Connection) -> set[str]:
    return {row["name"] for row in conn.execute("SELECT name FROM accounts")}


def test_only_unused_guests_expire(tmp_path: Path) -> None:
    conn = connect(tmp_path / "guests.db")
    try:
        old, recent = 1000.0, 9000.0
        guest(conn, "guest-old", old)
        guest(conn, "guest-recent", recent)  # made after the cutoff
        returned = guest(conn, "guest-returned", old)  # logged in again since
        queries.guest_seen(conn, [returned])
        seated = guest(conn, "guest-seated", old)  # in use now: seated or connected
        played = guest(conn, "guest-played", old)  # finished a game
        queries.insert_table(conn, "t1", {})
        game = queries.insert_game(conn, "t1", "spades", {}, [played])
        queries.finish_game(conn, game, "finished", [(0, played, 100, 1)])
        person = queries.insert_account(conn, "ada", None, None, is_bot=False, is_guest=False)
        conn.execute("UPDATE accounts SET created_at = ? WHERE id = ?", (old, person))
        guest(conn, "guest-newest", old)  # the newest account of all is kept (its id not reused)

        gone = queries.expire_guests(conn, cutoff=5000.0, in_use=[seated])

        assert gone == 1
        assert names(conn) == {
            "guest-recent",
            "guest-returned",
            "guest-seated",
            "guest-played",
            "ada",
            "guest-newest",
        }
        # The guests in use count as seen now: the next sweep keeps them too, once they go.
        assert queries.expire_guests(conn, cutoff=5000.0, in_use=[]) == 0
        # A later account lets the formerly newest one go; a deleted id is never given again.
        queries.insert_account(conn, "bob", None, None, is_bot=False, is_guest=False)
        assert queries.expire_guests(conn, cutoff=5000.0, in_use=[]) == 1
        assert "guest-newest" not in names(conn)
        ids = [row[0] for row in conn.execute("SELECT id FROM accounts ORDER BY id")]
        again = queries.insert_account(conn, "carol", None, None, is_bot=False, is_guest=False)
        assert again > max(ids)
    finally:
        conn.close()
