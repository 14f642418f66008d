"""Issue 39 item 2, in a real browser against a real server: at 360x740, 390x844, 844x390 (a phone
on its side) and 1280x800, the trick, the seats and the whole hand are on the screen together
without scrolling, every card shows its suit (the corner an overlapped hand leaves in sight, found
by asking the browser what is drawn there), the hand's suits alternate colours, and the four-colour
deck gives each suit its own. Screenshots of the bid, a completed trick, the hand's result and the
score sheet at each size go to .artifacts/web/ (and, with SPADES_DOC_IMAGES=1, to docs/images/,
where docs/web.md shows them)."""

from __future__ import annotations

import itertools
import os
import re
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser import (
    ARTIFACTS,
    ROOT,
    need_browser,
    png_size,
    png_variety,
    served,
)
from tests.web.page import (
    STATE_JS,
    WAIT_MS,
    bid,
    chromium,
    fast_clock,
    next_frames,
    open_page,
    play_first_legal,
    register_and_open,
    set_pace,
    wait_state,
)

pytestmark = pytest.mark.timeout(300)

SIZES = [(360, 740), (390, 844), (844, 390), (1280, 800)]
DOC_IMAGES = ROOT / "docs" / "images"
SCENES = ["bid", "trick", "result", "sheet"]

# Where things are, and whether each card's suit is what the browser draws at that point.
LAYOUT_JS = """() => {
  const rect = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const shown = (el) => el.offsetParent !== null;
  const suitSeen = (card) => {
    const suit = card.querySelector('.corner .suit');
    const r = suit.getBoundingClientRect();
    const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
    return Boolean(hit && hit.closest('.card') === card) && getComputedStyle(suit).visibility !== 'hidden';
  };
  const cards = (sel) => [...document.querySelectorAll(sel)].map((c) => ({
    card: c.dataset.card, rect: rect(c), suitSeen: suitSeen(c), color: getComputedStyle(c).color }));
  return {
    width: window.innerWidth, height: window.innerHeight,
    scrollWidth: document.documentElement.scrollWidth, scrollY: window.scrollY,
    trick: rect(document.getElementById('trick')),
    seats: [...document.querySelectorAll('#felt .seat')].filter(shown).map(rect),
    hand: cards('#hand .card'),
    trickCards: cards('#trick .card'),
    buttons: [...document.querySelectorAll('#actions button')].map(rect),
  };
}"""


def inside(rect: list[float], width: int, height: int) -> bool:
    left, top, right, bottom = rect
    return left >= -0.5 and top >= -0.5 and right <= width + 0.5 and bottom <= height + 0.5


def check_layout(page: Any, scene: str, *, overlay: str | None = None) -> dict[str, Any]:
    """At each size: the trick, the seats and the whole hand (and the bid buttons) inside the
    viewport with the page scrolled to the top, each card's suit drawn, and the screenshot."""
    seen = {}
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.evaluate("window.scrollTo(0, 0)")
        next_frames(page)  # the page's redraw at the new size
        name = f"web-{scene}-{width}x{height}.png"
        data = page.screenshot(path=str(ARTIFACTS / name))
        g = page.evaluate(LAYOUT_JS)
        where = f"{scene} at {width}x{height}"
        assert g["scrollWidth"] <= width, f"{where}: the page scrolls sideways"
        if overlay is None:
            assert inside(g["trick"], width, height), (where, "trick", g["trick"])
            assert len(g["seats"]) == 4
            for seat in g["seats"]:
                assert inside(seat, width, height), (where, "seat", seat)
            assert len(g["hand"]) >= 1
            for card in g["hand"] + g["trickCards"]:
                assert inside(card["rect"], width, height), (where, card)
                assert card["suitSeen"], (where, "suit covered", card)
            for button in g["buttons"]:
                assert inside(button, width, height), (where, "button", button)
        else:
            box = page.eval_on_selector(
                overlay,
                "(el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; }",
            )
            assert inside(box, width, height), (where, overlay, box)
        assert png_size(data) == (width, height)
        assert png_variety(data) > 30, f"{where}: the screenshot looks blank"
        if os.environ.get("SPADES_DOC_IMAGES"):
            (DOC_IMAGES / name).write_bytes(data)
        seen[f"{width}x{height}"] = g
    page.set_viewport_size({"width": 1280, "height": 800})
    return seen


def colour_runs(colours: list[str]) -> int:
    """How many neighbours in the hand share a colour."""
    return sum(1 for a, b in itertools.pairwise(colours) if a == b)


def test_every_screen_shows_the_trick_the_seats_and_the_whole_hand(tmp_path: Path) -> None:
    need_browser()

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    with (
        served(tmp_path / "server.db", "--bot-clock", "3", "--human-clock", "120") as url,
        chromium() as browser,
    ):
        page = fast_clock(open_page(browser, errors))
        register_and_open(page, url, "layout", hands=1)
        set_pace(page, "fast")
        page.wait_for_function(STATE_JS, timeout=WAIT_MS)
        page.wait_for_selector("#actions button.bid", timeout=WAIT_MS)

        # The bid: thirteen cards and the bid buttons.
        geometry = check_layout(page, "bid")
        hand = geometry["1280x800"]["hand"]
        assert len(hand) == 13
        # Suits grouped, and no two suits of one colour side by side where the hand has a
        # red and a black suit to put between them.
        suits = [c["card"][1] for c in hand]
        groups = [s for i, s in enumerate(suits) if i == 0 or suits[i - 1] != s]
        assert len(groups) == len(set(groups)), suits
        colour = {"C": "black", "S": "black", "D": "red", "H": "red"}
        blacks = sum(1 for s in groups if colour[s] == "black")
        reds = len(groups) - blacks
        needed = max(0, abs(blacks - reds) - 1)
        assert colour_runs([colour[s] for s in groups]) == needed, groups
        # The four-colour deck: each suit its own colour, remembered.
        page.click("#settings summary")
        page.check("#four-colour")
        page.click("#settings summary")
        by_suit = page.evaluate(
            """() => { const seen = {}; for (const c of document.querySelectorAll('#hand .card'))
            seen[c.dataset.card[1]] = getComputedStyle(c).color; return seen; }"""
        )
        assert len(set(by_suit.values())) == len(by_suit), by_suit
        assert page.evaluate("localStorage.getItem('spades.fourColour')") == "yes"
        page.click("#settings summary")
        page.uncheck("#four-colour")
        page.click("#settings summary")

        bid(page, 3)
        trick_shot = False
        for _ in range(60):
            state = wait_state(page)
            if state == "over":
                break
            assert state == "play", state
            if not trick_shot and page.evaluate("spadesApp.table.view.last_trick.length") == 4:
                # A completed trick, as the player asks for it again (it stays put for the
                # screenshots, where a held one slides away after its pace).
                page.click("#last-trick")
                page.wait_for_selector("#trick.review", timeout=WAIT_MS)
                geometry = check_layout(page, "trick")
                assert len(geometry["390x844"]["trickCards"]) == 4
                page.click("#last-trick")
                trick_shot = True
            play_first_legal(page)
        else:  # pragma: no cover
            raise AssertionError("the hand did not end")
        assert trick_shot

        page.click("#game-over-keep")
        page.wait_for_selector("#result:not([hidden])", timeout=WAIT_MS)
        check_layout(page, "result", overlay="#result")
        page.click("#sheet-open")
        page.wait_for_selector("#sheet:not([hidden])", timeout=WAIT_MS)
        check_layout(page, "sheet", overlay="#sheet .dialog")
    assert errors == []


def test_the_doc_shows_each_screenshot_and_they_stay_small() -> None:
    """docs/web.md shows the four scenes at the four sizes; the images exist and weigh little."""
    text = (ROOT / "docs" / "web.md").read_text()
    shown = set(re.findall(r"\(images/(web-[a-z]+-\d+x\d+\.png)\)", text))
    wanted = {f"web-{scene}-{w}x{h}.png" for scene in SCENES for w, h in SIZES}
    assert wanted <= shown, sorted(wanted - shown)
    total = 0
    for name in wanted:
        data = (DOC_IMAGES / name).read_bytes()
        width, height = png_size(data)
        assert f"{width}x{height}" in name
        total += len(data)
    assert total < 600_000, f"the screenshots weigh {total} bytes"
