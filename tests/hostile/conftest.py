"""Fixtures: one shared server subprocess for tests that cannot disturb each other; the rest start
their own (`ServerProcess`) with the flags they need."""

from __future__ import annotations

import itertools
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.hostile.peer import OPEN_PEERS
from tests.hostile.proc import ServerProcess

_names = itertools.count(1)


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    """A server for the whole session; tests using it must leave it as they found it."""
    workdir = tmp_path_factory.mktemp("shared-server")
    with ServerProcess(workdir / "shared.db") as server:
        yield server
        assert server.alive(), "the shared server died during the tests:\n" + server.log_tail()


@pytest.fixture
def fresh_name() -> str:
    """An account name no other test of this session uses."""
    return f"h{next(_names)}x"


@pytest.fixture
def own_db(tmp_path: Path) -> Path:
    return tmp_path / "own.db"


@pytest.fixture(autouse=True)
async def close_peers() -> AsyncIterator[None]:
    """Close every connection a test opened, even when it failed half-way (no ResourceWarning)."""
    OPEN_PEERS.clear()
    yield
    while OPEN_PEERS:
        await OPEN_PEERS.pop().aclose()
