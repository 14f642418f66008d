"""The engine's one table of option descriptions (engine/option_docs.py) covers every option of
`Ruleset` and every word an enumerated option takes; a rules panel lists only the options of the
game played that matter under the others, with values in words."""

import json
from dataclasses import fields

import pytest

from engine import ruleset as rules
from engine.option_docs import OPTION_DOCS, applies, rule_lines, value_words
from engine.ruleset import PRESETS, Ruleset

#: The enumerated options and the words each may take (engine/ruleset.py's tuples).
WORD_OPTIONS = {
    "game": rules.GAMES,
    "deck": rules.DECKS,
    "bags": rules.BAG_MODES,
    "first_lead": rules.FIRST_LEADS,
    "spades_break": rules.SPADES_BREAKS,
    "play_rule": rules.PLAY_RULES,
    "tram_penalty": rules.TRAM_PENALTIES,
    "blind_nil_exchange_order": rules.EXCHANGE_ORDERS,
    "deficient_hands": rules.DEFICIENT_CONDITIONS,
    "hearts_pass_cycle": rules.HEARTS_PASSES,
    "hearts_moon": rules.HEARTS_MOONS,
    "bid_rule": rules.BID_RULES,
    "hand_schedule": tuple(rules.HAND_TYPES),
}


def test_every_option_of_the_ruleset_is_described_in_order() -> None:
    assert list(OPTION_DOCS) == [f.name for f in fields(Ruleset)]
    for name, doc in OPTION_DOCS.items():
        assert doc.label and doc.about.endswith("."), name
        assert set(doc.games) <= {"spades", "hearts"} and doc.games, name
        assert set(doc.when) <= set(OPTION_DOCS), name
        assert (name.startswith("hearts_")) == (doc.games == ("hearts",)), name
    json.dumps({name: doc.to_dict() for name, doc in OPTION_DOCS.items()})  # the page's copy


@pytest.mark.parametrize("option", sorted(WORD_OPTIONS))
def test_every_word_of_an_enumerated_option_has_its_words(option: str) -> None:
    assert set(OPTION_DOCS[option].words) == set(WORD_OPTIONS[option])


def test_values_in_words() -> None:
    assert value_words("blind_nil", True) == "yes"
    assert value_words("nil_value", 100) == "100 points"
    assert value_words("overtrick_points", 1) == "1 point"
    assert value_words("overtrick_points", -10) == "-10 points"
    assert all(doc.unit.endswith("s") for doc in OPTION_DOCS.values() if doc.unit)
    assert value_words("target_score", 0) == "no target"
    assert value_words("max_hands", 0) == "no limit"
    assert value_words("first_dealer", "random") == "drawn from the first deal's seed"
    assert value_words("first_dealer", 2) == "seat 2"
    assert value_words("hearts_pass_cycle", ["left", "none"]) == "left, no pass"
    assert value_words("deficient_hands", []) == "none"
    assert value_words("bags", "last_digit") == "counted in the score's last digit"


def test_a_spades_panel_has_no_hearts_option_and_the_reverse() -> None:
    for name, preset in PRESETS.items():
        lines = rule_lines(preset)
        options = {line.option for line in lines}
        hearts = {o for o in options if o.startswith("hearts_")}
        if preset.game == "spades":
            assert not hearts, name
        else:
            assert hearts and "nil_value" not in options and "bags" not in options, name
        for line in lines:
            assert "_" not in line.value or line.option == "hand_schedule", (name, line)
            assert line.value not in ("True", "False"), (name, line)


def test_an_option_that_does_not_matter_is_left_out() -> None:
    standard = {line.option for line in rule_lines(PRESETS["standard"])}
    assert "blind_nil" in standard and "blind_nil_value" not in standard
    assert "tram_penalty" not in standard and "losing_floor" not in standard
    assert "hand_schedule" not in standard  # only a Crazy game's schedule is worth a line
    assert "hand_schedule" in {line.option for line in rule_lines(PRESETS["crazy"])}
    yahoo = {line.option: line.value for line in rule_lines(PRESETS["yahoo"])}
    assert yahoo["blind_nil_value"] == "200 points"
    assert yahoo["blind_nil_behind"] == "100 points"
    no_bags = Ruleset().with_options(bags="no_bags").to_dict()
    assert not applies("bag_limit", no_bags) and not applies("overtrick_points", no_bags)
    assert applies("two_player_double_nil", PRESETS["two-player"].to_dict())
    assert not applies("two_player_double_nil", PRESETS["standard"].to_dict())
