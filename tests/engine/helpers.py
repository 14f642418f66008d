"""Shared helpers for the Spades engine tests: fixed deals from text, and random legal games."""

import random
from collections.abc import Mapping

from engine.actions import Action, Bid, LookAtHand
from engine.cards import CardMask, mask_of, parse_card
from engine.game import Game, Phase, new_game
from engine.ordering import ORDERS, card_order
from engine.ruleset import Ruleset
from engine.spades import SpadesGame


def cards(text: str) -> CardMask:
    """A mask from notation separated by spaces: "AS KS 2C"."""
    return mask_of(parse_card(t) for t in text.split())


def fill_deal(ruleset: Ruleset, fixed: Mapping[int, str], set_aside: str = "") -> list[CardMask]:
    """Hands where `fixed` seats hold exactly the given cards (when 13 are given) or at least them;
    the rest of the deck is shared out round robin, lowest cards first, to fill every hand."""
    n = ruleset.players
    size = ruleset.tricks_per_hand
    hands = [0] * n
    for seat, text in fixed.items():
        hands[seat] = cards(text)
    used = cards(set_aside)
    for hand in hands:
        used |= hand
    rest = [c for c in card_order(ruleset.deck).cards if not used >> c & 1]
    seat = 0
    for card in rest:
        for _ in range(n):
            if hands[seat].bit_count() < size:
                break
            seat = (seat + 1) % n
        else:
            raise AssertionError("more cards than hands")
        hands[seat] |= 1 << card
        seat = (seat + 1) % n
    return hands


def spades(preset: str = "standard", **options: object) -> SpadesGame:
    # Seat 0 deals first, as the worked examples assume (unless the test sets first_dealer).
    dealer = None if "first_dealer" in options else 0
    game = new_game(Ruleset.from_preset(preset, **options), dealer=dealer)
    assert isinstance(game, SpadesGame)
    return game


def bid_all(game: Game, bids: Mapping[int, int | Bid]) -> None:
    """Make these bids in turn order (ints are plain bids)."""
    while game.phase is Phase.BIDDING:
        seat = game.to_act()[0]
        bid = bids[seat]
        bid = bid if isinstance(bid, Bid) else Bid(seat, bid)
        if not bid.blind and LookAtHand(seat) in game.legal_actions(seat):
            game.apply(LookAtHand(seat))
        game.apply(bid)


def random_action(game: Game, rng: random.Random) -> Action:
    """A random legal action, preferring sensible ordinary bids so that games end."""
    seat = rng.choice(game.to_act())
    actions = game.legal_actions(seat)
    plain = [
        a for a in actions if isinstance(a, Bid) and 1 <= a.tricks <= 4 and a == Bid(seat, a.tricks)
    ]
    if plain and rng.random() < 0.85:
        return rng.choice(plain)
    return rng.choice(actions)


def play_random_game(
    ruleset: Ruleset, rng: random.Random, *, max_hands: int = 60, dealer: int = 0
) -> Game:
    """A whole game of random legal actions (stops after `max_hands` deals)."""
    game = new_game(ruleset, dealer=dealer)
    deals = 0
    while not game.is_over:
        if game.phase is Phase.DEALING:
            if deals == max_hands:
                break
            game.deal(rng.randbytes(16))
            deals += 1
            continue
        game.apply(random_action(game, rng))
    return game


def ending(
    ruleset: Ruleset,
    hand_number: int,
    rng: random.Random,
    size: int,
    *,
    break_at_random: bool = False,
) -> tuple[list[CardMask], SpadesGame]:
    """The last `size` tricks of a hand, small enough to search whole: `size` cards a seat from a
    shuffled deck, every seat bid 1, the tricks before them side 0's, a random leader, and spades
    broken at random if told (else not); the hands and the position."""
    deck = list(ORDERS[ruleset.deck].cards)
    rng.shuffle(deck)
    hands = [sum(1 << c for c in deck[size * s : size * s + size]) for s in range(4)]
    leader = rng.randrange(4)
    game = SpadesGame.position(
        ruleset,
        hands=hands,
        dealer=0,
        bids=[Bid(seat=s, tricks=1) for s in range(4)],
        leader=leader,
        tricks_won=[13 - size, 0, 0, 0],
        broken=rng.random() < 0.5 if break_at_random else False,
        hand_number=hand_number,
    )
    return hands, game
