"""Issue 39 item 5, in a real browser against a real server: replays on the page. A one-hand game
with three heuristic bots is played by clicking while a second browser watches it; both pages keep
the game (localStorage), and each replays it trick by trick exactly as the server recorded it
(`spades-server export` of the same game), with its deal verified. The server's own `.jsonl` opens
from the file picker and replays the same. A file of a two-hand game steps across hands by keyboard
and by a swipe; the trick and its buttons stay on the screen at 360x740, 390x844, 844x390 and
1280x800; axe-core finds nothing serious; a tampered file fails its deal check and a broken one is
refused with its line and reason."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engine.records import game_records
from engine.ruleset import Ruleset
from tests.engine.helpers import play_random_game
from tests.web.browser import ARTIFACTS, ROOT, need_browser, png_size, served
from tests.web.page import (
    WAIT_MS,
    chromium,
    fast_clock,
    next_frames,
    open_page,
    play_hand,
    register_and_open,
    set_pace,
    wait_for,
)
from tests.web.test_accessibility import axe_problems, need_axe
from tests.web.test_table_layout import inside

pytestmark = pytest.mark.timeout(300)

SIZES = [(360, 740), (390, 844), (844, 390), (1280, 800)]
DOC_IMAGES = ROOT / "docs" / "images"
COMPASS = ["South", "West", "North", "East"]
SPADES = "import sys; from client.cli import main; main(sys.argv[1:])"  # the `spades` command

# What the replay shows now: each seat's card, who led, who won, where we are.
SHOWN_JS = """() => {
  const cells = [...document.querySelectorAll('#replay-trick .replay-cell')];
  const card = (c) => { const el = c.querySelector('.card[data-card]'); return el ? el.dataset.card : null; };
  return {
    trick: Number(document.getElementById('replay-trick').dataset.trick),
    cards: Object.fromEntries(cells.map((c) => [c.dataset.seat, card(c)])),
    won: cells.filter((c) => c.classList.contains('won')).map((c) => Number(c.dataset.seat)),
    where: document.getElementById('replay-where').textContent,
    winner: document.getElementById('replay-winner').textContent,
    label: document.getElementById('replay-trick').getAttribute('aria-label'),
    verdict: document.getElementById('replay-verdict').dataset.verdict,
  };
}"""

RECTS_JS = """() => {
  const rect = (el) => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  return {
    trick: rect(document.getElementById('replay-trick')),
    winner: rect(document.getElementById('replay-winner')),
    buttons: [...document.querySelectorAll('.replay-nav button')].map(rect),
    cards: [...document.querySelectorAll('#replay-trick .card[data-card]')].map(rect),
    scrollWidth: document.documentElement.scrollWidth,
  };
}"""


def card_text(card: str) -> str:
    """A card as the page names it: rank (10 for T) and suit symbol."""
    return ("10" if card[0] == "T" else card[0]) + {"C": "♣", "D": "♦", "H": "♥", "S": "♠"}[card[1]]


def export(db: Path, table: str, out: Path) -> list[dict[str, Any]]:
    """`spades-server export` of one game, while the server still serves the file."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "server.cli",
            "export",
            "--game",
            table,
            "--db",
            str(db),
            "-o",
            str(out),
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=60,
    )
    return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line]


def open_kept_replay(page: Any) -> None:
    page.click("#past-games")
    page.wait_for_selector(
        "#replay-screen:not([hidden]) #replay-kept .replay-game", timeout=WAIT_MS
    )
    page.click("#replay-kept .replay-game .replay-open")
    page.wait_for_selector("#replay-trick", timeout=WAIT_MS)


def check_every_trick(page: Any, record: dict[str, Any], names: list[str]) -> None:
    """Step with the Right arrow through the hand; each trick is the server's, card for card."""
    page.wait_for_function(
        "() => document.getElementById('replay-verdict').dataset.verdict !== ''", timeout=WAIT_MS
    )
    plays, winners = record["plays"], record["trick_winners"]
    assert len(winners) == 13
    for number in range(1, 14):
        shown = page.evaluate(SHOWN_JS)
        trick = plays[4 * (number - 1) : 4 * number]
        assert shown["trick"] == number, shown
        assert shown["cards"] == {str(seat): card for seat, card in trick}, (number, shown)
        assert shown["won"] == [winners[number - 1]], (number, shown)
        assert shown["winner"] == f"{names[winners[number - 1]]} won trick {number}"
        assert f"trick {number} of 13" in shown["where"]
        assert shown["verdict"] == "verified", shown
        # Named with suit symbols, in the order they were played, for a screen reader too.
        said = ", ".join(f"{names[seat]} {card_text(card)}" for seat, card in trick)
        assert shown["label"] == f"Trick {number}: {said} → {names[winners[number - 1]]}"
        if number < 13:
            page.keyboard.press("ArrowRight")
            page.wait_for_function(
                f"() => document.getElementById('replay-trick').dataset.trick === '{number + 1}'",
                timeout=WAIT_MS,
            )
    assert page.is_disabled("#replay-next")
    # The trick list: every trick, its winner; the hand's score as the server scored it.
    winners_listed = page.eval_on_selector_all(
        "#replay-tricks li", "(items) => items.map((li) => Number(li.dataset.winner))"
    )
    assert winners_listed == winners
    score = page.inner_text("#replay-score")
    for after in record["score"]["after"]:
        assert f"→ {after}" in score, score
    assert "Deal check: verified" in page.inner_text("#replay-check-title")


def test_a_game_played_and_watched_replays_as_the_server_recorded_it(tmp_path: Path) -> None:
    need_browser()

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    db = tmp_path / "server.db"
    with (
        served(db, "--bot-clock", "3", "--human-clock", "90") as url,
        chromium() as browser,
    ):
        player = fast_clock(open_page(browser, errors))
        watcher = fast_clock(open_page(browser, errors, width=390, height=844))
        register_and_open(player, url, "replayer", hands=1)
        table = str(player.evaluate("spadesApp.table.table"))
        set_pace(player, "fast")
        # A friend watches from a phone, from before the first card (the player's bid waits).
        watcher.goto(url)
        watcher.click("#guest")
        watcher.wait_for_selector("#lobby-screen:not([hidden])", timeout=WAIT_MS)
        watcher.fill("#code-table", table)
        watcher.click("#code-watch")
        watcher.wait_for_selector("#table-screen:not([hidden])", timeout=WAIT_MS)

        play_hand(player)
        [record] = export(db, table, tmp_path / "game.jsonl")

        # The player's page kept the game, its deal checked when the hand ended.
        for page in (player, watcher):
            wait_for(
                page,
                "() => { const g = JSON.parse(localStorage.getItem('spades.games') || '[]');"
                " return g.length === 1 && g[0].finished && g[0].verified === 'verified'; }",
            )
        player.click("#game-over-close")
        player.wait_for_selector("#lobby-screen:not([hidden])", timeout=WAIT_MS)
        open_kept_replay(player)
        assert table in player.inner_text("#replay-title")
        names = ["You", *(f"{d} (heuristic)" for d in ("West", "North", "East"))]
        check_every_trick(player, record, names)
        bids = player.inner_text("#replay-bids")
        assert bids.count("(heuristic)") == 3 and "You" in bids, bids
        player.screenshot(path=str(ARTIFACTS / "replay-1280x800.png"))

        # The list says when, where, who and how it ended.
        player.click("#replay-back")
        item = player.inner_text("#replay-kept .replay-game")
        assert f"Table {table}" in item
        assert "You, West (heuristic), North (heuristic), East (heuristic)" in item
        after = record["score"]["after"]
        assert f"your side (North-South) {after[0]} · East-West {after[1]}" in item, item
        assert "deals verified" in item

        # What the page kept is what the terminal client keeps: `spades replay` reads it (the
        # page's *Save as .jsonl*), re-deals it with the engine and shows the same tricks.
        kept = player.evaluate(
            "() => { const [g] = JSON.parse(localStorage.getItem('spades.games'));"
            " return localStorage.getItem('spades.game.' + g.id); }"
        )
        [mine] = json.loads(kept)
        assert mine["format"] == "spades-client-hand/1"
        assert (mine["plays"], mine["trick_winners"]) == (
            record["plays"],
            record["trick_winners"],
        )
        assert (mine["seed"], mine["commitment"], mine["dealer"]) == (
            record["seed"],
            record["commitment"],
            record["dealer"],
        )
        assert mine["deal"] == record["deal"] and mine["score"] == record["score"]
        assert mine["verified"] == "verified"
        (tmp_path / "kept.jsonl").write_text(json.dumps(mine) + "\n", encoding="utf-8")
        shown = subprocess.run(
            [
                sys.executable,
                "-c",
                SPADES,
                "replay",
                str(tmp_path / "kept.jsonl"),
                "--all",
            ],
            cwd=ROOT,
            env={**os.environ, "COLUMNS": "200"},  # rich wraps at the terminal's width
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        assert "verified: seed matches the commitment and the engine re-deals these hands" in shown
        assert "trick 13:" in shown and "You" in shown, shown

        # The watcher (no seat: compass points) replays the same tricks.
        # From the game-over dialog: *Replay this game* opens it at its first trick.
        wait_for(watcher, "() => !!document.querySelector('#game-over:not([hidden])')")
        watcher.click("#game-over:not([hidden]) #game-over-replay", timeout=WAIT_MS)
        watcher.wait_for_selector("#replay-screen:not([hidden]) #replay-trick", timeout=WAIT_MS)
        assert f"Table {table}" in watcher.inner_text("#replay-title")
        check_every_trick(
            watcher,
            record,
            ["South (replayer)", *(f"{d} (heuristic)" for d in ("West", "North", "East"))],
        )

        # Back from the replay and its list: the table, as the game left it.
        watcher.click("#replay-back")
        watcher.click("#replay-back")
        watcher.wait_for_selector("#table-screen:not([hidden]) #trick", timeout=WAIT_MS)

        # A kept game this browser's storage no longer holds whole: a sentence, no error.
        watcher.click("#past-games")
        watcher.evaluate(
            "() => { const [g] = JSON.parse(localStorage.getItem('spades.games'));"
            " localStorage.setItem('spades.game.' + g.id, '[{\"format\": \"spades-client-hand/1\"}]'); }"
        )
        watcher.click("#replay-kept .replay-open")
        watcher.wait_for_selector(".replay-error", timeout=WAIT_MS)
        assert "cannot be replayed: hand 1: `players` is not 2, 3 or 4" in watcher.inner_text(
            ".replay-error"
        )
        watcher.click("#replay-back")
        watcher.wait_for_selector("#table-screen:not([hidden]) #trick", timeout=WAIT_MS)

        # The server's own record, opened from the file picker (on the list, still open),
        # replays the same.
        player.set_input_files("#replay-file", str(tmp_path / "game.jsonl"))
        player.wait_for_selector("#replay-trick", timeout=WAIT_MS)
        assert "game.jsonl" in player.inner_text("#replay-title")
        check_every_trick(player, record, ["South", "West", "North", "East"])
    assert errors == []


def write_game(path: Path, hands: int, tamper: bool = False) -> list[dict[str, Any]]:
    game = play_random_game(Ruleset.from_preset("standard"), random.Random(39), max_hands=hands)
    records = game_records(game, game_id="g39")
    if tamper:  # two cards of the second hand's deal swapped between seats 0 and 1
        deal = records[1]["deal"]
        deal[0][0], deal[1][0] = deal[1][0], deal[0][0]
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return records


def test_a_file_steps_across_hands_by_keyboard_and_swipe_on_every_screen(tmp_path: Path) -> None:
    need_browser()
    need_axe()

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    records = write_game(tmp_path / "two.jsonl", 2)
    write_game(tmp_path / "tampered.jsonl", 2, tamper=True)
    (tmp_path / "broken.jsonl").write_text(
        json.dumps(records[0]) + "\n" + json.dumps({**records[1], "plays": [[0, "ZZ"]]}) + "\n",
        encoding="utf-8",
    )
    errors: list[str] = []
    problems: list[str] = []
    with served(tmp_path / "server.db") as url, chromium() as browser:
        page = open_page(browser, errors, bypass_csp=True, has_touch=True)
        page.goto(url)
        # Past games need no login: reached from the login screen, by keyboard.
        page.wait_for_selector("#login-screen:not([hidden])", timeout=WAIT_MS)
        page.focus("#past-games")
        page.keyboard.press("Enter")
        page.wait_for_selector("#replay-screen:not([hidden]) #replay-file", timeout=WAIT_MS)
        assert "No games yet" in page.inner_text("#replay-screen")
        problems += axe_problems(page, "past games")

        # A broken file: refused, saying which line and why.
        page.set_input_files("#replay-file", str(tmp_path / "broken.jsonl"))
        page.wait_for_selector(".replay-error", timeout=WAIT_MS)
        assert (
            "broken.jsonl cannot be replayed: line 2: `plays` is not a list of [seat, card]"
            in page.inner_text(".replay-error")
        )

        page.set_input_files("#replay-file", str(tmp_path / "two.jsonl"))
        page.wait_for_selector("#replay-trick[data-trick='1']", timeout=WAIT_MS)
        page.wait_for_function(
            "() => document.getElementById('replay-verdict').dataset.verdict === 'verified'"
        )
        problems += axe_problems(page, "replay")
        # Keyboard: Page Down to the next hand, Left arrow back across to hand 1's trick 13.
        page.keyboard.press("PageDown")
        page.wait_for_function(
            "() => document.getElementById('replay-where').textContent.startsWith('Hand 2 (2 of 2) · trick 1 ')"
        )
        # Each step is said once to a screen reader: where, the cards in order, who won.
        said = str(page.text_content("#replay-announce"))
        first = records[1]["plays"][:4]
        assert said.startswith("Hand 2 (2 of 2) · trick 1 of 13. "), said
        assert ", ".join(f"{COMPASS[s]} {card_text(c)}" for s, c in first) in said
        assert said.endswith(f"; won by {COMPASS[records[1]['trick_winners'][0]]}."), said
        page.keyboard.press("ArrowLeft")
        page.wait_for_function(
            "() => document.getElementById('replay-where').textContent.startsWith('Hand 1 (1 of 2) · trick 13 ')"
        )
        page.keyboard.press("PageUp")
        page.wait_for_function(
            "() => document.getElementById('replay-trick').dataset.trick === '1'"
        )

        for width, height in SIZES:
            page.set_viewport_size({"width": width, "height": height})
            page.evaluate("window.scrollTo(0, 0)")
            next_frames(page)  # the page's redraw at the new size
            rects = page.evaluate(RECTS_JS)
            for what in ("trick", "winner"):
                assert inside(rects[what], width, height), (width, height, what, rects[what])
            for rect in rects["buttons"] + rects["cards"]:
                assert inside(rect, width, height), (width, height, rects)
            assert len(rects["cards"]) == 4
            assert rects["scrollWidth"] <= width, (width, rects["scrollWidth"])
            # The screenshots docs/web.md shows (`make doc-images` writes them there).
            name = f"web-replay-{width}x{height}.png"
            data = page.screenshot(path=str(ARTIFACTS / name))
            if os.environ.get("SPADES_DOC_IMAGES"):
                (DOC_IMAGES / name).write_bytes(data)
            # A swipe to the left across the trick: the next trick; to the right: back.
            box = page.locator("#replay-trick").bounding_box()
            assert box is not None
            y = box["y"] + box["height"] / 2
            for dx, expect in ((-120, "2"), (120, "1")):
                x = box["x"] + box["width"] / 2
                page.mouse.move(x - dx / 2, y)
                page.mouse.down()
                page.mouse.move(x + dx / 2, y, steps=4)
                page.mouse.up()
                page.wait_for_function(
                    f"() => document.getElementById('replay-trick').dataset.trick === '{expect}'"
                )
        problems += axe_problems(page, "replay at 1280x800")

        # The buttons by touch: a tap on "Hand ▶▶" and on "◀ Trick".
        page.tap("#replay-last")
        page.wait_for_function(
            "() => document.getElementById('replay-where').textContent.startsWith('Hand 2 ')"
        )
        page.tap("#replay-prev")
        page.wait_for_function(
            "() => document.getElementById('replay-where').textContent.startsWith('Hand 1 (1 of 2) · trick 13 ')"
        )

        # A tampered deal: its hand's check fails, in red, saying where.
        page.keyboard.press("Escape")
        page.wait_for_selector("#replay-file", timeout=WAIT_MS)
        page.set_input_files("#replay-file", str(tmp_path / "tampered.jsonl"))
        page.wait_for_selector("#replay-trick", timeout=WAIT_MS)
        page.wait_for_function(
            "() => document.getElementById('replay-verdict').dataset.verdict === 'verified'"
        )
        page.keyboard.press("PageDown")
        page.wait_for_function(
            "() => document.getElementById('replay-verdict').dataset.verdict === 'MISMATCH'"
        )
        assert "the seed deals seat 0" in page.inner_text(".replay-panel.check.bad")
    assert problems == []
    assert errors == []


def test_the_doc_shows_a_replay_at_each_size_and_the_images_stay_small() -> None:
    text = (ROOT / "docs" / "web.md").read_text(encoding="utf-8")
    shown = set(re.findall(r"\(images/(web-replay-\d+x\d+\.png)\)", text))
    wanted = {f"web-replay-{w}x{h}.png" for w, h in SIZES}
    assert wanted <= shown, sorted(wanted - shown)
    total = 0
    for name in wanted:
        data = (DOC_IMAGES / name).read_bytes()
        assert f"{png_size(data)[0]}x{png_size(data)[1]}" in name
        total += len(data)
    assert total < 200_000, f"the replay's screenshots weigh {total} bytes"
