"""The pure Hearts rules: pass directions, legal plays, trick winners, points, the moon, the game's end."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.cards import CLUBS, DIAMONDS, HEARTS, SPADES, SUIT_MASKS, mask_of, parse_card
from engine.hearts_rules import (
    DEFAULT_PASS_CYCLE,
    HEARTS_MASK,
    POINT_CARDS,
    deal_hands,
    exchange,
    game_over,
    hand_points,
    holder_of,
    legal_plays,
    moon_shooter,
    pass_direction,
    pass_source,
    pass_target,
    penalty_points,
    trick_winner,
    winners,
)


def m(*texts: str) -> int:
    return mask_of(parse_card(text) for text in texts)


def cards(*texts: str) -> list[int]:
    return [parse_card(text) for text in texts]


def test_pass_cycle_is_left_right_across_none_then_repeats() -> None:
    directions = [pass_direction(k, DEFAULT_PASS_CYCLE) for k in range(9)]
    assert directions == [
        "left",
        "right",
        "across",
        "none",
        "left",
        "right",
        "across",
        "none",
        "left",
    ]
    assert pass_direction(3, ()) == "none"


@pytest.mark.parametrize(
    ("direction", "targets"),
    [
        ("left", [1, 2, 3, 0]),
        ("right", [3, 0, 1, 2]),
        ("across", [2, 3, 0, 1]),
        ("none", [0, 1, 2, 3]),
    ],
)
def test_pass_targets_and_sources_are_inverse(direction: str, targets: list[int]) -> None:
    assert [pass_target(seat, direction) for seat in range(4)] == targets
    for seat in range(4):
        assert pass_source(pass_target(seat, direction), direction) == seat


def test_exchange_moves_each_pass_to_its_target() -> None:
    hands = deal_hands(list(range(52)), dealer=3)
    passes = [1 << next(iter(sorted(c for c in range(52) if hands[s] >> c & 1))) for s in range(4)]
    after = exchange(hands, passes, "left")
    for seat in range(4):
        assert after[seat].bit_count() == 13
        assert after[(seat + 1) % 4] & passes[seat]
        assert not after[seat] & passes[seat]
    assert sum(after) == (1 << 52) - 1


def test_deal_is_single_cards_clockwise_from_the_dealers_left() -> None:
    hands = deal_hands(list(range(52)), dealer=2)
    # The first card goes to seat 3 (dealer's left), the second to seat 0, and so on.
    assert hands[3] & 1
    assert hands[0] & 2
    assert all(hand.bit_count() == 13 for hand in hands)
    assert holder_of(hands, 0) == 3
    with pytest.raises(ValueError):
        holder_of([0, 0, 0, 0], 5)


def test_first_lead_is_the_two_of_clubs() -> None:
    hand = m("2C", "AC", "3D", "4H")
    assert legal_plays(hand, None, True, False, no_points_first_trick=True, must_break=True) == m(
        "2C"
    )


def test_a_follower_must_follow_suit() -> None:
    hand = m("3C", "KC", "4H", "QS")
    assert legal_plays(hand, CLUBS, False, False, no_points_first_trick=True, must_break=True) == m(
        "3C", "KC"
    )
    assert (
        legal_plays(hand, DIAMONDS, False, False, no_points_first_trick=True, must_break=True)
        == hand
    )


def test_no_points_on_the_first_trick_when_void_in_clubs() -> None:
    hand = m("3D", "4H", "QS", "AS")
    assert legal_plays(hand, CLUBS, True, False, no_points_first_trick=True, must_break=True) == m(
        "3D", "AS"
    )
    # Without the option anything goes.
    assert (
        legal_plays(hand, CLUBS, True, False, no_points_first_trick=False, must_break=True) == hand
    )
    # A hand of nothing but points may play them.
    only_points = m("4H", "QS", "AH")
    assert (
        legal_plays(only_points, CLUBS, True, False, no_points_first_trick=True, must_break=True)
        == only_points
    )
    # After the first trick the restriction is gone.
    assert (
        legal_plays(hand, CLUBS, False, False, no_points_first_trick=True, must_break=True) == hand
    )


def test_the_jack_of_diamonds_is_not_a_point_card_on_the_first_trick() -> None:
    hand = m("JD", "4H")
    assert legal_plays(hand, CLUBS, True, False, no_points_first_trick=True, must_break=True) == m(
        "JD"
    )


def test_hearts_may_not_be_led_before_broken_unless_only_hearts() -> None:
    hand = m("3D", "4H", "AH")
    assert legal_plays(hand, None, False, False, no_points_first_trick=True, must_break=True) == m(
        "3D"
    )
    assert legal_plays(hand, None, False, True, no_points_first_trick=True, must_break=True) == hand
    assert (
        legal_plays(hand, None, False, False, no_points_first_trick=True, must_break=False) == hand
    )
    only_hearts = m("4H", "AH")
    assert (
        legal_plays(only_hearts, None, False, False, no_points_first_trick=True, must_break=True)
        == only_hearts
    )
    # The queen of spades is not a heart: she may be led before hearts are broken.
    assert legal_plays(
        m("QS", "5H"), None, False, False, no_points_first_trick=True, must_break=True
    ) == m("QS")


def test_legal_plays_of_an_empty_hand_is_empty() -> None:
    assert legal_plays(0, None, False, False, no_points_first_trick=True, must_break=True) == 0
    assert legal_plays(0, HEARTS, False, False, no_points_first_trick=True, must_break=True) == 0


@pytest.mark.parametrize(
    ("played", "leader", "winner"),
    [
        (["2C", "AC", "KC", "3C"], 0, 1),
        (["2C", "AS", "AH", "3C"], 1, 0),  # 2C led by seat 1, 3C by seat 0 wins: no trumps
        (["5H", "4H", "QS", "6H"], 2, 1),
        (["TD", "JD", "2D", "AD"], 3, 2),
        (["KS", "2C", "3C", "4C"], 0, 0),
    ],
)
def test_trick_winner_is_the_highest_of_the_suit_led(
    played: list[str], leader: int, winner: int
) -> None:
    assert trick_winner(cards(*played), leader) == winner


def test_penalty_points() -> None:
    assert penalty_points(m("2H", "AH", "QS", "2C"), False) == 15
    assert penalty_points(m("JD"), False) == 0
    assert penalty_points(m("JD", "3H"), True) == -9
    assert penalty_points(HEARTS_MASK, False) == 13
    assert penalty_points(POINT_CARDS, False) == 26


def moon_taken(shooter: int, jack_to: int | None = None) -> list[int]:
    taken = [0, 0, 0, 0]
    taken[shooter] = POINT_CARDS | SUIT_MASKS[CLUBS]
    other = (shooter + 1) % 4
    taken[other] |= SUIT_MASKS[DIAMONDS] | (SUIT_MASKS[SPADES] & ~POINT_CARDS)
    if jack_to is not None:
        jack = 1 << parse_card("JD")
        taken[other] &= ~jack
        taken[jack_to] |= jack
    return taken


def test_moon_shot_scored_every_way() -> None:
    taken = moon_taken(2)
    assert moon_shooter(taken) == 2
    assert hand_points(taken, "off", False) == [0, 0, 26, 0]
    assert hand_points(taken, "add_to_others", False) == [26, 26, 0, 26]
    assert hand_points(taken, "subtract_self", False) == [0, 0, -26, 0]


def test_moon_with_the_jack_of_diamonds() -> None:
    taken = moon_taken(1, jack_to=1)
    assert hand_points(taken, "add_to_others", True) == [26, -10, 26, 26]
    assert hand_points(taken, "subtract_self", True) == [0, -36, 0, 0]
    taken = moon_taken(1, jack_to=3)
    assert hand_points(taken, "add_to_others", True) == [26, 0, 26, 16]
    assert hand_points(taken, "off", True) == [0, 26, 0, -10]


def test_no_moon_when_the_points_are_split() -> None:
    taken = moon_taken(0)
    taken[0] &= ~(1 << parse_card("2H"))
    taken[3] |= 1 << parse_card("2H")
    assert moon_shooter(taken) is None
    assert hand_points(taken, "add_to_others", False) == [25, 0, 0, 1]


def test_every_hand_distributes_26_points_without_a_moon() -> None:
    taken = [m("QS", "2C"), HEARTS_MASK & ~m("2H"), m("2H"), 0]
    assert sum(hand_points(taken, "add_to_others", False)) == 26


def test_game_ends_at_the_target_and_the_lowest_wins() -> None:
    assert not game_over([99, 10, 20, 30], 100)
    assert game_over([100, 10, 20, 30], 100)
    assert game_over([120, 10, 20, 30], 100)
    assert winners([100, 10, 20, 30]) == (1,)
    assert winners([100, 10, 10, 30]) == (1, 2)


def test_the_worked_example_of_docs_rules_hearts() -> None:
    # docs/rules-hearts.md: North 40, East 52, South 31, West 60; South shoots, East takes the JD.
    before = [40, 52, 31, 60]
    taken = moon_taken(2, jack_to=1)

    def after(moon: str, jack: bool) -> list[int]:
        return [b + p for b, p in zip(before, hand_points(taken, moon, jack), strict=True)]

    assert after("off", False) == [40, 52, 57, 60]
    assert after("add_to_others", False) == [66, 78, 31, 86]
    assert after("subtract_self", False) == [40, 52, 5, 60]
    assert after("add_to_others", True) == [66, 68, 31, 86]


@settings(max_examples=200, deadline=None)
@given(
    hand=st.integers(min_value=1, max_value=(1 << 52) - 1),
    led=st.sampled_from([None, 0, 1, 2, 3]),
    first=st.booleans(),
    broken=st.booleans(),
    no_points=st.booleans(),
    must_break=st.booleans(),
)
def test_legal_plays_is_a_non_empty_part_of_the_hand(
    hand: int,
    led: int | None,
    first: bool,
    broken: bool,
    no_points: bool,
    must_break: bool,
) -> None:
    legal = legal_plays(
        hand, led, first, broken, no_points_first_trick=no_points, must_break=must_break
    )
    assert legal
    assert not legal & ~hand
    if led is not None and hand & SUIT_MASKS[led]:
        assert legal == hand & SUIT_MASKS[led]
    if led is None and not first and must_break and not broken and hand & ~HEARTS_MASK:
        assert not legal & HEARTS_MASK
