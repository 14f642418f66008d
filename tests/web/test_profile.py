"""Player statistics on the web page, in a real browser against a real server process: a game is
stored before the server starts, its statistics' job counts it at start (the sweep), and the
lobby's profile shows anyone's by name, your own with *Mine*, and a refusal for a name nobody
has; a player's name, wherever the page shows it, opens their profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.stats import player_stats
from server.storage import write_transaction
from tests.server.test_stats_store import _store_game
from tests.web.browser import need_browser, served
from tests.web.page import (
    WAIT_MS,
    chromium,
    enter_as_guest,
    fast_clock,
    open_page,
    play_hand,
    register_and_open,
    set_pace,
)
from tests.web.test_accessibility import axe_problems, need_axe

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


def test_a_players_name_opens_their_profile_wherever_it_is_shown(tmp_path: Path) -> None:
    """Issue 42 item 2: a name in the lobby's list of tables, at a seat at the table and in the
    game-over dialog opens that account's profile in a dialog (a built-in bot's by its account,
    `bot:heuristic`); Escape or Close gives the focus back to the name; axe-core finds nothing
    serious with the dialog open on a 390 px phone."""
    need_browser()
    need_axe()
    errors: list[str] = []
    with (
        served(tmp_path / "server.db", "--bot-clock", "3", "--human-clock", "90") as url,
        chromium() as browser,
    ):
        player = fast_clock(open_page(browser, errors))  # the names are the point, not the pace
        register_and_open(player, url, "zed", hands=1)
        set_pace(player, "fast")
        phone = open_page(browser, errors, width=390, height=844, bypass_csp=True)  # for axe
        phone.goto(url)
        enter_as_guest(phone, "eve")

        # The lobby's list: the seated player's name.
        link = "#table-list button.player-link[data-player='zed']"
        phone.wait_for_selector(link, timeout=WAIT_MS)
        phone.click(link)
        phone.wait_for_selector(
            "#profile-dialog:not([hidden]) #profile-dialog-name", timeout=WAIT_MS
        )
        assert phone.inner_text("#profile-dialog-name") == "zed (person)"
        assert "Hands" in phone.inner_text("#profile-dialog-body")
        assert axe_problems(phone, "the profile dialog at 390 px") == []
        phone.keyboard.press("Escape")
        phone.wait_for_selector("#profile-dialog", state="hidden", timeout=WAIT_MS)
        assert phone.evaluate("document.activeElement.dataset.player") == "zed"

        # A seat at the table: the bot's name opens the bot account's profile.
        seat = "#seat-left button.player-link"
        player.wait_for_selector(seat, timeout=WAIT_MS)
        assert player.get_attribute(seat, "data-player") == "bot:heuristic"
        player.click(seat)
        player.wait_for_selector(
            "#profile-dialog:not([hidden]) #profile-dialog-name", timeout=WAIT_MS
        )
        assert player.inner_text("#profile-dialog-name") == "bot:heuristic (bot)"
        player.click("#profile-dialog-close")
        player.wait_for_selector("#profile-dialog", state="hidden", timeout=WAIT_MS)

        # The game-over dialog: each player's name, the player's own too.
        play_hand(player)
        names = player.eval_on_selector_all(
            "#game-over button.player-link", "(els) => els.map((e) => e.dataset.player)"
        )
        assert sorted(names) == ["bot:heuristic"] * 3 + ["zed"], names
        player.click("#game-over button.player-link[data-player='zed']")
        player.wait_for_selector(
            "#profile-dialog:not([hidden]) #profile-dialog-name", timeout=WAIT_MS
        )
        assert player.inner_text("#profile-dialog-name") == "zed (person)"
        player.keyboard.press("Escape")
        player.wait_for_selector("#profile-dialog", state="hidden", timeout=WAIT_MS)
        assert player.is_visible("#game-over")  # the dialog under it stays
    assert errors == []
