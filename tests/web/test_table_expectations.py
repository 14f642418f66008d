"""Issue 39 item 4, in a real browser against a real server: what players of other card sites expect.
Bots named by kind and the partner marked; *Look at my cards* the first (and focused) choice where a
blind nil is offered, blind bids marked risky, each nil with its stakes; offline shown at once; the
log kept across a reload; an invite link that seats a friend; *Play again*."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.web.browser import need_browser, served
from tests.web.page import (
    WAIT_MS,
    bid,
    chromium,
    collect_errors,
    create_table,
    enter_as_guest,
    fast_clock,
    open_page,
    open_phone,
    play_first_legal,
    register,
    register_and_open,
    set_pace,
    wait_for,
    wait_state,
)

pytestmark = pytest.mark.timeout(300)

# What the page asks of its seated player now, where a blind nil is offered: to look at the
# cards first.
PERSON_JS = """() => {
  const over = document.getElementById('game-over');
  if (over && !over.hidden) return 'over';
  const buttons = [...document.querySelectorAll('#actions button')];
  if (buttons.some((b) => b.textContent.includes('Look at my cards'))) return 'look';
  if (document.querySelector('#hand .card.legal')) return 'play';
  if (document.querySelector('#actions button.bid')) return 'bid';
  return '';
}"""
# Which of the two people (the host at seat 0, the friend at seat 2) acts next, as the host's page
# knows it once the game has moved past `version` (a `turn` names who acts next): [who, version].
WHO_JS = """(version) => {
  const over = document.getElementById('game-over');
  if (over && !over.hidden) return ['over', version];
  const table = spadesApp.table;
  if (!table || table.view.version <= version) return null;
  const acting = table.acting();
  const who = acting.includes(0) ? 'host' : acting.includes(2) ? 'friend' : null;
  return who && [who, table.view.version];
}"""


def take_turn(page: Any) -> str:
    """Look at the cards (where asked first), bid (the third button) or play the first legal
    card, whichever the page asks; what it asked."""
    state = wait_state(page, PERSON_JS)
    if state == "look":
        page.locator("#actions button", has_text="Look at my cards").click()
        wait_for(page, "() => !!document.querySelector('#actions button.bid')")
        state = "bid"
    if state == "bid":
        bid(page, 2)
    elif state == "play":
        play_first_legal(page)
    return state


def test_what_players_expect(tmp_path: Path) -> None:
    need_browser()

    errors: list[str] = []
    with (
        served(tmp_path / "server.db", "--bot-clock", "3", "--human-clock", "120") as url,
        chromium() as browser,
    ):
        host_context = browser.new_context(viewport={"width": 1280, "height": 800})
        host = fast_clock(host_context.new_page())
        collect_errors(host, errors, "host")
        register(host, url, "host")
        # The form says where each bot sits for you, and lists the rules of this game only,
        # in words.
        assert "your partner" in host.inner_text("#create-bots")
        host.click("#preset-rules summary")
        rules = host.inner_text("#preset-options")
        assert "Nil is worth" in rules and "moon" not in rules and "True" not in rules, rules
        host.select_option("#create-game", "hearts")
        rules = host.inner_text("#preset-options")
        assert "moon" in rules and "Nil is worth" not in rules, rules
        host.select_option("#create-game", "spades")
        # A private table, blind nil allowed, the partner's seat left for a friend.
        reply = create_table(
            host, options={"blind_nil": True, "max_hands": 1}, bots=[1, 3], private=True
        )
        assert reply["t"] == "table_created", reply
        host.wait_for_selector("#table-screen:not([hidden])", timeout=WAIT_MS)
        set_pace(host, "fast")
        felt = host.inner_text("#felt")
        assert "heuristic bot" in felt and "bot:" not in felt, felt

        # The invite link carries the table and its code; a friend opens it and sits.
        host.wait_for_function(
            "() => document.getElementById('invite').dataset.link.includes('code=')",
            timeout=WAIT_MS,
        )
        link = host.get_attribute("#invite", "href")
        assert link is not None and reply["table"] in link and reply["code"] in link
        friend = fast_clock(open_phone(browser, errors, label="friend"))
        friend.goto(link)
        enter_as_guest(friend, "friend", touch=True, at_lobby=False)
        # Seated at the open seat (the partner's); blind nil is on, so the cards wait face down.
        friend.wait_for_function(
            "() => spadesApp.table && spadesApp.table.seat === 2"
            " && spadesApp.table.view.hand_number === 1",
            timeout=WAIT_MS,
        )
        assert friend.evaluate("spadesApp.table.seat") == 2
        assert "#" not in friend.url  # the link is used once, not on every reload
        # Each sees the other as partner.
        host.wait_for_function(
            "() => document.getElementById('seat-top').textContent.includes('your partner')"
            " && document.getElementById('seat-top').textContent.includes('friend')",
            timeout=WAIT_MS,
        )

        # The host's first choice: look at the cards (focused), blind nil last and marked. (The
        # first dealer is drawn: the friend may have to bid first, and does.)
        version = -1
        for _ in range(4):  # the friend bids at most once before the host
            who, version = wait_for(host, WHO_JS, version)
            if who == "host":
                break
            assert who == "friend" and take_turn(friend) == "bid", who
        else:  # pragma: no cover
            raise AssertionError("the host's turn never came")
        host.wait_for_selector("#actions button", timeout=WAIT_MS)
        first = host.locator("#actions button").first
        assert first.inner_text() == "Look at my cards"
        host.wait_for_function(
            "() => document.activeElement && document.activeElement.textContent === 'Look at my cards'",
            timeout=WAIT_MS,
        )
        blind = host.locator("#actions button", has_text="Blind nil")
        assert blind.count() == 1 and "risky" in (blind.get_attribute("class") or "")
        assert "(±100)" in blind.inner_text()
        first.click()
        # The bids once the cards are seen: waited for by the Nil bid itself, since the choice
        # shown before the look already has a bid button (Blind nil) that a wait for any bid
        # button would take while the page has not yet drawn the new choice.
        host.wait_for_function(
            "() => !Array.from(document.querySelectorAll('#actions button'))"
            ".some((b) => b.textContent === 'Look at my cards')"
            " && Array.from(document.querySelectorAll('#actions button.bid'))"
            ".some((b) => b.textContent.startsWith('Nil'))",
            timeout=WAIT_MS,
        )
        nil = host.locator("#actions button.bid", has_text=re.compile(r"^Nil\b"))
        assert nil.count() == 1 and nil.first.inner_text() == "Nil (±100)"

        # Offline: said at once, not "connected", and no "waiting for" ourselves.
        host_context.set_offline(True)
        host.wait_for_function(
            "() => document.getElementById('status').textContent.includes('offline')",
            timeout=3000,
        )
        host.wait_for_function(
            "() => document.getElementById('prompt').textContent.startsWith('Not connected')",
            timeout=3000,
        )
        host_context.set_offline(False)
        host.wait_for_function(
            "() => document.getElementById('status').textContent === 'connected'",
            timeout=WAIT_MS,
        )

        # The log survives a reload.
        host.wait_for_selector("#actions button.bid", timeout=WAIT_MS)
        before = host.inner_text("#table-log")
        assert "looked at the cards" in before
        host.reload()
        host.wait_for_selector("#table-screen:not([hidden])", timeout=WAIT_MS)
        host.wait_for_function(
            "() => document.getElementById('table-log').textContent.includes('looked at the cards')",
            timeout=WAIT_MS,
        )

        # Both play the hand out; then the host plays again at a new table like this one.
        # (Each turn taken where the host's page says it is: no poll of two pages.)
        version = -1
        for _ in range(60):  # a bid and 13 cards each; the bound is generous
            who, version = wait_for(host, WHO_JS, version)
            if who == "over":
                break
            assert take_turn(host if who == "host" else friend) in ("bid", "play"), who
        else:  # pragma: no cover
            raise AssertionError("the hand did not end")
        assert wait_state(friend, PERSON_JS) == "over"
        old_table = host.evaluate("spadesApp.table.table")
        host.click("#play-again")
        host.wait_for_function(
            "(old) => spadesApp.table && spadesApp.table.table !== old"
            " && spadesApp.table.seat === 0 && spadesApp.tables.has(spadesApp.table.table)",
            arg=old_table,
            timeout=WAIT_MS,
        )
        bots = host.evaluate(
            "() => spadesApp.tables.get(spadesApp.table.table).seats.filter((s) => s.bot).map((s) => s.seat)"
        )
        assert bots == [1, 3]  # the partner's seat open again, for the friend
        info = host.evaluate("() => spadesApp.tables.get(spadesApp.table.table)")
        assert info["private"] and info["options"].get("blind_nil") is True
    assert errors == []


def test_a_forced_card_plays_itself_and_a_hidden_tab_blinks(tmp_path: Path) -> None:
    """With *Play my only legal card for me*, the last trick's card (the only one left) is played
    without a click; with the turn alert, a hidden tab's title blinks when the turn comes."""
    need_browser()

    errors: list[str] = []
    with (
        served(tmp_path / "server.db", "--bot-clock", "3", "--human-clock", "120") as url,
        chromium() as browser,
    ):
        page = fast_clock(open_page(browser, errors))
        register_and_open(page, url, "auto", hands=1)
        page.click("#settings summary")
        page.select_option("#pace", "fast")
        page.check("#autoplay")
        page.check("#turn-alert")
        page.click("#settings summary")
        assert page.evaluate("localStorage.getItem('spades.autoplay')") == "yes"
        # The tab is hidden (as the browser says when the player looks elsewhere).
        page.evaluate(
            "() => { Object.defineProperty(document, 'hidden', { configurable: true, get: () => true });"
            " document.dispatchEvent(new Event('visibilitychange')); }"
        )
        page.wait_for_function("() => document.title.startsWith('▶ Your turn')", timeout=WAIT_MS)
        page.evaluate(
            "() => { Object.defineProperty(document, 'hidden', { configurable: true, get: () => false });"
            " document.dispatchEvent(new Event('visibilitychange')); }"
        )
        page.wait_for_function("() => document.title === 'Spades table'", timeout=WAIT_MS)

        clicked = forced = 0
        for _ in range(60):
            state = wait_state(page)
            if state == "over":
                break
            if state == "bid":
                bid(page, 2)
                continue
            # The legal cards read in one step: the page may play a forced card a beat after
            # showing it, so a count and then a click could each see another moment.
            legal = page.evaluate(
                "() => [...document.querySelectorAll('#hand .card.legal')].map(c => c.dataset.card)"
            )
            if not legal:
                # Gone between the two reads: nothing was clicked, so the page played the
                # turn's only card (the clock is two minutes: no fallback played it).
                forced += 1
                continue
            name = legal[0]
            if len(legal) == 1:
                forced += 1  # not clicked: the page plays it
            else:
                page.click(f"#hand [data-card='{name}']")
                clicked += 1
            wait_for(page, "(name) => !document.querySelector(`#hand [data-card='${name}']`)", name)
        else:  # pragma: no cover
            raise AssertionError("the hand did not end")
        assert forced >= 1 and clicked + forced == 13
    assert errors == []
