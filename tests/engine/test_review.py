"""Hand review (engine/review.py): each card's cost against a plain minimax on endings, for every
four-handed preset; a budget leaves positions unanalysed rather than guessed; what is refused."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.actions import Bid
from engine.cards import mask_of
from engine.game import new_game
from engine.records import game_records, record_to_hand
from engine.review import NotReviewable, PlayedHand, Reviewer
from engine.ruleset import PRESETS, Ruleset
from engine.spades import SpadesGame
from tests.engine.helpers import ending
from tests.engine.test_double_dummy import CASES, minimax


def played_ending(
    ruleset: Ruleset, hand_number: int, rng: random.Random, size: int
) -> tuple[list[int], list[tuple[int, int]], list[int]]:
    """`size` cards a seat, played out at random: the hands, the plays, side 0's minimax value
    before each card (and after the last: 0)."""
    hands, game = ending(ruleset, hand_number, rng, size)
    plays, values = [], []
    while game.tricks_done < 13:
        values.append(minimax(game))
        legal = game.legal_play_mask(game.turn)
        card = rng.choice([c for c in range(54) if legal >> c & 1])
        plays.append((game.turn, card))
        game.play_fast(card)
    return hands, plays, [*values, 0]


@settings(max_examples=40, deadline=None)
@given(case=st.sampled_from(CASES), seed=st.integers(0, 2**32), size=st.integers(2, 3))
def test_each_cards_cost_is_what_minimax_says_it_gave_up(
    case: tuple[str, int], seed: int, size: int
) -> None:
    name, hand_number = case
    ruleset = PRESETS[name]
    rng = random.Random(seed)
    hands, plays, values = played_ending(ruleset, hand_number, rng, size)
    hand = PlayedHand.of_plays(ruleset, hand_number, 0, plays, dealt=hands)
    assert list(hand.hands) == hands
    review = Reviewer(hand, budget=None).run()
    assert review.complete and review.not_analysed == 0
    assert review.double_dummy == (values[0], size - values[0])
    for index, card in enumerate(review.cards):
        seat = plays[index][0]
        left = size - index // 4  # tricks left before the card, the one in progress included
        ends = index % 4 == 3
        won0 = 1 if ends and _winner0(ruleset, hand_number, hands, plays, index) else 0
        after0 = values[index + 1] + won0
        expected = (
            (values[index], after0) if seat % 2 == 0 else (left - values[index], left - after0)
        )
        assert (card.seat, card.card) == plays[index]
        assert (card.best, card.after) == expected
        assert card.cost == expected[0] - expected[1] >= 0


def _winner0(
    ruleset: Ruleset, hand_number: int, hands: list[int], plays: list[tuple[int, int]], last: int
) -> bool:
    """Whether side 0 won the trick that plays[last] ended."""
    game = SpadesGame.position(
        ruleset,
        hands=hands,
        dealer=0,
        bids=[Bid(seat=s, tricks=1) for s in range(4)],
        leader=plays[0][0],
        tricks_won=[13 - hands[0].bit_count(), 0, 0, 0],
        hand_number=hand_number,
    )
    for _, card in plays[: last + 1]:
        game.play_fast(card)
    return game.last_trick_winner % 2 == 0


def whole_hand_record(seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    game = new_game(Ruleset.from_preset("standard", target_score=100))
    game.deal(f"review-{seed}".encode())
    while game.phase.value != "dealing" and not game.is_over:
        seat = game.to_act()[0]
        game.apply(rng.choice(game.legal_actions(seat)))
    return game_records(game, game_id="r")[0]


def test_a_position_past_its_budget_is_not_analysed_and_nothing_is_guessed() -> None:
    history, ruleset = record_to_hand(whole_hand_record(1))
    hand = PlayedHand.of_history(history, ruleset)
    assert len(hand.plays) == 52 and sum(h.bit_count() for h in hand.hands) == 52
    reviewer = Reviewer(hand, budget=200)
    review = reviewer.run()
    assert review.complete
    assert review.double_dummy is None  # the opening lead's position needs more
    unknown = [c for c in review.cards if c.cost is None]
    known = [c for c in review.cards if c.cost is not None]
    assert unknown and known
    assert review.cards[-1].cost == 0  # the last card is forced
    assert review.not_analysed == len(unknown)


def test_a_review_stopped_part_way_keeps_the_positions_it_solved() -> None:
    history, ruleset = record_to_hand(whole_hand_record(2))
    reviewer = Reviewer(PlayedHand.of_history(history, ruleset), budget=200)
    steps = reviewer.steps()
    for _ in range(8):
        next(steps)
    review = reviewer.review()
    assert not review.complete
    assert [c.cost for c in review.cards[-7:]] != [None] * 7
    assert all(c.cost is None for c in review.cards[:40])


@pytest.mark.parametrize(("preset", "words"), [("three-player", "3-handed"), ("hearts", "Hearts")])
def test_a_hand_the_solver_does_not_play_is_refused_with_a_sentence(
    preset: str, words: str
) -> None:
    with pytest.raises(NotReviewable, match=words) as caught:
        PlayedHand.of_plays(PRESETS[preset], 1, 0, [(0, 0)])
    assert caught.value.code == "not_reviewable"


def test_a_play_that_is_not_legal_is_refused() -> None:
    ruleset = PRESETS["standard"]
    hands = [mask_of([0, 4]), mask_of([1, 5]), mask_of([2, 6]), mask_of([3, 7])]
    # Seat 1 leads out of turn: seat 0 leads the plays' first card, then seat 2 plays second.
    plays = [(0, 0), (2, 2), (1, 1), (3, 3), (0, 4), (1, 5), (2, 6), (3, 7)]
    hand = PlayedHand.of_plays(ruleset, 1, 0, plays, dealt=hands)
    with pytest.raises(NotReviewable, match="not a legal play"):
        Reviewer(hand)
