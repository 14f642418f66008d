"""The page while the server's database is away (issue 38 item 2): PostgreSQL stopped under a
table in play; the page shows a banner that play is paused, its clocks stop, and when PostgreSQL
is back the banner goes and play goes on by itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.postgres import Cluster
from tests.web.browser import need_browser, served
from tests.web.page import WAIT_MS, chromium, open_page, register

pytestmark = pytest.mark.timeout(300)


def test_the_page_shows_play_paused_while_the_database_is_away(
    own_pg: Cluster, tmp_path: Path
) -> None:
    need_browser()

    errors: list[str] = []
    with (
        served(own_pg.fresh_database(), "--bot-clock", "3", "--human-clock", "60") as url,
        chromium() as browser,
    ):
        page = open_page(browser, errors)
        register(page, url, "ada")
        page.click("#create-submit")
        page.wait_for_selector("#table-screen:not([hidden]) #hand .card", timeout=WAIT_MS)
        assert page.is_hidden("#pause-banner")
        own_pg.stop_server()
        page.wait_for_selector("#pause-banner:not([hidden])", timeout=WAIT_MS)
        assert "Play is paused" in page.inner_text("#pause-banner")
        assert page.evaluate("spadesApp.pausedAt !== null")  # the clocks are shown stopped
        own_pg.start_server()
        page.wait_for_selector("#pause-banner", state="hidden", timeout=WAIT_MS)
        page.wait_for_function(
            "() => document.getElementById('table-log').textContent.includes('Play resumed')",
            timeout=WAIT_MS,
        )
        assert page.evaluate("spadesApp.pausedAt === null")
    assert errors == []
