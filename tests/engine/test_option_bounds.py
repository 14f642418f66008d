"""Every option is bounded, so a table's options (echoed in every listing) stay small, and a refusal
never repeats a large value back; three-handed Hearts may not pass 4 (its choices do not fit a frame)."""

import json
from dataclasses import fields
from itertools import combinations
from pathlib import Path

import pytest

from engine.errors import RulesetError
from engine.ruleset import (
    BAG_MODES,
    DEFICIENT_CONDITIONS,
    HAND_TYPES,
    MAX_LIST_LENGTHS,
    OPTIONS_ADDED,
    PRESETS,
    Ruleset,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "rules.md"
HUGE = 10**12
LONG_TEXT = "x" * 5000


INT_OPTIONS = [
    f.name for f in fields(Ruleset) if type(f.default) is int and f.name != "first_dealer"
]
STR_OPTIONS = [f.name for f in fields(Ruleset) if type(f.default) is str]
LIST_OPTIONS = [f.name for f in fields(Ruleset) if type(f.default) is tuple]


@pytest.mark.parametrize("name", INT_OPTIONS)
@pytest.mark.parametrize("value", [HUGE, -HUGE])
def test_every_number_option_has_bounds(name: str, value: int) -> None:
    with pytest.raises(RulesetError) as info:
        Ruleset.from_dict({name: value})
    assert info.value.option == name
    assert len(info.value.message) < 200


@pytest.mark.parametrize("name", [*STR_OPTIONS, "first_dealer"])
def test_every_word_option_takes_only_its_words(name: str) -> None:
    with pytest.raises(RulesetError) as info:
        Ruleset.from_dict({name: LONG_TEXT})
    assert info.value.option == name
    assert len(info.value.message) < 300  # the value is not repeated in full


@pytest.mark.parametrize("name", LIST_OPTIONS)
def test_every_list_option_has_a_documented_longest_length(name: str) -> None:
    longest = MAX_LIST_LENGTHS[name]
    entry = {
        "deficient_hands": DEFICIENT_CONDITIONS[0],
        "hand_schedule": "regular",
        "hearts_pass_cycle": "left",
    }[name]
    base = PRESETS["hearts"] if name == "hearts_pass_cycle" else PRESETS["standard"]
    if name != "deficient_hands":
        assert len(getattr(base.with_options(**{name: [entry] * longest}), name)) == longest
    with pytest.raises(RulesetError) as info:
        base.with_options(**{name: [entry] * (longest + 1)})
    assert info.value.option == name
    assert f"at most {longest} entries" in info.value.message
    with pytest.raises(RulesetError) as info:
        base.with_options(**{name: [LONG_TEXT] * 1000})
    assert info.value.option == name and len(info.value.message) < 200
    docs = " ".join(DOCS.read_text(encoding="utf-8").split())
    assert f"`{name}` takes at most {longest} entries" in docs


def test_deficient_hand_conditions_each_at_most_once() -> None:
    every = PRESETS["standard"].with_options(deficient_hands=list(DEFICIENT_CONDITIONS))
    assert every.deficient_hands == DEFICIENT_CONDITIONS
    with pytest.raises(RulesetError) as info:
        PRESETS["standard"].with_options(deficient_hands=["no_spades", "no_spades"])
    assert info.value.option == "deficient_hands"


def test_unknown_option_names_are_cut_short_in_the_error() -> None:
    with pytest.raises(RulesetError) as info:
        Ruleset.from_dict({LONG_TEXT: 1})
    assert len(info.value.option) <= 40 and len(info.value.message) < 100
    with pytest.raises(RulesetError) as info:
        Ruleset.from_preset(LONG_TEXT)
    assert info.value.option == "preset" and len(info.value.message) < 500


def test_the_largest_options_a_table_can_have_stay_small() -> None:
    # Every list at its longest, with its longest entries: what a listing echoes for one table.
    spades = PRESETS["crazy"].with_options(
        hand_schedule=[max(HAND_TYPES, key=len)] * MAX_LIST_LENGTHS["hand_schedule"],
        deficient_hands=list(DEFICIENT_CONDITIONS),
        bags=max(BAG_MODES, key=len),
    )
    hearts = PRESETS["hearts"].with_options(
        hearts_pass_cycle=["across"] * MAX_LIST_LENGTHS["hearts_pass_cycle"]
    )
    for ruleset in (spades, hearts):
        assert len(json.dumps(ruleset.to_dict())) < 4096


def test_three_handed_hearts_passes_at_most_three() -> None:
    # C(17, 4) = 2380 ways to pass: a your_turn of about 71 KB, over the 64 KiB frame limit.
    assert len(list(combinations(range(17), 4))) == 2380
    three = PRESETS["hearts"].with_options(players=3, hearts_pass_cycle=["left", "right"])
    assert three.with_options(hearts_pass_count=3).hearts_pass_count == 3
    for cycle in (["left", "right"], ["none"]):
        with pytest.raises(RulesetError) as info:
            three.with_options(hearts_pass_count=4, hearts_pass_cycle=cycle)
        assert info.value.option == "hearts_pass_count"
    assert PRESETS["hearts"].with_options(hearts_pass_count=4).hearts_pass_count == 4


# The options of the first stored rulesets (before `first_dealer` and `no_spade_trumps_value`).
FIRST_OPTIONS = frozenset(
    [
        "game",
        "players",
        "target_score",
        "max_hands",
        "losing_floor_enabled",
        "losing_floor",
        "deck",
        "min_bid",
        "max_bid",
        "nil",
        "nil_value",
        "nil_tricks_help_partner",
        "nil_scored_independently",
        "double_nil",
        "blind_nil",
        "blind_nil_value",
        "blind_nil_behind",
        "blind_nil_exchange",
        "blind_nil_exchange_order",
        "blind_bids",
        "blind_bid_max",
        "blind_bid_bonus",
        "bid_rule",
        "ten_for_200",
        "boston",
        "moe",
        "bemo",
        "no_spade_trumps",
        "two_player_double_nil",
        "deficient_hands",
        "face_up_cards",
        "first_lead",
        "spades_break",
        "play_rule",
        "hand_schedule",
        "tram",
        "tram_penalty",
        "bags",
        "bag_limit",
        "bag_penalty",
        "overtrick_points",
        "hearts_pass_cycle",
        "hearts_pass_count",
        "hearts_no_points_first_trick",
        "hearts_must_break",
        "hearts_queen_breaks",
        "hearts_moon",
        "hearts_jack_of_diamonds",
    ]
)


def test_every_option_added_since_says_what_it_was_before() -> None:
    added = {f.name for f in fields(Ruleset)} - FIRST_OPTIONS
    assert added == set(OPTIONS_ADDED)
    for name, value in OPTIONS_ADDED.items():
        assert PRESETS["standard"].with_options(**{name: value}) is not None


def test_a_stored_ruleset_keeps_its_meaning_across_the_upgrade() -> None:
    # A `to_dict()` stored before the new options: seat 0 dealt first, a no-trumps trick was 20.
    old = {k: v for k, v in PRESETS["standard"].to_dict().items() if k in FIRST_OPTIONS}
    old.update(spades_break="played", no_spade_trumps=True)
    stored = Ruleset.from_stored(old)
    assert stored.first_dealer == 0 and stored.no_spade_trumps_value == 20
    assert stored.spades_break == "played"
    assert Ruleset.from_dict(old).first_dealer == "random"  # from_dict: today's defaults
    fresh = PRESETS["hearts"].to_dict()
    assert Ruleset.from_stored(fresh) == PRESETS["hearts"]  # today's dicts are unchanged
