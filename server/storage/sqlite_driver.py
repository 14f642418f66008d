"""`SqliteDriver`: how a `Tx` runs its statements on a `sqlite3.Connection`.

Every statement runs at once, in the connection's open transaction (someone else's: the writer's
batch, or a command's `server.storage.direct` transaction); a changed-row count is the cursor's
`rowcount` and a new row's id its `lastrowid`, so no statement needs a `RETURNING`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, ClassVar

from server.storage.dialect import SQLITE, Dialect, Rendered
from server.storage.tx import Row, Tx


class SqliteDriver:
    """A `server.storage.tx.Driver` over one SQLite connection."""

    __slots__ = ("conn",)

    dialect: ClassVar[Dialect] = SQLITE
    duplicate: ClassVar[tuple[type[Exception], ...]] = (sqlite3.IntegrityError,)
    _sql: ClassVar[Rendered] = Rendered(SQLITE)

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        row: Row | None = self.conn.execute(self._sql[sql], params).fetchone()
        return row

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self.conn.execute(self._sql[sql], params).fetchall()

    def named(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[str], list[Row]]:
        cur = self.conn.execute(self._sql[sql], params)
        return [column[0] for column in cur.description], cur.fetchall()

    def stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[Row]:
        # sqlite3 steps the statement as the rows are asked for: none is held before.
        yield from self.conn.execute(self._sql[sql], params)

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.conn.execute(self._sql[sql], params)

    def many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.conn.executemany(self._sql[sql], rows)

    def count(self, sql: str, params: Sequence[Any] = ()) -> int:
        return int(self.conn.execute(self._sql[sql], params).rowcount)

    def insert(self, sql: str, params: Sequence[Any], key: str) -> int | None:
        # `key` is the table's INTEGER PRIMARY KEY, which is SQLite's rowid.
        cur = self.conn.execute(self._sql[sql], params)
        return cur.lastrowid if cur.rowcount == 1 else None


def sqlite_tx(conn: sqlite3.Connection) -> Tx:
    """A `Tx` on `conn`'s open transaction."""
    return Tx(SqliteDriver(conn))
