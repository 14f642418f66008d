"""Fixtures: a real server on 127.0.0.1 with port 0 and a real SQLite file in tmp_path."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.app import Server, running_server, test_config


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async with running_server(test_config(tmp_path / "server.db")) as srv:
        yield srv
