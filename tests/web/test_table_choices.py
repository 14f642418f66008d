"""Issue 39 item 4's remainder, in a real browser against a real server: the bots' strength chosen
in the create form (and kept by *Play again*), the bots named by it ("West (quick search bot)"); the
rules panel in words from the engine's option table (the preset's description, only the options
of this game that matter, values in words); the game-over dialog with the players' names, the final
scores, the hand-by-hand sheet and *Play again*."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.web.browser import CHROMIUM, CHROMIUM_ARGS, need_browser, served
from tests.web.test_table_pacing import STATE_JS, WAIT_MS, set_pace

pytestmark = pytest.mark.timeout(300)

KINDS_JS = "() => [...document.querySelectorAll('#create-bot option')].map((o) => o.value)"


def test_bot_strength_rules_in_words_and_the_game_over_dialog(tmp_path: Path) -> None:
    need_browser()
    from playwright.sync_api import sync_playwright

    errors: list[str] = []
    with (
        served(tmp_path / "server.db", "--bot-clock", "3", "--human-clock", "120") as url,
        sync_playwright() as pw,
    ):
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
            page.on("pageerror", lambda error: errors.append(str(error)))
            page.goto(url)
            page.fill("#login-name", "chooser")
            page.click("#register")
            page.wait_for_selector("#lobby-screen:not([hidden])", timeout=WAIT_MS)

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
            table = page.evaluate("spadesApp.table.table")
            kinds = page.evaluate(
                "(t) => spadesApp.tables.get(t).seats.map((s) => s.bot_kind ?? null)", table
            )
            assert kinds == [None, "search_fast", "search_fast", "search_fast"]

            for _ in range(60):  # one hand: a bid and 13 cards; the bound is generous
                state = str(page.wait_for_function(STATE_JS, timeout=WAIT_MS).json_value())
                if state == "over":
                    break
                if state == "bid":
                    page.locator("#actions button.bid").nth(2).click()
                    page.wait_for_selector("#actions button.bid", state="detached", timeout=WAIT_MS)
                    continue
                card = page.locator("#hand .card.legal").first
                name = card.get_attribute("data-card")
                card.click()
                page.wait_for_selector(f"#hand [data-card='{name}']", state="detached")
            else:  # pragma: no cover
                raise AssertionError("the hand did not end")

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
                "() => spadesApp.tables.get(spadesApp.table.table).seats"
                ".map((s) => s.bot_kind ?? null)"
            )
            assert kinds == [None, "search_fast", "search_fast", "search_fast"]
        finally:
            browser.close()
    assert errors == []
