"""Shared helpers for the HeartsGame tests (test_hearts*.py): games under the house rules, cards from
text, a refusal that must leave the game unchanged, scripted and random play."""

import random
from collections.abc import Sequence
from typing import Any

import pytest

from engine.actions import PlayCard
from engine.cards import cards_in, mask_of, parse_card
from engine.errors import IllegalAction
from engine.game import Phase, new_game
from engine.hearts import HeartsGame
from engine.ruleset import Ruleset


def hearts(**options: Any) -> HeartsGame:
    # The house rules (all three on) with seat 0 dealing first: what these examples were written for.
    game = new_game(Ruleset.from_preset("hearts-house", **options), dealer=0)
    assert isinstance(game, HeartsGame)
    return game


def m(texts: str) -> int:
    return mask_of(parse_card(text) for text in texts.split())


def c(text: str) -> int:
    return parse_card(text)


def cs(texts: str) -> list[int]:
    """Cards in the order written."""
    return [parse_card(text) for text in texts.split()]


def canonical(game: HeartsGame) -> Any:
    """Everything observable about a game, to compare before and after a refused action."""
    return (
        game.version,
        game.phase,
        game.to_act(),
        game.scores,
        game.histories,
        game.spectator_view().to_dict(),
        [game.view(seat).to_dict() for seat in range(game.players)],
        [game.hand(seat) for seat in range(game.players)],
    )


def lowest(hand: int, count: int) -> tuple[int, ...]:
    """The `count` lowest cards of a hand (a pass that is always allowed)."""
    return tuple(cards_in(hand)[:count])


def refuse(game: HeartsGame, action: Any, code: str) -> str:
    """Apply an action that must be refused with `code`; check nothing changed; return the message."""
    before = canonical(game)
    with pytest.raises(IllegalAction) as info:
        game.apply(action)
    assert info.value.code == code
    assert canonical(game) == before
    return info.value.message


def play_out_hand(game: HeartsGame, rng: random.Random) -> None:
    """Random legal actions until the hand is scored."""
    hand = game.hand_number
    for _ in range(200):
        if game.phase in (Phase.DEALING, Phase.GAME_OVER) and game.hand_number == hand:
            return
        seat = rng.choice(game.to_act())
        game.apply(rng.choice(game.legal_actions(seat)))
    raise AssertionError("a hand took more than 200 actions")


# A deal where seat 0 can take every trick: 12 clubs and the queen, seat 1 the 2C and 12 hearts.
MOON_DEAL = [
    m("3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC QS"),
    m("2C 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"),
    m("AH 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD"),
    m("AD 2S 3S 4S 5S 6S 7S 8S 9S TS JS KS AS"),
]
# Cards each seat plays first whenever they are legal; otherwise seat 0 plays its highest card and the
# others their lowest. This gives seat 0 all 26 points.
MOON_PREFERENCES = {
    0: cs("AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C QS"),
    2: [c("AH")],
    3: [c("AS"), c("KS")],
}


def scripted_play(game: HeartsGame, preferences: dict[int, list[int]]) -> list[Any]:
    events: list[Any] = []
    for _ in range(52):
        seat = game.to_act()[0]
        legal = game.legal_play_mask(seat)
        choice = next((card for card in preferences.get(seat, []) if legal >> card & 1), None)
        if choice is None:
            cards = cards_in(legal)
            choice = cards[-1] if seat == 0 else cards[0]
        events.extend(game.apply(PlayCard(seat, choice)))
    return events


def no_pass_game(hands: Sequence[int], **options: Any) -> HeartsGame:
    game = hearts(hearts_pass_cycle=["none"], **options)
    game.deal_cards(hands)
    return game
