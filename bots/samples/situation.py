"""`Situation`: the few facts a card-play policy reads, built from a `BotView` or from an engine game.

The heuristic decides real moves from a `BotView`; the search bot's playouts ask the same policy
thousands of times a second from a game it is simulating, where building a view would cost more than the
whole decision. Both paths produce this small value, so the playouts play exactly the heuristic's game.
"""

from dataclasses import dataclass

from bots.sdk.view import BotView
from engine.actions import Bid
from engine.cards import SPADES, Card, CardMask
from engine.ordering import CardOrder
from engine.ruleset import Ruleset


@dataclass(slots=True)
class Situation:
    """A seat about to play a card."""

    ruleset: Ruleset
    order: CardOrder
    seat: int
    players: int
    hand: CardMask
    legal: CardMask
    trick: tuple[tuple[int, Card], ...]
    bids: tuple[Bid | None, ...]
    tricks: tuple[int, ...]  # won per seat this hand
    played: CardMask
    bags: int  # my side's bags
    voids: tuple[int, ...]  # per seat, a bit per suit shown void (0 when unknown)
    points: tuple[int, ...] = ()  # Hearts: points taken this hand per seat
    # Playouts of one decision share their bids, so a seat's goal depends only on the tricks won:
    # the search passes a dict to remember it in (None: compute every time).
    goals: dict[tuple[int, tuple[int, ...], int], str] | None = None

    @property
    def hearts(self) -> bool:
        return self.ruleset.game == "hearts"

    @property
    def partner(self) -> int | None:
        return (self.seat + 2) % 4 if self.players == 4 and not self.hearts else None

    @property
    def trumps(self) -> CardMask:
        return 0 if self.hearts else self.order.trumps

    @property
    def tricks_left(self) -> int:
        return self.ruleset.tricks_per_hand - sum(self.tricks)


def from_view(view: BotView) -> Situation:
    """The situation of the seat a view belongs to (play phase)."""
    voids = view.voids
    legal = 0
    for card in view.legal_cards:
        legal |= 1 << card
    return Situation(
        ruleset=view.ruleset,
        order=view.order,
        seat=view.seat,
        players=view.players,
        hand=view.hand_mask,
        legal=legal,
        trick=view.trick,
        bids=view.bids,
        tricks=view.tricks_won,
        played=view.played_mask,
        bags=view.bags[view.my_side] if view.bags else 0,
        voids=tuple(sum(1 << s for s in voids.get(seat, ())) for seat in range(view.players)),
        points=view.points,
    )


def lowest(order: CardOrder, mask: CardMask, trumps: CardMask = 0) -> Card:
    """The least valuable card of a non-empty mask: side cards before trumps, then by rank."""
    side = mask & ~trumps
    return order.lowest(side or mask)


def highest(
    order: CardOrder, mask: CardMask, trumps: CardMask = 0, *, side_first: bool = False
) -> Card:
    """The highest card of a non-empty mask by rank (side suits first when asked)."""
    if side_first and mask & ~trumps:
        mask &= ~trumps
    best, best_power = -1, -1
    rest = mask
    power = order.power
    while rest:
        low = rest & -rest
        card = low.bit_length() - 1
        rest ^= low
        if power[card] > best_power or (power[card] == best_power and card > best):
            best, best_power = card, power[card]
    return best


def winning_play(
    order: CardOrder, trick: tuple[tuple[int, Card], ...], trumps: bool
) -> tuple[int, Card]:
    """The (seat, card) winning a non-empty trick so far."""
    led = order.suit[trick[0][1]]
    best, best_key = trick[0], -1
    for play in trick:
        card = play[1]
        suit = order.suit[card]
        key = (
            100 + order.power[card]
            if trumps and suit == SPADES
            else order.power[card]
            if suit == led
            else -1
        )
        if key > best_key:
            best, best_key = play, key
    return best


def beaters(order: CardOrder, mask: CardMask, card: Card, trumps: bool) -> CardMask:
    """The cards of `mask` that would beat `card` (the trick's current winner)."""
    out = mask & _above(order)[card]
    if trumps and order.suit[card] != SPADES:
        out |= mask & order.trumps
    return out


def is_boss(order: CardOrder, card: Card, unplayed: CardMask) -> bool:
    """Whether no unplayed card of the same suit outranks `card`."""
    return not unplayed & _above(order)[card]


_ABOVE: dict[str, tuple[CardMask, ...]] = {}


def _above(order: CardOrder) -> tuple[CardMask, ...]:
    """Per card of the deck, the cards of its suit that outrank it (0 for a card not in play)."""
    found = _ABOVE.get(order.name)
    if found is None:
        out = [0] * len(order.suit)
        for card, suit in enumerate(order.suit):
            if suit < 0:
                continue
            rest = order.suit_masks[suit]
            while rest:
                low = rest & -rest
                rest ^= low
                if order.power[low.bit_length() - 1] > order.power[card]:
                    out[card] |= low
        found = _ABOVE[order.name] = tuple(out)
    return found
