"""The store's engines as test targets: each store test runs once per engine.

`ENGINES` names them; the `db_target` fixture (tests/server/conftest.py) is what `open_store` is
given for one. A SQLite file is the real thing; `:memory:` is the private database unit tests use;
`postgresql` is a fresh database of the run's throwaway cluster (tests/postgres.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from server.storage import Tx
from server.storage.target import Target, is_postgres

ENGINES = ("sqlite-file", "sqlite-memory", "postgresql")


def sqlite_target(engine: str, tmp_path: Path, name: str = "store.db") -> str:
    if engine == "sqlite-file":
        return str(tmp_path / name)
    if engine == "sqlite-memory":
        return ":memory:"
    raise ValueError(f"no SQLite engine {engine!r}")


@contextmanager
def autocommit_tx(target: Target) -> Iterator[Tx]:
    """A `Tx` outside the writer on a migrated database, each statement its own transaction: for
    tests of functions over a `Tx` (the ladder's) that need no batching."""
    if is_postgres(target):
        from server.storage.postgres import connect as pg_connect
        from server.storage.postgres import migrate
        from server.storage.postgres_driver import postgres_tx

        pg = pg_connect(str(target))
        try:
            migrate(pg, str(target))
            yield postgres_tx(pg)
        finally:
            pg.close()
        return
    from server.storage.sqlite import connect
    from server.storage.sqlite_driver import sqlite_tx

    conn = connect(target)
    try:
        yield sqlite_tx(conn)
    finally:
        conn.close()
