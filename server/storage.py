"""SQLite storage: schema and migrations, one writer task with group commit.

Every write goes through `Store`, whose single writer task owns the connection. Requests queue in a
bounded channel; the writer takes everything that is waiting and runs it in ONE transaction in a
worker thread (group commit), so actions of many tables that arrive together cost one commit. An
`await store.append_action(...)` returns only once its transaction has committed: the table sends no
event about an action before it is committed.

How far a commit survives is the `Durability` setting: `normal` (the default: WAL with
`synchronous=NORMAL`; a committed transaction is in the WAL file when the call returns, so it survives
the server process being killed, but an OS crash or power loss may lose the last commits) or `full`
(`synchronous=FULL`: the WAL is fsynced at every commit, so a commit also survives power loss, at the
cost of one fsync on every action's path).

The SQL itself lives in plain functions over a `sqlite3.Connection` (`server.queries`), so the
synchronous `export` command can use them without trio.
"""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, TypeVar

import structlog
import trio

from server import queries
from server.ladder.store import LADDER_MIGRATION

log = structlog.get_logger("server.storage")

T = TypeVar("T")

# Each entry moves the schema from version i to i + 1; applied in order, each in its own transaction.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE accounts (
        id          INTEGER PRIMARY KEY,
        name        TEXT NOT NULL UNIQUE COLLATE NOCASE,
        token_salt  BLOB,
        token_hash  BLOB,
        is_bot      INTEGER NOT NULL DEFAULT 0,
        is_guest    INTEGER NOT NULL DEFAULT 0,
        created_at  REAL NOT NULL
    );
    CREATE TABLE tables (
        id          TEXT PRIMARY KEY,
        config      TEXT NOT NULL,
        created_at  REAL NOT NULL,
        closed_at   REAL
    );
    CREATE TABLE games (
        id          INTEGER PRIMARY KEY,
        table_id    TEXT NOT NULL REFERENCES tables(id),
        game        TEXT NOT NULL,
        ruleset     TEXT NOT NULL,
        seats       TEXT NOT NULL,
        status      TEXT NOT NULL CHECK (status IN ('running', 'finished', 'aborted')),
        created_at  REAL NOT NULL,
        finished_at REAL
    );
    CREATE INDEX games_status ON games(status);
    CREATE TABLE hands (
        game_id     INTEGER NOT NULL REFERENCES games(id),
        hand_no     INTEGER NOT NULL,
        seed        TEXT NOT NULL,
        commitment  TEXT NOT NULL,
        first_seq   INTEGER NOT NULL,
        PRIMARY KEY (game_id, hand_no)
    );
    CREATE TABLE actions (
        game_id     INTEGER NOT NULL REFERENCES games(id),
        seq         INTEGER NOT NULL,
        seat        INTEGER NOT NULL,
        action      TEXT NOT NULL,
        source      TEXT NOT NULL,
        created_at  REAL NOT NULL,
        PRIMARY KEY (game_id, seq)
    );
    CREATE TABLE hand_records (
        game_id     INTEGER NOT NULL REFERENCES games(id),
        hand_no     INTEGER NOT NULL,
        record      TEXT NOT NULL,
        created_at  REAL NOT NULL,
        PRIMARY KEY (game_id, hand_no)
    );
    CREATE TABLE results (
        game_id     INTEGER NOT NULL REFERENCES games(id),
        seat        INTEGER NOT NULL,
        account_id  INTEGER REFERENCES accounts(id),
        score       INTEGER NOT NULL,
        place       INTEGER NOT NULL,
        PRIMARY KEY (game_id, seat)
    );
    CREATE TABLE ratings (
        account_id  INTEGER NOT NULL REFERENCES accounts(id),
        game        TEXT NOT NULL,
        mu          REAL NOT NULL,
        sigma       REAL NOT NULL,
        games       INTEGER NOT NULL DEFAULT 0,
        updated_at  REAL NOT NULL,
        PRIMARY KEY (account_id, game)
    );
    CREATE TABLE ladder_games (
        game_id     INTEGER PRIMARY KEY REFERENCES games(id),
        rated_at    REAL NOT NULL,
        changes     TEXT NOT NULL
    );
    """,
    # The ladder's own tables (server/ladder/store.py). Written with IF NOT EXISTS: a database from
    # before this migration already has them, made by the ladder at its start.
    LADDER_MIGRATION,
    # A table still waiting for players is reopened after a restart: `seats` holds its seated
    # account ids (JSON, one entry per seat; NULL for a table that is not to be reopened: the
    # ladder's, and every table from before this migration), `creator` the account that opened it.
    # `bank_left_ms`: what was left of the actor's time bank once its action was made (NULL when
    # the table has no bank), so a restart gives each seat its bank back as it was.
    """
    ALTER TABLE tables ADD COLUMN seats TEXT;
    ALTER TABLE tables ADD COLUMN creator INTEGER;
    ALTER TABLE actions ADD COLUMN bank_left_ms INTEGER
    """,
    # Unused guests expire (`server.queries.expire_guests`): `last_seen_at` is when a guest last
    # logged in, or was last found connected or seated (NULL: not since it was made); the index
    # finds an account's results without reading them all.
    """
    ALTER TABLE accounts ADD COLUMN last_seen_at REAL;
    CREATE INDEX results_account ON results(account_id)
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)


class Durability(StrEnum):
    """How far a committed transaction survives (the SQLite `synchronous` pragma, in WAL mode)."""

    # A commit survives a crash or kill of the server process; an OS crash or power loss may
    # lose the last group commits (the WAL is fsynced at checkpoints, not at every commit).
    normal = "normal"
    # A commit also survives power loss: one fsync of the WAL per group commit.
    full = "full"


# What `PRAGMA synchronous` reads back for each setting.
SYNCHRONOUS_LEVEL: dict[Durability, int] = {Durability.normal: 1, Durability.full: 2}


class StorageError(Exception):
    """The database could not be opened, migrated or written; the message says which file and why."""


class StoreClosed(StorageError):
    """A request arrived after the store began shutting down; it was not written."""


def connect(path: Path | str, durability: Durability = Durability.normal) -> sqlite3.Connection:
    """Open (creating if needed) and migrate the database at `path`, committing with `durability`.

    Raises `StorageError` for a file that is not a database or was written by a newer version; the
    file is left as it was.
    """
    path = Path(path)
    if str(path) != ":memory:":
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves so a batch is exactly one transaction.
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        # See `Durability`: NORMAL survives a killed process, FULL also power loss (an fsync per
        # commit; group commit keeps their number small).
        conn.execute(f"PRAGMA synchronous={Durability(durability).value.upper()}")
        conn.execute("PRAGMA foreign_keys=ON")
        conn.execute("PRAGMA busy_timeout=5000")
        migrate(conn)
    except sqlite3.DatabaseError as exc:
        raise StorageError(f"cannot open database {path}: {exc}") from exc
    return conn


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the schema to `SCHEMA_VERSION`; returns the version found before migrating.

    Each migration commits with its `user_version` bump, so a crash mid-way leaves a consistent
    older version that the next start continues from.
    """
    found = int(conn.execute("PRAGMA user_version").fetchone()[0])
    if found > SCHEMA_VERSION:
        raise StorageError(
            f"database schema version {found} is newer than this server ({SCHEMA_VERSION})"
        )
    for version in range(found, SCHEMA_VERSION):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[version].split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version + 1}")
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        log.info("schema_migrated", to_version=version + 1)
    return found


@dataclass
class _Job:
    """One request to the writer: run `fn` in the batch transaction, hand back its result."""

    fn: Callable[[sqlite3.Connection], Any]
    done: trio.Event = field(default_factory=trio.Event)
    result: Any = None
    error: BaseException | None = None


# Inline commits checkpoint the WAL from a worker thread, on a connection of its own, after this
# many batches (a batch writes a few pages; SQLite's own automatic checkpoint is at 1,000 pages).
CHECKPOINT_EVERY = 256


class Store:
    """The database, written by one task with group commit.

    Use `async with open_store(path) as store:`; every coroutine method returns once its work has
    committed (or raises `StorageError`, leaving nothing of that request written).

    `inline` (what `open_store` does under `Durability.normal`): a batch is committed in the trio
    thread itself. Without an fsync a commit is a write to the WAL file, far cheaper than the two
    thread switches of handing it to a worker; the WAL's checkpoints (which do fsync) are taken off
    the event loop instead, in a worker thread on a second connection to `path`. Under `full`
    every batch goes to a worker thread, so the event loop never waits for the disk.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        *,
        queue_size: int = 1024,
        max_batch: int = 512,
        inline: bool = False,
        path: Path | str | None = None,
    ):
        self.conn = conn
        self.inline = inline
        self._path = None if path is None or str(path) == ":memory:" else Path(path)
        if inline and self._path is not None:
            # Checkpoints are ours to run (`_maybe_checkpoint`), not SQLite's inside a commit.
            conn.execute("PRAGMA wal_autocheckpoint=0")
        self._since_checkpoint = 0
        self._checkpointing = False
        self.checkpoints = 0  # checkpoints taken off the loop, for tests and stats
        self._nursery: trio.Nursery | None = None
        # The `PRAGMA synchronous` level in effect (1 NORMAL, 2 FULL), read back from SQLite.
        self.synchronous = int(conn.execute("PRAGMA synchronous").fetchone()[0])
        self._send, self._receive = trio.open_memory_channel[_Job](queue_size)
        self._max_batch = max_batch
        self.batches = 0  # committed transactions, for tests and stats
        self.jobs = 0

    async def call(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run `fn(conn)` inside the next batch transaction and return its result once committed."""
        job = _Job(fn)
        try:
            try:
                # Queued without yielding when there is room (nearly always): the wait below is
                # the caller's one pause per request.
                self._send.send_nowait(job)
            except trio.WouldBlock:
                await self._send.send(job)
        except (trio.ClosedResourceError, trio.BrokenResourceError) as exc:
            raise StoreClosed("the store is shutting down") from exc
        # The write is shielded from our caller's cancellation by design: once queued it will commit,
        # and we wait for it so that "returned" always means "on disk". (The shield is raised only
        # if a cancellation arrives: a shielded scope for every request costs every action.)
        try:
            await job.done.wait()
        except trio.Cancelled:
            with trio.CancelScope(shield=True):
                await job.done.wait()
            raise
        if job.error is not None:
            raise job.error
        return job.result  # type: ignore[no-any-return]

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The writer task: until `close()`, take every waiting job and commit them together."""
        task_status.started()
        # Shielded: a cancelled server still commits what it queued; only close() ends the loop.
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                await self._drain()

    async def _drain(self) -> None:
        async with self._receive:
            while True:
                try:
                    first = await self._receive.receive()
                except trio.EndOfChannel:
                    return
                batch = [first]
                while len(batch) < self._max_batch:
                    try:
                        batch.append(self._receive.receive_nowait())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                try:
                    if self.inline:
                        self._commit_batch(batch)
                    else:
                        await trio.to_thread.run_sync(self._commit_batch, batch)
                except BaseException as exc:  # pragma: no cover - a bug, but never strand a waiter
                    for job in batch:
                        job.error = StorageError(f"writer failed: {exc!r}")
                    raise
                finally:
                    for job in batch:
                        job.done.set()
                if self.inline:
                    self._maybe_checkpoint()

    def _maybe_checkpoint(self) -> None:
        """Every `CHECKPOINT_EVERY` inline batches, start a checkpoint in a worker thread (one at
        a time). PASSIVE: it copies what it can without holding up the writer."""
        self._since_checkpoint += 1
        if (
            self._since_checkpoint < CHECKPOINT_EVERY
            or self._checkpointing
            or self._path is None
            or self._nursery is None
        ):
            return
        self._since_checkpoint = 0
        self._checkpointing = True
        self._nursery.start_soon(self._checkpoint_off_loop)

    async def _checkpoint_off_loop(self) -> None:
        try:
            await trio.to_thread.run_sync(_checkpoint, self._path)
            self.checkpoints += 1
        except sqlite3.Error as exc:
            log.warning("checkpoint_failed", error=str(exc))
        finally:
            self._checkpointing = False

    def _commit_batch(self, batch: list[_Job]) -> None:
        """Run the batch in one transaction; a failing job is rolled back to its savepoint alone."""
        conn = self.conn
        try:
            conn.execute("BEGIN IMMEDIATE")
            for job in batch:
                conn.execute("SAVEPOINT job")
                try:
                    job.result = job.fn(conn)
                except Exception as exc:
                    conn.execute("ROLLBACK TO job")
                    job.error = (
                        exc
                        if isinstance(exc, StorageError | KeyError | ValueError)
                        else StorageError(f"write failed: {exc}")
                    )
                conn.execute("RELEASE job")
            conn.execute("COMMIT")
        except sqlite3.Error as exc:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            for job in batch:
                job.result = None
                job.error = StorageError(f"transaction failed: {exc}")
        self.batches += 1
        self.jobs += len(batch)

    def close(self) -> None:
        """Stop accepting requests; the writer finishes those already queued, then returns."""
        self._send.close()

    # Typed conveniences over `server.queries`; each returns once committed.

    async def append_action(
        self,
        game_id: int,
        seq: int,
        seat: int,
        action: Any,
        source: str,
        *,
        bank_left_ms: int | None = None,
    ) -> None:
        """Persist one applied action. Raises `StorageError` on a duplicate `seq` (nothing written)."""
        await self.call(
            lambda c: queries.insert_action(
                c, game_id, seq, seat=seat, action=action, source=source, bank_left_ms=bank_left_ms
            )
        )

    async def get(self, fn: Callable[..., T], *args: Any) -> T:
        """Run the query function `fn(conn, *args)` in the writer and return its result."""
        return await self.call(lambda c: fn(c, *args))


@asynccontextmanager
async def open_store(
    path: Path | str, durability: Durability = Durability.normal
) -> AsyncIterator[Store]:
    """`async with open_store(path) as store:` opens and migrates the file and runs the writer.

    On exit (also by cancellation or error) the writer first commits every queued request, then
    the WAL is checkpointed and the file closed, so the database is left whole.
    """
    conn = await trio.to_thread.run_sync(connect, path, durability)
    store = Store(conn, inline=Durability(durability) is Durability.normal, path=path)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(store.run)
            try:
                yield store
            finally:
                store.close()
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(_close_connection, conn)


def _checkpoint(path: Path | None) -> None:
    """A PASSIVE checkpoint of the WAL at `path`, on a short-lived connection of its own."""
    assert path is not None
    conn = sqlite3.connect(str(path), isolation_level=None)
    try:
        conn.execute("PRAGMA busy_timeout=5000")
        conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    finally:
        conn.close()


def _close_connection(conn: sqlite3.Connection) -> None:
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        conn.close()
