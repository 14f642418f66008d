"""Cards, suits, seats and their text notation.

A card is an int: `suit * 13 + rank` for the 52 ordinary cards (rank 0 is the two, 12 the ace; suits
clubs, diamonds, hearts, spades are 0..3), then 52 for the Little Joker and 53 for the Big Joker. A set
of cards is a `CardMask`, an int with bit `card` set. This order is also the canonical deck order that
the seeded shuffle starts from (docs/rules.md). How cards rank and which suit they follow depend on the
ruleset (Joker Spades, Deuces High), so that lives with the rules, not here.
"""

from collections.abc import Iterable, Iterator
from typing import Final, TypeAlias

from engine.errors import NotationError

Card: TypeAlias = int
CardMask: TypeAlias = int
Suit: TypeAlias = int
Rank: TypeAlias = int
Seat: TypeAlias = int

CLUBS: Final = 0
DIAMONDS: Final = 1
HEARTS: Final = 2
SPADES: Final = 3
SUITS: Final = (CLUBS, DIAMONDS, HEARTS, SPADES)

RANK_LETTERS: Final = "23456789TJQKA"
SUIT_LETTERS: Final = "CDHS"
SUIT_SYMBOLS: Final = "♣♦♥♠"
SUIT_NAMES: Final = ("clubs", "diamonds", "hearts", "spades")

TWO: Final = 0
TEN: Final = 8
JACK: Final = 9
QUEEN: Final = 10
KING: Final = 11
ACE: Final = 12

LITTLE_JOKER: Final = 52
BIG_JOKER: Final = 53

SUIT_MASKS: Final = tuple(((1 << 13) - 1) << (13 * suit) for suit in SUITS)
STANDARD_DECK: Final[CardMask] = (1 << 52) - 1
JOKERS: Final[CardMask] = (1 << LITTLE_JOKER) | (1 << BIG_JOKER)
FULL_DECK: Final[CardMask] = STANDARD_DECK | JOKERS


def make_card(rank: Rank, suit: Suit) -> Card:
    """The card of this rank (0 = two .. 12 = ace) and suit (0..3)."""
    return suit * 13 + rank


def suit_of(card: Card) -> Suit:
    """The printed suit of an ordinary card (jokers have none; callers ask the ruleset for them)."""
    return card // 13


def rank_of(card: Card) -> Rank:
    """The printed rank of an ordinary card: 0 for a two up to 12 for an ace."""
    return card % 13


def card_text(card: Card) -> str:
    """The notation of a card: `QS`, `TD`, `2C`, `BJ`, `LJ`."""
    if card == BIG_JOKER:
        return "BJ"
    if card == LITTLE_JOKER:
        return "LJ"
    if not 0 <= card < 52:
        raise NotationError(str(card), "a card is a number from 0 to 53")
    return RANK_LETTERS[card % 13] + SUIT_LETTERS[card // 13]


def card_symbol(card: Card) -> str:
    """A card as people read it: `Q♠`, `10♦`; jokers by their notation (`BJ`, `LJ`)."""
    text = card_text(card)
    if card >= 52:
        return text
    rank = "10" if text[0] == "T" else text[0]
    return rank + SUIT_SYMBOLS[card // 13]


_BY_TEXT: Final[dict[str, Card]] = {card_text(card): card for card in range(54)}


def parse_card(text: str) -> Card:
    """Parse strict notation (`QS`, `TD`, `BJ`); raise NotationError with a sentence otherwise."""
    card = _BY_TEXT.get(text)
    if card is None:
        raise NotationError(
            text, "a card is a rank from 23456789TJQKA then a suit from CDHS, or BJ/LJ"
        )
    return card


_SYMBOL_TO_LETTER: Final = dict(zip(SUIT_SYMBOLS + "♧♢♡♤", SUIT_LETTERS * 2, strict=True))


def parse_card_loosely(text: str) -> Card:
    """Parse what a person types: `qs`, `10h`, `Q♠`, ` 2 c `, `bj`. Raises NotationError."""
    cleaned = "".join(text.split()).upper()
    cleaned = "".join(_SYMBOL_TO_LETTER.get(ch, ch) for ch in cleaned)
    if cleaned.startswith("10"):
        cleaned = "T" + cleaned[2:]
    try:
        return parse_card(cleaned)
    except NotationError:
        raise NotationError(text, "type a card like QS, 10h or Q♠") from None


def parse_cards(texts: Iterable[str]) -> list[Card]:
    """Parse a sequence of strict card notations."""
    return [parse_card(text) for text in texts]


def mask_of(cards: Iterable[Card]) -> CardMask:
    """The bit mask holding exactly these cards."""
    mask = 0
    for card in cards:
        mask |= 1 << card
    return mask


def cards_in(mask: CardMask) -> list[Card]:
    """The cards of a mask, lowest first."""
    cards = []
    while mask:
        low = mask & -mask
        cards.append(low.bit_length() - 1)
        mask ^= low
    return cards


def iter_cards(mask: CardMask) -> Iterator[Card]:
    """The cards of a mask, lowest first, lazily."""
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def count(mask: CardMask) -> int:
    """How many cards a mask holds."""
    return mask.bit_count()


def mask_text(mask: CardMask) -> list[str]:
    """The notation of every card in a mask, lowest first."""
    return [card_text(card) for card in iter_cards(mask)]
