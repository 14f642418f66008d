"""Issue 39 item 4's remainder, in a real browser against a real server: the bots' strength chosen
in the create form (and kept by *Play again*), the bots named by it ("West (quick search bot)"); the
rules panel in words from the engine's option table (the preset's description, only the options
of this game that matter, values in words); the game-over dialog with the players' names, the final
scores, the hand-by-hand sheet and *Play again*."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.web.browser import need_browser, served
from tests.web.page import (
    WAIT_MS,
    chromium,
    enter_as_guest,
    fast_clock,
    next_frames,
    open_page,
    open_phone,
    play_first_legal,
    play_hand,
    register,
    set_pace,
    wait_for,
    wait_state,
)

pytestmark = pytest.mark.timeout(300)

ALIGNED_JS = """() => {
  const dl = document.querySelector('#preset-options dl');
  const pairs = [...dl.children];
  if (!pairs.length || pairs.length % 2) return false;
  return pairs.every((el, i) => i % 2 ? el.tagName === 'DD' : el.tagName === 'DT'
    && Math.abs(el.getBoundingClientRect().top - el.nextElementSibling.getBoundingClientRect().top) < 2);
}"""
KINDS_JS = "() => [...document.querySelectorAll('#create-bot option')].map((o) => o.value)"


def test_bot_strength_rules_in_words_and_the_game_over_dialog(tmp_path: Path) -> None:
    need_browser()

    errors: list[str] = []
    with (
        served(tmp_path / "server.db", "--bot-clock", "3", "--human-clock", "120") as url,
        chromium() as browser,
    ):
        page = fast_clock(open_page(browser, errors))
        register(page, url, "chooser")

        # The rules in words: the preset's description, then each option of this game that
        # matters, from the engine's table; no engine keys, no true/false, no Hearts option.
        page.select_option("#create-preset", "standard")
        page.click("#preset-rules summary")
        rules = page.inner_text("#preset-options")
        assert "Spades as pagat gives it" in rules, rules
        assert "Nil is worth" in rules and "100 points" in rules, rules
        assert "Blind nil" in rules and "Blind nil is worth" not in rules, rules
        assert "the player on the dealer's left" in rules, rules
        for word in ("_", "true", "false", "moon", "Passing", "hearts"):
            assert word not in rules, (word, rules)
        # Each label beside its value: the list holds only label and value pairs (the
        # description before it once shifted every value into the next label's row).
        assert page.evaluate(ALIGNED_JS), "a rules label is not beside its value"
        page.select_option("#create-preset", "yahoo")
        rules = page.inner_text("#preset-options")
        assert "Blind nil is worth" in rules and "200 points" in rules, rules
        assert "counted in the score's last digit" in rules, rules
        page.select_option("#create-game", "hearts")
        rules = page.inner_text("#preset-options")
        assert "Shooting the moon" in rules and "Nil" not in rules and "Bags" not in rules
        assert "left, right, across, no pass" in rules, rules
        page.select_option("#create-game", "spades")
        page.select_option("#create-preset", "standard")

        # The bots' strength: four kinds, weakest first, heuristic by default.
        assert page.evaluate(KINDS_JS) == ["random", "heuristic", "search_fast", "search"]
        assert page.input_value("#create-bot") == "heuristic"
        page.select_option("#create-bot", "search_fast")
        page.fill("#create-hands", "1")
        page.click("#create-submit")
        page.wait_for_selector("#table-screen:not([hidden]) #hand .card", timeout=WAIT_MS)
        set_pace(page, "fast")
        page.wait_for_function(
            "() => (document.getElementById('felt').textContent.match(/quick search bot/g)"
            " || []).length === 3",
            timeout=WAIT_MS,
        )
        assert "bot:" not in page.inner_text("#felt")
        # At the table too, the rules in words: the preset's, with the table's own changes.
        page.click("#table-rules summary")
        rules = page.inner_text("#table-rules")
        assert "Spades as pagat gives it" in rules and "Hands\n1 hand" in rules, rules
        assert "Hand by hand" not in rules  # no Crazy schedule here: not listed as "none"
        page.click("#table-rules summary")
        table = page.evaluate("spadesApp.table.table")
        kinds = page.evaluate(
            "(t) => spadesApp.tables.get(t).seats.map((s) => s.bot_kind ?? null)", table
        )
        assert kinds == [None, "search_fast", "search_fast", "search_fast"]

        play_hand(page)

        # The game-over dialog: who played, the final scores, the sheet, Play again.
        dialog = page.inner_text("#game-over")
        over = page.evaluate("spadesApp.table.gameOver")
        for name in (
            "You",
            "West (quick search bot)",
            "North (quick search bot)",
            "East (quick search bot)",
        ):
            assert name in dialog, (name, dialog)
        finals = page.locator("#game-over .finals li")
        assert finals.count() == 2
        for i, score in enumerate(over["scores"]):
            line = finals.nth(i).inner_text()
            assert re.search(rf"(?<![\d−-]){re.escape(str(score).replace('-', '−'))}$", line)
        assert "You and North (quick search bot)" in finals.nth(0).inner_text()
        assert page.locator("#game-over .sheet tbody tr").count() == 1
        assert page.locator("#game-over #play-again").is_visible()
        page.click("#play-again")
        page.wait_for_function(
            "(old) => spadesApp.table && spadesApp.table.table !== old"
            " && spadesApp.tables.has(spadesApp.table.table)",
            arg=table,
            timeout=WAIT_MS,
        )
        kinds = page.evaluate(
            "() => spadesApp.tables.get(spadesApp.table.table).seats.map((s) => s.bot_kind ?? null)"
        )
        assert kinds == [None, "search_fast", "search_fast", "search_fast"]
    assert errors == []


BACKS_JS = """() => [0, 1, 2, 3].map((seat) => {
  const el = document.querySelector(`.seat[data-seat='${seat}']`);
  const backs = el && el.querySelector('.backs');
  const minis = backs ? [...backs.querySelectorAll('.mini')] : [];
  const shown = backs ? minis.filter((m) => m.getBoundingClientRect().width > 0).length : -1;
  return [spadesApp.table.view.hand_sizes[seat], shown, backs ? backs.getAttribute('aria-label') : null];
})"""
HEARTS_STATE_JS = """() => {
  const over = document.getElementById('game-over');
  if (over && !over.hidden) return 'over';
  if (document.querySelector('#choose')) return 'pass';
  if (document.querySelector('#hand .card.legal')) return 'play';
  return '';
}"""
RAW_CARD = re.compile(r"\b[2-9TJQKA][CDHS]\b")


def test_a_spectator_of_hearts_sees_backs_and_reads_everything_in_words(tmp_path: Path) -> None:
    """The issue's smaller points, seen by a phone watching a Hearts game a person plays: each
    seat's cards face down (as many as it holds), no Bid or Bags column in Hearts, no raw card
    codes in the log, the scores signed plainly, and the players named at the game's end."""
    need_browser()

    errors: list[str] = []
    with (
        served(tmp_path / "server.db", "--bot-clock", "3", "--human-clock", "120") as url,
        chromium() as browser,
    ):
        host = fast_clock(open_page(browser, errors, label="host"))
        register(host, url, "player")
        host.select_option("#create-game", "hearts")
        host.select_option("#create-bot", "random")
        host.fill("#create-hands", "1")
        host.click("#create-submit")
        host.wait_for_selector("#choose", timeout=WAIT_MS)
        set_pace(host, "fast")
        table = host.evaluate("spadesApp.table.table")

        phone = fast_clock(open_phone(browser, errors, label="phone"))
        phone.goto(url)
        enter_as_guest(phone, "watcher", touch=True, at_lobby=False)
        phone.wait_for_selector(f"[data-key='watch-{table}']", timeout=WAIT_MS)
        phone.tap(f"[data-key='watch-{table}']")
        phone.wait_for_selector("#table-screen:not([hidden])", timeout=WAIT_MS)
        set_pace(phone, "fast")
        # Every seat's cards face down, as many as it holds, on a phone too.
        phone.wait_for_function(
            "() => spadesApp.table && (spadesApp.table.view.hand_sizes || []).length === 4",
            timeout=WAIT_MS,
        )
        for size, shown, label in phone.evaluate(BACKS_JS):
            # (13, or 10 while a seat's pass is on its way)
            assert size in (10, 13) and shown == size and label == f"{size} cards", (
                size,
                shown,
                label,
            )
        assert "Bid" not in phone.inner_text("#scores")
        assert "Bags" not in phone.inner_text("#scores")

        # The host passes three cards and plays the hand out by clicking.
        checked_backs = False
        for _ in range(60):  # a pass and 13 cards; the bound is generous
            state = wait_state(host, HEARTS_STATE_JS)
            if state == "over":
                break
            if state == "pass":
                for card in host.locator("#hand .card:not(:disabled)").all()[:3]:
                    card.click()
                host.wait_for_selector("#choose:not([disabled])", timeout=WAIT_MS)
                host.click("#choose")
                host.wait_for_selector("#choose", state="detached", timeout=WAIT_MS)
                continue
            play_first_legal(host)
            if not checked_backs and host.evaluate("spadesApp.table.view.played.length") > 6:
                # Mid-hand, the backs still count each hand (once the phone has shown as much:
                # it keeps the pace's holds of its own).
                wait_for(phone, "() => spadesApp.table.view.played.length > 6")
                next_frames(phone)  # drawn: the page draws what it applied at its next frame
                for size, shown, _ in phone.evaluate(BACKS_JS):
                    assert shown == min(size, 18), (size, shown)
                checked_backs = True
        else:  # pragma: no cover
            raise AssertionError("the hand did not end")
        assert checked_backs

        wait_for(phone, "() => !!document.querySelector('#game-over:not([hidden])')")
        log = phone.inner_text("#table-log")
        assert "plays" in log and not RAW_CARD.search(log), log
        assert re.search(r"[♣♦♥♠]", log), log
        summary = (
            phone.inner_text("#result") if phone.locator("#result:not([hidden])").count() else ""
        )
        for text in (log, summary, phone.inner_text("#game-over")):
            assert "–+" not in text and "+-" not in text and "+−" not in text, text
        dialog = phone.inner_text("#game-over")
        assert "South (player)" in dialog and "West (random bot)" in dialog, dialog
        finals = phone.locator("#game-over .finals li")
        assert finals.count() == 4
        # Each alone: the seat and its player, then the score; no side name repeated.
        assert re.fullmatch(r"West \(random bot\) · −?\d+", finals.nth(1).inner_text())
        assert "Bid" not in phone.inner_text("#game-over .sheet")
    assert errors == []
