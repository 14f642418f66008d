"""PostgreSQL's side of a copy (`server.storage.dbcopy.End`), loaded only for a URL.

The database is held with the exclusive serving lock (`server.storage.postgres.hold_serving_lock`)
for as long as the copy runs: a lone server, a cluster's worker, or another copy on it is refused,
and none can start meanwhile. The source is read in one REPEATABLE READ, READ ONLY transaction from
server-side cursors; the target is written with COPY, which writes the numbered columns' values as
given (`GENERATED ALWAYS` included), and its sequences are then set past them.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from typing import Any

import psycopg
from psycopg import sql

from server.storage.errors import NoDatabase, SchemaTooNew, StorageError
from server.storage.postgres import connect, hold_serving_lock, migrate, release_serving_lock
from server.storage.postgres import schema_version as pg_schema_version
from server.storage.schema import SCHEMA_VERSION, TableShape
from server.storage.target import shown

#: Rows a server-side cursor fetches at a time.
BATCH = 1000
#: Types whose values compare as text (ordered in the "C" collation: byte by byte, as SQLite).
TEXT_TYPES = frozenset({"text", "character varying", "character"})


def holder_name() -> str:
    """How a copy names itself to PostgreSQL while it holds a database (`application_name`, at
    most 63 bytes), which the message of anyone refused meanwhile quotes."""
    return f"spades-server db copy pid {os.getpid()} on {socket.gethostname()}"[:63]


class PostgresEnd:
    """A PostgreSQL database held with the serving lock, for a copy (see the module's doc)."""

    driver_error: type[Exception] = psycopg.Error

    def __init__(self, conn: psycopg.Connection[Any], url: str) -> None:
        self.conn = conn
        self.url = url
        self.shown = shown(url)
        self._cursors = 0

    @classmethod
    def _held(cls, url: str, stack: ExitStack, purpose: str) -> PostgresEnd:
        lock = hold_serving_lock(url, shared=False)
        stack.callback(release_serving_lock, lock)
        # A server refused meanwhile is told it is a copy that holds the database (and a copy
        # whose target is its own source, under another URL, knows it is).
        lock.execute("SELECT set_config('application_name', %s, false)", (holder_name(),))
        conn = connect(url, purpose=purpose)
        stack.callback(conn.close)
        # Floats as the shortest text that reads back as the same double (PostgreSQL 12 on do so
        # by default; older ones need it asked).
        conn.execute("SET extra_float_digits = 3")
        found = pg_schema_version(conn)
        if found > SCHEMA_VERSION:
            raise SchemaTooNew(shown(url), found, SCHEMA_VERSION)
        return cls(conn, url)

    @classmethod
    def source(cls, url: str, stack: ExitStack) -> PostgresEnd:
        end = cls._held(url, stack, "spades-server db copy (source)")
        if end.version() == 0:
            raise NoDatabase(shown(url))
        end.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        return end

    @classmethod
    def target(cls, url: str, stack: ExitStack) -> PostgresEnd:
        return cls._held(url, stack, "spades-server db copy (target)")

    def version(self) -> int:
        return pg_schema_version(self.conn)

    def catalog(self) -> set[str]:
        rows = self.conn.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'"
            " AND table_name <> 'spades_schema'"
        ).fetchall()
        return {str(name) for (name,) in rows}

    def _types(self, table: TableShape) -> dict[str, str]:
        rows = self.conn.execute(
            "SELECT column_name, data_type FROM information_schema.columns"
            " WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
            (table.name,),
        ).fetchall()
        return {str(name): str(kind) for name, kind in rows}

    def columns(self, table: TableShape) -> list[str]:
        return list(self._types(table))

    def key(self, table: TableShape) -> list[str]:
        if table.rowid:
            return ["rowid"]
        rows = self.conn.execute(
            "SELECT a.attname FROM pg_index i"
            " JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)"
            " WHERE i.indrelid = to_regclass(%s) AND i.indisprimary"
            " ORDER BY array_position(i.indkey, a.attnum)",
            (table.name,),
        ).fetchall()
        return [str(name) for (name,) in rows]

    def rows(
        self, table: TableShape, columns: Sequence[str], key: Sequence[str]
    ) -> Iterator[tuple[object, ...]]:
        types = self._types(table)
        # A table without a key is read in the order of all its columns, as SQLite's end does.
        order = [
            sql.SQL('{} COLLATE "C"').format(sql.Identifier(c))
            if types.get(c) in TEXT_TYPES
            else sql.Identifier(c)
            for c in key or columns
        ]
        query = sql.SQL("SELECT {} FROM {} ORDER BY {}").format(
            sql.SQL(", ").join(sql.Identifier(c) for c in columns),
            sql.Identifier(table.name),
            sql.SQL(", ").join(order),
        )
        self._cursors += 1
        # A server-side cursor: the table streams, BATCH rows at a time, never whole in memory.
        with self.conn.cursor(name=f"copy_{self._cursors}") as cursor:
            cursor.itersize = BATCH
            cursor.execute(query)
            yield from (tuple(row) for row in cursor)

    def has_rows(self, table: str) -> bool:
        query = sql.SQL("SELECT EXISTS (SELECT 1 FROM {})").format(sql.Identifier(table))
        row = self.conn.execute(query).fetchone()
        return bool(row is not None and row[0])

    def _sequences(self, table: TableShape) -> dict[str, str]:
        """The sequence behind each numbered column (an identity's, PostgreSQL's `rowid` too)."""
        found: dict[str, str] = {}
        for column in (*table.numbered, *(("rowid",) if table.rowid else ())):
            row = self.conn.execute(
                "SELECT pg_get_serial_sequence(%s, %s)",
                (sql.Identifier(table.name).as_string(self.conn), column),
            ).fetchone()
            if row is not None and row[0] is not None:
                found[column] = str(row[0])
        return found

    def counters(self, table: TableShape) -> dict[str, int]:
        found: dict[str, int] = {}
        for column, sequence in self._sequences(table).items():
            # The name pg_get_serial_sequence gives is already quoted as it needs to be.
            row = self.conn.execute(
                sql.SQL("SELECT last_value, is_called FROM {}").format(sql.SQL(sequence))
            ).fetchone()
            if row is not None and row[1]:
                found[column] = int(row[0])
        return found

    def migrate(self, to: int) -> None:
        migrate(self.conn, self.url, to=to)

    def begin(self) -> None:
        self.conn.execute("BEGIN")

    def write(
        self, table: TableShape, columns: Sequence[str], rows: Iterable[Sequence[object]]
    ) -> None:
        statement = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(table.name), sql.SQL(", ").join(sql.Identifier(c) for c in columns)
        )
        with self.conn.cursor() as cursor, cursor.copy(statement) as copy:
            for row in rows:
                copy.write_row(row)

    def move_counters(self, table: TableShape, past: dict[str, int]) -> None:
        for column, sequence in self._sequences(table).items():
            highest = self.conn.execute(
                sql.SQL("SELECT max({}) FROM {}").format(
                    sql.Identifier(column), sql.Identifier(table.name)
                )
            ).fetchone()
            value = max(
                int(highest[0]) if highest is not None and highest[0] is not None else 0,
                past.get(column, 0),
            )
            if value >= 1:  # else the sequence is as new: it starts at 1
                self.conn.execute("SELECT setval(%s, %s, true)", (sequence, value))

    def commit(self) -> None:
        self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if self.conn.broken or self.conn.closed:
            return
        if self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            try:
                self.conn.execute("ROLLBACK")
            except psycopg.Error as exc:
                raise StorageError(f"cannot roll back in {self.shown}: {exc}") from None
