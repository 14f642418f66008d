"""`PostgresDriver`: how a `Tx` runs its statements on a `psycopg.Connection` (psycopg 3).

The writer sends a batch pipelined (`PostgresDatabase`), so a write nobody waits for is executed
and not fetched (`run`): its answer comes with the commit's. Where a caller needs an answer from a
write, `RETURNING` asks PostgreSQL for it (a changed-row count, a new row's id). Lazy reads stream
from a server-side cursor, a chunk at a time, which pipeline mode cannot open (`NotInPipeline`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, ClassVar

import psycopg
from psycopg import errors as pg_errors
from psycopg import pq

from server.storage.dialect import POSTGRES, Dialect, Rendered
from server.storage.tx import Row, Tx

#: Rows fetched at a time by the server-side cursors of the lazy reads.
CHUNK_ROWS = 500


class NotInPipeline(Exception):
    """A statement that cannot run in pipeline mode: the writer's pipelined try at the batch fails
    (nothing committed) and the batch runs job by job."""


class PostgresDriver:
    """A `server.storage.tx.Driver` over one psycopg connection."""

    __slots__ = ("_cursors", "conn")

    dialect: ClassVar[Dialect] = POSTGRES
    duplicate: ClassVar[tuple[type[Exception], ...]] = (pg_errors.UniqueViolation,)
    _sql: ClassVar[Rendered] = Rendered(POSTGRES)
    # The same statements answering with one row per row they changed (`count`).
    _counted: ClassVar[Rendered] = Rendered(POSTGRES, " RETURNING 1")

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self._cursors = 0  # server-side cursors opened, to name the next

    def one(self, sql: str, params: Sequence[Any] = ()) -> Row | None:
        row: Row | None = self.conn.execute(self._sql[sql], params).fetchone()
        return row

    def all(self, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return self.conn.execute(self._sql[sql], params).fetchall()

    def named(self, sql: str, params: Sequence[Any] = ()) -> tuple[list[str], list[Row]]:
        cur = self.conn.execute(self._sql[sql], params)
        rows = cur.fetchall()
        return [column.name for column in cur.description or ()], rows

    def stream(self, sql: str, params: Sequence[Any] = ()) -> Iterator[Row]:
        """The rows a chunk at a time, from a server-side cursor: an export of every game never
        holds them all, and the caller may run other statements between rows (the connection is
        free between fetches). WITH HOLD, so it works outside a transaction too.

        A server-side cursor cannot be opened in pipeline mode (the writer's first try at a batch):
        refused before one is made, so no half-opened cursor outlives the failed try (it would be
        collected still open, with a ResourceWarning); the writer runs the batch again job by
        job, outside a pipeline, where the rows stream."""
        if self.conn.pgconn.pipeline_status != pq.PipelineStatus.OFF:
            raise NotInPipeline("a server-side cursor needs the batch run job by job")
        self._cursors += 1
        with self.conn.cursor(name=f"spades_rows_{self._cursors}", withhold=True) as cur:
            cur.itersize = CHUNK_ROWS
            cur.execute(self._sql[sql], params)
            yield from cur

    def run(self, sql: str, params: Sequence[Any] = ()) -> None:
        self.conn.execute(self._sql[sql], params)

    def many(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        with self.conn.cursor() as cur:
            cur.executemany(self._sql[sql], rows)

    def count(self, sql: str, params: Sequence[Any] = ()) -> int:
        return len(self.conn.execute(self._counted[sql], params).fetchall())

    def insert(self, sql: str, params: Sequence[Any], key: str) -> int | None:
        row = self.conn.execute(self._sql[f"{sql} RETURNING {key}"], params).fetchone()
        return None if row is None else int(row[0])


def postgres_tx(conn: psycopg.Connection[Any]) -> Tx:
    """A `Tx` on `conn`'s open transaction."""
    return Tx(PostgresDriver(conn))
