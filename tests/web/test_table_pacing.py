"""Issue 39 item 1, in a real browser against a real server with three heuristic bots: every
completed trick stays on the table for the time the player chose (remembered across a reload), the
last trick can be looked at again, the hand's result stays until the next bid is asked, and a score
sheet lists every hand. Bots answer at once, so without the page's own pacing a trick would vanish
within a frame (the issue counted 58 of 78 tricks never drawn)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.web.browser import need_browser, served
from tests.web.page import (
    WAIT_MS,
    bid,
    chromium,
    fast_clock,
    open_page,
    play_first_legal,
    register_and_open,
    set_pace,
    wait_state,
)

pytestmark = pytest.mark.timeout(300)

FAST_TRICK_MS = 800  # the page's "fast" pace (PACES in server/web/static/js/app.js)

# Sampled at every animation frame: how long each held trick (data-held on #trick) showed its four
# cards, when the hand's summary showed and hid, and when a bid was first asked after it showed.
WATCH_JS = """(() => {
  const seen = window.__seen = { held: {}, summaryShown: null, summaryHidden: null, bidAsked: null };
  const frame = () => {
    const now = performance.now();
    const trick = document.getElementById('trick');
    const id = trick && trick.dataset.held;
    if (id && trick.querySelectorAll('.card').length === 4) {
      const span = seen.held[id] || (seen.held[id] = [now, now]);
      span[1] = now;
    }
    const result = document.getElementById('result');
    const shown = Boolean(result && !result.hidden);
    if (shown && seen.summaryShown === null) seen.summaryShown = now;
    if (!shown && seen.summaryShown !== null && seen.summaryHidden === null) seen.summaryHidden = now;
    if (seen.summaryShown !== null && seen.bidAsked === null && document.querySelector('#actions button.bid')) {
      seen.bidAsked = now;
    }
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
})()"""


def test_tricks_stay_the_result_stays_and_the_score_sheet_lists_every_hand(tmp_path: Path) -> None:
    need_browser()

    errors: list[str] = []
    with (
        served(tmp_path / "server.db", "--bot-clock", "3", "--human-clock", "90") as url,
        chromium() as browser,
    ):
        # On the fake clock: each hold passes at once in real time and whole in the page's time,
        # every frame of it drawn and sampled (WATCH_JS reads the page's own clock).
        page = fast_clock(open_page(browser, errors))
        register_and_open(page, url, "pace", hands=2)
        # The pace is the player's, remembered in this browser.
        assert page.input_value("#pace") == "normal"
        set_pace(page, "slow")
        assert page.evaluate("localStorage.getItem('spades.pace')") == "slow"
        page.reload()
        page.wait_for_selector("#table-screen:not([hidden]) #hand .card", timeout=WAIT_MS)
        assert page.input_value("#pace") == "slow"
        set_pace(page, "fast")
        page.evaluate(WATCH_JS)

        looked_back = False
        for _ in range(120):  # two hands: 2 bids and 26 plays; the bound is generous
            state = wait_state(page)
            if state == "over":
                break
            if state == "bid":
                bid(page, 2)
                continue
            if not looked_back and page.evaluate("spadesApp.table.view.last_trick.length") == 4:
                # The last trick on demand, named card by card, then back to the table.
                last = page.evaluate("spadesApp.table.view.last_trick.map((p) => p[1])")
                page.click("#last-trick")
                page.wait_for_selector("#trick.review", timeout=WAIT_MS)
                shown = page.eval_on_selector_all(
                    "#trick .card", "(cards) => cards.map((c) => c.dataset.card)"
                )
                assert sorted(shown) == sorted(last)
                assert "Last trick" in page.inner_text("#trick")
                page.click("#last-trick")
                page.wait_for_selector("#trick:not(.review)", timeout=WAIT_MS)
                looked_back = True
            play_first_legal(page)
        else:  # pragma: no cover
            raise AssertionError("the game did not end")
        assert looked_back

        seen = page.evaluate("window.__seen")
        held = seen["held"]
        # Every one of the 26 tricks stayed on the table, whole, for (nearly) the chosen time:
        # a frame or two is lost to sampling, no more.
        assert len(held) == 26, sorted(held)
        shortest = min(end - start for start, end in held.values())
        assert shortest >= FAST_TRICK_MS - 150, held

        # The first hand's result stayed on the screen until the next bid was asked.
        assert seen["summaryShown"] is not None and seen["bidAsked"] is not None
        assert seen["summaryHidden"] is not None
        assert seen["summaryHidden"] >= seen["bidAsked"] - 50, seen

        # The last hand's result: each side's bid and tricks, made or set, points and bags.
        page.wait_for_selector("#result:not([hidden])", timeout=WAIT_MS)
        summary = page.inner_text("#result")
        assert "Hand 2 result" in summary
        assert re.search(r"\b(made|set)\b", summary), summary
        assert re.search(r"bags? \d+ of 10", summary, re.I), summary
        assert "Us" in summary and "Them" in summary

        # The game-over dialog carries the score sheet; the sheet has a row for each hand.
        sheet = page.locator("#game-over .sheet tbody tr")
        assert sheet.count() == 2
        assert sheet.nth(0).inner_text().startswith("1")
        page.click("#game-over-keep")  # stay at the table to read it
        page.click("#sheet-open")
        page.wait_for_selector("#sheet:not([hidden])", timeout=WAIT_MS)
        assert page.locator("#sheet .sheet tbody tr").count() == 2
        page.keyboard.press("Escape")
        page.wait_for_selector("#sheet", state="hidden", timeout=WAIT_MS)
        # The result panel can be closed by hand.
        page.click("#result-close")
        page.wait_for_selector("#result", state="hidden", timeout=WAIT_MS)
    assert errors == []
