"""The page in a real browser: a person registers, opens a one-hand table with three bots, plays the
whole hand by clicking (reloading the page and losing the connection on the way), and a second
browser, a phone-sized one with a touch screen, watches as a guest. Screenshots at 1280x800 and
390x844 are checked for the hand and the trick and kept under .artifacts/web/."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.web.browser import (
    ARTIFACTS,
    need_browser,
    png_size,
    png_variety,
    served,
)
from tests.web.page import (
    WAIT_MS,
    chromium,
    collect_errors,
    enter_as_guest,
    fast_clock,
    next_frames,
    open_page,
    open_phone,
    register,
    wait_for,
    wait_state,
)

pytestmark = pytest.mark.timeout(300)

# What the page asks of its player now (the same facts a person reads off the screen).
STATE_JS = """() => {
  const over = document.getElementById('game-over');
  if (over && !over.hidden) return 'over';
  if (document.getElementById('choose')) return 'choose';
  if (document.querySelector('#hand .card.legal')) return 'play';
  if (document.querySelector('#actions button.bid')) return 'bid';
  return '';
}"""
GEOMETRY_JS = """() => {
  const rect = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  return {
    scrollWidth: document.documentElement.scrollWidth,
    width: window.innerWidth,
    height: window.innerHeight,
    hand: [...document.querySelectorAll('#hand .card')].map(rect),
    trick: [...document.querySelectorAll('#trick .card')].map(rect),
  };
}"""


def check_screen(page: Any, name: str, *, hand: bool) -> None:
    """Screenshot the viewport and check that the hand (if a seat) and the trick are on it, whole."""
    data = page.screenshot(path=str(ARTIFACTS / f"{name}.png"))
    geometry = page.evaluate(GEOMETRY_JS)
    width, height = geometry["width"], geometry["height"]
    assert png_size(data) == (width, height)
    assert png_variety(data) > 30, "the screenshot looks blank"
    assert geometry["scrollWidth"] <= width, "the page scrolls sideways"
    assert geometry["trick"], "no trick on the screen"
    if hand:
        assert len(geometry["hand"]) >= 1
    for left, top, right, bottom in geometry["trick"] + (geometry["hand"] if hand else []):
        assert left >= 0 and right <= width and top >= 0 and bottom <= height, (name, geometry)
    if hand:
        assert max(r[3] for r in geometry["trick"]) <= min(r[1] for r in geometry["hand"])


def test_a_whole_game_in_the_browser(tmp_path: Path) -> None:
    need_browser()

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    with (
        served(tmp_path / "server.db", "--bot-clock", "3", "--human-clock", "90") as url,
        chromium() as browser,
    ):
        page = fast_clock(open_page(browser, errors, label="player"))
        register(page, url, "ada")
        assert page.evaluate("localStorage.getItem('spades.token')")
        assert "ada" in page.inner_text("#token-banner")

        # The rules of a preset are on the lobby's form before anyone sits.
        page.select_option("#create-preset", "standard")
        page.click("#preset-rules summary")
        assert "Game to\n500 points" in page.inner_text("#preset-options")
        page.fill("#create-hands", "1")
        page.click("#create-submit")
        page.wait_for_selector("#table-screen:not([hidden]) #hand .card", timeout=WAIT_MS)
        assert page.locator("#hand .card").count() == 13
        table_id = page.evaluate("spadesApp.table.table")

        # A phone watches: touch screen, 390 px wide, a guest.
        phone = fast_clock(open_phone(browser, errors, label="watcher", device_scale_factor=1))
        phone.goto(url)
        enter_as_guest(phone, "bob", touch=True, at_lobby=False)
        item = f'article[data-table="{table_id}"]'
        phone.wait_for_selector(item, timeout=WAIT_MS)
        assert "standard" in phone.inner_text(item)  # the table's rules, before sitting
        phone.tap(f"{item} summary")
        rules = phone.inner_text(f"{item} .rules")  # with the table's own override, in words
        assert "Game to\n500 points" in rules and "Hands\n1 hand" in rules, rules
        phone.tap(f"{item} button:has-text('Watch')")
        phone.wait_for_selector("#table-screen:not([hidden])", timeout=WAIT_MS)
        # The felt is drawn on the next animation frame after the screen shows: wait for it.
        phone.wait_for_function(
            "() => document.getElementById('felt').textContent.includes('ada')", timeout=WAIT_MS
        )

        played: list[str] = []
        bids = 0
        shots = reloaded = dropped = False
        for _ in range(120):  # a hand is 13 plays and a bid; the bound is generous
            state = wait_state(page, STATE_JS)
            if state == "over":
                break
            version = page.evaluate("spadesApp.table.view.version")
            if state == "bid":
                buttons = page.locator("#actions button.bid")
                buttons.nth(min(3, buttons.count() - 1)).click()
                bids += 1
            elif state == "play":
                if not shots and page.locator("#trick:not(.last) .card").count():
                    check_screen(page, "table-1280x800", hand=True)
                    page.set_viewport_size({"width": 390, "height": 844})
                    next_frames(page)  # the page's redraw at the new size
                    check_screen(page, "table-390x844", hand=True)
                    page.set_viewport_size({"width": 1280, "height": 800})
                    phone.wait_for_selector("#trick .card", timeout=WAIT_MS)
                    check_screen(phone, "watching-390x844", hand=False)
                    shots = True
                card = page.locator("#hand .card.legal").first
                played.append(str(card.get_attribute("data-card")))
                card.click()
            else:  # pragma: no cover - the page offered something a standard hand has not
                raise AssertionError(f"unexpected choice {state!r}")
            # Our action applied: the game moved past the version we acted on.
            wait_for(page, "(v) => spadesApp.table && spadesApp.table.view.version > v", version)
            if len(played) == 4 and not reloaded:
                # Reload mid-hand: the token in localStorage brings the seat back.
                page.reload()
                wait_for(page, "() => document.querySelectorAll('#hand .card').length === 9")
                reloaded = True
            elif len(played) == 8 and not dropped:
                # The Wi-Fi drops: the page gives up on its socket, which the server still
                # believes in (nothing closed it), reconnects by itself and takes its seat back.
                page.evaluate(
                    "() => { const c = spadesApp.conn; c.ws.onclose = null;"
                    " window.stale = c.ws; c.lost('test: the Wi-Fi dropped'); }"
                )
                page.wait_for_function(
                    "() => document.getElementById('status').textContent !== 'connected'",
                    timeout=WAIT_MS,
                )
                page.wait_for_function(
                    "() => document.getElementById('status').textContent === 'connected'",
                    timeout=WAIT_MS,
                )
                page.wait_for_function("() => spadesApp.takeovers === 1", timeout=WAIT_MS)
                dropped = True
        else:  # pragma: no cover
            raise AssertionError("the hand did not end")
        assert bids == 1 and len(played) == 13 and shots and reloaded and dropped
        assert page.locator("#hand .card").count() == 0

        # The hand's result and the game's end, with the deal checked in the browser.
        page.wait_for_selector('#game-over .verdict[data-verdict="verified"]', timeout=WAIT_MS)
        assert "win" in page.inner_text("#game-over-body")
        assert "Hand 1 result" in page.inner_text("#result")
        wait_for(phone, "() => !!document.querySelector('#game-over:not([hidden]) .verdict')")
        assert phone.locator("#game-over .verdict").get_attribute("data-verdict") in (
            "verified",
            "seed matches",
        )
        page.screenshot(path=str(ARTIFACTS / "game-over-1280x800.png"))
    assert errors == []


def test_a_hearts_pass_and_a_play_with_the_keyboard_alone(tmp_path: Path) -> None:
    """No mouse: Tab and the arrow keys move between cards, Space chooses, Enter passes and plays."""
    need_browser()

    errors: list[str] = []
    with (
        served(tmp_path / "server.db", "--bot-clock", "3", "--human-clock", "90") as url,
        chromium() as browser,
    ):
        page = open_page(browser, errors)
        page.goto(url)
        page.fill("#login-name", "kim")
        page.keyboard.press("Enter")  # the form's first button: Register
        page.wait_for_selector("#lobby-screen:not([hidden])", timeout=WAIT_MS)
        page.select_option("#create-game", "hearts")
        page.focus("#create-submit")
        page.keyboard.press("Enter")
        page.wait_for_selector("#choose", timeout=WAIT_MS)
        assert "pass" in page.inner_text("#prompt").lower()
        # The page puts the focus on the hand when the turn comes.
        page.wait_for_function("() => document.activeElement.closest('#hand') !== null")
        chosen = []
        for _ in range(3):
            chosen.append(page.evaluate("document.activeElement.dataset.card"))
            page.keyboard.press("Space")
            page.keyboard.press("ArrowRight")
        # (The page redraws at the next frame: wait for it rather than read it at once.)
        page.wait_for_function(
            "() => document.querySelectorAll('#hand .card.selected').length === 3",
            timeout=WAIT_MS,
        )
        page.wait_for_selector("#choose:not([disabled])", timeout=WAIT_MS)
        page.focus("#choose")
        page.keyboard.press("Enter")
        # The three cards leave the hand; three others arrive from the right-hand seat.
        page.wait_for_function(
            "(gone) => gone.every((c) => !document.querySelector(`#hand [data-card='${c}']`))"
            " && document.querySelectorAll('#hand .card').length === 13",
            arg=chosen,
            timeout=WAIT_MS,
        )
        # Then play: the focus is on a legal card when the turn comes; Enter plays it.
        page.wait_for_selector("#hand .card.legal", timeout=WAIT_MS)
        page.wait_for_function(
            "() => document.activeElement.classList.contains('legal')", timeout=WAIT_MS
        )
        card = page.evaluate("document.activeElement.dataset.card")
        page.keyboard.press("Enter")
        page.wait_for_function(
            "(c) => !document.querySelector(`#hand [data-card='${c}']`)",
            arg=card,
            timeout=WAIT_MS,
        )
        assert page.evaluate("(c) => spadesApp.table.view.played.includes(c)", card)
    assert errors == []


def test_friends_at_a_private_table_chat_and_see_who_is_gone(tmp_path: Path) -> None:
    """A private table with two bots: a friend joins the open seat with its code, both chat, and
    when the friend's browser goes away the host sees that seat disconnected."""
    need_browser()

    errors: list[str] = []
    with (
        served(tmp_path / "server.db", "--bot-clock", "3", "--human-clock", "90") as url,
        chromium() as browser,
    ):
        host = open_page(browser, errors, label="host")
        register(host, url, "host")
        host.uncheck("#create-bots input[value='3']")
        host.check("#create-private")
        host.click("#create-submit")
        host.wait_for_selector("#table-screen:not([hidden])", timeout=WAIT_MS)
        host.wait_for_function(
            "() => document.getElementById('table-code').textContent.startsWith('code ')"
        )
        code = host.inner_text("#table-code").removeprefix("code ")
        table_id = host.evaluate("spadesApp.table.table")

        friend_context = browser.new_context(
            viewport={"width": 360, "height": 740}, is_mobile=True, has_touch=True
        )
        friend = friend_context.new_page()
        collect_errors(friend, errors, "friend")
        friend.goto(url)
        enter_as_guest(friend, "friend", touch=True)
        # Listed, marked private: the code is needed to sit.
        assert "private" in friend.inner_text(f'article[data-table="{table_id}"]')
        friend.fill("#code-table", table_id)
        friend.fill("#code-code", code)
        friend.tap("#code-form button[type='submit']")
        friend.wait_for_selector("#table-screen:not([hidden]) #hand .card", timeout=WAIT_MS)
        friend.wait_for_function(
            "() => document.querySelectorAll('#hand .card').length === 13", timeout=WAIT_MS
        )
        check_no_sideways_scroll(friend)

        friend.fill("#table-chat-input", "hello from the phone")
        friend.tap("#table-chat-form button")
        host.wait_for_function(
            "() => document.getElementById('table-log').textContent.includes('hello from the phone')",
            timeout=WAIT_MS,
        )
        host.wait_for_function(
            "() => document.getElementById('felt').textContent.includes('friend')",
            timeout=WAIT_MS,
        )

        friend_context.close()  # the phone's browser goes away
        host.wait_for_selector("#felt .offline", timeout=WAIT_MS)
        assert "disconnected" in host.inner_text("#felt")
        # The table said so (seat_status), with how long the seat is held for the friend.
        host.wait_for_selector("#felt .hold", timeout=WAIT_MS)
        assert "seat held" in host.inner_text("#felt .hold")
        assert "lost the connection" in host.inner_text("#table-log")
    assert errors == []


def check_no_sideways_scroll(page: Any) -> None:
    geometry = page.evaluate(GEOMETRY_JS)
    assert geometry["scrollWidth"] <= geometry["width"]
    for left, _top, right, _bottom in geometry["hand"]:
        assert left >= 0 and right <= geometry["width"]


# Both names resolve to this server, as a rebinding attacker's name would.
RESOLVER_RULES = "--host-resolver-rules=MAP evil.example 127.0.0.1, MAP club.example 127.0.0.1"
OPEN_WEBSOCKET_JS = """(url) => new Promise((resolve) => {
  const ws = new WebSocket(url);
  ws.onopen = () => { ws.close(); resolve('open'); };
  ws.onerror = () => resolve('refused');
})"""


def test_a_dns_rebinding_page_gets_nothing_and_a_listed_name_plays(tmp_path: Path) -> None:
    """What DNS rebinding leaves a browser with, made with Chromium's resolver rules: a name that
    resolves to this server. For a name the server was not given, neither the page nor a
    WebSocket opened by that page's script; for a name given with --web-name, the page plays."""
    need_browser()

    with (
        served(tmp_path / "server.db", "--web-name", "club.example") as url,
        chromium(RESOLVER_RULES) as browser,
    ):
        port = int(url.rsplit(":", 1)[1])
        # bypass_csp: so that a WebSocket refused is the server's doing, not the page's CSP.
        page = browser.new_context(bypass_csp=True).new_page()
        response = page.goto(f"http://evil.example:{port}/")
        assert response is not None and response.status == 421
        assert "DNS rebinding" in page.inner_text("body")
        assert page.evaluate(OPEN_WEBSOCKET_JS, f"ws://evil.example:{port}/ws") == "refused"
        page.goto(f"http://club.example:{port}/")
        # The same script from the listed name's page: the way of telling is sound.
        assert page.evaluate(OPEN_WEBSOCKET_JS, f"ws://club.example:{port}/ws") == "open"
        enter_as_guest(page, "clubber")
