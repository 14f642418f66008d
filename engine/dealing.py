"""How a hand is dealt from a seed (docs/rules.md, "The deal"). Pure functions of (ruleset, seed, dealer).

The deck in canonical order (ascending card number, only the cards in play) is shuffled with
`engine.deal.shuffled(seed, deck)`; then, reading the shuffled deck from index 0:

- four-handed: cards are dealt singly clockwise starting with the dealer's left (card i goes to seat
  (dealer + 1 + i) mod 4). Joker Spades: the first 52 so, then the last two both go to the dealer.
- three-handed: 51 cards singly from the dealer's left (17 each); the last card is set aside.
- two-handed: no deal; the shuffled deck is the stock, drawn from index 0 (see `SpadesGame`).
- face-up deals: the first `face_up_cards` cards each seat receives are dealt face up.
"""

from dataclasses import dataclass
from typing import Final

from engine.cards import Card, CardMask
from engine.deal import shuffled
from engine.errors import RulesetError
from engine.ordering import card_order
from engine.ruleset import RANDOM_DEALER, Ruleset

#: A game's dealer before its first deal when that deal's seed will draw it (engine.deal.first_dealer).
UNDRAWN: Final = -1


def starting_dealer(ruleset: Ruleset, dealer: int | None) -> int:
    """The first hand's dealer for a new game: `dealer` when given, else the ruleset's `first_dealer`
    seat, else UNDRAWN (the first deal draws it from its seed). Raises RulesetError("dealer") for a
    seat that is not at the table."""
    if dealer is None:
        chosen = ruleset.first_dealer
        return UNDRAWN if chosen == RANDOM_DEALER else int(chosen)
    if isinstance(dealer, bool) or not isinstance(dealer, int) or not 0 <= dealer < ruleset.players:
        raise RulesetError("dealer", f"must be a seat from 0 to {ruleset.players - 1}")
    return dealer


def next_dealer(dealer: int, players: int) -> int:
    """The next hand's dealer after a hand is scored or declared dead: the deal passes to the left."""
    return (dealer + 1) % players


# Each deck's cards as bits (1 << card), in canonical order: shuffling these instead of the card
# numbers applies the same permutation, and a hand is then the plain sum of its slice.
_BIT_DECKS: Final[dict[str, tuple[CardMask, ...]]] = {}


@dataclass(frozen=True, slots=True)
class DealtHands:
    """The result of a deal: hands per seat, face-up cards per seat, the set-aside card(s), the stock
    (two-handed only: the whole shuffled deck, top first)."""

    hands: tuple[CardMask, ...]
    face_up: tuple[CardMask, ...]
    set_aside: CardMask
    stock: tuple[Card, ...]


def canonical_deck(ruleset: Ruleset) -> list[Card]:
    """The cards in play, ascending: 2C..AC, 2D..AD, 2H..AH, 2S..AS, then LJ, BJ in Joker Spades."""
    return list(card_order(ruleset.deck).cards)


def deal_hands(ruleset: Ruleset, seed: bytes, dealer: int) -> DealtHands:
    """Deal a hand from a seed (the same seed always gives the same deal)."""
    n = ruleset.players
    deck = card_order(ruleset.deck).cards
    if n == 2:
        return DealtHands((0, 0), (0, 0), 0, tuple(shuffled(seed, deck)))
    bit_deck = _BIT_DECKS.get(ruleset.deck)
    if bit_deck is None:
        bit_deck = _BIT_DECKS[ruleset.deck] = tuple(1 << card for card in deck)
    bits = shuffled(seed, bit_deck)  # bits[i] is 1 << (card i of the shuffled deck)
    hands = [0] * n
    face_up = [0] * n
    dealt = n * ruleset.tricks_per_hand
    up = ruleset.face_up_cards * n
    for k in range(n):
        # Card i goes to seat (dealer + 1 + i) mod n: seat (dealer + 1 + k) gets cards k, k + n, ...
        # (a sum of distinct bits is their union).
        seat = (dealer + 1 + k) % n
        hands[seat] = sum(bits[k:dealt:n])
        if up:
            face_up[seat] = sum(bits[k:up:n])
    set_aside = 0
    for bit in bits[dealt:]:
        if ruleset.deck == "jokers":
            hands[dealer] |= bit
        else:
            set_aside |= bit
    return DealtHands(tuple(hands), tuple(face_up), set_aside, ())
