"""`Tx`: what one transaction on the database can do, whatever engine is behind it, and every
query of the store, written once for both engines.

Callers never see SQL or a driver: they hand the store a function of a `Tx` (`await
store.call(lambda tx: tx.insert_action(...))`), which runs inside the writer's transaction, or use
one directly from a command (`server.storage.direct`). A method that refuses raises `ValueError`
(or `KeyError`) with a sentence and leaves nothing of its own written, so the writer rolls back
that request alone and the rest of its batch commits.

Methods take and return plain values: JSON columns are given and returned as the engine's JSON
shapes (dicts, lists), rows as the frozen values of `server.storage.rows`.

Each statement is written here once, with `?` for a parameter and a `{word}` where the engines
spell a thing differently (`server.storage.dialect`); each row is read into its value once, by
the mappers below. A `Tx` runs its statements through its engine's `Driver`
(`server.storage.sqlite_driver`, `server.storage.postgres_driver`), which owns what is not
spelling: how a statement runs on the connection, how a changed-row count or a new row's id is
learnt, how rows are streamed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Protocol

from engine.hand_stats import TALLY_FIELDS
from server.storage.dialect import Dialect
from server.storage.rows import (
    AccountRow,
    BanRow,
    EventEntrantRow,
    EventRow,
    EventTableRow,
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

#: A row as a driver returns it: its columns in the order the statement selected them.
Row = Sequence[Any]


class Driver(Protocol):
    """How one engine runs the statements of a `Tx` on a connection whose transaction someone
    else runs (the writer's batch, or a command's `server.storage.direct` transaction): a driver
    never begins or commits. Every `sql` is a statement as `Tx` writes it (`?`, `{words}`); the
    driver renders it in its `dialect` (once per text)."""

    dialect: ClassVar[Dialect]
    #: What `run` raises for a row whose key is taken (the engine's unique-violation error).
    duplicate: ClassVar[tuple[type[Exception], ...]]

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        """The first row of a query (None if it has none)."""
        ...

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """Every row of a query."""
        ...

    def named(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[str], list[Row]]:
        """The names of a query's columns, and every row of it (for `SELECT *` of a table whose
        columns a file not yet migrated may lack)."""
        ...

    def stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[Row]:
        """The rows of a query, lazily: never all held at once; the caller may run other
        statements between them."""
        ...

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        """A write whose answer nobody waits for (PostgreSQL pipelines a batch's writes)."""
        ...

    def many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        """One write for each of `rows`."""
        ...

    def count(self, sql: str, params: Sequence[Any] = ()) -> int:
        """A write, and how many rows it changed."""
        ...

    def insert(self, sql: str, params: Sequence[Any], key: str) -> int | None:
        """An INSERT of one row, and its `key` column's value as the engine numbered it; None if
        no row was inserted (an `ON CONFLICT DO NOTHING` that found one)."""
        ...


# ---------------------------------------------------------------- the row mappers

_ACCOUNT = "id, name, token_salt, token_hash, is_bot, is_guest"
_MATCH = (
    "seq, status, preset, options, hands, teams, points, forfeits, halves, changes, rated_seq,"
    " created_at, finished_at"
)
#: The guests `Tx.expire_guests` deletes (given the cutoff).
_EXPIRED = (
    "is_guest = 1 AND COALESCE(last_seen_at, created_at) < ?"
    " AND id < (SELECT MAX(id) FROM accounts)"
    " AND NOT EXISTS (SELECT 1 FROM results r WHERE r.account_id = accounts.id)"
    " AND NOT EXISTS (SELECT 1 FROM ratings g WHERE g.account_id = accounts.id)"
    " AND NOT EXISTS (SELECT 1 FROM ladder_entrants e WHERE e.account_id = accounts.id)"
)
#: Player statistics' counters, as `engine.hand_stats.Tally` names them: a column each.
STATS_COLUMNS = TALLY_FIELDS
_ADD_STATS = (
    f"INSERT INTO player_stats (account_id, {', '.join(STATS_COLUMNS)}, updated_at)"
    f" VALUES (?, {', '.join('?' for _ in STATS_COLUMNS)}, ?) ON CONFLICT (account_id) DO UPDATE SET "
    + ", ".join(f"{c} = player_stats.{c} + excluded.{c}" for c in STATS_COLUMNS)
    + ", updated_at = excluded.updated_at"
)
_RATED_ACCOUNT = (
    "SELECT r.account_id, a.name, a.is_bot, r.mu, r.sigma, r.games FROM ratings r"
    " JOIN accounts a ON a.id = r.account_id WHERE r.game = ?"
)


def _bytes(value: Any) -> bytes | None:
    return None if value is None else bytes(value)


def _int(value: Any) -> int | None:
    return None if value is None else int(value)


def _account(row: Row | None) -> AccountRow | None:
    if row is None:
        return None
    return AccountRow(
        id=int(row[0]),
        name=str(row[1]),
        token_salt=_bytes(row[2]),
        token_hash=_bytes(row[3]),
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


def _match(row: Row) -> MatchRow:
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
        rated_seq=_int(row[10]),
        created_at=float(row[11]),
        finished_at=None if row[12] is None else float(row[12]),
        forfeit_reasons=reasons,
    )


_EVENT = "id, name, host, settings, secret, seed, status, starts_at, round, created_at, finished_at"


def _event(row: Row) -> EventRow:
    return EventRow(
        id=int(row[0]),
        name=str(row[1]),
        host=_int(row[2]),
        settings=json.loads(row[3]),
        secret=bytes(row[4]),
        seed=int(row[5]),
        status=str(row[6]),
        starts_at=float(row[7]),
        round=int(row[8]),
        created_at=float(row[9]),
        finished_at=None if row[10] is None else float(row[10]),
    )


def _rating(row: Row, at: int = 0) -> StoredRating:
    """The (mu, sigma, games) columns from the `at`th on."""
    return StoredRating(float(row[at]), float(row[at + 1]), int(row[at + 2]))


def _actions(columns: list[str], rows: list[Row]) -> list[StoredAction]:
    """`actions` rows of `SELECT *`: `bank_left_ms` is absent from a SQLite file not yet migrated
    (commands read files as they are)."""
    at = {name: i for i, name in enumerate(columns)}
    seq, seat, action, source, created = (
        at[name] for name in ("seq", "seat", "action", "source", "created_at")
    )
    bank = at.get("bank_left_ms")
    return [
        StoredAction(
            int(r[seq]),
            int(r[seat]),
            json.loads(r[action]),
            str(r[source]),
            None if bank is None else _int(r[bank]),
            float(r[created]),
        )
        for r in rows
    ]


class Tx:
    """One transaction: every read sees the writes made before it in the same transaction."""

    __slots__ = ("driver",)

    def __init__(self, driver: Driver) -> None:
        self.driver = driver

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
        """Create an account, returning its id; `ValueError` when the name is taken (names
        compare without case)."""
        # DO NOTHING, not a caught error: in PostgreSQL a failed statement aborts the
        # transaction, and with it every other job of the writer's batch.
        account_id = self.driver.insert(
            "INSERT INTO accounts (name, token_salt, token_hash, is_bot, is_guest, created_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (name, salt, token_hash, int(is_bot), int(is_guest), stamp()),
            "id",
        )
        if account_id is None:
            raise ValueError(f"the name {name!r} is taken")
        return account_id

    def account_by_id(self, account_id: int) -> AccountRow | None:
        if not storable(account_id):
            return None
        return _account(
            self.driver.one(f"SELECT {_ACCOUNT} FROM accounts WHERE id = ?", (account_id,))
        )

    def account_by_name(self, name: str) -> AccountRow | None:
        """The account of that name, compared without case."""
        return _account(
            self.driver.one(f"SELECT {_ACCOUNT} FROM accounts WHERE {{name_is}}", (name,))
        )

    def upgrade_token_hash(
        self, account_id: int, old_hash: bytes, salt: bytes, token_hash: bytes
    ) -> bool:
        """Store a new salt and hash of an account's token in place of `old_hash` (a login just
        proved the token against it); False, and nothing changed, if the stored hash is no
        longer `old_hash` (another server upgraded it first)."""
        changed = self.driver.count(
            "UPDATE accounts SET token_salt = ?, token_hash = ? WHERE id = ? AND token_hash = ?",
            (salt, token_hash, account_id, old_hash),
        )
        return changed == 1

    def guest_seen(self, account_ids: list[int]) -> None:
        """Note that these guests were seen now (a login, a live connection, a seat); ids of
        accounts that are not guests are passed over."""
        ids = [a for a in account_ids if storable(a)]
        if ids:
            self.driver.run(
                "UPDATE accounts SET last_seen_at = ? WHERE id IN ({json_ids}) AND is_guest = 1",
                (stamp(), json.dumps(ids)),
            )

    def expire_guests(self, cutoff: float, in_use: list[int]) -> int:
        """Delete every guest account not seen since `cutoff` (Unix time) that has no game
        results and no ladder or rating rows, after noting the guests `in_use` (connected or
        seated) as seen now; returns how many went. The newest account of all is never deleted,
        so no deleted account's id is ever given to a new one."""
        self.guest_seen(in_use)
        # SQLite gives a new row the largest rowid plus one: keeping the largest keeps every
        # deleted id unused for good (PostgreSQL's identity never reuses a number anyway: the
        # same rule on both engines).
        # An expired guest's statistics (hands of games it never finished) go with it.
        for table in ("player_stats", "dd_stats"):
            self.driver.run(
                f"DELETE FROM {table} WHERE account_id IN (SELECT id FROM accounts WHERE {_EXPIRED})",
                (cutoff,),
            )
        return self.driver.count(f"DELETE FROM accounts WHERE {_EXPIRED}", (cutoff,))

    # ---------------------------------------------------------------- tables

    def insert_table(
        self,
        table_id: str,
        config: Any,
        *,
        seats: list[int | None] | None = None,
        creator: int | None = None,
    ) -> None:
        """Store a table's configuration. With `seats` (a list, even of free seats) the table is
        reopened after a restart for as long as it is open with no game."""
        self.driver.run(
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
        """Who sits at a table still waiting for players (only one stored with seats)."""
        self.driver.run(
            "UPDATE tables SET seats = ? WHERE id = ? AND seats IS NOT NULL",
            (json.dumps(seats), table_id),
        )

    def waiting_tables(self) -> list[WaitingTable]:
        """Every table to reopen on start: not closed, stored with seats, and no game yet, in
        the order they were opened."""
        rows = self.driver.all(
            "SELECT id, config, seats, creator FROM tables t WHERE closed_at IS NULL"
            " AND seats IS NOT NULL AND NOT EXISTS (SELECT 1 FROM games g WHERE g.table_id = t.id)"
            " ORDER BY created_at, rowid"
        )
        return [
            WaitingTable(str(r[0]), json.loads(r[1]), json.loads(r[2]), _int(r[3])) for r in rows
        ]

    def table_creator(self, table_id: str) -> int | None:
        row = self.driver.one("SELECT creator FROM tables WHERE id = ?", (table_id,))
        return None if row is None else _int(row[0])

    def close_table(self, table_id: str) -> None:
        self.driver.run("UPDATE tables SET closed_at = ? WHERE id = ?", (stamp(), table_id))

    # ---------------------------------------------------------------- games

    def insert_game(self, table_id: str, game: str, ruleset: Any, seats: Any) -> int:
        """A new running game at a stored table; returns its id (ids grow)."""
        game_id = self.driver.insert(
            "INSERT INTO games (table_id, game, ruleset, seats, status, created_at)"
            " VALUES (?, ?, ?, ?, 'running', ?)",
            (table_id, game, json.dumps(ruleset), json.dumps(seats), stamp()),
            "id",
        )
        assert game_id is not None  # a plain INSERT inserts or raises
        return game_id

    def update_game_seats(self, game_id: int, seats: Any) -> None:
        self.driver.run("UPDATE games SET seats = ? WHERE id = ?", (json.dumps(seats), game_id))

    def insert_hand(
        self, game_id: int, *, hand_no: int, seed: str, commitment: str, first_seq: int
    ) -> None:
        """Record a hand's secret seed before its deal is shown to anyone."""
        self.driver.run(
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
        """Append one applied action (with the actor's time bank left after it, if the table
        has one); `ValueError` on a duplicate `seq`."""
        # A plain INSERT (not ON CONFLICT with RETURNING, which would wait for its answer): the
        # PostgreSQL writer pipelines a batch's actions, and a duplicate is a bug's rare case
        # that makes it run the batch again job by job (`PostgresDatabase.commit_batch`), where
        # the error is raised here.
        try:
            self.driver.run(
                "INSERT INTO actions (game_id, seq, seat, action, source, created_at, bank_left_ms)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                (game_id, seq, seat, json.dumps(action), source, stamp(), bank_left_ms),
            )
        except self.driver.duplicate as exc:
            raise ValueError(f"game {game_id} already has an action {seq}") from exc

    def insert_hand_record(self, game_id: int, hand_no: int, record: Any) -> None:
        """Store a finished hand's `spades-hand/1` record (replacing one of the same number)."""
        self.driver.run(
            "INSERT INTO hand_records (game_id, hand_no, record, created_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (game_id, hand_no)"
            " DO UPDATE SET record = excluded.record, created_at = excluded.created_at",
            (game_id, hand_no, json.dumps(record), stamp()),
        )

    def finish_game(self, game_id: int, status: str, results: list[ResultRow]) -> None:
        """Mark a game `finished` or `aborted` with its (seat, account_id, score, place) rows."""
        self.driver.run(
            "UPDATE games SET status = ?, finished_at = ? WHERE id = ?", (status, stamp(), game_id)
        )
        self.driver.many(
            "INSERT INTO results (game_id, seat, account_id, score, place) VALUES (?, ?, ?, ?, ?)"
            " ON CONFLICT (game_id, seat) DO UPDATE SET account_id = excluded.account_id,"
            " score = excluded.score, place = excluded.place",
            [(game_id, *row) for row in results],
        )

    def unfinished_games(self) -> list[StoredGame]:
        """Every game still `running`, with its hands and actions in order (crash recovery)."""
        rows = self.driver.all("SELECT id FROM games WHERE status = 'running' ORDER BY id")
        return [game for row in rows if (game := self.load_game(int(row[0]))) is not None]

    def load_game(self, game_id: int) -> StoredGame | None:
        """One game as persisted (any status): its table's config, deals and actions in order."""
        if not storable(game_id):
            return None
        row = self.driver.one(
            "SELECT g.id, g.table_id, t.config, g.game, g.ruleset, g.seats, g.created_at"
            " FROM games g JOIN tables t ON t.id = g.table_id WHERE g.id = ?",
            (game_id,),
        )
        if row is None:
            return None
        hands = [
            StoredHand(int(r[0]), str(r[1]), str(r[2]), int(r[3]))
            for r in self.driver.all(
                "SELECT hand_no, seed, commitment, first_seq FROM hands WHERE game_id = ?"
                " ORDER BY hand_no",
                (game_id,),
            )
        ]
        actions = _actions(
            *self.driver.named("SELECT * FROM actions WHERE game_id = ? ORDER BY seq", (game_id,))
        )
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
            rows = self.driver.all("SELECT id FROM games ORDER BY id")
        else:
            rows = self.driver.all("SELECT id FROM games WHERE status = ? ORDER BY id", (status,))
        return [int(r[0]) for r in rows]

    def latest_game_at(self, table_id: str) -> int | None:
        """The last game played at a table (a table plays one; if it ever held more, the latest)."""
        row = self.driver.one(
            "SELECT id FROM games WHERE table_id = ? ORDER BY id DESC LIMIT 1", (table_id,)
        )
        return None if row is None else int(row[0])

    def game_status(self, game_id: int) -> str | None:
        if not storable(game_id):
            return None
        row = self.driver.one("SELECT status FROM games WHERE id = ?", (game_id,))
        return None if row is None else str(row[0])

    def hand_count(self, game_id: int) -> tuple[int, int]:
        """(deals stored, hand records stored) of a game."""
        row = self.driver.one(
            "SELECT (SELECT COUNT(*) FROM hands WHERE game_id = ?),"
            " (SELECT COUNT(*) FROM hand_records WHERE game_id = ?)",
            (game_id, game_id),
        )
        assert row is not None  # a SELECT of two counts has one row
        return int(row[0]), int(row[1])

    def action_count(self, game_id: int) -> int:
        row = self.driver.one("SELECT COUNT(*) FROM actions WHERE game_id = ?", (game_id,))
        assert row is not None
        return int(row[0])

    def hand_records(self, game_id: int | None = None) -> Iterator[Any]:
        """Hand records in (game, hand) order; every game's when `game_id` is None. Lazy: use it
        up inside the transaction."""
        if game_id is None:
            rows = self.driver.stream("SELECT record FROM hand_records ORDER BY game_id, hand_no")
        else:
            rows = self.driver.stream(
                "SELECT record FROM hand_records WHERE game_id = ? ORDER BY hand_no", (game_id,)
            )
        for row in rows:
            yield json.loads(row[0])

    def results(self, game_id: int) -> list[ResultRow]:
        return [
            (int(r[0]), _int(r[1]), int(r[2]), int(r[3]))
            for r in self.driver.all(
                "SELECT seat, account_id, score, place FROM results WHERE game_id = ?"
                " ORDER BY seat",
                (game_id,),
            )
        ]

    # ---------------------------------------------------------------- ratings

    def rating(self, account_id: int, game: str) -> StoredRating | None:
        row = self.driver.one(
            "SELECT mu, sigma, games FROM ratings WHERE account_id = ? AND game = ?",
            (account_id, game),
        )
        return None if row is None else _rating(row)

    def set_rating(
        self, account_id: int, game: str, *, mu: float, sigma: float, games: int
    ) -> None:
        self.driver.run(
            "INSERT INTO ratings (account_id, game, mu, sigma, games, updated_at)"
            " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (account_id, game) DO UPDATE SET"
            " mu = excluded.mu, sigma = excluded.sigma, games = excluded.games,"
            " updated_at = excluded.updated_at",
            (account_id, game, mu, sigma, games, stamp()),
        )

    def ratings(self, game: str) -> dict[int, StoredRating]:
        """Every stored rating under the game key `game`, by account id."""
        return {
            int(r[0]): _rating(r, 1)
            for r in self.driver.all(
                "SELECT account_id, mu, sigma, games FROM ratings WHERE game = ?", (game,)
            )
        }

    def rated_accounts(self, game: str) -> list[RatedAccount]:
        """Every account with a rating under `game`, with its name (in no particular order)."""
        return [
            RatedAccount(int(r[0]), str(r[1]), _rating(r, 3), bool(r[2]))
            for r in self.driver.all(_RATED_ACCOUNT, (game,))
        ]

    def delete_ratings(self, game: str) -> None:
        self.driver.run("DELETE FROM ratings WHERE game = ?", (game,))

    def record_ladder_game(self, game_id: int, changes: Any) -> None:
        """Remember what a game was to the ladder (`ladder_games`; replaces an earlier note)."""
        self.driver.run(
            "INSERT INTO ladder_games (game_id, rated_at, changes) VALUES (?, ?, ?)"
            " ON CONFLICT (game_id) DO UPDATE SET rated_at = excluded.rated_at,"
            " changes = excluded.changes",
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
        """A new running match; returns its number (numbers grow)."""
        seq = self.driver.insert(
            "INSERT INTO ladder_matches (status, preset, options, hands, teams, created_at)"
            " VALUES ('running', ?, ?, ?, ?, ?)",
            (preset, json.dumps(dict(options)), hands, json.dumps(teams), created_at),
            "seq",
        )
        assert seq is not None  # a plain INSERT inserts or raises
        return seq

    def match(self, seq: int) -> MatchRow | None:
        if not storable(seq):
            return None
        row = self.driver.one(f"SELECT {_MATCH} FROM ladder_matches WHERE seq = ?", (seq,))
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
        """Mark a running match rated with its result; returns its rating order (one more than
        the last rated match's), or None (nothing written) if it is not running.
        `forfeit_reasons` (by account id, for some or all of `forfeits`) is kept with it and read
        back in `MatchRow.forfeit_reasons`."""
        row = self.driver.one("SELECT COALESCE(MAX(rated_seq), 0) + 1 FROM ladder_matches")
        assert row is not None
        rated_seq = int(row[0])
        updated = self.driver.count(
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
        )
        return rated_seq if updated == 1 else None

    def void_match(self, seq: int, *, reason: str, finished_at: float) -> None:
        """A running match that will never be rated (kept, with its reason)."""
        self.driver.run(
            "UPDATE ladder_matches SET status = 'void', halves = ?, finished_at = ?"
            " WHERE seq = ? AND status = 'running'",
            (json.dumps({"void": reason}), finished_at, seq),
        )

    def void_running(self, *, reason: str, finished_at: float) -> int:
        """Every running match void; returns how many."""
        return self.driver.count(
            "UPDATE ladder_matches SET status = 'void', halves = ?, finished_at = ?"
            " WHERE status = 'running'",
            (json.dumps({"void": reason}), finished_at),
        )

    def rated_matches(
        self, *, newest_first: bool = False, limit: int | None = None
    ) -> list[MatchRow]:
        """Rated matches in the order they were rated (or the reverse), at most `limit`."""
        order = "DESC" if newest_first else "ASC"
        sql = (
            f"SELECT {_MATCH} FROM ladder_matches WHERE status = 'rated' ORDER BY rated_seq {order}"
        )
        if limit is not None:
            sql += " LIMIT ?"  # SQLite's "no limit" is -1, PostgreSQL's NULL: none written
        return [_match(row) for row in self.driver.all(sql, () if limit is None else (limit,))]

    def settled_matches(self) -> Iterator[MatchRow]:
        """Every rated or void match, newest first. Lazy: use it inside the transaction."""
        for row in self.driver.stream(
            f"SELECT {_MATCH} FROM ladder_matches WHERE status != 'running' ORDER BY seq DESC"
        ):
            yield _match(row)

    def match_games(self, match: str) -> list[int]:
        """The games `record_ladder_game` noted as halves of `match`, in half order."""
        return [
            int(r[0])
            for r in self.driver.all(
                "SELECT game_id FROM ladder_games WHERE {changes_match} = ? ORDER BY {changes_half}",
                (match,),
            )
        ]

    # ---------------------------------------------------------------- player statistics

    def count_stats_hand(
        self, game_id: int, hand_no: int, tallies: Mapping[int, Sequence[int]]
    ) -> bool:
        """Mark a stored hand counted and add each account's counters (`STATS_COLUMNS` order) to
        its statistics, once: False, and nothing written, if the hand was counted already."""
        fresh = self.driver.count(
            "INSERT INTO stats_hands (game_id, hand_no, counted_at) VALUES (?, ?, ?)"
            " ON CONFLICT (game_id, hand_no) DO NOTHING",
            (game_id, hand_no, stamp()),
        )
        if fresh != 1:
            return False
        self.driver.many(_ADD_STATS, [(a, *values, stamp()) for a, values in tallies.items()])
        return True

    def player_stats(self, account_id: int) -> list[int] | None:
        """An account's counters (`STATS_COLUMNS` order); None if no hand of it is counted."""
        if not storable(account_id):
            return None
        row = self.driver.one(
            f"SELECT {', '.join(STATS_COLUMNS)} FROM player_stats WHERE account_id = ?",
            (account_id,),
        )
        return None if row is None else [int(v) for v in row]

    def rated_player_stats(self, game: str) -> dict[int, list[int]]:
        """The counters (`STATS_COLUMNS` order) of every account rated under `game` that has any,
        by account id (the ladder's standings show them beside the rating)."""
        return {
            int(r[0]): [int(v) for v in r[1:]]
            for r in self.driver.all(
                f"SELECT s.account_id, {', '.join('s.' + c for c in STATS_COLUMNS)}"
                " FROM player_stats s JOIN ratings r ON r.account_id = s.account_id"
                " WHERE r.game = ?",
                (game,),
            )
        }

    def games_finished(self, account_id: int) -> tuple[int, int]:
        """(finished games an account had a seat in at the end, the ones it placed first in)."""
        row = self.driver.one(
            # DISTINCT: a built-in bot's account may hold several seats of one game.
            "SELECT COUNT(DISTINCT game_id), COUNT(DISTINCT CASE WHEN place = 1 THEN game_id END)"
            " FROM results WHERE account_id = ?",
            (account_id,),
        )
        assert row is not None  # an aggregate has one row
        return int(row[0]), int(row[1])

    def uncounted_hands(self, limit: int) -> list[tuple[int, int]]:
        """Stored hand records not yet counted in the statistics, oldest first: (game, hand)."""
        return [
            (int(r[0]), int(r[1]))
            for r in self.driver.all(
                "SELECT h.game_id, h.hand_no FROM hand_records h LEFT JOIN stats_hands s"
                " ON s.game_id = h.game_id AND s.hand_no = h.hand_no WHERE s.game_id IS NULL"
                " ORDER BY h.game_id, h.hand_no LIMIT ?",
                (limit,),
            )
        ]

    def stats_hand_input(self, game_id: int, hand_no: int) -> tuple[StoredGame, list[Any]] | None:
        """What counting one hand needs: its game as stored (seats, actions with their times) and
        the game's hand records up to this one, in order; None if the hand has no record."""
        game = self.load_game(game_id)
        if game is None:
            return None
        records = [
            json.loads(r[0])
            for r in self.driver.all(
                "SELECT record FROM hand_records WHERE game_id = ? AND hand_no <= ?"
                " ORDER BY hand_no",
                (game_id, hand_no),
            )
        ]
        if not records or records[-1].get("hand_number") != hand_no:
            return None
        return game, records

    def count_dd_hand(
        self, game_id: int, hand_no: int, lost: Mapping[int, tuple[int, int]]
    ) -> bool:
        """Mark a hand analysed double-dummy and add to each account (seats it held, tricks its
        cards cost), a hand a seat as `player_stats` counts them, once: False, and nothing
        written, if it was analysed already."""
        fresh = self.driver.count(
            "INSERT INTO dd_hands (game_id, hand_no, analysed_at) VALUES (?, ?, ?)"
            " ON CONFLICT (game_id, hand_no) DO NOTHING",
            (game_id, hand_no, stamp()),
        )
        if fresh != 1:
            return False
        self.driver.many(
            "INSERT INTO dd_stats (account_id, hands, tricks_lost, updated_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (account_id) DO UPDATE SET hands = dd_stats.hands + excluded.hands,"
            " tricks_lost = dd_stats.tricks_lost + excluded.tricks_lost,"
            " updated_at = excluded.updated_at",
            [(account, seats, tricks, stamp()) for account, (seats, tricks) in lost.items()],
        )
        return True

    def dd_stats(self, account_id: int) -> tuple[int, int]:
        """(hands analysed double-dummy, tricks its cards cost in them) of an account."""
        row = self.driver.one(
            "SELECT hands, tricks_lost FROM dd_stats WHERE account_id = ?", (account_id,)
        )
        return (0, 0) if row is None else (int(row[0]), int(row[1]))

    def forget_stats(self) -> None:
        """Empty the statistics and the note of what they counted (before a rebuild); the
        double-dummy counters (`dd_stats`) stay, as a rebuild does not run the solver again."""
        self.driver.run("DELETE FROM player_stats")
        self.driver.run("DELETE FROM stats_hands")

    # ---------------------------------------------------------------- house entrants

    def add_house_entrant(self, account_id: int, spec: str, *, added_at: float) -> bool:
        """Enter a built-in bot for good; False (nothing written) if it already was."""
        added = self.driver.count(
            "INSERT INTO ladder_entrants (account_id, house_spec, added_at) VALUES (?, ?, ?)"
            " ON CONFLICT DO NOTHING",
            (account_id, spec, added_at),
        )
        return added == 1

    def house_entrants(self) -> list[HouseEntrant]:
        """Every house entrant, by account id."""
        return [
            HouseEntrant(int(r[0]), str(r[1]), str(r[2]))
            for r in self.driver.all(
                "SELECT e.account_id, a.name, e.house_spec FROM ladder_entrants e"
                " JOIN accounts a ON a.id = e.account_id WHERE e.house_spec IS NOT NULL"
                " ORDER BY e.account_id"
            )
        ]

    # ---------------------------------------------------------------- the operator

    def add_operator_token(self, digest: bytes) -> None:
        """Keep the digest of a new operator token."""
        self.driver.run(
            "INSERT INTO operator_tokens (digest, made_at) VALUES (?, ?)", (digest, stamp())
        )

    def operator_token_known(self, digest: bytes) -> bool:
        """Whether an operator token with this digest was made."""
        return (
            self.driver.one("SELECT 1 FROM operator_tokens WHERE digest = ?", (digest,)) is not None
        )

    def set_ban(self, kind: str, target: str, reason: str | None) -> None:
        """Ban an account or a network (`BanRow`); banning it again replaces the reason."""
        self.driver.run(
            "INSERT INTO bans (kind, target, reason, made_at) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (kind, target) DO UPDATE SET reason = excluded.reason",
            (kind, target, reason, stamp()),
        )

    def remove_ban(self, kind: str, target: str) -> bool:
        """Lift a ban; False if there was none."""
        return (
            self.driver.count("DELETE FROM bans WHERE kind = ? AND target = ?", (kind, target)) == 1
        )

    def bans(self) -> list[BanRow]:
        """Every ban in force, oldest first."""
        return [
            BanRow(str(r[0]), str(r[1]), r[2])
            for r in self.driver.all("SELECT kind, target, reason FROM bans ORDER BY id")
        ]

    # ---------------------------------------------------------------- events (server/events/)

    def insert_event(
        self,
        *,
        name: str,
        host: int | None,
        settings: Mapping[str, Any],
        secret: bytes,
        seed: int,
        starts_at: float,
    ) -> int:
        """A new event, registering; returns its number (numbers grow)."""
        number = self.driver.insert(
            "INSERT INTO events (name, host, settings, secret, seed, status, starts_at,"
            " created_at) VALUES (?, ?, ?, ?, ?, 'registering', ?, ?)",
            (name, host, json.dumps(dict(settings)), secret, seed, starts_at, stamp()),
            "id",
        )
        assert number is not None  # a plain INSERT inserts or raises
        return number

    def event(self, number: int) -> EventRow | None:
        if not storable(number):
            return None
        row = self.driver.one(f"SELECT {_EVENT} FROM events WHERE id = ?", (number,))
        return None if row is None else _event(row)

    def events(self, status: str | None = None, limit: int = 100) -> list[EventRow]:
        """Events, newest first, at most `limit`; only those in `status` if given."""
        if status is None:
            rows = self.driver.all(
                f"SELECT {_EVENT} FROM events ORDER BY id DESC LIMIT ?", (limit,)
            )
        else:
            rows = self.driver.all(
                f"SELECT {_EVENT} FROM events WHERE status = ? ORDER BY id DESC LIMIT ?",
                (status, limit),
            )
        return [_event(row) for row in rows]

    def open_events_hosted(self, host: int) -> int:
        """How many events account `host` announced that are not over yet."""
        row = self.driver.one(
            "SELECT COUNT(*) FROM events WHERE host = ? AND status IN ('registering', 'running')",
            (host,),
        )
        return int(row[0]) if row is not None else 0

    def set_event_status(self, number: int, status: str, round_no: int | None = None) -> None:
        """An event's status (and the round in progress, if given); an event over is stamped."""
        over = status in ("finished", "cancelled")
        self.driver.run(
            "UPDATE events SET status = ?, round = COALESCE(?, round),"
            " finished_at = CASE WHEN ? = 1 THEN ? ELSE finished_at END WHERE id = ?",
            (status, round_no, 1 if over else 0, stamp(), number),
        )

    def add_event_entrant(self, number: int, entrant: EventEntrantRow) -> bool:
        """One entrant (or registration); False (nothing written) if its key is there already."""
        added = self.driver.count(
            "INSERT INTO event_entrants (event_id, key, members, partner, house, registered_at,"
            " withdrawn, forfeits) VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            (
                number,
                entrant.key,
                json.dumps(list(entrant.members)),
                entrant.partner,
                entrant.house,
                entrant.registered_at,
                int(entrant.withdrawn),
                entrant.forfeits,
            ),
        )
        return added == 1

    def event_entrants(self, number: int) -> list[EventEntrantRow]:
        """An event's entrants in order of registration (then of key: `e2` before `e10`)."""
        rows = self.driver.all(
            "SELECT key, members, partner, house, registered_at, withdrawn, forfeits"
            " FROM event_entrants WHERE event_id = ? ORDER BY registered_at, LENGTH(key), key",
            (number,),
        )
        return [
            EventEntrantRow(
                key=str(r[0]),
                members=tuple(int(m) for m in json.loads(r[1])),
                partner=r[2],
                house=r[3],
                registered_at=float(r[4]),
                withdrawn=bool(r[5]),
                forfeits=int(r[6]),
            )
            for r in rows
        ]

    def update_event_entrant(
        self, number: int, key: str, *, withdrawn: bool, forfeits: int
    ) -> bool:
        """An entrant's withdrawal and forfeits; False if the event has no such entrant."""
        return (
            self.driver.count(
                "UPDATE event_entrants SET withdrawn = ?, forfeits = ? WHERE event_id = ? AND key = ?",
                (int(withdrawn), forfeits, number, key),
            )
            == 1
        )

    def remove_event_entrant(self, number: int, key: str) -> None:
        self.driver.run("DELETE FROM event_entrants WHERE event_id = ? AND key = ?", (number, key))

    def remove_event_entrants(self, number: int) -> None:
        """Every entrant row of an event (the registrations, replaced at the start by the
        entrants formed from them)."""
        self.driver.run("DELETE FROM event_entrants WHERE event_id = ?", (number,))

    def put_event_round(self, number: int, round_no: int, plan: Any, status: str) -> None:
        """A round's pairing and status (a round stored again keeps its first plan)."""
        self.driver.run(
            "INSERT INTO event_rounds (event_id, round, plan, status) VALUES (?, ?, ?, ?)"
            " ON CONFLICT (event_id, round) DO UPDATE SET status = excluded.status",
            (number, round_no, json.dumps(plan), status),
        )

    def event_rounds(self, number: int) -> list[tuple[int, Any, str]]:
        """(round, plan, status) of every round paired, in order."""
        return [
            (int(r[0]), json.loads(r[1]), str(r[2]))
            for r in self.driver.all(
                "SELECT round, plan, status FROM event_rounds WHERE event_id = ? ORDER BY round",
                (number,),
            )
        ]

    def put_event_table(
        self, number: int, round_no: int, table_no: int, table_id: str, game_id: int | None
    ) -> None:
        """A round's table (and, once known, its game)."""
        self.driver.run(
            "INSERT INTO event_tables (event_id, round, table_no, table_id, game_id)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT (event_id, round, table_no) DO UPDATE SET"
            " table_id = excluded.table_id, game_id = COALESCE(excluded.game_id,"
            " event_tables.game_id)",
            (number, round_no, table_no, table_id, game_id),
        )

    def event_tables(self, number: int) -> list[EventTableRow]:
        """Every table of an event, by round and number."""
        return [
            EventTableRow(int(r[0]), int(r[1]), str(r[2]), _int(r[3]))
            for r in self.driver.all(
                "SELECT round, table_no, table_id, game_id FROM event_tables WHERE event_id = ?"
                " ORDER BY round, table_no",
                (number,),
            )
        ]

    def game_seats(self, game_id: int) -> list[dict[str, Any]] | None:
        """Who played each seat of a game, as the table last stored it (`abandoned` marks a seat
        its player gave up), or None for no such game."""
        if not storable(game_id):
            return None
        row = self.driver.one("SELECT seats FROM games WHERE id = ?", (game_id,))
        return None if row is None else list(json.loads(row[0]))
