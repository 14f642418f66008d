"""Card order and suit membership per deck, as tables built once at import.

The deck option decides which cards are in play, which cards follow which suit and how cards rank:

- standard: 52 cards, A high, spades trump.
- jokers (Joker Spades, 003): 54 cards; Big Joker > Little Joker > AS, both jokers are spades.
- deuces_high (002): 2S > 2D > 2C > 2H > AS > KS ... > 3S; the 2D, 2C and 2H are spades for following suit
  and for trumping, and their printed suits lose them.

A trick is resolved with one table lookup per card: `trick_keys[led][card]` is 100 + rank for a trump,
the rank for a card of the suit led, and -1 for anything else; the highest key wins.
"""

from dataclasses import dataclass
from typing import Final

from engine.cards import (
    BIG_JOKER,
    CLUBS,
    DIAMONDS,
    FULL_DECK,
    HEARTS,
    LITTLE_JOKER,
    SPADES,
    STANDARD_DECK,
    SUIT_MASKS,
    Card,
    CardMask,
    make_card,
    rank_of,
    suit_of,
)

TRUMP: Final = SPADES
NO_CARD_KEY: Final = -1


@dataclass(frozen=True, slots=True)
class CardOrder:
    """The tables for one deck. Index every tuple by card number (0..53)."""

    name: str
    deck: CardMask  # the cards in play
    cards: tuple[
        Card, ...
    ]  # the cards in play, ascending: the canonical deck the shuffle starts from
    suit: tuple[int, ...]  # the suit a card follows (-1 for a card not in play)
    suit_masks: tuple[CardMask, ...]  # cards following each suit
    trumps: CardMask  # cards of the trump suit (spades and whatever joins them)
    power: tuple[int, ...]  # rank within its suit, higher is better
    trick_keys: tuple[tuple[int, ...], ...]  # [led suit][card] -> comparison key
    # The 13-card chunk of card numbers (card // 13) holding all of a suit's cards, or -1 when they
    # span two (Joker and Deuces-High spades): legal play lists are built a chunk at a time.
    suit_chunk: tuple[int, ...]

    def lowest(self, mask: CardMask) -> Card:
        """The lowest-ranking card of a non-empty mask (by power, then card number)."""
        best = -1
        best_power = 1 << 30
        rest = mask
        while rest:
            low = rest & -rest
            card = low.bit_length() - 1
            rest ^= low
            if self.power[card] < best_power:
                best, best_power = card, self.power[card]
        return best

    def trick_winner_index(self, cards: list[Card] | tuple[Card, ...]) -> int:
        """The position in `cards` (led first) of the card that wins the trick."""
        keys = self.trick_keys[self.suit[cards[0]]]
        best = -2
        winner = 0
        for index, card in enumerate(cards):
            key = keys[card]
            if key > best:
                best, winner = key, index
        return winner


def _build(name: str) -> CardOrder:
    suit = [-1] * 54
    power = [0] * 54
    deck = FULL_DECK if name == "jokers" else STANDARD_DECK
    for card in range(52):
        suit[card] = suit_of(card)
        power[card] = rank_of(card)
    if name == "jokers":
        suit[LITTLE_JOKER] = suit[BIG_JOKER] = SPADES
        power[LITTLE_JOKER], power[BIG_JOKER] = 13, 14
    elif name == "deuces_high":
        # Above the ace of spades, from low to high: 2H, 2C, 2D, 2S.
        for extra, printed in enumerate((HEARTS, CLUBS, DIAMONDS, SPADES)):
            card = make_card(0, printed)
            suit[card] = SPADES
            power[card] = 13 + extra
    suit_masks = tuple(
        sum(1 << card for card in range(54) if suit[card] == s and deck >> card & 1)
        for s in range(4)
    )
    trick_keys = tuple(
        tuple(
            100 + power[card] if suit[card] == TRUMP else power[card] if suit[card] == led else -1
            for card in range(54)
        )
        for led in range(4)
    )
    assert sum(m.bit_count() for m in suit_masks) == deck.bit_count()
    assert name != "standard" or suit_masks == SUIT_MASKS
    return CardOrder(
        name=name,
        deck=deck,
        cards=tuple(card for card in range(54) if deck >> card & 1),
        suit=tuple(suit),
        suit_masks=suit_masks,
        trumps=suit_masks[TRUMP],
        power=tuple(power),
        trick_keys=trick_keys,
        suit_chunk=tuple(
            chunks.pop() if len(chunks := {c // 13 for c in range(54) if m >> c & 1}) == 1 else -1
            for m in suit_masks
        ),
    )


ORDERS: Final[dict[str, CardOrder]] = {
    name: _build(name) for name in ("standard", "jokers", "deuces_high")
}


def card_order(deck: str) -> CardOrder:
    """The tables for a deck option (standard, jokers, deuces_high). Raises KeyError if unknown."""
    return ORDERS[deck]


def sort_key(order: CardOrder, card: Card) -> tuple[int, int]:
    """A display order for a hand: by followed suit (clubs, diamonds, hearts, spades), then rank."""
    return (order.suit[card], order.power[card])


# Face cards (J, Q, K) for the "no face cards" deficient hand; the Royalty bid also counts aces.
FACE_CARDS: Final[CardMask] = sum(1 << make_card(rank, s) for s in range(4) for rank in (9, 10, 11))
ROYAL_CARDS: Final[CardMask] = FACE_CARDS | sum(1 << make_card(12, s) for s in range(4))
