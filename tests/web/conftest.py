"""A real server with its web port on 127.0.0.1 (port 0) and a real SQLite file in tmp_path; the
browser tests' one Chromium, closed when the package's tests are done."""

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from server.app import Server, local_config, running_server
from tests.web.page import close_shared


@pytest.fixture(scope="package", autouse=True)
def one_chromium() -> Iterator[None]:
    """The Chromium `tests.web.page.chromium()` shares (started by the first test that asks)."""
    yield
    close_shared()


@pytest.fixture
async def web_server(tmp_path: Path) -> AsyncIterator[Server]:
    async with running_server(local_config(tmp_path / "server.db", web_port=0)) as srv:
        assert srv.web_port
        yield srv
