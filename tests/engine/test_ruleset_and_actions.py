"""Rulesets (validation, presets, wire form) and actions (wire shape, bad input)."""

import json

import pytest

from engine.actions import (
    Action,
    Bid,
    Claim,
    DeclareDeficient,
    Discard,
    ExchangeCards,
    KeepDrawn,
    LookAtHand,
    PassCards,
    PlayCard,
    action_from_dict,
    action_to_dict,
)
from engine.errors import IllegalAction, NotationError, RulesetError
from engine.ruleset import CRAZY_SCHEDULE, PRESETS, Ruleset, preset_name

REQUIRED_PRESETS = {
    "standard",
    "yahoo",
    "suicide",
    "double-nil-passing",
    "joker",
    "deuces-high",
    "four-or-none",
    "partnership-fourteen",
    "mirror",
    "crazy",
    "three-player",
    "two-player",
    "hearts",
}


def test_every_required_preset_exists_and_round_trips() -> None:
    assert set(PRESETS) >= REQUIRED_PRESETS
    for name, ruleset in PRESETS.items():
        wire = json.loads(json.dumps(ruleset.to_dict()))
        assert Ruleset.from_dict(wire) == ruleset
        assert preset_name(ruleset) == name
        assert Ruleset.from_preset(name) == ruleset


def test_presets_pick_the_sources_sides() -> None:
    standard, yahoo = PRESETS["standard"], PRESETS["yahoo"]
    assert (standard.first_lead, standard.nil_tricks_help_partner, standard.bags) == (
        "left_of_dealer",
        False,
        "counted",
    )
    assert (yahoo.first_lead, yahoo.bags, yahoo.blind_nil_value, yahoo.blind_nil_behind) == (
        "dealer",
        "last_digit",
        200,
        100,
    )
    assert PRESETS["double-nil-passing"].blind_nil_behind == 200
    assert PRESETS["suicide"].bid_rule == "suicide"
    assert PRESETS["deuces-high"].nil_scored_independently
    assert PRESETS["crazy"].hand_schedule == CRAZY_SCHEDULE and PRESETS["crazy"].max_hands == 15
    assert len(CRAZY_SCHEDULE) == 15
    assert PRESETS["three-player"].tricks_per_hand == 17
    assert PRESETS["hearts"].game == "hearts" and PRESETS["hearts"].target_score == 100


@pytest.mark.parametrize(
    ("options", "option"),
    [
        ({"players": 5}, "players"),
        ({"no_such": 1}, "no_such"),
        ({"target_score": "500"}, "target_score"),
        ({"nil": 1}, "nil"),
        ({"deck": "tarot"}, "deck"),
        ({"max_bid": 14}, "max_bid"),
        ({"min_bid": 5, "max_bid": 4}, "max_bid"),
        ({"blind_nil_exchange": 4, "blind_nil": True}, "blind_nil_exchange"),
        ({"blind_nil_exchange": 2}, "blind_nil_exchange"),
        ({"face_up_cards": 5}, "face_up_cards"),
        (
            {"nil_tricks_help_partner": True, "nil_scored_independently": True},
            "nil_scored_independently",
        ),
        ({"bags": "last_digit", "overtrick_points": 2}, "bags"),
        ({"deck": "jokers", "players": 3, "max_bid": 13}, "deck"),
        ({"bid_rule": "four_or_none", "players": 3}, "bid_rule"),
        ({"hand_schedule": ["regular", "wild"]}, "hand_schedule"),
        ({"deficient_hands": ["no_hearts"]}, "deficient_hands"),
        ({"target_score": 0}, "target_score"),
        ({"game": "hearts", "players": 2}, "players"),
        ({"game": "hearts", "hearts_moon": "maybe"}, "hearts_moon"),
        ({"game": "hearts", "players": 3, "hearts_pass_cycle": ["across"]}, "hearts_pass_cycle"),
        ({"boston": True, "players": 3}, "boston"),
        ({"two_player_double_nil": True}, "two_player_double_nil"),
    ],
)
def test_bad_options_raise_an_error_naming_the_option(
    options: dict[str, object], option: str
) -> None:
    with pytest.raises(RulesetError) as info:
        Ruleset.from_preset("standard", **options)
    assert info.value.option == option
    assert info.value.code == "bad_ruleset"


def test_unknown_preset_and_bad_dict() -> None:
    with pytest.raises(RulesetError) as info:
        Ruleset.from_preset("whist")
    assert info.value.option == "preset"
    with pytest.raises(RulesetError):
        Ruleset.from_dict([("players", 4)])  # type: ignore[arg-type]


def test_with_options_leaves_the_original_alone() -> None:
    standard = PRESETS["standard"]
    changed = standard.with_options(target_score=300, deficient_hands=["no_spades"])
    assert changed.target_score == 300 and changed.deficient_hands == ("no_spades",)
    assert standard.target_score == 500


ACTIONS: list[Action] = [
    Bid(1, 4),
    Bid(2, 0, blind=True),
    Bid(3, 5, no_trumps=True),
    Bid(0, 0, moe="little"),
    Bid(0, 4, bemo="big_bemo"),
    Bid(0, 10, ten_for_200=True),
    Bid(1, 0, double_nil=True),
    LookAtHand(2),
    PlayCard(3, 51),
    ExchangeCards(0, (0, 53)),
    PassCards(1, (1, 2, 3)),
    Claim(2),
    DeclareDeficient(3),
    KeepDrawn(1, False),
    Discard(0, (12, 25)),
]


@pytest.mark.parametrize("action", ACTIONS)
def test_actions_round_trip_through_the_wire_shape(action: Action) -> None:
    wire = json.loads(json.dumps(action_to_dict(action)))
    assert action_from_dict(wire) == action
    bare = action_to_dict(action, with_seat=False)
    assert action_from_dict(bare, seat=action.seat) == action


def test_documented_wire_shapes() -> None:
    assert action_to_dict(PlayCard(0, 49), with_seat=False) == {"kind": "play", "card": "QS"}
    assert action_to_dict(Bid(0, 4), with_seat=False) == {
        "kind": "bid",
        "tricks": 4,
        "blind": False,
    }


@pytest.mark.parametrize(
    "bad",
    [
        None,
        3,
        "play",
        [],
        {},
        {"kind": "dance"},
        {"kind": "play"},
        {"kind": "play", "card": 5},
        {"kind": "bid"},
        {"kind": "bid", "tricks": "4"},
        {"kind": "bid", "tricks": True},
        {"kind": "bid", "tricks": 4, "blind": "yes"},
        {"kind": "bid", "tricks": 4, "moe": "huge"},
        {"kind": "exchange", "cards": "QS"},
        {"kind": "exchange", "cards": ["QS", "QS"]},
        {"kind": "exchange", "cards": [1]},
        {"kind": "keep_drawn"},
        {"kind": "discard"},
    ],
)
def test_bad_wire_actions_raise_engine_errors_only(bad: object) -> None:
    with pytest.raises((IllegalAction, NotationError)):
        action_from_dict(bad, seat=0)


def test_bad_card_is_a_notation_error_and_a_missing_seat_is_refused() -> None:
    with pytest.raises(NotationError):
        action_from_dict({"kind": "play", "card": "ZZ"}, seat=0)
    with pytest.raises(IllegalAction):
        action_from_dict({"kind": "claim"})
