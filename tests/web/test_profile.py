"""Player statistics on the web page, in a real browser against a real server process: a game is
stored before the server starts, its statistics' job counts it at start (the sweep), and the
lobby's profile shows anyone's by name, your own with *Mine*, and a refusal for a name nobody
has."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.stats import player_stats
from server.storage import write_transaction
from tests.server.test_stats_store import _store_game
from tests.web.browser import need_browser, served
from tests.web.page import WAIT_MS, chromium, enter_as_guest, open_page

pytestmark = pytest.mark.timeout(300)


def test_the_lobby_shows_a_players_profile(tmp_path: Path) -> None:
    need_browser()

    db = tmp_path / "server.db"
    with write_transaction(db) as tx:
        _store_game(tx, 11, ["ada", "bob", "cy", "dee"])
    errors: list[str] = []
    with served(db) as url, chromium() as browser:
        page = open_page(browser, errors, width=390, height=844)
        page.goto(url)
        enter_as_guest(page, "eve")

        page.fill("#profile-name", "ada")
        page.click("#profile-form button[type=submit]")
        page.wait_for_selector("#profile-title", timeout=WAIT_MS)
        assert page.inner_text("#profile-title") == "ada (bot)"  # made as bots by _store_game
        rows = dict(
            zip(
                page.locator(".profile-stats dt").all_inner_texts(),
                page.locator(".profile-stats dd").all_inner_texts(),
                strict=True,
            )
        )
        with write_transaction(db) as tx:  # what the server counted, read beside it
            stored = player_stats(tx, "ada")
        assert stored is not None and stored.hands > 0
        assert rows["Hands"] == str(stored.hands)
        assert rows["Contracts set"] == str(stored.contracts_set)
        assert rows["Contracts made"].startswith(f"{stored.contracts_made} of {stored.contracts}")
        assert page.locator("#profile").is_visible()

        page.click("#profile-mine")  # a guest's own (its name given a tag): nothing counted yet
        page.wait_for_function(
            "() => /^eve.* \\(person\\)$/.test(document.getElementById('profile-title')"
            "?.textContent ?? '')",
            timeout=WAIT_MS,
        )
        mine = dict(
            zip(
                page.locator(".profile-stats dt").all_inner_texts(),
                page.locator(".profile-stats dd").all_inner_texts(),
                strict=True,
            )
        )
        assert mine["Hands"] == "0" and mine["Contracts made"] == "none"
        page.fill("#profile-name", "nobody-here")
        page.click("#profile-form button[type=submit]")
        page.wait_for_selector("#profile [role=alert]", timeout=WAIT_MS)
        assert "no account is named" in page.inner_text("#profile")
    assert errors == []
