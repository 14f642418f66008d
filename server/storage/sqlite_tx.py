"""`SqliteTx`: the `Tx` of SQLite, the store's SQL in one place.

It wraps a `sqlite3.Connection` whose transaction someone else runs (the writer's batch, or a
command's `server.storage.direct` transaction); it never begins or commits. JSON columns hold the
engine's own JSON shapes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator, Mapping
from typing import Any

from server.storage.rows import (
    AccountRow,
    BanRow,
    HouseEntrant,
    MatchRow,
    RatedAccount,
    ResultRow,
    StoredAction,
    StoredGame,
    StoredHand,
    StoredRating,
    WaitingTable,
    stamp,
    storable,
)


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


def _forfeits(text: str | None) -> tuple[list[int], dict[int, str]]:
    """The `forfeits` column: a JSON object of account id -> reason (or null), or, as stored
    before the reasons were kept, a list of account ids."""
    value = json.loads(text or "[]")
    if isinstance(value, dict):
        ids = [int(k) for k in value]
        return ids, {int(k): str(v) for k, v in value.items() if v is not None}
    return [int(x) for x in value], {}


def _match(row: sqlite3.Row) -> MatchRow:
    forfeits, reasons = _forfeits(row["forfeits"])
    return MatchRow(
        seq=int(row["seq"]),
        status=str(row["status"]),
        preset=str(row["preset"]),
        options=json.loads(row["options"]),
        hands=int(row["hands"]),
        teams=json.loads(row["teams"]),
        points=json.loads(row["points"]) if row["points"] else None,
        forfeits=forfeits,
        halves=json.loads(row["halves"]) if row["halves"] else None,
        changes=json.loads(row["changes"] or "{}"),
        rated_seq=None if row["rated_seq"] is None else int(row["rated_seq"]),
        created_at=float(row["created_at"]),
        finished_at=None if row["finished_at"] is None else float(row["finished_at"]),
        forfeit_reasons=reasons,
    )


class SqliteTx:
    """`Tx` over one SQLite connection (see `server.storage.tx.Tx` for what each method does)."""

    __slots__ = ("conn",)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    # ---------------------------------------------------------------- accounts

    def insert_account(
        self,
        name: str,
        salt: bytes | None,
        token_hash: bytes | None,
        *,
        is_bot: bool,
        is_guest: bool,
    ) -> int:
        try:
            cur = self.conn.execute(
                "INSERT INTO accounts (name, token_salt, token_hash, is_bot, is_guest, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (name, salt, token_hash, int(is_bot), int(is_guest), stamp()),
            )
        except sqlite3.IntegrityError as exc:
            raise ValueError(f"the name {name!r} is taken") from exc
        assert cur.lastrowid is not None
        return cur.lastrowid

    def account_by_id(self, account_id: int) -> AccountRow | None:
        if not storable(account_id):
            return None
        return _account(
            self.conn.execute("SELECT * FROM accounts WHERE id = ?", (account_id,)).fetchone()
        )

    def account_by_name(self, name: str) -> AccountRow | None:
        return _account(
            self.conn.execute("SELECT * FROM accounts WHERE name = ?", (name,)).fetchone()
        )

    def upgrade_token_hash(
        self, account_id: int, old_hash: bytes, salt: bytes, token_hash: bytes
    ) -> bool:
        cur = self.conn.execute(
            "UPDATE accounts SET token_salt = ?, token_hash = ? WHERE id = ? AND token_hash = ?",
            (salt, token_hash, account_id, old_hash),
        )
        return cur.rowcount == 1

    def guest_seen(self, account_ids: list[int]) -> None:
        now = stamp()
        self.conn.executemany(
            "UPDATE accounts SET last_seen_at = ? WHERE id = ? AND is_guest = 1",
            [(now, account_id) for account_id in account_ids if storable(account_id)],
        )

    def expire_guests(self, cutoff: float, in_use: list[int]) -> int:
        self.guest_seen(in_use)
        # SQLite gives a new row the largest rowid plus one: keeping the largest keeps every
        # deleted id unused for good.
        cur = self.conn.execute(
            "DELETE FROM accounts WHERE is_guest = 1"
            " AND COALESCE(last_seen_at, created_at) < ?"
            " AND id < (SELECT MAX(id) FROM accounts)"
            " AND NOT EXISTS (SELECT 1 FROM results r WHERE r.account_id = accounts.id)"
            " AND NOT EXISTS (SELECT 1 FROM ratings g WHERE g.account_id = accounts.id)"
            " AND NOT EXISTS (SELECT 1 FROM ladder_entrants e WHERE e.account_id = accounts.id)",
            (cutoff,),
        )
        return int(cur.rowcount)

    # ---------------------------------------------------------------- tables

    def insert_table(
        self,
        table_id: str,
        config: Any,
        *,
        seats: list[int | None] | None = None,
        creator: int | None = None,
    ) -> None:
        self.conn.execute(
            "INSERT INTO tables (id, config, created_at, seats, creator) VALUES (?, ?, ?, ?, ?)",
            (
                table_id,
                json.dumps(config),
                stamp(),
                None if seats is None else json.dumps(seats),
                creator,
            ),
        )

    def update_table_seats(self, table_id: str, seats: list[int | None]) -> None:
        self.conn.execute(
            "UPDATE tables SET seats = ? WHERE id = ? AND seats IS NOT NULL",
            (json.dumps(seats), table_id),
        )

    def waiting_tables(self) -> list[WaitingTable]:
        rows = self.conn.execute(
            "SELECT id, config, seats, creator FROM tables t WHERE closed_at IS NULL"
            " AND seats IS NOT NULL AND NOT EXISTS (SELECT 1 FROM games g WHERE g.table_id = t.id)"
            " ORDER BY created_at, rowid"
        ).fetchall()
        return [
            WaitingTable(r["id"], json.loads(r["config"]), json.loads(r["seats"]), r["creator"])
            for r in rows
        ]

    def table_creator(self, table_id: str) -> int | None:
        row = self.conn.execute("SELECT creator FROM tables WHERE id = ?", (table_id,)).fetchone()
        return None if row is None or row["creator"] is None else int(row["creator"])

    def close_table(self, table_id: str) -> None:
        self.conn.execute("UPDATE tables SET closed_at = ? WHERE id = ?", (stamp(), table_id))

    # ---------------------------------------------------------------- games

    def insert_game(self, table_id: str, game: str, ruleset: Any, seats: Any) -> int:
        cur = self.conn.execute(
            "INSERT INTO games (table_id, game, ruleset, seats, status, created_at)"
            " VALUES (?, ?, ?, ?, 'running', ?)",
            (table_id, game, json.dumps(ruleset), json.dumps(seats), stamp()),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def update_game_seats(self, game_id: int, seats: Any) -> None:
        self.conn.execute("UPDATE games SET seats = ? WHERE id = ?", (json.dumps(seats), game_id))

    def insert_hand(
        self, game_id: int, *, hand_no: int, seed: str, commitment: str, first_seq: int
    ) -> None:
        self.conn.execute(
            "INSERT INTO hands (game_id, hand_no, seed, commitment, first_seq)"
            " VALUES (?, ?, ?, ?, ?)",
            (game_id, hand_no, seed, commitment, first_seq),
        )

    def insert_action(
        self,
        game_id: int,
        seq: int,
        *,
        seat: int,
        action: Any,
        source: str,
        bank_left_ms: int | None = None,
    ) -> None:
        try:
            self.conn.execute(
                "INSERT INTO actions (game_id, seq, seat, action, source, created_at, bank_left_ms)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (game_id, seq, seat, json.dumps(action), source, stamp(), bank_left_ms),
            )
        except sqlite3.IntegrityError as exc:
            raise ValueError(f"game {game_id} already has an action {seq}") from exc

    def insert_hand_record(self, game_id: int, hand_no: int, record: Any) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO hand_records (game_id, hand_no, record, created_at)"
            " VALUES (?, ?, ?, ?)",
            (game_id, hand_no, json.dumps(record), stamp()),
        )

    def finish_game(self, game_id: int, status: str, results: list[ResultRow]) -> None:
        self.conn.execute(
            "UPDATE games SET status = ?, finished_at = ? WHERE id = ?", (status, stamp(), game_id)
        )
        self.conn.executemany(
            "INSERT OR REPLACE INTO results (game_id, seat, account_id, score, place)"
            " VALUES (?, ?, ?, ?, ?)",
            [(game_id, *row) for row in results],
        )

    def unfinished_games(self) -> list[StoredGame]:
        rows = self.conn.execute(
            "SELECT id FROM games WHERE status = 'running' ORDER BY id"
        ).fetchall()
        return [game for row in rows if (game := self.load_game(row["id"])) is not None]

    def load_game(self, game_id: int) -> StoredGame | None:
        if not storable(game_id):
            return None
        conn = self.conn
        row = conn.execute(
            "SELECT g.*, t.config AS table_config FROM games g JOIN tables t ON t.id = g.table_id"
            " WHERE g.id = ?",
            (game_id,),
        ).fetchone()
        if row is None:
            return None
        hands = [
            StoredHand(r["hand_no"], r["seed"], r["commitment"], r["first_seq"])
            for r in conn.execute(
                "SELECT * FROM hands WHERE game_id = ? ORDER BY hand_no", (game_id,)
            )
        ]
        actions = [
            StoredAction(
                r["seq"],
                r["seat"],
                json.loads(r["action"]),
                r["source"],
                # Absent from a file not yet migrated (commands read files as they are).
                r["bank_left_ms"] if "bank_left_ms" in r.keys() else None,  # noqa: SIM118 (a Row)
                float(r["created_at"]),
            )
            for r in conn.execute(
                "SELECT * FROM actions WHERE game_id = ? ORDER BY seq", (game_id,)
            )
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
            created_at=float(row["created_at"]),
        )

    def game_ids(self, status: str | None = None) -> list[int]:
        if status is None:
            return [r[0] for r in self.conn.execute("SELECT id FROM games ORDER BY id")]
        return [
            r[0]
            for r in self.conn.execute(
                "SELECT id FROM games WHERE status = ? ORDER BY id", (status,)
            )
        ]

    def latest_game_at(self, table_id: str) -> int | None:
        row = self.conn.execute(
            "SELECT id FROM games WHERE table_id = ? ORDER BY id DESC LIMIT 1", (table_id,)
        ).fetchone()
        return None if row is None else int(row["id"])

    def game_status(self, game_id: int) -> str | None:
        if not storable(game_id):
            return None
        row = self.conn.execute("SELECT status FROM games WHERE id = ?", (game_id,)).fetchone()
        return None if row is None else str(row["status"])

    def hand_count(self, game_id: int) -> tuple[int, int]:
        conn = self.conn
        deals = conn.execute("SELECT COUNT(*) FROM hands WHERE game_id = ?", (game_id,)).fetchone()
        records = conn.execute(
            "SELECT COUNT(*) FROM hand_records WHERE game_id = ?", (game_id,)
        ).fetchone()
        return int(deals[0]), int(records[0])

    def action_count(self, game_id: int) -> int:
        row = self.conn.execute(
            "SELECT COUNT(*) FROM actions WHERE game_id = ?", (game_id,)
        ).fetchone()
        return int(row[0])

    def hand_records(self, game_id: int | None = None) -> Iterator[Any]:
        if game_id is None:
            cursor = self.conn.execute("SELECT record FROM hand_records ORDER BY game_id, hand_no")
        else:
            cursor = self.conn.execute(
                "SELECT record FROM hand_records WHERE game_id = ? ORDER BY hand_no", (game_id,)
            )
        for row in cursor:
            yield json.loads(row["record"])

    def results(self, game_id: int) -> list[ResultRow]:
        return [
            (r["seat"], r["account_id"], r["score"], r["place"])
            for r in self.conn.execute(
                "SELECT * FROM results WHERE game_id = ? ORDER BY seat", (game_id,)
            )
        ]

    # ---------------------------------------------------------------- ratings

    def rating(self, account_id: int, game: str) -> StoredRating | None:
        row = self.conn.execute(
            "SELECT mu, sigma, games FROM ratings WHERE account_id = ? AND game = ?",
            (account_id, game),
        ).fetchone()
        return (
            None
            if row is None
            else StoredRating(float(row["mu"]), float(row["sigma"]), int(row["games"]))
        )

    def set_rating(
        self, account_id: int, game: str, *, mu: float, sigma: float, games: int
    ) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO ratings (account_id, game, mu, sigma, games, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            (account_id, game, mu, sigma, games, stamp()),
        )

    def ratings(self, game: str) -> dict[int, StoredRating]:
        return {
            int(r["account_id"]): StoredRating(float(r["mu"]), float(r["sigma"]), int(r["games"]))
            for r in self.conn.execute(
                "SELECT account_id, mu, sigma, games FROM ratings WHERE game = ?", (game,)
            )
        }

    def rated_accounts(self, game: str) -> list[RatedAccount]:
        return [
            RatedAccount(
                int(r["account_id"]),
                str(r["name"]),
                StoredRating(float(r["mu"]), float(r["sigma"]), int(r["games"])),
                bool(r["is_bot"]),
            )
            for r in self.conn.execute(
                "SELECT r.account_id, a.name, a.is_bot, r.mu, r.sigma, r.games FROM ratings r"
                " JOIN accounts a ON a.id = r.account_id WHERE r.game = ?",
                (game,),
            )
        ]

    def delete_ratings(self, game: str) -> None:
        self.conn.execute("DELETE FROM ratings WHERE game = ?", (game,))

    def record_ladder_game(self, game_id: int, changes: Any) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO ladder_games (game_id, rated_at, changes) VALUES (?, ?, ?)",
            (game_id, stamp(), json.dumps(changes)),
        )

    # ---------------------------------------------------------------- ladder matches

    def insert_match(
        self,
        *,
        preset: str,
        options: Mapping[str, Any],
        hands: int,
        teams: tuple[tuple[int, int], tuple[int, int]],
        created_at: float,
    ) -> int:
        cur = self.conn.execute(
            "INSERT INTO ladder_matches (status, preset, options, hands, teams, created_at)"
            " VALUES ('running', ?, ?, ?, ?, ?)",
            (preset, json.dumps(dict(options)), hands, json.dumps(teams), created_at),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def match(self, seq: int) -> MatchRow | None:
        row = self.conn.execute("SELECT * FROM ladder_matches WHERE seq = ?", (seq,)).fetchone()
        return None if row is None else _match(row)

    def rate_match(
        self,
        seq: int,
        *,
        points: list[int],
        forfeits: list[int],
        halves: Any,
        changes: Any,
        finished_at: float,
        forfeit_reasons: Mapping[int, str] | None = None,
    ) -> int | None:
        row = self.conn.execute(
            "SELECT COALESCE(MAX(rated_seq), 0) + 1 FROM ladder_matches"
        ).fetchone()
        rated_seq = int(row[0])
        updated = self.conn.execute(
            "UPDATE ladder_matches SET status = 'rated', points = ?, forfeits = ?, halves = ?,"
            " changes = ?, rated_seq = ?, finished_at = ? WHERE seq = ? AND status = 'running'",
            (
                json.dumps(points),
                # With reasons: {id: reason or null}, in the order of `forfeits`.
                json.dumps(
                    forfeits
                    if forfeit_reasons is None
                    else {str(a): forfeit_reasons.get(a) for a in forfeits}
                ),
                json.dumps(halves),
                json.dumps(changes),
                rated_seq,
                finished_at,
                seq,
            ),
        ).rowcount
        return rated_seq if updated == 1 else None

    def void_match(self, seq: int, *, reason: str, finished_at: float) -> None:
        self.conn.execute(
            "UPDATE ladder_matches SET status = 'void', halves = ?, finished_at = ?"
            " WHERE seq = ? AND status = 'running'",
            (json.dumps({"void": reason}), finished_at, seq),
        )

    def void_running(self, *, reason: str, finished_at: float) -> int:
        return self.conn.execute(
            "UPDATE ladder_matches SET status = 'void', halves = ?, finished_at = ?"
            " WHERE status = 'running'",
            (json.dumps({"void": reason}), finished_at),
        ).rowcount

    def rated_matches(
        self, *, newest_first: bool = False, limit: int | None = None
    ) -> list[MatchRow]:
        order = "DESC" if newest_first else "ASC"
        rows = self.conn.execute(
            f"SELECT * FROM ladder_matches WHERE status = 'rated' ORDER BY rated_seq {order}"
            " LIMIT ?",
            (-1 if limit is None else limit,),
        ).fetchall()
        return [_match(row) for row in rows]

    def settled_matches(self) -> Iterator[MatchRow]:
        for row in self.conn.execute(
            "SELECT * FROM ladder_matches WHERE status != 'running' ORDER BY seq DESC"
        ):
            yield _match(row)

    def match_games(self, match: str) -> list[int]:
        return [
            int(r["game_id"])
            for r in self.conn.execute(
                "SELECT game_id FROM ladder_games WHERE json_extract(changes, '$.match') = ?"
                " ORDER BY json_extract(changes, '$.half')",
                (match,),
            )
        ]

    # ---------------------------------------------------------------- house entrants

    def add_house_entrant(self, account_id: int, spec: str, *, added_at: float) -> bool:
        cur = self.conn.execute(
            "INSERT OR IGNORE INTO ladder_entrants (account_id, house_spec, added_at)"
            " VALUES (?, ?, ?)",
            (account_id, spec, added_at),
        )
        return cur.rowcount == 1

    def house_entrants(self) -> list[HouseEntrant]:
        return [
            HouseEntrant(int(r["account_id"]), str(r["name"]), str(r["house_spec"]))
            for r in self.conn.execute(
                "SELECT e.account_id, a.name, e.house_spec FROM ladder_entrants e"
                " JOIN accounts a ON a.id = e.account_id WHERE e.house_spec IS NOT NULL"
                " ORDER BY e.account_id"
            )
        ]

    # ---------------------------------------------------------------- the operator

    def add_operator_token(self, digest: bytes) -> None:
        self.conn.execute(
            "INSERT INTO operator_tokens (digest, made_at) VALUES (?, ?)", (digest, stamp())
        )

    def operator_token_known(self, digest: bytes) -> bool:
        row = self.conn.execute(
            "SELECT 1 FROM operator_tokens WHERE digest = ?", (digest,)
        ).fetchone()
        return row is not None

    def set_ban(self, kind: str, target: str, reason: str | None) -> None:
        self.conn.execute(
            "INSERT INTO bans (kind, target, reason, made_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (kind, target) DO UPDATE SET reason = excluded.reason",
            (kind, target, reason, stamp()),
        )

    def remove_ban(self, kind: str, target: str) -> bool:
        cur = self.conn.execute("DELETE FROM bans WHERE kind = ? AND target = ?", (kind, target))
        return cur.rowcount == 1

    def bans(self) -> list[BanRow]:
        return [
            BanRow(str(r["kind"]), str(r["target"]), r["reason"])
            for r in self.conn.execute("SELECT kind, target, reason FROM bans ORDER BY id")
        ]
