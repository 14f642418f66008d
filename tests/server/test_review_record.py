"""Which records the server reviews (server/review_record.py) and the solver's process answering a
client's `review` (server/dd_worker.py, the review mode): a finished hand whose deal comes from its
seed is reviewed card by card as the engine's review does it in-process; a hand still in play, a
deal its seed does not give, a card its seat was not dealt, a three-handed game are refused with a
sentence, before any search."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from engine.records import game_records
from engine.review import NotReviewable, PlayedHand, Reviewer
from engine.ruleset import PRESETS, Ruleset
from server.dd_worker import review
from server.review_record import record_size, reviewable_hand
from tests.engine.helpers import play_random_game


def finished_record(seed: int = 1) -> dict[str, Any]:
    """A whole four-handed hand as the server records it (Random(1): one the solver reviews whole
    in about a second)."""
    game = play_random_game(PRESETS["standard"], random.Random(seed), max_hands=1)
    record: dict[str, Any] = json.loads(json.dumps(game_records(game)[0]))
    return record


def client_record(record: dict[str, Any]) -> dict[str, Any]:
    """The same hand as the page and the terminal client keep it: a preset, no ruleset, no deal."""
    return {
        "format": "spades-client-hand/1",
        "preset": "standard",
        "options": {},
        "ruleset": None,
        "players": 4,
        "hand_number": record["hand_number"],
        "dealer": record["dealer"],
        "seed": record["seed"],
        "deal": None,
        "bids": [],
        "passes": [],
        "plays": record["plays"],
        "trick_winners": record["trick_winners"],
        "tricks": record["tricks"],
        "missed_tricks": [],
    }


def test_a_finished_hand_is_the_seeds_deal_as_played() -> None:
    record = finished_record()
    hand = reviewable_hand(record)
    assert hand == PlayedHand.of_record(record, Ruleset.from_stored(record["ruleset"]))
    assert reviewable_hand(client_record(record)) == hand


def refusal(record: Any) -> str:
    with pytest.raises(NotReviewable) as refused:
        reviewable_hand(record)
    return refused.value.message


def test_what_is_refused_and_why() -> None:
    record = finished_record()
    assert "seed" in refusal({**record, "seed": "00" * 32})  # another seed: not this deal
    assert "seed" in refusal({**record, "seed": None})
    assert "seed" in refusal({**record, "seed": "zz"})
    deal = [list(hand) for hand in record["deal"]]
    deal[0][0], deal[1][0] = deal[1][0], deal[0][0]
    assert "not the one its seed deals" in refusal({**record, "deal": deal})
    # A hand in play: the seed is not known yet, and the plays stop midway.
    assert "not finished" in refusal({**record, "plays": record["plays"][:20]})
    assert "not finished" in refusal({**record, "plays": record["plays"][:-1]})
    assert "not finished" in refusal({**client_record(record), "missed_tricks": [3]})
    # A claim: whole tricks, then the record's tricks add up to the hand's thirteen.
    claimed = {**record, "plays": record["plays"][:40], "claim": {"seat": 0, "held": True}}
    assert reviewable_hand(claimed).plays == tuple(
        (s, c) for s, c in reviewable_hand(record).plays[:40]
    )
    # Cards from another seat's hand: refused by the seed's deal, whatever the record's plays say.
    swapped = [list(p) for p in record["plays"]]
    swapped[0][0] = (swapped[0][0] + 1) % 4
    assert "not in its dealt hand" in refusal({**record, "plays": swapped})
    three = {**record, "ruleset": PRESETS["three-player"].to_dict(), "players": 3}
    assert "four-handed" in refusal(three)
    assert "format" in refusal({**record, "format": "other/1"})
    assert "map" in refusal([1, 2])
    assert "rules" in refusal({**client_record(record), "preset": "no-such-preset"})
    assert "a play is" in refusal({**record, "plays": [[0, 5]]})
    assert "exchange" in refusal({**record, "exchanges": [{"giver": 0, "receiver": 2}]})
    assert 4000 < record_size(record) < 6000  # a whole hand: about 5 KB of the 16 KiB allowed
    with pytest.raises(NotReviewable, match="JSON"):
        record_size({**record, "notes": [b"msgpack bytes"]})


def test_the_worker_reviews_as_the_engine_does_in_process() -> None:
    record = finished_record()
    answer = review({"mode": "review", "record": client_record(record), "budget": 60_000})
    mine = Reviewer(PlayedHand.of_record(record, Ruleset.from_stored(record["ruleset"]))).run()
    assert answer == {
        "double_dummy": list(mine.double_dummy or ()),
        "costs": [card.cost for card in mine.cards],
        "unanswered": 0,
    }
    assert mine.double_dummy is not None and len(answer["costs"]) == 52
    assert review({"mode": "review", "record": {**record, "seed": "00"}, "budget": 1}) == {
        "error": "the record's deal is not the one its seed deals"
    }
    # A budget of one position: the early positions are left unanswered, never guessed.
    small = review({"mode": "review", "record": record, "budget": 1})
    assert small["double_dummy"] is None and small["unanswered"] > 0
    assert small["costs"].count(None) == small["unanswered"]
