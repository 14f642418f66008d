"""The heuristic's precomputed tables agree with their definitions on every deck: "a higher card of
the suit remains" (`is_boss`, `beaters`) and the trick estimate, whose per-suit terms are kept."""

import random

import pytest

from bots.samples import spades_policy
from bots.samples.situation import beaters, is_boss
from engine.cards import SPADES
from engine.ordering import ORDERS, CardOrder


def _cards(mask: int) -> list[int]:
    return [card for card in range(54) if mask >> card & 1]


def _outranked(order: CardOrder, card: int, mask: int) -> bool:
    suit = order.suit[card]
    return any(
        order.suit[other] == suit and order.power[other] > order.power[card]
        for other in _cards(mask & order.suit_masks[suit])
    )


@pytest.mark.parametrize("deck", sorted(ORDERS))
def test_is_boss_and_beaters_are_what_they_say(deck: str) -> None:
    order = ORDERS[deck]
    rng = random.Random(deck)
    cards = _cards(order.deck)
    for _ in range(300):
        mask = sum(1 << card for card in rng.sample(cards, rng.randint(0, len(cards))))
        card = rng.choice(cards)
        assert is_boss(order, card, mask) == (not _outranked(order, card, mask))
        for trumps in (False, True):
            ruffs = trumps and order.suit[card] != SPADES
            expected = 0
            for other in _cards(mask):
                higher = order.suit[other] == order.suit[card] and (
                    order.power[other] > order.power[card]
                )
                if higher or (ruffs and order.trumps >> other & 1):
                    expected |= 1 << other
            assert beaters(order, mask, card, trumps) == expected


@pytest.mark.parametrize("deck", sorted(ORDERS))
def test_the_trick_estimate_is_the_same_whether_its_terms_are_kept_or_not(deck: str) -> None:
    order = ORDERS[deck]
    rng = random.Random(7)
    cards = _cards(order.deck)
    hands = [sum(1 << c for c in rng.sample(cards, 13)) for _ in range(200)]
    spades_policy._TERMS.clear()
    cold = [
        spades_policy.estimate_tricks(hand, order, players) for hand in hands for players in (3, 4)
    ]
    warm = [
        spades_policy.estimate_tricks(hand, order, players) for hand in hands for players in (3, 4)
    ]
    assert cold == warm
    assert all(value >= 0 for value in cold)
