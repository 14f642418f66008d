"""`spades-server db copy`: everything a server keeps, from one database into an empty one, SQLite
or PostgreSQL either way, checked table by table; and `db digest`, the same check of one database.

The order of the work, each step's failure leaving the target as it was (empty):

1. Both databases are held as a server holds them (`server.storage.lock`'s file lock for SQLite,
   the exclusive serving lock for PostgreSQL), for the whole copy: a server running on either is
   refused (`DatabaseInUse`), and none can start on them until the copy is over.
2. The source is read as it is (never migrated, never written), in one transaction: one snapshot.
3. The target must be empty (no row in any table of the schema: `TargetNotEmpty`); its schema is
   migrated to the source's version (so the rows fit their columns as they are).
4. In ONE transaction on the target: every table of the schema at that version
   (`server.storage.schema.tables`: read from the migrations, never a list kept by hand), in the
   order the migrations made them (a row never waits for a row it references), every column the
   database's catalog has, the numbers the engines give (ids, `rowid`) written as they were; then
   each engine's counter is moved past the highest number copied, or past the source's own
   counter where it had gone further (a `serial` number is never reused); then the target's rows
   are read back in the same order and their count and digest (`server.storage.digest`) must be
   the source's, or the transaction is rolled back (`CopyMismatch`). Then it commits.
5. A target copied from an older source is migrated the rest of the way, as a server starting on
   it would.

The engines' own parts (the catalog, reading in key order, writing, the counters) are an `End`:
SQLite's is here, PostgreSQL's in `server.storage.dbcopy_postgres` (loaded only for a URL).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from server.storage.digest import TableDigest
from server.storage.direct import _open_existing
from server.storage.errors import (
    DatabaseFolderMissing,
    DatabaseInUse,
    NoDatabase,
    NotADatabase,
    SchemaTooNew,
    StorageError,
)
from server.storage.lock import DatabaseLock
from server.storage.schema import SCHEMA_VERSION, TableShape, tables
from server.storage.sqlite import migrate, schema_version
from server.storage.target import Target, is_postgres, shown

#: Rows written to SQLite per `executemany` (a bound on what a copy holds in memory at once).
BATCH = 1000


class TargetNotEmpty(StorageError):
    """The target of a copy already holds rows; nothing was written to it."""

    def __init__(self, target: str, table: str) -> None:
        super().__init__(
            f"the target {target} is not empty (its table {table} has rows): copy into a new,"
            " empty database"
        )
        self.table = table


class CopyMismatch(StorageError):
    """What the target read back is not what the source holds; the copy was rolled back."""


@dataclass(frozen=True)
class TableReport:
    """One table as `db copy` and `db digest` report it: its rows and their digest."""

    table: str
    rows: int
    digest: str

    def line(self) -> str:
        return f"{self.table}: {self.rows} rows, sha256 {self.digest}"


class End(Protocol):
    """One engine's side of a copy: the database, held, with its transaction (see the module)."""

    shown: str
    #: What the engine's driver raises (turned into a `StorageError` by the copy).
    driver_error: type[Exception]

    def version(self) -> int:
        """The schema version the database is at."""
        ...

    def catalog(self) -> set[str]:
        """The names of the database's tables (its engine's own bookkeeping left out)."""
        ...

    def columns(self, table: TableShape) -> list[str]:
        """The table's columns as the catalog has them, `rowid` included for a rowid table."""
        ...

    def key(self, table: TableShape) -> list[str]:
        """The columns the table is read in order of: its `rowid`, else its primary key."""
        ...

    def rows(
        self, table: TableShape, columns: Sequence[str], key: Sequence[str]
    ) -> Iterator[tuple[object, ...]]:
        """The table's rows, values in `columns`' order, ordered by `key` (text compared byte by
        byte, as UTF-8: the same order on both engines)."""
        ...

    def has_rows(self, table: str) -> bool: ...

    def counters(self, table: TableShape) -> dict[str, int]:
        """How far the engine's counters of the table's numbered columns went, where it keeps
        that apart from the rows (a PostgreSQL sequence, SQLite's sqlite_sequence)."""
        ...

    # The target's part.

    def migrate(self, to: int) -> None: ...

    def begin(self) -> None: ...

    def write(
        self, table: TableShape, columns: Sequence[str], rows: Iterable[Sequence[object]]
    ) -> None:
        """Insert `rows` (values in `columns`' order), numbered columns as given."""
        ...

    def move_counters(self, table: TableShape, past: dict[str, int]) -> None:
        """Make the engine number the table's next rows after the highest copied number, or after
        `past` (the source's counters) where that is higher."""
        ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


# ---------------------------------------------------------------------------------------- SQLite


class SqliteEnd:
    """A SQLite file, held with its lock (`server.storage.lock`) for as long as the copy runs."""

    driver_error: type[Exception] = sqlite3.Error

    def __init__(self, conn: sqlite3.Connection, path: Path) -> None:
        self.conn = conn
        self.path = path
        self.shown = str(path)
        self.succeeded = False  # committed: a file the copy made is kept

    @classmethod
    def source(cls, path: Path, stack: ExitStack) -> SqliteEnd:
        """The file as it is, locked, read in one snapshot; `NoDatabase` when there is none."""
        if not path.is_file():
            raise NoDatabase(path)  # before the lock, which would leave a lock file behind
        lock = DatabaseLock.acquire(path)
        stack.callback(lock.release)
        conn = _open_existing(path)
        stack.callback(conn.close)
        conn.row_factory = None
        conn.execute("PRAGMA query_only=ON")
        conn.execute("BEGIN")  # deferred: the snapshot begins at the first read
        return cls(conn, path)

    @classmethod
    def target(cls, path: Path, stack: ExitStack) -> SqliteEnd:
        """The file, locked, created if there is none (and removed again if the copy fails)."""
        if not path.parent.is_dir():
            raise DatabaseFolderMissing(path)
        lock = DatabaseLock.acquire(path)
        stack.callback(lock.release)
        created = not path.exists()
        try:
            conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise StorageError(f"cannot open database {path}: {exc}") from exc
        end = cls(conn, path)
        stack.callback(end._close, created)
        try:
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=5000")
            found = schema_version(conn)
        except sqlite3.DatabaseError as exc:
            raise NotADatabase(f"cannot open database {path}: {exc}") from exc
        if found > SCHEMA_VERSION:
            raise SchemaTooNew(path, found, SCHEMA_VERSION)
        return end

    def _close(self, created: bool) -> None:
        self.conn.close()
        if created and not self.succeeded:
            # A file this copy made and could not fill is not left behind (nor its WAL).
            for leftover in (self.path, *(Path(f"{self.path}{x}") for x in ("-wal", "-shm"))):
                leftover.unlink(missing_ok=True)

    def version(self) -> int:
        return schema_version(self.conn)

    def catalog(self) -> set[str]:
        return {
            str(name)
            for (name,) in self.conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
            )
        }

    def _info(self, table: TableShape) -> list[tuple[str, int]]:
        """(name, place in the primary key: 0 for none) of each column."""
        return [
            (str(row[1]), int(row[5]))
            for row in self.conn.execute(f"PRAGMA table_info({_quoted(table.name)})")
        ]

    def columns(self, table: TableShape) -> list[str]:
        names = [name for name, _pk in self._info(table)]
        return ["rowid", *names] if table.rowid else names

    def key(self, table: TableShape) -> list[str]:
        if table.rowid:
            return ["rowid"]
        return [name for name, pk in sorted(self._info(table), key=lambda c: c[1]) if pk > 0]

    def rows(
        self, table: TableShape, columns: Sequence[str], key: Sequence[str]
    ) -> Iterator[tuple[object, ...]]:
        # BINARY: memcmp of the UTF-8 bytes, as PostgreSQL's "C" collation compares them. A table
        # without a key is read in the order of all its columns.
        order = ", ".join(f"{_quoted(c)} COLLATE BINARY" for c in key or columns)
        cursor = self.conn.execute(
            f"SELECT {', '.join(_quoted(c) for c in columns)} FROM {_quoted(table.name)}"
            f" ORDER BY {order}"
        )
        cursor.arraysize = BATCH
        while batch := cursor.fetchmany():
            yield from (tuple(row) for row in batch)

    def has_rows(self, table: str) -> bool:
        return self.conn.execute(f"SELECT 1 FROM {_quoted(table)} LIMIT 1").fetchone() is not None

    def counters(self, table: TableShape) -> dict[str, int]:
        if not table.serial or "sqlite_sequence" not in self._tables_of_sqlite():
            return {}
        row = self.conn.execute(
            "SELECT seq FROM sqlite_sequence WHERE name = ?", (table.name,)
        ).fetchone()
        # AUTOINCREMENT is one column's (the table's INTEGER PRIMARY KEY).
        return {} if row is None else {column: int(row[0]) for column in table.numbered}

    def _tables_of_sqlite(self) -> set[str]:
        return {
            str(name)
            for (name,) in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }

    def migrate(self, to: int) -> None:
        migrate(self.conn, self.path, to=to)

    def begin(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def write(
        self, table: TableShape, columns: Sequence[str], rows: Iterable[Sequence[object]]
    ) -> None:
        statement = (
            f"INSERT INTO {_quoted(table.name)} ({', '.join(_quoted(c) for c in columns)})"
            f" VALUES ({', '.join('?' for _ in columns)})"
        )
        batch: list[Sequence[object]] = []
        for row in rows:
            batch.append(row)
            if len(batch) >= BATCH:
                self.conn.executemany(statement, batch)
                batch.clear()
        if batch:
            self.conn.executemany(statement, batch)

    def move_counters(self, table: TableShape, past: dict[str, int]) -> None:
        # Only AUTOINCREMENT keeps a counter apart from the rows (SQLite moved it past every row
        # written); any other numbered column goes on from its highest row by itself.
        if not table.serial or not past:
            return
        highest = max(past.values())
        updated = self.conn.execute(
            "UPDATE sqlite_sequence SET seq = ? WHERE name = ? AND seq < ?",
            (highest, table.name, highest),
        ).rowcount
        known = self.conn.execute(
            "SELECT 1 FROM sqlite_sequence WHERE name = ?", (table.name,)
        ).fetchone()
        if not updated and known is None:
            self.conn.execute(
                "INSERT INTO sqlite_sequence (name, seq) VALUES (?, ?)", (table.name, highest)
            )

    def commit(self) -> None:
        self.conn.execute("COMMIT")
        self.succeeded = True

    def rollback(self) -> None:
        if self.conn.in_transaction:
            self.conn.execute("ROLLBACK")


# ---------------------------------------------------------------------------------------- the copy


def _open(target: Target, stack: ExitStack, *, as_target: bool) -> End:
    if is_postgres(target):
        from server.storage.dbcopy_postgres import PostgresEnd

        if as_target:
            return PostgresEnd.target(str(target), stack)
        return PostgresEnd.source(str(target), stack)
    path = Path(target)
    return SqliteEnd.target(path, stack) if as_target else SqliteEnd.source(path, stack)


def _same(source: Target, target: Target) -> bool:
    if is_postgres(source) or is_postgres(target):
        return str(source) == str(target)
    return Path(source).resolve() == Path(target).resolve()


def _read(end: End, table: TableShape, columns: list[str]) -> Iterator[tuple[object, ...]]:
    """The table's rows in key order, values in `columns`' order."""
    return end.rows(table, columns, end.key(table))


def _columns(source: End, target: End, table: TableShape) -> list[str]:
    """The table's columns, sorted by name (the digest's order), the same on both ends."""
    mine, theirs = sorted(source.columns(table)), sorted(target.columns(table))
    if mine != theirs:
        raise StorageError(
            f"the table {table.name} has the columns {', '.join(mine)} in {source.shown} but"
            f" {', '.join(theirs)} in {target.shown}, at the same schema version: is one of"
            " them altered by hand?"
        )
    return mine


def _digest(end: End, table: TableShape, columns: list[str]) -> TableReport:
    digest = TableDigest(columns)
    for row in _read(end, table, columns):
        digest.add(row)
    return TableReport(table.name, digest.rows, digest.hexdigest())


def _shapes(end: End, version: int) -> tuple[TableShape, ...]:
    """The schema's tables at `version`, each checked to be in the database."""
    shapes = tables(version)
    missing = [shape.name for shape in shapes if shape.name not in end.catalog()]
    if missing:
        raise NotADatabase(
            f"{end.shown} says it is at schema version {version} but has no table"
            f" {', '.join(missing)}: it is not a spades-server database, or it was altered"
        )
    return shapes


def digest_database(database: Target) -> list[TableReport]:
    """Every table's rows and digest, as `db copy` checks them (the database held as a copy's
    source: not beside a running server)."""
    with ExitStack() as stack:
        end = _open(database, stack, as_target=False)
        try:
            shapes = _shapes(end, end.version())
            return [_digest(end, shape, sorted(end.columns(shape))) for shape in shapes]
        except end.driver_error as exc:
            raise StorageError(f"cannot read {end.shown}: {_sentence(exc)}") from None


def copy_database(source: Target, target: Target) -> tuple[int, list[TableReport]]:
    """Copy everything from `source` into the empty `target` (see the module's doc); returns the
    schema version copied at and each table's report. Raises `DatabaseInUse` (a server holds
    one of them), `TargetNotEmpty`, `CopyMismatch`, or another `StorageError` (a database that
    cannot be opened or reached, or a source that is not one); the target is left empty then.
    `ValueError` when the source and the target are one database."""
    if _same(source, target):
        raise ValueError(f"the source and the target are the same database ({shown(source)})")
    with ExitStack() as stack:
        src = _open(source, stack, as_target=False)
        try:
            dst = _open(target, stack, as_target=True)
        except DatabaseInUse as exc:
            if is_postgres(target) and _held_by_us(exc):  # the source, under another URL
                raise ValueError(
                    f"the source and the target are the same database ({shown(source)} and"
                    f" {shown(target)})"
                ) from None
            raise
        try:
            return _checked_copy(src, dst)
        except (src.driver_error, dst.driver_error) as exc:
            raise StorageError(
                f"the copy from {src.shown} to {dst.shown} failed: {_sentence(exc)}"
                " (nothing was copied)"
            ) from None


def _held_by_us(error: DatabaseInUse) -> bool:
    """Whether the holder `error` names is this copy, which holds the source (PostgreSQL names
    the holder by the name the copy gives its lock's connection; two names of one SQLite file
    resolve to one path, checked before)."""
    from server.storage.dbcopy_postgres import holder_name

    return error.host is not None and error.host == holder_name()


def _sentence(error: BaseException) -> str:
    """A driver's message on one line."""
    return " ".join(str(error).split()) or type(error).__name__


def _checked_copy(src: End, dst: End) -> tuple[int, list[TableReport]]:
    """Steps 3 to 5 of the module's doc, on the held ends."""
    version = src.version()
    shapes = _shapes(src, version)
    catalog = dst.catalog()
    for shape in tables(SCHEMA_VERSION):
        if shape.name in catalog and dst.has_rows(shape.name):
            raise TargetNotEmpty(dst.shown, shape.name)
    if dst.version() > version:
        raise StorageError(
            f"the target {dst.shown} is empty but at schema version {dst.version()}, newer"
            f" than the source's ({version}): start this spades-server on the source once"
            " (it migrates it), or copy into a new database"
        )
    dst.migrate(version)
    reports = _copy(src, dst, shapes)
    if version < SCHEMA_VERSION:
        dst.migrate(SCHEMA_VERSION)
    return version, reports


def _copy(src: End, dst: End, shapes: Sequence[TableShape]) -> list[TableReport]:
    """Step 4 of the module's doc: the one transaction on the target."""
    dst.begin()
    try:
        copied: list[TableReport] = []
        for shape in shapes:
            columns = _columns(src, dst, shape)
            digest = TableDigest(columns)

            def counted(
                rows: Iterator[tuple[object, ...]], digest: TableDigest = digest
            ) -> Iterator[tuple[object, ...]]:
                for row in rows:
                    digest.add(row)
                    yield row

            dst.write(shape, columns, counted(_read(src, shape, columns)))
            dst.move_counters(shape, src.counters(shape))
            copied.append(TableReport(shape.name, digest.rows, digest.hexdigest()))
        for shape, report in zip(shapes, copied, strict=True):
            back = _digest(dst, shape, _columns(src, dst, shape))
            if back != report:
                raise CopyMismatch(
                    f"the copy of {shape.name} does not read back as the source has it"
                    f" ({report.rows} rows, sha256 {report.digest[:12]}... in {src.shown};"
                    f" {back.rows} rows, sha256 {back.digest[:12]}... in {dst.shown}): nothing"
                    " was copied"
                )
        dst.commit()
    except BaseException:
        dst.rollback()
        raise
    return copied
