"""The pure rules of Hearts on plain ints and bit masks (rules source 002, docs/rules-hearts.md).

Nothing here holds state: `engine.hearts.HeartsGame` keeps the state and asks these functions. They are
small and branch-light because bots search through them (a playout calls `legal_plays` once a card).

Seats go clockwise: the player on seat `s`'s left is `(s + 1) % players`, so cards are dealt from the
dealer's left and play moves to the left. Four players is the game of source 002; the functions also take
three (the ruleset admits three-handed Hearts, where the two of diamonds is set aside).
"""

from collections.abc import Sequence
from typing import Final, TypeAlias

from engine.cards import (
    CLUBS,
    DIAMONDS,
    HEARTS,
    JACK,
    QUEEN,
    SPADES,
    SUIT_MASKS,
    Card,
    CardMask,
    Seat,
    Suit,
    make_card,
)

PassDirection: TypeAlias = str

PLAYERS: Final = 4
CARDS_PER_HAND: Final = 13
TRICKS_PER_HAND: Final = 13

TWO_OF_CLUBS: Final[Card] = make_card(0, CLUBS)
QUEEN_OF_SPADES: Final[Card] = make_card(QUEEN, SPADES)
JACK_OF_DIAMONDS: Final[Card] = make_card(JACK, DIAMONDS)

HEARTS_MASK: Final[CardMask] = SUIT_MASKS[HEARTS]
QUEEN_MASK: Final[CardMask] = 1 << QUEEN_OF_SPADES
JACK_MASK: Final[CardMask] = 1 << JACK_OF_DIAMONDS
TWO_OF_CLUBS_MASK: Final[CardMask] = 1 << TWO_OF_CLUBS
# The penalty cards: every heart and the queen of spades, 26 points in all.
POINT_CARDS: Final[CardMask] = HEARTS_MASK | QUEEN_MASK
MOON_POINTS: Final = 26
QUEEN_POINTS: Final = 13
JACK_POINTS: Final = -10

# Where each direction sends a seat's cards, as a clockwise offset: left is the next seat clockwise;
# right is the previous one, `players - 1`, filled in by `pass_offset`.
PASS_OFFSETS: Final[dict[PassDirection, int]] = {"left": 1, "across": 2, "right": -1, "none": 0}
DEFAULT_PASS_CYCLE: Final[tuple[PassDirection, ...]] = ("left", "right", "across", "none")

MOON_RULES: Final = ("off", "add_to_others", "subtract_self")


def pass_direction(hand_index: int, cycle: Sequence[PassDirection]) -> PassDirection:
    """The direction of the hand numbered `hand_index` (0 = the first hand): the cycle repeats."""
    if not cycle:
        return "none"
    return cycle[hand_index % len(cycle)]


def pass_offset(direction: PassDirection, players: int = PLAYERS) -> int:
    """How many seats clockwise a pass in this direction travels (0 for "none")."""
    return PASS_OFFSETS[direction] % players


def pass_target(seat: Seat, direction: PassDirection, players: int = PLAYERS) -> Seat:
    """The seat that receives `seat`'s cards in this direction (itself for "none")."""
    return (seat + pass_offset(direction, players)) % players


def pass_source(seat: Seat, direction: PassDirection, players: int = PLAYERS) -> Seat:
    """The seat whose cards `seat` receives in this direction (itself for "none")."""
    return (seat - pass_offset(direction, players)) % players


def exchange(
    hands: Sequence[CardMask], passes: Sequence[CardMask], direction: PassDirection
) -> list[CardMask]:
    """The hands after every seat gave its `passes[seat]` and received its neighbour's."""
    players = len(hands)
    offset = pass_offset(direction, players)
    return [
        (hands[seat] & ~passes[seat]) | passes[(seat - offset) % players] for seat in range(players)
    ]


def deal_hands(order: Sequence[Card], dealer: Seat, players: int = PLAYERS) -> list[CardMask]:
    """The hands from a shuffled deck: dealt singly, clockwise, starting on the dealer's left."""
    hands = [0] * players
    for index, card in enumerate(order):
        hands[(dealer + 1 + index) % players] |= 1 << card
    return hands


def holder_of(hands: Sequence[CardMask], card: Card) -> Seat:
    """The seat holding `card`; raises ValueError when nobody does."""
    bit = 1 << card
    for seat, hand in enumerate(hands):
        if hand & bit:
            return seat
    raise ValueError(f"no seat holds card {card}")


def legal_plays(
    hand: CardMask,
    led_suit: Suit | None,
    first_trick: bool,
    hearts_broken: bool,
    *,
    no_points_first_trick: bool,
    must_break: bool,
) -> CardMask:
    """The cards of `hand` that may be played now, as a mask (empty only when the hand is).

    `led_suit` is None when the player leads. The first lead of a hand is the two of clubs; a later
    lead may not be a heart before hearts are broken (when `must_break`) unless the hand holds only
    hearts. A follower must follow suit; one who cannot may play anything, except that on the first
    trick (when `no_points_first_trick`) a heart or the queen of spades only if the hand holds nothing
    else.
    """
    if led_suit is None:
        if first_trick and hand & TWO_OF_CLUBS_MASK:
            return TWO_OF_CLUBS_MASK
        if must_break and not hearts_broken:
            safe = hand & ~HEARTS_MASK
            if safe:
                return safe
        return hand
    follow = hand & SUIT_MASKS[led_suit]
    if follow:
        return follow
    if first_trick and no_points_first_trick:
        safe = hand & ~POINT_CARDS
        if safe:
            return safe
    return hand


def trick_winner(cards: Sequence[Card], leader: Seat) -> Seat:
    """The seat that wins a trick: the highest card of the suit led (there are no trumps).

    `cards` are in play order, the first played by `leader`. Within a suit the card number grows with
    the rank, so the highest card of the led suit is simply the largest number in that suit.
    """
    led = cards[0] // 13
    best = 0
    for index in range(1, len(cards)):
        card = cards[index]
        if card // 13 == led and card > cards[best]:
            best = index
    return (leader + best) % len(cards)


def penalty_points(taken: CardMask, jack_of_diamonds: bool) -> int:
    """The points in the cards a player took: 1 a heart, 13 the queen of spades, -10 the jack of
    diamonds when that option is on."""
    points = (taken & HEARTS_MASK).bit_count()
    if taken & QUEEN_MASK:
        points += QUEEN_POINTS
    if jack_of_diamonds and taken & JACK_MASK:
        points += JACK_POINTS
    return points


def moon_shooter(taken: Sequence[CardMask]) -> Seat | None:
    """The seat that took every heart and the queen of spades this hand, if one did."""
    for seat, cards in enumerate(taken):
        if cards & POINT_CARDS == POINT_CARDS:
            return seat
    return None


def hand_points(taken: Sequence[CardMask], moon: str, jack_of_diamonds: bool) -> list[int]:
    """Each seat's points for a finished hand from the cards each took.

    When one seat took all 26 penalty points and `moon` is not "off": with "add_to_others" that seat
    scores 0 and every other seat 26; with "subtract_self" that seat scores -26 and the others 0. The
    jack of diamonds (when on) still counts -10 for whoever took it, the shooter included.
    """
    points = [penalty_points(cards, jack_of_diamonds) for cards in taken]
    if moon == "off":
        return points
    shooter = moon_shooter(taken)
    if shooter is None:
        return points
    jack = [JACK_POINTS if jack_of_diamonds and cards & JACK_MASK else 0 for cards in taken]
    if moon == "add_to_others":
        return [jack[s] + (0 if s == shooter else MOON_POINTS) for s in range(len(taken))]
    return [jack[s] + (-MOON_POINTS if s == shooter else 0) for s in range(len(taken))]


def game_over(scores: Sequence[int], target: int) -> bool:
    """True when, at the end of a hand, some player has reached or passed the target score."""
    return max(scores) >= target


def winners(scores: Sequence[int]) -> tuple[Seat, ...]:
    """The seats with the lowest score: they share the win when more than one has it."""
    low = min(scores)
    return tuple(seat for seat, score in enumerate(scores) if score == low)
