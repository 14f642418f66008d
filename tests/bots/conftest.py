"""Fixtures of the bot tests: a real server on 127.0.0.1, port 0, with its SQLite file in tmp_path."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.app import Server, local_config, running_server


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async with running_server(local_config(tmp_path / "server.db")) as srv:
        yield srv
