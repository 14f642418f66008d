"""The fold of hand records into player statistics (engine.hand_stats): bids made and set, bags,
nil and blind nil, decisions' time, and clear errors for what it cannot read."""

import copy
import random
from typing import Any

import pytest

from engine.errors import RecordError
from engine.hand_stats import TALLY_FIELDS, Tally, hand_tallies
from engine.records import game_records
from engine.ruleset import PRESETS
from tests.engine.helpers import play_random_game


def _record(seed: int = 3, preset: str = "standard") -> dict[str, Any]:
    game = play_random_game(PRESETS[preset], random.Random(seed), max_hands=1)
    return game_records(game)[0]


def _with(record: dict[str, Any], **changes: Any) -> dict[str, Any]:
    out = copy.deepcopy(record)
    out.update(changes)
    return out


def test_contracts_made_and_set_with_their_bags() -> None:
    record = _with(
        _record(),
        bids=[
            {"seat": 1, "bid": 3, "blind": False},
            {"seat": 2, "bid": 4, "blind": False},
            {"seat": 3, "bid": 4, "blind": False},
            {"seat": 0, "bid": 3, "blind": False},
        ],
        tricks=[4, 3, 5, 1],
        notes=["contract 7 made with 9", "contract 7 set with 4"],
    )
    a, b, c, d = hand_tallies(record)
    assert (a.contracts, a.contracts_made, a.contracts_set, a.bags) == (1, 1, 0, 2)
    assert c == a  # partners share the side's contract
    assert (b.contracts, b.contracts_made, b.contracts_set, b.bags) == (1, 0, 1, 0)
    assert d == b
    assert all(t.hands == 1 and t.nil_tried == 0 and t.decisions == 0 for t in (a, b, c, d))


def test_nil_and_blind_nil_tried_and_made() -> None:
    record = _with(
        _record(),
        bids=[
            {"seat": 1, "bid": 0, "blind": True},
            {"seat": 2, "bid": 0, "blind": False},
            {"seat": 3, "bid": 5, "blind": False},
            {"seat": 0, "bid": 6, "blind": False},
        ],
        tricks=[8, 0, 1, 4],
        # Side 0 (seats 0, 2) has a contract; side 1's only ordinary bid is seat 3's.
        notes=[
            "seat 2 nil failed",
            "contract 6 made with 8",
            "seat 1 blind nil made",
            "contract 5 set with 4",
        ],
    )
    zero, one, two, three = hand_tallies(record)
    assert (one.blind_nil_tried, one.blind_nil_made, one.contracts) == (1, 1, 0)
    assert (two.nil_tried, two.nil_made, two.contracts) == (1, 0, 0)
    assert (zero.contracts_made, zero.bags) == (1, 2)
    assert (three.contracts_set, three.nil_tried) == (1, 0)


def test_decisions_are_timed_from_the_record_clock() -> None:
    record = _with(
        _record(),
        clock=[
            {"seat": 0, "ms": 1200, "by": "player"},
            {"seat": 1, "ms": 40, "by": "bot"},
            {"seat": 0, "ms": 800, "by": "fallback"},
        ],
    )
    tallies = hand_tallies(record)
    assert (tallies[0].decisions, tallies[0].decision_ms) == (2, 2000)
    assert (tallies[1].decisions, tallies[1].decision_ms) == (1, 40)
    assert tallies[2].decisions == 0


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_preset_folds_and_the_sum_is_the_hands(preset: str) -> None:
    game = play_random_game(PRESETS[preset], random.Random(preset), max_hands=5)
    records = game_records(game)
    total = [Tally() for _ in range(PRESETS[preset].players)]
    for record in records:
        for seat, tally in enumerate(hand_tallies(record)):
            total[seat] += tally
    for seat, tally in enumerate(total):
        assert tally.hands == len(records)
        assert tally.contracts == tally.contracts_made + tally.contracts_set
        assert tally.nil_made <= tally.nil_tried and tally.blind_nil_made <= tally.blind_nil_tried
        if PRESETS[preset].game == "spades":
            bid = sum(
                1
                for r in records
                for b in r["bids"]
                if b["seat"] == seat and b["bid"] > 0 and not b.get("blind") and not b.get("moe")
            )
            assert tally.contracts == bid
    assert Tally.from_values(list(total[0].as_dict().values())) == total[0]
    assert tuple(total[0].as_dict()) == TALLY_FIELDS


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"format": "other"}, "spades-hand/1"),
        ({"players": 7}, "players"),
        ({"tricks": "many"}, "tricks"),
        ({"bids": [{"seat": 9, "bid": 3}]}, "seat"),
        ({"notes": []}, "contract"),
        ({"score": {}}, "sides"),
        ({"clock": [{"seat": 0}]}, "clock"),
        ({"clock": "fast"}, "clock"),
    ],
)
def test_a_record_it_cannot_read_is_a_record_error(change: dict[str, Any], message: str) -> None:
    with pytest.raises(RecordError, match=message):
        hand_tallies(_with(_record(), **change))
    with pytest.raises(RecordError):
        hand_tallies("not a record")
