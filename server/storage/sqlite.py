"""The SQLite engine: opening and migrating a file, and `SqliteDatabase`, the writer's connection.

One file in WAL mode. Under `Durability.normal` (`synchronous=NORMAL`) a commit is a write to the
WAL, no fsync, so the writer commits in the event loop's thread (`commits_inline`); the WAL is
checkpointed into the main file by the store itself, off the loop (see `SqliteDatabase.upkeep`),
which also keeps the WAL from growing without bound under load. Under `Durability.full` every
commit fsyncs the WAL and runs in a worker thread, and SQLite checkpoints inside those commits.

A server opens the file with `open_for_serving`, which first takes the database's lock
(`server.storage.lock`): one server per database. Commands use `server.storage.direct`.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import structlog
import trio

from server.storage.engine import Database, Durability, Job
from server.storage.errors import (
    DatabaseFolderMissing,
    NotADatabase,
    SchemaTooNew,
    StorageError,
    StoreUnavailable,
)
from server.storage.lock import DatabaseLock
from server.storage.schema import MIGRATIONS, SCHEMA_VERSION
from server.storage.sqlite_driver import sqlite_tx
from server.storage.tx import Tx

log = structlog.get_logger("server.storage")

MEMORY = ":memory:"

# What `PRAGMA synchronous` reads back for each setting.
SYNCHRONOUS_LEVEL: dict[Durability, int] = {Durability.normal: 1, Durability.full: 2}

# Under `normal` the store checkpoints the WAL itself, in the background, once this many rows were
# written since the last checkpoint, or after this many batches, whichever comes first. (SQLite's
# own automatic checkpoint runs inside a commit, which would put its fsyncs on the event loop.)
CHECKPOINT_ROWS = 1024
CHECKPOINT_BATCHES = 256
# Once a background checkpoint finds the WAL this long (in pages: 16 MB of 4 KB pages), the writer
# pauses for a moment while a second checkpoint completes it, so that the WAL starts again from its
# head (see `SqliteDatabase.upkeep`): the WAL stays about this size under any load.
WAL_RESET_PAGES = 4096
# When the WAL is reset, a file that grew above this many bytes is truncated to it.
WAL_SIZE_LIMIT = 64 * 1024 * 1024


def is_memory(path: Path | str) -> bool:
    return str(path) == MEMORY


def _configure(conn: sqlite3.Connection, durability: Durability) -> None:
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    # See `Durability`: NORMAL survives a killed process, FULL also power loss (an fsync per
    # commit; group commit keeps their number small).
    conn.execute(f"PRAGMA synchronous={Durability(durability).value.upper()}")
    conn.execute("PRAGMA foreign_keys=ON")
    conn.execute("PRAGMA busy_timeout=5000")
    conn.execute(f"PRAGMA journal_size_limit={WAL_SIZE_LIMIT}")


def connect(path: Path | str, durability: Durability = Durability.normal) -> sqlite3.Connection:
    """Open (creating the file if needed) and migrate the database at `path`; no lock is taken.

    For the server use `open_for_serving`; for commands, `server.storage.direct`. This one is for
    tools and tests that want the raw connection. Raises `DatabaseFolderMissing` when the folder
    does not exist, `NotADatabase` for a file that is not one, `SchemaTooNew` for a file from a
    newer server; the file is left as it was.
    """
    if not is_memory(path):
        path = Path(path)
        if not path.parent.is_dir():
            raise DatabaseFolderMissing(path)
    try:
        # isolation_level=None: we issue BEGIN/COMMIT ourselves so a batch is exactly one transaction.
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise StorageError(f"cannot open database {path}: {exc}") from exc
    try:
        _configure(conn, durability)
        migrate(conn, path)
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise NotADatabase(f"cannot open database {path}: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return conn


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(
    conn: sqlite3.Connection, path: Path | str = "database", *, to: int = SCHEMA_VERSION
) -> int:
    """Bring the schema to `SCHEMA_VERSION` (or only as far as version `to`, for a copy of an
    older database: `server.storage.dbcopy`); returns the version found before migrating.

    Each migration commits with its `user_version` bump, so a crash mid-way leaves a consistent
    older version that the next start continues from. The version is read again inside each
    migration's transaction, so two processes migrating at once apply each step once.
    """
    found = schema_version(conn)
    if found > SCHEMA_VERSION:
        raise SchemaTooNew(path, found, SCHEMA_VERSION)
    for version in range(found, min(to, SCHEMA_VERSION)):
        conn.execute("BEGIN IMMEDIATE")
        try:
            if schema_version(conn) > version:
                conn.execute("COMMIT")  # someone else applied this one meanwhile
                continue
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


def open_for_serving(path: Path | str, durability: Durability) -> SqliteDatabase:
    """Take the database's lock, then open and migrate it for the writer (blocking: call it in a
    worker thread). Raises `DatabaseInUse` when another server holds it, or what `connect`
    raises; nothing is held then. `:memory:` has no lock (no other process can open it)."""
    lock = None
    if not is_memory(path):
        path = Path(path)
        if not path.parent.is_dir():
            raise DatabaseFolderMissing(path)
        lock = DatabaseLock.acquire(path)
    try:
        conn = connect(path, durability)
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    return SqliteDatabase(conn, durability, None if is_memory(path) else Path(path), lock)


class SqliteDatabase:
    """The writer's SQLite connection (a `server.storage.engine.Database`).

    `commits_inline` under `Durability.normal` on a file: the WAL's checkpoints are then ours to
    run, off the loop, on a second connection (`upkeep`), not SQLite's inside a commit.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        durability: Durability,
        path: Path | None,
        lock: DatabaseLock | None = None,
    ) -> None:
        self.conn = conn
        self.tx = sqlite_tx(conn)
        self.path = path
        self.lock = lock
        self.commits_inline = Durability(durability) is Durability.normal
        self.synchronous: int | None = int(conn.execute("PRAGMA synchronous").fetchone()[0])
        self._checkpoints_ours = self.commits_inline and path is not None
        if self._checkpoints_ours:
            conn.execute("PRAGMA wal_autocheckpoint=0")
        self._checkpointer: sqlite3.Connection | None = None
        self._copying = False  # a background checkpoint is running
        self._copied = False  # one finished: the writer looks at what it found
        self._rows_at_checkpoint = conn.total_changes
        self._batches_since = 0
        self.wal_pages = 0  # the WAL's length in pages, as the last checkpoint found it
        self.checkpoints = 0  # completed checkpoints: each time the WAL starts again from its head

    # ---------------------------------------------------------------- commits

    #: A file does not go away between batches: nothing to probe.
    probe_every: float | None = None

    def probe(self) -> None:
        """Nothing to do: a disk that fills, or a file made read-only, shows in a commit."""

    def commit_batch(self, jobs: Sequence[Job]) -> None:
        conn = self.conn
        tx = self.tx
        try:
            conn.execute("BEGIN IMMEDIATE")
            for job in jobs:
                conn.execute("SAVEPOINT job")
                try:
                    job.result = job.fn(tx)
                except Exception as exc:
                    if _out_of_service(exc) is not None:
                        raise
                    conn.execute("ROLLBACK TO job")
                    job.error = (
                        exc
                        if isinstance(exc, StorageError | KeyError | ValueError)
                        else StorageError(f"write failed: {exc}")
                    )
                conn.execute("RELEASE job")
            conn.execute("COMMIT")
        except Exception as exc:
            reason = _out_of_service(exc)
            if reason is None and not isinstance(exc, sqlite3.Error):
                raise  # pragma: no cover - a bug in the loop above, not in a job
            with contextlib.suppress(sqlite3.Error):
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
            for job in jobs:
                job.result = None
                job.error = (
                    None if reason is not None else StorageError(f"transaction failed: {exc}")
                )
            if reason is not None:
                # Not the requests' fault: the writer keeps them and tries again (the disk may
                # get room, the file its write permission back).
                raise StoreUnavailable(
                    f"cannot write {self.path or 'the database'}: {reason}"
                ) from None

    # ---------------------------------------------------------------- checkpoints

    async def upkeep(self, nursery: trio.Nursery) -> None:
        """Keep the WAL bounded, in two steps, neither of which waits for the disk on the loop.

        1. Once enough was written, a PASSIVE checkpoint copies the WAL into the main file in a
           worker thread while the writer goes on committing.
        2. That alone never ends: the WAL is only reset (written again from its head) when a
           checkpoint has copied every frame and no commit came after it, and under load a commit
           always does. So once step 1 finds the WAL longer than `WAL_RESET_PAGES`, the writer
           task waits (the event loop does not) while a second checkpoint copies what was
           committed meanwhile: a few pages and two fsyncs. The next commit starts the WAL from
           its head, and `journal_size_limit` truncates a file that grew past `WAL_SIZE_LIMIT`.
        """
        if not self._checkpoints_ours:
            return
        self._batches_since += 1
        if self._copied:
            self._copied = False
            if self.wal_pages >= WAL_RESET_PAGES:
                # Nothing commits until this returns: the checkpoint can copy every frame.
                busy, log_pages, copied = await trio.to_thread.run_sync(self._checkpoint)
                if not busy and copied == log_pages:
                    self.checkpoints += 1
                self.wal_pages = log_pages
            return
        if self._copying:
            return
        written = self.conn.total_changes - self._rows_at_checkpoint
        if written < CHECKPOINT_ROWS and self._batches_since < CHECKPOINT_BATCHES:
            return
        self._rows_at_checkpoint = self.conn.total_changes
        self._batches_since = 0
        self._copying = True
        nursery.start_soon(self._copy_in_background)

    async def _copy_in_background(self) -> None:
        try:
            _busy, log_pages, _copied = await trio.to_thread.run_sync(self._checkpoint)
            self.wal_pages = log_pages
            self._copied = True
        except sqlite3.Error as exc:
            log.warning("checkpoint_failed", error=str(exc))
        finally:
            self._copying = False

    def _checkpoint(self) -> tuple[int, int, int]:
        """A PASSIVE checkpoint on the checkpointer's own connection (opened on first use):
        (busy, pages in the WAL, pages copied)."""
        if self._checkpointer is None:
            assert self.path is not None
            self._checkpointer = sqlite3.connect(
                str(self.path), isolation_level=None, check_same_thread=False
            )
            self._checkpointer.execute("PRAGMA busy_timeout=5000")
        row = self._checkpointer.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        return int(row[0]), int(row[1]), int(row[2])

    # ---------------------------------------------------------------- closing

    def close(self) -> None:
        """Checkpoint the whole WAL into the file and truncate it, close, and release the lock."""
        try:
            if self._checkpointer is not None:
                self._checkpointer.close()
            if self.path is not None:
                self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            self.conn.close()
            if self.lock is not None:
                self.lock.release()


def _conforms(database: SqliteDatabase) -> tuple[Database, Tx]:
    return database, database.tx  # mypy checks here that these are a Database and a Tx


#: SQLite's result codes that say the file cannot be written for now, not that a request is wrong.
_OUT_OF_SERVICE = ("SQLITE_FULL", "SQLITE_READONLY", "SQLITE_IOERR")


def _out_of_service(exc: BaseException) -> str | None:
    """Why the database cannot be written just now (the disk is full, the file read-only, an I/O
    error), if that is what `exc` (or what it was raised from) says; else None."""
    seen: BaseException | None = exc
    for _ in range(8):  # bounded: a chain of causes is short
        if seen is None:
            return None
        if isinstance(seen, sqlite3.Error):
            name = getattr(seen, "sqlite_errorname", "") or ""
            if name.startswith(_OUT_OF_SERVICE):
                return str(seen)
        seen = seen.__cause__ or seen.__context__
    return None
