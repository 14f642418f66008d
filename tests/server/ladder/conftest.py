"""A real server on 127.0.0.1 (port 0, SQLite in tmp_path) with the ladder wired in.

The two session handlers are pointed at `server.ladder.hooks` exactly as the one-line integration in
`server/session.py` will do, so these tests exercise the real request path.
"""

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from server.app import Server, local_config, running_server
from server.ladder import hooks
from server.session import Session


async def _on_ladder(self: Session, request: Any) -> None:
    await hooks.on_ladder_request(self, request)


@pytest.fixture
def wired(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Session, "_on_ladder", _on_ladder)
    monkeypatch.setattr(Session, "_on_standings", _on_ladder)


ServerFactory = Callable[..., Any]


@pytest.fixture
def make_server(tmp_path: Path, wired: None) -> ServerFactory:
    """`async with make_server(bot_clock=...) as server:` a real server with overrides."""

    def make(**overrides: Any) -> Any:
        return running_server(local_config(tmp_path / "ladder.db", **overrides))

    return make


@pytest.fixture
async def server(make_server: ServerFactory) -> AsyncIterator[Server]:
    async with make_server() as srv:
        yield srv
