"""A real server on 127.0.0.1 (port 0, SQLite in tmp_path) for the ladder's tests.

The server's own ladder is switched off (`ladder=False`) so each test runs one with fast settings
through `server.ladder.hooks.run_ladder`; the session's ladder requests reach it through the same
hook the server wires for its own ladder.
"""

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from server.app import Server, local_config, running_server

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
