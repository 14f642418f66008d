"""The store's engines as test targets: each store test runs once per engine.

`ENGINES` names them; `target(engine, tmp_path)` is what `open_store` is given for one. A SQLite
file is the real thing; `:memory:` is the private database unit tests use. (PostgreSQL joins
here as a third engine.)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from server.storage import Tx
from server.storage.sqlite import connect
from server.storage.sqlite_tx import SqliteTx

ENGINES = ("sqlite-file", "sqlite-memory")


def target(engine: str, tmp_path: Path, name: str = "store.db") -> str:
    if engine == "sqlite-file":
        return str(tmp_path / name)
    if engine == "sqlite-memory":
        return ":memory:"
    raise ValueError(f"no engine {engine!r}")


@contextmanager
def autocommit_tx(engine: str, tmp_path: Path) -> Iterator[Tx]:
    """A `Tx` outside the writer, each statement its own transaction: for tests of functions over
    a `Tx` (the ladder's) that need no batching."""
    conn = connect(target(engine, tmp_path))
    try:
        yield SqliteTx(conn)
    finally:
        conn.close()
