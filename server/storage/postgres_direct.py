"""One transaction on a PostgreSQL database from a command (`server.storage.direct` for a URL)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from server.storage.errors import NoDatabase, SchemaTooNew, StorageError
from server.storage.postgres import connect, migrate, schema_version
from server.storage.postgres_driver import postgres_tx
from server.storage.schema import SCHEMA_VERSION
from server.storage.target import shown
from server.storage.tx import Tx


def _failed(url: str, doing: str, exc: psycopg.Error) -> StorageError:
    return StorageError(
        f"cannot {doing} the PostgreSQL database {shown(url)}: {' '.join(str(exc).split())}"
    )


@contextmanager
def read_transaction(url: str) -> Iterator[Tx]:
    """A read-only snapshot of the database as it is: never migrated, never written."""
    conn = connect(url, purpose="spades-server read")
    try:
        found = schema_version(conn)
        if found == 0:
            raise NoDatabase(shown(url))
        if found > SCHEMA_VERSION:
            raise SchemaTooNew(shown(url), found, SCHEMA_VERSION)
        try:
            conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            try:
                yield postgres_tx(conn)
            finally:
                if not conn.broken:
                    conn.execute("ROLLBACK")
        except psycopg.Error as exc:
            raise _failed(url, "read", exc) from None
    finally:
        conn.close()


@contextmanager
def write_transaction(url: str) -> Iterator[Tx]:
    """One write transaction, committed when the block ends normally; the database is migrated
    first if it is older (as a server starting on it would)."""
    conn = connect(url, purpose="spades-server write")
    try:
        migrate(conn, url)
        try:
            conn.execute("BEGIN")
            try:
                yield postgres_tx(conn)
                conn.execute("COMMIT")
            except BaseException:
                if not conn.broken:
                    conn.execute("ROLLBACK")
                raise
        except psycopg.Error as exc:
            raise _failed(url, "write", exc) from None
    finally:
        conn.close()
