"""Issue 41 item 1: every seat named where a person reads it, by its direction and who sat there.

The replay of a `make play` game (three built-in bots, all `bot:heuristic`), an arena record (each
seat's entrant, the first bot's seats marked, on both sides of a duplicate pair), the history, the
hand summaries (whose contract), the play screen's log and panels, and `spades-bot run`'s lines.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import re
from pathlib import Path
from typing import Any

import pytest

from bots.arena.run import ArenaConfig, run_games
from bots.sdk.runlog import RunLog, RunStats, action_words, game_over_line, seat_line
from client import journal
from client.replay import hand_intro, score_lines, to_hand, trick_line
from client.state import TableState
from engine.actions import Bid, LookAtHand, PassCards, PlayCard
from engine.cards import card_symbol, parse_card
from engine.ruleset import Ruleset
from engine.seat_names import seat_label, side_word, who
from protocol.messages import ClockExpired
from tests.client.engine_table import EngineTable
from tests.client.test_newcomer import screen
from tests.client.test_state_render import feed, play_hand

BOTS = [None, "bot:heuristic", "bot:heuristic", "bot:heuristic"]


def replay_text(record: dict[str, Any]) -> str:
    hand = to_hand(record)
    lines = [*hand_intro(hand)]
    lines += [trick_line(hand, i) for i in range(len(hand.tricks))]
    lines += score_lines(hand)
    return "\n".join(str(line) for line in lines)


def make_play_record() -> dict[str, Any]:
    """A hand as the journal keeps it after `make play`: we sit South, three heuristic bots."""
    state, _ = play_hand(Ruleset.from_preset("standard"), b"names-seed")
    return dict(state.finished_hands[0]) | {"names": BOTS, "game_id": "t1"}


def test_the_spelling_of_seats_and_sides() -> None:
    assert seat_label(1, 4, "bot:heuristic") == "West (heuristic)"
    assert seat_label(2, 4, "alice") == "North (alice)"
    assert seat_label(0, 4, "my_bot:MyBot", mark="*") == "South (my_bot:MyBot)*"
    assert seat_label(3, 4, None) == "East"
    assert seat_label(1, 3, "bot:random") == "seat 1 (random)"
    assert who("fallback:heuristic") == "heuristic, fallback"
    assert side_word([2, 0], 4) == "North-South" and side_word([1, 3], 4) == "East-West"
    assert side_word([2], 4) == "North"


def test_a_make_play_replay_tells_partner_from_opponents() -> None:
    text = replay_text(make_play_record())
    assert "bot:heuristic" not in text
    bids = next(line for line in text.splitlines() if "bids:" in line)
    for seat in ("West (heuristic)", "North (heuristic)", "East (heuristic)", "You"):
        assert seat in bids, bids
    assert "→ " in text and "trick  1: " in text
    score = next(line for line in text.splitlines() if "score:" in line)
    assert "your side (North-South)" in score and "East-West" in score, score
    # Whose contract, and each seat's note by its name (never `seat 1`).
    contracts = [line.strip() for line in text.splitlines() if "contract " in line]
    assert contracts and all(
        c.startswith(("your side (North-South): contract", "East-West: contract"))
        for c in contracts
    ), contracts
    assert "seat " not in text.split("score:")[1], text


def test_the_history_names_the_partner_and_the_opponents(tmp_path: Path) -> None:
    path = tmp_path / "t1.jsonl"
    path.write_text(json.dumps(make_play_record()) + "\n")
    sides = journal.summarise(path).sides
    assert sides == ["you + North (heuristic)", "West (heuristic) + East (heuristic)"]


def test_an_arena_record_names_each_entrant_and_marks_the_first_bot(tmp_path: Path) -> None:
    out = tmp_path / "hands.jsonl"
    config = ArenaConfig(
        specs=("random", "heuristic"),
        ruleset=Ruleset.from_preset("standard", target_score=0, max_hands=1),
        games=2,
        seed=3,
        jobs=1,
        duplicate=True,
        record=out,
        max_hands=1,
    )
    run_games(config)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 2
    first, second = (replay_text(r) for r in records)
    for text in (first, second):
        assert "* marks the first bot named (random)" in text
        assert "bids: " in text and "West" in text
    # The first bot sits North-South in one game of the pair and East-West in the other.
    assert "South (random)*" in first and "North (random)*" in first
    assert "West (heuristic) " in first and "West (heuristic)*" not in first
    assert "West (random)*" in second and "East (random)*" in second
    assert "South (heuristic) " in second and "South (random)" not in second


def test_the_play_screen_names_the_bots_in_its_panels_and_its_log() -> None:
    table = EngineTable(Ruleset.from_preset("standard"))
    state = TableState(ruleset=table.ruleset)
    state.names = {1: "bot:heuristic", 2: "bot:heuristic", 3: "bot:heuristic"}
    table.deal(b"names-seed")
    feed(state, table)
    assert table.others_until_mine()
    feed(state, table)
    bids = [line for line in state.log if " bid " in line]
    assert bids and all(re.match(r"(West|North|East) \(heuristic\) bid ", b) for b in bids), bids
    for size in ((80, 24), (120, 40)):
        shown = screen(state, *size)
        assert "West (heuristic)" in shown and "North (heuristic)" in shown, shown
        assert "bot:heuristic" not in shown
        assert all(len(line) <= size[0] for line in shown.splitlines())


def test_a_hearts_note_names_its_seat_once() -> None:
    state, _ = play_hand(Ruleset.from_preset("hearts"), b"hearts-names")
    said = [line for line in state.log if "took" in line and "points" in line]
    assert said, list(state.log)
    assert not any(line.strip().startswith(("North: North", "West: West")) for line in said)


def test_the_bot_runner_says_its_seat_and_the_winners_by_side() -> None:
    assert seat_line("t1", 2, 4) == "took seat 2 (North) at table t1"
    line = game_over_line(
        {
            "table": "t1",
            "winners": [1, 3],
            "scores": [310, 520],
            "seat": 2,
            "players": 4,
            "sides": [[0, 2], [1, 3]],
        }
    )
    assert line == (
        "game over at table t1: East-West won (you lost; you sat North, seat 2);"
        " North-South 310, East-West 520"
    )
    hearts = game_over_line(
        {"table": "h", "winners": [0], "scores": [12, 40, 30, 22], "seat": 0, "players": 4}
    )
    assert hearts.startswith("game over at table h: South won (you won; you sat South, seat 0)")
    assert action_words(PlayCard(seat=3, card=parse_card("QS"))) == "play Q♠"
    assert action_words(Bid(seat=0, tricks=0)) == "bid nil"
    assert (
        action_words(PassCards(seat=0, cards=(parse_card("TD"), parse_card("BJ")))) == "pass 10♦ BJ"
    )
    assert action_words(LookAtHand(seat=0)) == "look at hand"
    assert card_symbol(parse_card("TD")) == "10♦"


def test_the_bot_runners_clock_lines_say_where_the_seat_sits(
    caplog: pytest.LogCaptureFixture,
) -> None:
    runlog = RunLog(RunStats())
    caplog.set_level(logging.INFO, logger="bots.runner")
    expired = ClockExpired(table="t1", version=5, seat=3, fallback="heuristic bot")
    runlog.clock_expired(expired, our_seat=1)
    runlog.clock_expired(dataclasses.replace(expired, seat=1), our_seat=1)
    said = [record.getMessage() for record in caplog.records]
    assert said[0].startswith("clock expired for seat 3 (East) at table t1"), said
    assert said[1].startswith("clock expired for our seat 1 (West) at table t1"), said
    runlog.players = 3  # no compass points at three seats: the number alone
    assert runlog.seat(1) == "1"
