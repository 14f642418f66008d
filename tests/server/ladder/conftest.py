"""A real server on 127.0.0.1 (port 0, SQLite in tmp_path) for the ladder's tests.

The server's ladder is off unless a test asks for one (`make_server(ladder=True,
ladder_settings=...)`, fast settings); `ladder_of(server)` is then the running service.
"""

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from server.app import Server, local_config, running_server
from server.ladder.service import LadderService

ServerFactory = Callable[..., Any]


@pytest.fixture
def make_server(tmp_path: Path) -> ServerFactory:
    """`async with make_server(bot_clock=...) as server:` a real server with overrides."""

    def make(**overrides: Any) -> Any:
        overrides.setdefault("ladder", False)
        return running_server(local_config(tmp_path / "ladder.db", **overrides))

    return make


@pytest.fixture
async def server(make_server: ServerFactory) -> AsyncIterator[Server]:
    async with make_server() as srv:
        yield srv


def ladder_of(server: Server) -> LadderService:
    """The ladder the server runs (the test asked for one)."""
    assert server.ladder is not None, "this server runs no ladder"
    return server.ladder
