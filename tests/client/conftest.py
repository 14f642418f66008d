"""Fixtures: a real server on 127.0.0.1, port 0, SQLite in tmp_path; config and data dirs in tmp_path."""

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import structlog

from server.app import Server, local_config, running_server


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async with running_server(local_config(tmp_path / "server.db")) as srv:
        yield srv


@pytest.fixture(autouse=True)
def client_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never touch the real user's config or data."""
    monkeypatch.setenv("SPADES_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("SPADES_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("NO_COLOR", raising=False)
    return tmp_path


@pytest.fixture(autouse=True)
def quiet_server_logs() -> Iterator[None]:
    """The in-process server logs through structlog; keep that out of the commands' output."""
    structlog.configure(logger_factory=structlog.ReturnLoggerFactory())
    yield
    structlog.reset_defaults()
