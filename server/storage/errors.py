"""What can go wrong with the database, as exceptions a caller can tell apart.

Every one is a `StorageError`, whose message is one sentence naming the file and what to do; the
subclasses let the command line give each its own exit code. None of them leaves anything written.
"""

from __future__ import annotations

from pathlib import Path


class StorageError(Exception):
    """The database could not be opened, migrated or written; the message says which file and why."""


class StoreClosed(StorageError):
    """A request arrived after the store began shutting down; it was not written."""


class StoreUnavailable(StorageError):
    """The database cannot be reached (PostgreSQL stopped or cut off; a SQLite disk full or
    read-only): nothing of the batch was written. The writer keeps the batch and tries it again
    until the database is back; a caller sees this only for a request still waiting when the
    store shuts down during an outage."""


class DatabaseFolderMissing(StorageError):
    """The folder the database file should be in does not exist (it is never created for you: a
    typo in `--db` would otherwise start an empty server somewhere unexpected)."""

    def __init__(self, path: Path) -> None:
        super().__init__(
            f"cannot open database {path}: the folder {path.parent} does not exist"
            " (create it, or give a --db in an existing folder)"
        )
        self.path = path


class NoDatabase(StorageError):
    """A command that only reads (or adds to) a database found no file there (or, in PostgreSQL,
    a database no server ever stored anything in)."""

    def __init__(self, path: Path | str) -> None:
        super().__init__(f"no database at {path}")
        self.path = path


class NotADatabase(StorageError):
    """The file exists but is not a database this server can read (another program's file, or a
    damaged one); it is left as it was."""


class SchemaTooNew(StorageError):
    """The database was written by a newer version of the server; it is left as it was."""

    def __init__(self, path: Path | str, found: int, supported: int) -> None:
        super().__init__(
            f"database {path} has schema version {found}, newer than this server's ({supported}):"
            " upgrade spades-server to open it"
        )
        self.found = found
        self.supported = supported


class DatabaseInUse(StorageError):
    """Another running server holds the database: only one server may serve a database at a time.

    `pid` and `host` name the holder when its lock file says (None when it does not yet, e.g. a
    server that is still starting).
    """

    def __init__(
        self, path: Path, lock_path: Path, pid: int | None, host: str | None, detail: str = ""
    ) -> None:
        holder = "another server" if pid is None else f"spades-server pid {pid}"
        if host:
            holder += f" on {host}"
        super().__init__(
            f"database {path} is in use by {holder} (lock {lock_path}){detail}:"
            " stop that server first, or give another --db"
        )
        self.path = path
        self.lock_path = lock_path
        self.pid = pid
        self.host = host


class PostgresInUse(DatabaseInUse):
    """A PostgreSQL database is served by a server that does not share it (or, for a lone server,
    by any other): a lone server holds its database alone, as with SQLite."""

    def __init__(self, url: str, holder: str | None, detail: str) -> None:
        StorageError.__init__(
            self,
            f"database {url} is in use by {holder or 'another spades-server'}{detail}:"
            " stop that server first, or give another --db",
        )
        self.path = Path(url)
        self.lock_path = Path(url)
        self.pid = None
        self.host = holder
