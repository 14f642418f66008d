"""`PostgresTx`: the `Tx` of PostgreSQL (psycopg 3), the same methods as `SqliteTx` with the same
results, over the same schema (`server.storage.schema` renders it for both).

It wraps a `psycopg.Connection` whose transaction someone else runs (the writer's batch, or a
command's `server.storage.direct` transaction); it never begins or commits. A refusal the
caller is told of as a `ValueError` (a name taken, a duplicate action) is found without aborting
the transaction where PostgreSQL allows (`ON CONFLICT DO NOTHING`): a failed statement would
otherwise end every other job of the writer's batch too.

Where the spelling differs from SQLite's: placeholders are `%s`; names compare through
`lower(name COLLATE "C")` (ASCII case, as NOCASE does), which the schema's unique index covers;
SQLite's implicit `rowid` is the `tables.rowid` identity column; JSON fields are read with
PostgreSQL's `->>` on the TEXT column cast to `json`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import pq

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

#: Rows fetched at a time by the server-side cursors of the lazy reads.
CHUNK_ROWS = 500

_ACCOUNT = "id, name, token_salt, token_hash, is_bot, is_guest"
_MATCH = (
    "seq, status, preset, options, hands, teams, points, forfeits, halves, changes, rated_seq,"
    " created_at, finished_at"
)


def _account(row: Sequence[Any] | None) -> AccountRow | None:
    if row is None:
        return None
    return AccountRow(
        id=int(row[0]),
        name=str(row[1]),
        token_salt=None if row[2] is None else bytes(row[2]),
        token_hash=None if row[3] is None else bytes(row[3]),
        is_bot=bool(row[4]),
        is_guest=bool(row[5]),
    )


def _forfeits(text: str | None) -> tuple[list[int], dict[int, str]]:
    """The `forfeits` column: a JSON object of account id -> reason (or null), or, as stored
    before the reasons were kept, a list of account ids."""
    value = json.loads(text or "[]")
    if isinstance(value, dict):
        return [int(k) for k in value], {int(k): str(v) for k, v in value.items() if v is not None}
    return [int(x) for x in value], {}


def _match(row: Sequence[Any]) -> MatchRow:
    forfeits, reasons = _forfeits(row[7])
    return MatchRow(
        seq=int(row[0]),
        status=str(row[1]),
        preset=str(row[2]),
        options=json.loads(row[3]),
        hands=int(row[4]),
        teams=json.loads(row[5]),
        points=json.loads(row[6]) if row[6] else None,
        forfeits=forfeits,
        halves=json.loads(row[8]) if row[8] else None,
        changes=json.loads(row[9] or "{}"),
        rated_seq=None if row[10] is None else int(row[10]),
        created_at=float(row[11]),
        finished_at=None if row[12] is None else float(row[12]),
        forfeit_reasons=reasons,
    )


class NotInPipeline(Exception):
    """A statement that cannot run in pipeline mode: the writer's pipelined try at the batch fails
    (nothing committed) and the batch runs job by job."""


class PostgresTx:
    """`Tx` over one psycopg connection (see `server.storage.tx.Tx` for what each method does)."""

    __slots__ = ("_cursors", "conn")

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self._cursors = 0  # server-side cursors opened, to name the next

    def _one(self, query: str, params: Sequence[Any] = ()) -> Any:
        return self.conn.execute(query, params).fetchone()

    def _all(self, query: str, params: Sequence[Any] = ()) -> list[Any]:
        return self.conn.execute(query, params).fetchall()

    def _run(self, query: str, params: Sequence[Any] = ()) -> None:
        """Execute a write without waiting for its answer (the writer pipelines a batch)."""
        self.conn.execute(query, params)

    def _count(self, query: str, params: Sequence[Any] = ()) -> int:
        """Execute a write and wait for how many rows it changed (`query` ends in RETURNING)."""
        return len(self._all(query, params))

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
        row = self._one(
            "INSERT INTO accounts (name, token_salt, token_hash, is_bot, is_guest, created_at)"
            " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING RETURNING id",
            (name, salt, token_hash, int(is_bot), int(is_guest), stamp()),
        )
        if row is None:
            raise ValueError(f"the name {name!r} is taken")
        return int(row[0])

    def account_by_id(self, account_id: int) -> AccountRow | None:
        if not storable(account_id):
            return None
        return _account(self._one(f"SELECT {_ACCOUNT} FROM accounts WHERE id = %s", (account_id,)))

    def account_by_name(self, name: str) -> AccountRow | None:
        return _account(
            self._one(
                f"SELECT {_ACCOUNT} FROM accounts"
                ' WHERE lower(name COLLATE "C") = lower(%s::text COLLATE "C")',
                (name,),
            )
        )

    def upgrade_token_hash(
        self, account_id: int, old_hash: bytes, salt: bytes, token_hash: bytes
    ) -> bool:
        changed = self._count(
            "UPDATE accounts SET token_salt = %s, token_hash = %s"
            " WHERE id = %s AND token_hash = %s RETURNING id",
            (salt, token_hash, account_id, old_hash),
        )
        return changed == 1

    def guest_seen(self, account_ids: list[int]) -> None:
        ids = [a for a in account_ids if storable(a)]
        if ids:
            self._run(
                "UPDATE accounts SET last_seen_at = %s WHERE id = ANY(%s) AND is_guest = 1",
                (stamp(), ids),
            )

    def expire_guests(self, cutoff: float, in_use: list[int]) -> int:
        self.guest_seen(in_use)
        # The newest account is kept, as SQLite's must be (PostgreSQL's identity never reuses a
        # number anyway): the same rule on both engines.
        return self._count(
            "DELETE FROM accounts WHERE is_guest = 1"
            " AND COALESCE(last_seen_at, created_at) < %s"
            " AND id < (SELECT MAX(id) FROM accounts)"
            " AND NOT EXISTS (SELECT 1 FROM results r WHERE r.account_id = accounts.id)"
            " AND NOT EXISTS (SELECT 1 FROM ratings g WHERE g.account_id = accounts.id)"
            " AND NOT EXISTS (SELECT 1 FROM ladder_entrants e WHERE e.account_id = accounts.id)"
            " RETURNING id",
            (cutoff,),
        )

    # ---------------------------------------------------------------- tables

    def insert_table(
        self,
        table_id: str,
        config: Any,
        *,
        seats: list[int | None] | None = None,
        creator: int | None = None,
    ) -> None:
        self._run(
            "INSERT INTO tables (id, config, created_at, seats, creator)"
            " VALUES (%s, %s, %s, %s, %s)",
            (
                table_id,
                json.dumps(config),
                stamp(),
                None if seats is None else json.dumps(seats),
                creator,
            ),
        )

    def update_table_seats(self, table_id: str, seats: list[int | None]) -> None:
        self._run(
            "UPDATE tables SET seats = %s WHERE id = %s AND seats IS NOT NULL",
            (json.dumps(seats), table_id),
        )

    def waiting_tables(self) -> list[WaitingTable]:
        rows = self._all(
            "SELECT id, config, seats, creator FROM tables t WHERE closed_at IS NULL"
            " AND seats IS NOT NULL AND NOT EXISTS (SELECT 1 FROM games g WHERE g.table_id = t.id)"
            " ORDER BY created_at, rowid"
        )
        return [
            WaitingTable(
                str(r[0]),
                json.loads(r[1]),
                json.loads(r[2]),
                None if r[3] is None else int(r[3]),
            )
            for r in rows
        ]

    def table_creator(self, table_id: str) -> int | None:
        row = self._one("SELECT creator FROM tables WHERE id = %s", (table_id,))
        return None if row is None or row[0] is None else int(row[0])

    def close_table(self, table_id: str) -> None:
        self._run("UPDATE tables SET closed_at = %s WHERE id = %s", (stamp(), table_id))

    # ---------------------------------------------------------------- games

    def insert_game(self, table_id: str, game: str, ruleset: Any, seats: Any) -> int:
        row = self._one(
            "INSERT INTO games (table_id, game, ruleset, seats, status, created_at)"
            " VALUES (%s, %s, %s, %s, 'running', %s) RETURNING id",
            (table_id, game, json.dumps(ruleset), json.dumps(seats), stamp()),
        )
        return int(row[0])

    def update_game_seats(self, game_id: int, seats: Any) -> None:
        self._run("UPDATE games SET seats = %s WHERE id = %s", (json.dumps(seats), game_id))

    def insert_hand(
        self, game_id: int, *, hand_no: int, seed: str, commitment: str, first_seq: int
    ) -> None:
        self._run(
            "INSERT INTO hands (game_id, hand_no, seed, commitment, first_seq)"
            " VALUES (%s, %s, %s, %s, %s)",
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
        # A plain INSERT (not ON CONFLICT with RETURNING, which would wait for its answer): the
        # writer pipelines a batch's actions, and a duplicate is a bug's rare case that makes it
        # run the batch again job by job (`PostgresDatabase.commit_batch`), where it lands here.
        try:
            self._run(
                "INSERT INTO actions"
                " (game_id, seq, seat, action, source, created_at, bank_left_ms)"
                " VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (game_id, seq, seat, json.dumps(action), source, stamp(), bank_left_ms),
            )
        except pg_errors.UniqueViolation as exc:
            raise ValueError(f"game {game_id} already has an action {seq}") from exc

    def insert_hand_record(self, game_id: int, hand_no: int, record: Any) -> None:
        self._run(
            "INSERT INTO hand_records (game_id, hand_no, record, created_at)"
            " VALUES (%s, %s, %s, %s) ON CONFLICT (game_id, hand_no)"
            " DO UPDATE SET record = EXCLUDED.record, created_at = EXCLUDED.created_at",
            (game_id, hand_no, json.dumps(record), stamp()),
        )

    def finish_game(self, game_id: int, status: str, results: list[ResultRow]) -> None:
        self._run(
            "UPDATE games SET status = %s, finished_at = %s WHERE id = %s",
            (status, stamp(), game_id),
        )
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO results (game_id, seat, account_id, score, place)"
                " VALUES (%s, %s, %s, %s, %s) ON CONFLICT (game_id, seat) DO UPDATE SET"
                " account_id = EXCLUDED.account_id, score = EXCLUDED.score,"
                " place = EXCLUDED.place",
                [(game_id, *row) for row in results],
            )

    def unfinished_games(self) -> list[StoredGame]:
        rows = self._all("SELECT id FROM games WHERE status = 'running' ORDER BY id")
        return [game for row in rows if (game := self.load_game(int(row[0]))) is not None]

    def load_game(self, game_id: int) -> StoredGame | None:
        if not storable(game_id):
            return None
        row = self._one(
            "SELECT g.id, g.table_id, t.config, g.game, g.ruleset, g.seats, g.created_at"
            " FROM games g"
            " JOIN tables t ON t.id = g.table_id WHERE g.id = %s",
            (game_id,),
        )
        if row is None:
            return None
        hands = [
            StoredHand(int(r[0]), str(r[1]), str(r[2]), int(r[3]))
            for r in self._all(
                "SELECT hand_no, seed, commitment, first_seq FROM hands WHERE game_id = %s"
                " ORDER BY hand_no",
                (game_id,),
            )
        ]
        actions = [
            StoredAction(
                int(r[0]),
                int(r[1]),
                json.loads(r[2]),
                str(r[3]),
                None if r[4] is None else int(r[4]),
                float(r[5]),
            )
            for r in self._all(
                "SELECT seq, seat, action, source, bank_left_ms, created_at FROM actions"
                " WHERE game_id = %s ORDER BY seq",
                (game_id,),
            )
        ]
        return StoredGame(
            id=int(row[0]),
            table_id=str(row[1]),
            table_config=json.loads(row[2]),
            game=str(row[3]),
            ruleset=json.loads(row[4]),
            seats=json.loads(row[5]),
            hands=hands,
            actions=actions,
            created_at=float(row[6]),
        )

    def game_ids(self, status: str | None = None) -> list[int]:
        if status is None:
            return [int(r[0]) for r in self._all("SELECT id FROM games ORDER BY id")]
        return [
            int(r[0])
            for r in self._all("SELECT id FROM games WHERE status = %s ORDER BY id", (status,))
        ]

    def latest_game_at(self, table_id: str) -> int | None:
        row = self._one(
            "SELECT id FROM games WHERE table_id = %s ORDER BY id DESC LIMIT 1", (table_id,)
        )
        return None if row is None else int(row[0])

    def game_status(self, game_id: int) -> str | None:
        if not storable(game_id):
            return None
        row = self._one("SELECT status FROM games WHERE id = %s", (game_id,))
        return None if row is None else str(row[0])

    def hand_count(self, game_id: int) -> tuple[int, int]:
        row = self._one(
            "SELECT (SELECT COUNT(*) FROM hands WHERE game_id = %s),"
            " (SELECT COUNT(*) FROM hand_records WHERE game_id = %s)",
            (game_id, game_id),
        )
        return int(row[0]), int(row[1])

    def action_count(self, game_id: int) -> int:
        return int(self._one("SELECT COUNT(*) FROM actions WHERE game_id = %s", (game_id,))[0])

    def _in_chunks(self, query: str, params: Sequence[Any] = ()) -> Iterator[Any]:
        """The rows of `query` a chunk at a time, from a server-side cursor: an export of every
        game never holds them all, and the caller may run other statements between rows (the
        connection is free between fetches). WITH HOLD, so it works outside a transaction too.

        A server-side cursor cannot be opened in pipeline mode (the writer's first try at a batch):
        refused before one is made, so no half-opened cursor outlives the failed try (it would be
        collected still open, with a ResourceWarning); the writer runs the batch again job by
        job, outside a pipeline, where the rows stream."""
        if self.conn.pgconn.pipeline_status != pq.PipelineStatus.OFF:
            raise NotInPipeline("a server-side cursor needs the batch run job by job")
        self._cursors += 1
        with self.conn.cursor(name=f"spades_rows_{self._cursors}", withhold=True) as cur:
            cur.itersize = CHUNK_ROWS
            cur.execute(query, params)
            yield from cur

    def hand_records(self, game_id: int | None = None) -> Iterator[Any]:
        if game_id is None:
            rows = self._in_chunks("SELECT record FROM hand_records ORDER BY game_id, hand_no")
        else:
            rows = self._in_chunks(
                "SELECT record FROM hand_records WHERE game_id = %s ORDER BY hand_no", (game_id,)
            )
        for row in rows:
            yield json.loads(row[0])

    def results(self, game_id: int) -> list[ResultRow]:
        return [
            (int(r[0]), None if r[1] is None else int(r[1]), int(r[2]), int(r[3]))
            for r in self._all(
                "SELECT seat, account_id, score, place FROM results WHERE game_id = %s"
                " ORDER BY seat",
                (game_id,),
            )
        ]

    # ---------------------------------------------------------------- ratings

    def rating(self, account_id: int, game: str) -> StoredRating | None:
        row = self._one(
            "SELECT mu, sigma, games FROM ratings WHERE account_id = %s AND game = %s",
            (account_id, game),
        )
        return None if row is None else StoredRating(float(row[0]), float(row[1]), int(row[2]))

    def set_rating(
        self, account_id: int, game: str, *, mu: float, sigma: float, games: int
    ) -> None:
        self._run(
            "INSERT INTO ratings (account_id, game, mu, sigma, games, updated_at)"
            " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (account_id, game) DO UPDATE SET"
            " mu = EXCLUDED.mu, sigma = EXCLUDED.sigma, games = EXCLUDED.games,"
            " updated_at = EXCLUDED.updated_at",
            (account_id, game, mu, sigma, games, stamp()),
        )

    def ratings(self, game: str) -> dict[int, StoredRating]:
        return {
            int(r[0]): StoredRating(float(r[1]), float(r[2]), int(r[3]))
            for r in self._all(
                "SELECT account_id, mu, sigma, games FROM ratings WHERE game = %s", (game,)
            )
        }

    def rated_accounts(self, game: str) -> list[RatedAccount]:
        return [
            RatedAccount(
                int(r[0]),
                str(r[1]),
                StoredRating(float(r[3]), float(r[4]), int(r[5])),
                bool(r[2]),
            )
            for r in self._all(
                "SELECT r.account_id, a.name, a.is_bot, r.mu, r.sigma, r.games FROM ratings r"
                " JOIN accounts a ON a.id = r.account_id WHERE r.game = %s",
                (game,),
            )
        ]

    def delete_ratings(self, game: str) -> None:
        self._run("DELETE FROM ratings WHERE game = %s", (game,))

    def record_ladder_game(self, game_id: int, changes: Any) -> None:
        self._run(
            "INSERT INTO ladder_games (game_id, rated_at, changes) VALUES (%s, %s, %s)"
            " ON CONFLICT (game_id) DO UPDATE SET rated_at = EXCLUDED.rated_at,"
            " changes = EXCLUDED.changes",
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
        row = self._one(
            "INSERT INTO ladder_matches (status, preset, options, hands, teams, created_at)"
            " VALUES ('running', %s, %s, %s, %s, %s) RETURNING seq",
            (preset, json.dumps(dict(options)), hands, json.dumps(teams), created_at),
        )
        return int(row[0])

    def match(self, seq: int) -> MatchRow | None:
        if not storable(seq):
            return None
        row = self._one(f"SELECT {_MATCH} FROM ladder_matches WHERE seq = %s", (seq,))
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
        rated_seq = int(self._one("SELECT COALESCE(MAX(rated_seq), 0) + 1 FROM ladder_matches")[0])
        updated = self._count(
            "UPDATE ladder_matches SET status = 'rated', points = %s, forfeits = %s,"
            " halves = %s, changes = %s, rated_seq = %s, finished_at = %s"
            " WHERE seq = %s AND status = 'running' RETURNING seq",
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
        )
        return rated_seq if updated == 1 else None

    def void_match(self, seq: int, *, reason: str, finished_at: float) -> None:
        self._run(
            "UPDATE ladder_matches SET status = 'void', halves = %s, finished_at = %s"
            " WHERE seq = %s AND status = 'running'",
            (json.dumps({"void": reason}), finished_at, seq),
        )

    def void_running(self, *, reason: str, finished_at: float) -> int:
        return self._count(
            "UPDATE ladder_matches SET status = 'void', halves = %s, finished_at = %s"
            " WHERE status = 'running' RETURNING seq",
            (json.dumps({"void": reason}), finished_at),
        )

    def rated_matches(
        self, *, newest_first: bool = False, limit: int | None = None
    ) -> list[MatchRow]:
        order = "DESC" if newest_first else "ASC"
        rows = self._all(
            f"SELECT {_MATCH} FROM ladder_matches WHERE status = 'rated'"
            f" ORDER BY rated_seq {order} LIMIT %s",
            (limit,),
        )
        return [_match(row) for row in rows]

    def settled_matches(self) -> Iterator[MatchRow]:
        for row in self._in_chunks(
            f"SELECT {_MATCH} FROM ladder_matches WHERE status != 'running' ORDER BY seq DESC"
        ):
            yield _match(row)

    def match_games(self, match: str) -> list[int]:
        return [
            int(r[0])
            for r in self._all(
                "SELECT game_id FROM ladder_games WHERE changes::json ->> 'match' = %s"
                " ORDER BY (changes::json ->> 'half')::numeric",
                (match,),
            )
        ]

    # ---------------------------------------------------------------- house entrants

    def add_house_entrant(self, account_id: int, spec: str, *, added_at: float) -> bool:
        return (
            self._count(
                "INSERT INTO ladder_entrants (account_id, house_spec, added_at)"
                " VALUES (%s, %s, %s) ON CONFLICT DO NOTHING RETURNING account_id",
                (account_id, spec, added_at),
            )
            == 1
        )

    def house_entrants(self) -> list[HouseEntrant]:
        return [
            HouseEntrant(int(r[0]), str(r[1]), str(r[2]))
            for r in self._all(
                "SELECT e.account_id, a.name, e.house_spec FROM ladder_entrants e"
                " JOIN accounts a ON a.id = e.account_id WHERE e.house_spec IS NOT NULL"
                " ORDER BY e.account_id"
            )
        ]

    # ---------------------------------------------------------------- the operator

    def add_operator_token(self, digest: bytes) -> None:
        self._run(
            "INSERT INTO operator_tokens (digest, made_at) VALUES (%s, %s)", (digest, stamp())
        )

    def operator_token_known(self, digest: bytes) -> bool:
        return self._one("SELECT 1 FROM operator_tokens WHERE digest = %s", (digest,)) is not None

    def set_ban(self, kind: str, target: str, reason: str | None) -> None:
        self._run(
            "INSERT INTO bans (kind, target, reason, made_at) VALUES (%s, %s, %s, %s)"
            " ON CONFLICT (kind, target) DO UPDATE SET reason = excluded.reason",
            (kind, target, reason, stamp()),
        )

    def remove_ban(self, kind: str, target: str) -> bool:
        return (
            self._count(
                "DELETE FROM bans WHERE kind = %s AND target = %s RETURNING id", (kind, target)
            )
            == 1
        )

    def bans(self) -> list[BanRow]:
        return [
            BanRow(str(r[0]), str(r[1]), r[2])
            for r in self._all("SELECT kind, target, reason FROM bans ORDER BY id")
        ]
