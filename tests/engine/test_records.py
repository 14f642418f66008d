"""Hand records (spades-hand/1): export, read back, replay reproduces the scores."""

import json
import random

import pytest

from engine.errors import EngineError, RecordError
from engine.records import FORMAT, game_records, hand_to_record, record_to_hand, replay
from engine.ruleset import PRESETS, Ruleset
from tests.engine.helpers import play_random_game

SPADES_PRESETS = [name for name, r in PRESETS.items() if r.game == "spades"]


@pytest.mark.parametrize("preset", SPADES_PRESETS)
def test_records_replay_to_the_same_scores(preset: str) -> None:
    rng = random.Random(preset)
    ruleset = PRESETS[preset]
    game = play_random_game(ruleset, rng, max_hands=6)
    records = json.loads(json.dumps(game_records(game, game_id="g1")))
    assert records, "at least one hand finished"
    for record, history in zip(records, game.histories, strict=True):
        assert record["format"] == FORMAT
        assert record["game_id"] == "g1"
        back, back_ruleset = record_to_hand(record)
        assert back_ruleset == ruleset
        assert back == history
    assert replay(records) == game.scores


def test_a_record_holds_the_documented_fields() -> None:
    game = play_random_game(PRESETS["standard"], random.Random(1), max_hands=1)
    record = hand_to_record(game.histories[0], game.ruleset, game_id="abc")
    for key in (
        "format",
        "game_id",
        "hand_number",
        "ruleset",
        "players",
        "dealer",
        "seed",
        "deal",
        "bids",
        "exchanges",
        "plays",
        "trick_winners",
        "tricks",
        "score",
    ):
        assert key in record
    assert len(record["plays"]) == 52 and isinstance(record["plays"][0][1], str)
    assert set(record["score"]) == {"sides", "before", "delta", "after", "bags_after"}
    assert record["bids"][0].keys() >= {"seat", "bid", "blind"}


def test_a_tampered_record_does_not_replay() -> None:
    game = play_random_game(PRESETS["standard"], random.Random(2), max_hands=2)
    records = game_records(game)
    records[0]["score"]["after"][0] += 10
    with pytest.raises(RecordError):
        replay(records)
    records = game_records(game)
    records[0]["seed"] = "00"
    with pytest.raises(RecordError):
        replay(records)


@pytest.mark.parametrize(
    "bad",
    [None, [], {}, {"format": FORMAT}, {"format": "other"}, {"format": FORMAT, "ruleset": 3}],
)
def test_bad_records_raise_engine_errors(bad: object) -> None:
    with pytest.raises(EngineError):
        record_to_hand(bad)


def test_replay_needs_records() -> None:
    with pytest.raises(RecordError):
        replay([])
    assert Ruleset.from_dict(PRESETS["yahoo"].to_dict()) == PRESETS["yahoo"]
