"""HeartsGame: the points of a hand (hearts, the queen, the moon, the jack of diamonds) and the end
of the game (docs/rules-hearts.md), through the Game interface."""

import random

import pytest

from engine.actions import PlayCard
from engine.cards import mask_of
from engine.errors import IllegalAction
from engine.events import GameOver, HandScored
from engine.game import Phase
from engine.hearts_rules import POINT_CARDS, penalty_points
from engine.hearts_scoring import HandScore, pass_transfers, score_hand
from engine.history import Transfer
from engine.ruleset import Ruleset
from tests.engine.hearts_helpers import (
    MOON_DEAL,
    MOON_PREFERENCES,
    c,
    cs,
    hearts,
    m,
    no_pass_game,
    play_out_hand,
    refuse,
    scripted_play,
)

# -- scoring ------------------------------------------------------------------------------------------


def test_points_are_one_a_heart_and_thirteen_for_the_queen() -> None:
    rng = random.Random(7)
    game = hearts(target_score=10_000)
    for number in range(6):
        game.deal(b"points %d" % number)
        play_out_hand(game, rng)
    for history in game.histories:
        taken = [0, 0, 0, 0]
        for trick in range(13):
            cards = history.plays[4 * trick : 4 * trick + 4]
            taken[history.trick_winners[trick]] |= mask_of(card for _, card in cards)
        points = [penalty_points(mask, False) for mask in taken]
        shot = any(mask & POINT_CARDS == POINT_CARDS for mask in taken)
        if not shot:
            assert list(history.score_delta) == points
            assert sum(points) == 26
        assert history.tricks == tuple(history.trick_winners.count(s) for s in range(4))


@pytest.mark.parametrize(
    ("moon", "jack", "delta"),
    [
        ("off", False, (26, 0, 0, 0)),
        ("add_to_others", False, (0, 26, 26, 26)),
        ("subtract_self", False, (-26, 0, 0, 0)),
        ("add_to_others", True, (-10, 26, 26, 26)),
        ("subtract_self", True, (-36, 0, 0, 0)),
        ("off", True, (16, 0, 0, 0)),
    ],
)
def test_shooting_the_moon(moon: str, jack: bool, delta: tuple[int, ...]) -> None:
    game = no_pass_game(MOON_DEAL, hearts_moon=moon, hearts_jack_of_diamonds=jack)
    events = scripted_play(game, MOON_PREFERENCES)
    scored = [e for e in events if isinstance(e, HandScored)]
    assert len(scored) == 1
    assert scored[0].delta == delta
    assert game.scores == delta
    assert scored[0].tricks == (13, 0, 0, 0)
    assert ("shot the moon" in " ".join(scored[0].notes)) == (moon != "off")
    history = game.histories[0]
    assert history.score_delta == delta
    assert history.score_after == delta


def test_the_jack_of_diamonds_counts_minus_ten_for_whoever_takes_it() -> None:
    hands = [
        m("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"),
        m("2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD"),
        m("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"),
        m("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"),
    ]
    game = no_pass_game(hands, hearts_jack_of_diamonds=True)
    # Seat 0 leads clubs 13 times and takes everything, the jack included: a moon with the jack.
    events = scripted_play(game, {0: cs("2C AC KC QC JC TC 9C 8C")})
    scored = next(e for e in events if isinstance(e, HandScored))
    assert scored.delta == (-10, 26, 26, 26)


# -- the end of the game ------------------------------------------------------------------------------


def test_game_ends_when_someone_reaches_the_target_and_the_lowest_wins() -> None:
    game = no_pass_game(MOON_DEAL, hearts_moon="add_to_others", target_score=26)
    events = scripted_play(game, MOON_PREFERENCES)
    assert game.is_over
    assert game.phase is Phase.GAME_OVER
    assert game.outcome is not None
    assert game.outcome.winners == (0,)
    assert game.outcome.reason == "target"
    assert game.outcome.scores == (0, 26, 26, 26)
    assert events[-1] == GameOver(winners=(0,), scores=(0, 26, 26, 26), reason="target")
    assert game.to_act() == ()
    refuse(game, PlayCard(0, c("2C")), "game_over")
    with pytest.raises(IllegalAction):
        game.deal(b"more")
    assert game.spectator_view().winners == (0,)


def test_below_the_target_the_next_hand_is_dealt_by_the_next_seat() -> None:
    game = no_pass_game(MOON_DEAL, hearts_moon="add_to_others", target_score=27)
    scripted_play(game, MOON_PREFERENCES)
    assert not game.is_over
    assert game.phase is Phase.DEALING
    assert game.dealer == 1
    game.deal(b"next")
    assert game.hand_number == 2


def test_a_tie_for_the_lowest_score_is_a_shared_win() -> None:
    game = no_pass_game(MOON_DEAL, hearts_moon="off", target_score=26)
    scripted_play(game, MOON_PREFERENCES)
    assert game.outcome is not None
    assert game.outcome.winners == (1, 2, 3)


def test_max_hands_ends_the_game() -> None:
    game = hearts(target_score=0, max_hands=2)
    rng = random.Random(2)
    for number in range(2):
        game.deal(b"h%d" % number)
        play_out_hand(game, rng)
    assert game.is_over
    assert game.outcome is not None
    assert game.outcome.reason == "hands"


def test_a_whole_game_to_100_finishes_and_records_every_hand() -> None:
    game = hearts()
    rng = random.Random(11)
    for number in range(60):
        if game.is_over:
            break
        game.deal(b"game %d" % number)
        play_out_hand(game, rng)
    assert game.is_over
    assert max(game.scores) >= 100
    assert len(game.histories) == game.hand_number
    assert game.outcome is not None
    assert min(game.scores) == game.scores[game.outcome.winners[0]]


# -- the end of a hand as values (engine.hearts_scoring, which HeartsGame calls) ---------------------


def test_score_hand_is_a_function_of_the_cards_taken_and_the_scores_before() -> None:
    house = Ruleset.from_preset("hearts-house", target_score=100)
    # Seat 2 took every heart and the queen (a moon: 26 to each other seat), seat 1 the jack (no
    # jack rule in this preset: it counts nothing).
    taken = [m("2C 3C"), m("JD"), POINT_CARDS, 0]
    score = score_hand(house, taken, (70, 10, 5, 80), hand_number=3)
    assert score == HandScore(
        delta=(26, 26, 0, 26),
        after=(96, 36, 5, 106),
        notes=("seat 2 shot the moon (add to others)", "seat 2 took 26 points"),
        end="target",
    )
    plain = Ruleset.from_preset("hearts", max_hands=3)  # the moon "off": 26 for the shooter
    assert score_hand(plain, taken, (0, 0, 0, 0), hand_number=3) == HandScore(
        (0, 0, 26, 0), (0, 0, 26, 0), ("seat 2 took 26 points",), "hands"
    )
    assert score_hand(plain, taken, (0, 0, 0, 0), hand_number=2).end == ""


def test_pass_transfers_follow_the_direction_and_skip_seats_that_did_not_pass() -> None:
    given: list[tuple[int, ...] | None] = [(c("2C"),), (c("3C"),), None, (c("5C"),)]
    assert pass_transfers(given, "right") == (
        Transfer(0, 3, (c("2C"),)),
        Transfer(1, 0, (c("3C"),)),
        Transfer(3, 2, (c("5C"),)),
    )
    assert pass_transfers([None] * 4, "none") == ()
