"""A real server with its web port on 127.0.0.1 (port 0) and a real SQLite file in tmp_path."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.app import Server, local_config, running_server


@pytest.fixture
async def web_server(tmp_path: Path) -> AsyncIterator[Server]:
    async with running_server(local_config(tmp_path / "server.db", web_port=0)) as srv:
        assert srv.web_port
        yield srv
