"""Fixtures: a real server on 127.0.0.1 with port 0 and a real SQLite file in tmp_path; a `Tx`
and a `Store` on each of the store's engines (tests/server/stores.py: SQLite's file and memory,
and PostgreSQL's throwaway cluster)."""

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from server.app import Server, local_config, running_server
from server.storage import Store, Tx, open_store
from server.storage.target import Target
from tests.server.stores import ENGINES, autocommit_tx, sqlite_target


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async with running_server(local_config(tmp_path / "server.db")) as srv:
        yield srv


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest) -> str:
    """Each of the store's engines in turn."""
    engine: str = request.param
    return engine


@pytest.fixture
def db_target(engine: str, tmp_path: Path, request: pytest.FixtureRequest) -> Target:
    """A fresh database of `engine`: a file's path, ":memory:", or a PostgreSQL URL."""
    if engine == "postgresql":
        url: str = request.getfixturevalue("pg_url")
        return url
    return sqlite_target(engine, tmp_path)


@pytest.fixture
def tx(db_target: Target) -> Iterator[Tx]:
    """A `Tx` on a fresh, migrated database of `engine`, outside any writer (autocommit)."""
    with autocommit_tx(db_target) as tx:
        yield tx


@pytest.fixture
async def store(db_target: Target) -> AsyncIterator[Store]:
    """A running `Store` (writer task and all) on a fresh database of `engine`."""
    async with open_store(db_target) as store:
        yield store
