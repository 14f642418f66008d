"""Fixtures: a real server on 127.0.0.1 with port 0 and a real SQLite file in tmp_path; a `Tx`
and a `Store` on each of the store's engines (tests/server/stores.py)."""

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from server.app import Server, local_config, running_server
from server.storage import Store, Tx, open_store
from tests.server.stores import ENGINES, autocommit_tx, target


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
def tx(engine: str, tmp_path: Path) -> Iterator[Tx]:
    """A `Tx` on a fresh, migrated database of `engine`, outside any writer (autocommit)."""
    with autocommit_tx(engine, tmp_path) as tx:
        yield tx


@pytest.fixture
async def store(engine: str, tmp_path: Path) -> AsyncIterator[Store]:
    """A running `Store` (writer task and all) on a fresh database of `engine`."""
    async with open_store(target(engine, tmp_path)) as store:
        yield store
