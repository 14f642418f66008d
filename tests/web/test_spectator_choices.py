"""What spectators may see, on the page (issue 43 item 5), in a real browser against a real server:
the create form's delay and *No spectators*, the lobby's words for each ("spectators 2 tricks
behind", "no spectators", no *Watch* at a table that takes none), and a spectator of the delayed
table held back (the server's side of the delay is tested in tests/server/unit/test_spectator_delay.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.web.browser import need_browser, served
from tests.web.page import WAIT_MS, chromium, open_page, register

pytestmark = pytest.mark.timeout(300)


def test_the_create_form_and_the_lobby_say_what_spectators_may_see(tmp_path: Path) -> None:
    need_browser()

    errors: list[str] = []
    with (
        served(tmp_path / "server.db", "--bot-clock", "3", "--human-clock", "120") as url,
        chromium() as browser,
    ):
        pages = {}
        for name in ("host", "viewer"):
            page = open_page(browser, errors)
            register(page, url, name)
            pages[name] = page
        host, viewer = pages["host"], pages["viewer"]
        assert host.input_value("#create-delay") == "0"
        assert not host.is_checked("#create-no-watching")
        # A table that takes no spectators (the host leaves it to a bot), then a delayed one.
        host.check("#create-no-watching")
        host.click("#create-submit")
        host.wait_for_selector("#table-screen:not([hidden])", timeout=WAIT_MS)
        closed = host.evaluate("spadesApp.table.table")
        # The viewer reads the closed table's listing while its host sits: once the host leaves,
        # its bots may finish the game and the table close at once (it did, on a quiet machine).
        shut = f"#table-list [data-table='{closed}']"
        viewer.wait_for_selector(f"{shut} >> text=no spectators", timeout=WAIT_MS)
        assert viewer.locator(f"{shut} button", has_text="Watch").count() == 0
        listed_closed = viewer.evaluate(
            "(t) => { const i = spadesApp.tables.get(t);"
            " return [i.no_watching ?? null, i.spectator_delay ?? null]; }",
            closed,
        )
        assert listed_closed == [True, None]
        host.once("dialog", lambda dialog: dialog.accept())  # "Leave your seat?"
        host.click("#leave")
        host.wait_for_selector("#lobby-screen:not([hidden])", timeout=WAIT_MS)
        host.uncheck("#create-no-watching")
        host.fill("#create-delay", "2")
        host.click("#create-submit")
        host.wait_for_selector("#table-screen:not([hidden])", timeout=WAIT_MS)
        delayed = host.evaluate("spadesApp.table.table")
        assert delayed != closed

        item = f"#table-list [data-table='{delayed}']"
        viewer.wait_for_selector(f"{item} >> text=spectators 2 tricks behind", timeout=WAIT_MS)
        listed = viewer.evaluate(
            "(t) => { const i = spadesApp.tables.get(t);"
            " return [i.no_watching ?? null, i.spectator_delay ?? null]; }",
            delayed,
        )
        assert listed == [None, 2]
        # Watching the delayed table: the host has not played a card, so the spectator is
        # before the hand (its deal and bids come once two tricks are over): no card shown.
        viewer.locator(f"{item} button", has_text="Watch").click()
        viewer.wait_for_selector("#table-screen:not([hidden])", timeout=WAIT_MS)
        assert viewer.evaluate("spadesApp.table.seat ?? null") is None
        assert viewer.locator("#felt [data-card]").count() == 0
        assert errors == []
