"""Fixtures of the bot tests: a real server on 127.0.0.1, port 0, with its SQLite file in tmp_path."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from server.app import Server, local_config, running_server


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async with running_server(local_config(tmp_path / "server.db")) as srv:
        yield srv


@pytest.fixture(autouse=True)
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Never read or write the real user's kept tokens (`spades-bot register`, the client's)."""
    folder = tmp_path / "config"
    monkeypatch.setenv("SPADES_CONFIG_DIR", str(folder))
    return folder
