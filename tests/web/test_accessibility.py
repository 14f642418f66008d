"""Issue 39 item 3, in a real browser against a real server: axe-core (the npm package, installed by
`make` into tests/web/axe/node_modules: tests/web/axe/package.json) finds no serious or critical
violation on the login, the lobby, the bid, a trick, the hand's result, the score sheet and the
game's end; the trick's cards are named ("West: ace of diamonds"), plays and turns are announced in
a live region, the log lists the plays, each seat is one labelled group, and the keyboard goes
from the hand straight to the hand's buttons (one tab stop for the whole hand)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser import ROOT, need_browser, served
from tests.web.page import (
    WAIT_MS,
    bid,
    chromium,
    fast_clock,
    open_page,
    open_table,
    play_first_legal,
    register,
    register_as,
    set_pace,
    wait_state,
)

pytestmark = pytest.mark.timeout(300)

AXE = ROOT / "tests" / "web" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
CARD_NAME = re.compile(
    r"^(You|West|North|East): (ace|king|queen|jack|10|[2-9]) of (clubs|diamonds|hearts|spades)$"
)


def need_axe() -> None:
    if AXE.exists():
        return
    reason = f"no axe-core at {AXE.relative_to(ROOT)} (make installs it: npm ci in tests/web/axe)"
    if os.environ.get("SPADES_REQUIRE_BROWSER"):
        pytest.fail(reason)
    pytest.skip(reason)


def axe_problems(page: Any, where: str) -> list[str]:
    """axe-core's serious and critical violations on the page as it is now."""
    if not page.evaluate("typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        "async () => { const r = await axe.run(document, { resultTypes: ['violations'] });"
        " return r.violations.map((v) => ({ id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' ')) })); }"
    )
    return [
        f"{where}: {v['id']} ({v['impact']}): {v['help']} at {v['nodes']}"
        for v in result
        if v["impact"] in ("serious", "critical")
    ]


def test_axe_finds_nothing_serious_and_the_table_speaks(tmp_path: Path) -> None:
    need_browser()
    need_axe()

    errors: list[str] = []
    problems: list[str] = []
    with (
        served(tmp_path / "server.db", "--bot-clock", "3", "--human-clock", "120") as url,
        chromium() as browser,
    ):
        # bypass_csp: the page's CSP (rightly) refuses a script tag the page did not serve;
        # axe-core is the test's, not the page's.
        page = fast_clock(open_page(browser, errors, bypass_csp=True))
        page.goto(url)
        page.wait_for_selector("#login-screen:not([hidden])", timeout=WAIT_MS)
        problems += axe_problems(page, "login")
        register_as(page, "axe")
        problems += axe_problems(page, "lobby")
        open_table(page, hands=1)
        set_pace(page, "fast")
        page.wait_for_selector("#actions button.bid", timeout=WAIT_MS)
        problems += axe_problems(page, "bid")
        # The turn is announced; each seat is a group named by its place.
        page.wait_for_function(
            "() => document.getElementById('announce').textContent.includes('Your turn')",
            timeout=WAIT_MS,
        )
        seats = page.get_by_role("group", name=re.compile(r"^(West|North|East|You)\b"))
        assert seats.count() == 4

        # Everything the live region says, as it says it.
        page.evaluate(
            "() => { window.__said = []; const el = document.getElementById('announce');"
            " new MutationObserver((records) => records.forEach((r) =>"
            " r.addedNodes.forEach((n) => window.__said.push(n.textContent))))"
            ".observe(el, { childList: true, characterData: true, subtree: true }); }"
        )
        bid(page, 3)
        named = tabbed = False
        for _ in range(60):
            state = wait_state(page)
            if state == "over":
                break
            if not named and page.locator("#trick .card").count():
                names = page.eval_on_selector_all(
                    "#trick .card", "(cards) => cards.map((c) => c.getAttribute('aria-label'))"
                )
                assert names and all(CARD_NAME.match(n) for n in names), names
                # The browser's own accessibility tree has them by those names.
                assert page.get_by_role("img", name=names[0]).count() == 1
                problems += axe_problems(page, "trick")
                named = True
            if page.locator("#hand .card.legal").count() > 1 and not tabbed:
                # One tab stop for the whole hand: Tab from a card leaves the hand.
                page.locator("#hand .card.legal").last.focus()
                stops = page.evaluate(
                    "document.querySelectorAll('#hand .card[tabindex=\"0\"]').length"
                )
                assert stops == 1
                page.keyboard.press("Tab")
                assert page.evaluate("document.activeElement.closest('#hand') === null")
                tabbed = True
            play_first_legal(page)
        else:  # pragma: no cover
            raise AssertionError("the hand did not end")
        assert named and tabbed
        said = page.evaluate("window.__said")
        plays = [t for t in said if re.match(r"^(West|North|East) plays the .+ of \w+\.$", t)]
        assert len(plays) == 39, said  # the bots' 39 plays, one by one
        assert any(t.startswith("Your turn: play") for t in said), said
        assert any(re.match(r"^(You win|\w+ wins) the trick\.$", t) for t in said), said
        log = page.inner_text("#table-log")
        assert len(re.findall(r"(West|North|East) plays ", log)) >= 10, log
        assert page.get_attribute("#table-log", "role") == "log"

        page.wait_for_selector("#game-over:not([hidden])", timeout=WAIT_MS)
        problems += axe_problems(page, "game over")
        page.click("#game-over-keep")
        page.wait_for_selector("#result:not([hidden])", timeout=WAIT_MS)
        problems += axe_problems(page, "result")
        page.click("#sheet-open")
        page.wait_for_selector("#sheet:not([hidden])", timeout=WAIT_MS)
        problems += axe_problems(page, "score sheet")
    assert problems == [], "\n".join(problems)
    assert errors == []


def test_the_pass_button_follows_the_chosen_cards_in_the_tab_order(tmp_path: Path) -> None:
    """A Hearts pass by keyboard: Space chooses three cards, and one Tab reaches *Pass*."""
    need_browser()

    with (
        served(tmp_path / "server.db", "--bot-clock", "3", "--human-clock", "120") as url,
        chromium() as browser,
    ):
        page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
        register(page, url, "tabby")
        page.select_option("#create-game", "hearts")
        page.click("#create-submit")
        page.wait_for_selector("#choose", timeout=WAIT_MS)
        page.wait_for_function("() => document.activeElement.closest('#hand') !== null")
        for _ in range(3):
            page.keyboard.press("Space")
            page.keyboard.press("ArrowRight")
        page.wait_for_selector("#choose:not([disabled])", timeout=WAIT_MS)
        page.keyboard.press("Tab")
        assert page.evaluate("document.activeElement.id") == "choose"
