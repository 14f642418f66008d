"""The engine decides results: `Outcome` places every side and seat (1 = best, lowest score first in
Hearts, level scores share the better place), and `hand_dealt` says where a Hearts hand passes."""

import random

import pytest

from engine.game import Outcome, Phase, new_game
from engine.hearts import HeartsGame
from engine.ruleset import PRESETS
from protocol.messages import HandDealt as HandDealtMessage
from protocol.wire import game_event
from tests.engine.helpers import play_random_game

HEARTS_SIDES = ((0,), (1,), (2,), (3,))
TEAMS = ((0, 2), (1, 3))


def test_hearts_places_put_the_lowest_score_first() -> None:
    # The server's old reading (places by the higher score) stored these as 3, 1, 4, 2.
    outcome = Outcome((2,), (51, 100, 37, 72), HEARTS_SIDES, "target", lowest_wins=True)
    assert outcome.places == (2, 4, 1, 3)
    assert outcome.seat_places == (2, 4, 1, 3)
    assert [outcome.place_of(seat) for seat in range(4)] == [2, 4, 1, 3]
    assert [outcome.score_of(seat) for seat in range(4)] == [51, 100, 37, 72]
    assert outcome.to_dict()["places"] == [2, 4, 1, 3]


def test_level_scores_share_the_better_place() -> None:
    shared = Outcome((0, 1), (30, 30, 100, 50), HEARTS_SIDES, "target", lowest_wins=True)
    assert shared.places == (1, 1, 4, 3)
    tied_behind = Outcome((0,), (10, 100, 100, 40), HEARTS_SIDES, "target", lowest_wins=True)
    assert tied_behind.places == (1, 3, 3, 2)
    draw = Outcome((), (300, 300), TEAMS, "draw")
    assert draw.is_draw and draw.places == (1, 1) and draw.seat_places == (1, 1, 1, 1)


def test_spades_places_are_by_the_higher_score_and_partners_share_theirs() -> None:
    outcome = Outcome((1, 3), (300, 512), TEAMS, "target")
    assert outcome.places == (2, 1)
    assert outcome.seat_places == (2, 1, 2, 1)
    three = Outcome((1,), (120, 510, 120), ((0,), (1,), (2,)), "target")
    assert three.places == (2, 1, 2)


def test_a_boston_wins_first_place_whatever_the_scores() -> None:
    outcome = Outcome((0, 2), (250, 480), TEAMS, "boston")
    assert outcome.places == (1, 2)


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_every_finished_game_places_its_winners_first(preset: str) -> None:
    ruleset = PRESETS[preset]
    if ruleset.target_score:
        ruleset = ruleset.with_options(target_score=100 if ruleset.game == "spades" else 30)
    ruleset = ruleset.with_options(max_hands=min(ruleset.max_hands or 6, 6))
    game = play_random_game(ruleset, random.Random(preset))
    outcome = game.outcome
    assert outcome is not None
    assert outcome.lowest_wins == (ruleset.game == "hearts")
    assert len(outcome.places) == len(outcome.sides) == len(outcome.scores)
    for seat in outcome.winners:
        assert outcome.place_of(seat) == 1
    best_first = sorted(
        range(len(outcome.sides)),
        key=lambda side: outcome.scores[side] * (1 if outcome.lowest_wins else -1),
    )
    if outcome.reason != "boston":
        ordered = [outcome.places[side] for side in best_first]
        assert ordered == sorted(ordered)


def test_hearts_hand_dealt_says_where_the_hand_passes() -> None:
    ruleset = PRESETS["hearts"].with_options(hearts_pass_cycle=["left", "none", "across"])
    game = new_game(ruleset)
    assert isinstance(game, HeartsGame)
    for number, expected in enumerate(("left", "none", "across", "left")):
        events = game.deal(b"pass %d" % number)
        dealt = events[0]
        assert dealt.to_dict()["pass_direction"] == expected == game.pass_direction
        for seat in (0, 3, None):
            shown = dealt.for_seat(seat)
            assert shown is not None and shown["pass_direction"] == expected
            message = game_event("t1", game.version, shown)
            assert isinstance(message, HandDealtMessage) and message.pass_direction == expected
        # Play the hand out, passing the lowest cards.
        while game.phase is not Phase.DEALING:
            seat = game.to_act()[0]
            game.apply(game.legal_actions(seat)[0])


def test_spades_hand_dealt_has_no_pass_direction() -> None:
    game = new_game(PRESETS["standard"])
    dealt = game.deal(b"no pass")[0]
    assert "pass_direction" not in dealt.to_dict()
    shown = dealt.for_seat(1)
    assert shown is not None
    message = game_event("t1", 1, shown)
    assert isinstance(message, HandDealtMessage) and message.pass_direction is None
