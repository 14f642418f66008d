"""One transaction on a database from a command, without a server's writer task.

Either takes a SQLite file's path or a PostgreSQL URL (`server.storage.target`). In PostgreSQL a
read is one REPEATABLE READ, READ ONLY transaction (one snapshot), and a write migrates the
database first if it is older, as a server would (servers on one PostgreSQL share it by design).

`read_transaction` is for commands that only read (`spades-server export`): it never writes,
never migrates, takes no lock, and works while a server serves the database, seeing one consistent
state of it. `write_transaction` is for a command that adds to a database
(`spades-server ladder add-house-bots`): it also works beside a running server, whose writer
SQLite then serialises with it (the command's transaction is short); on a database no server holds
it takes the lock for its duration and migrates the file first, as a server would.

    with read_transaction(path) as tx:
        for record in tx.hand_records():
            ...
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from server.storage.errors import (
    DatabaseFolderMissing,
    DatabaseInUse,
    NoDatabase,
    NotADatabase,
    SchemaTooNew,
    StorageError,
)
from server.storage.lock import DatabaseLock, lock_path_of, read_holder
from server.storage.schema import SCHEMA_VERSION
from server.storage.sqlite import connect, schema_version
from server.storage.sqlite_driver import sqlite_tx
from server.storage.target import Target, is_postgres
from server.storage.tx import Tx


def _open_existing(path: Path) -> sqlite3.Connection:
    """The file as it is (never created, never migrated), checked to be one of ours."""
    if not path.is_file():
        raise NoDatabase(path)
    try:
        # mode=rw: never create the file (a plain connect would make an empty one).
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=rw",  # percent-encoded: any file name will do
            uri=True,
            isolation_level=None,
            check_same_thread=False,
        )
    except sqlite3.Error as exc:
        raise StorageError(f"cannot open database {path}: {exc}") from exc
    try:
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA busy_timeout=5000")
        found = schema_version(conn)
        if found > SCHEMA_VERSION:
            raise SchemaTooNew(path, found, SCHEMA_VERSION)
        if found == 0 and conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0:
            raise NoDatabase(path)  # an empty file: nothing was ever stored here
    except sqlite3.DatabaseError as exc:
        conn.close()
        raise NotADatabase(f"cannot open database {path}: {exc}") from exc
    except BaseException:
        conn.close()
        raise
    return conn


@contextmanager
def read_transaction(path: Target) -> Iterator[Tx]:
    """A read-only transaction on the database at `path`, as it is (see the module's doc).

    Raises `NoDatabase` (also when its folder does not exist), `NotADatabase` or `SchemaTooNew`
    (and `DatabaseUnreachable` for PostgreSQL); a write attempted through the `Tx` fails
    (`StorageError`), nothing is ever written.
    """
    if is_postgres(path):
        from server.storage.postgres_direct import read_transaction as read_postgres

        with read_postgres(str(path)) as tx:
            yield tx
        return
    path = Path(path)
    conn = _open_existing(path)
    try:
        conn.execute("PRAGMA query_only=ON")
        conn.execute("BEGIN")  # deferred: one snapshot for the whole command, no write lock
        try:
            yield sqlite_tx(conn)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot read database {path}: {exc}") from exc
        finally:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
    finally:
        conn.close()


@contextmanager
def write_transaction(path: Target) -> Iterator[Tx]:
    """One write transaction on the database at `path`, committed when the block ends normally
    (rolled back if it raises). See the module's doc for how it shares a file with a server.

    Creates and migrates the file when no server holds it. Raises `DatabaseFolderMissing`,
    `NotADatabase`, `SchemaTooNew`, and `DatabaseInUse` when the running server's schema is not
    this version's (it would be unsafe to write to); nothing is written then.
    """
    if is_postgres(path):
        from server.storage.postgres_direct import write_transaction as write_postgres

        with write_postgres(str(path)) as tx:
            yield tx
        return
    path = Path(path)
    if not path.parent.is_dir():
        raise DatabaseFolderMissing(path)
    try:
        lock: DatabaseLock | None = DatabaseLock.acquire(path)
    except DatabaseInUse:
        lock = None  # a server runs on it: write beside it, on its schema
    try:
        if lock is not None:
            conn = connect(path)
        else:
            conn = _open_existing(path)
            conn.execute("PRAGMA foreign_keys=ON")
            found = schema_version(conn)
            if found != SCHEMA_VERSION:
                conn.close()
                pid, host = read_holder(lock_path_of(path))
                raise DatabaseInUse(
                    path,
                    lock_path_of(path),
                    pid,
                    host,
                    f", whose schema is version {found} where this command writes {SCHEMA_VERSION}",
                )
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield sqlite_tx(conn)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise StorageError(f"cannot write database {path}: {exc}") from exc
        finally:
            conn.close()
    finally:
        if lock is not None:
            lock.release()
