"""What a seat, or a spectator, may know: frozen snapshots built by `Game.view(seat)` and
`Game.spectator_view()`.

A `PublicView` holds only public facts: bids, face-up and exposed cards, cards played, tricks, scores. A
`SeatView` adds that seat's own hand (None while the seat has not looked, because it may still bid blind),
the cards it gave and received in an exchange or pass, and its legal actions. The server may send a view
as it is: it never holds a card its recipient may not know. `to_dict()` gives plain str/int/bool/list/dict
with card notation.
"""

from dataclasses import dataclass, field
from typing import Any

from engine.actions import Action, Bid, action_to_dict
from engine.cards import Card, CardMask, card_text, mask_text


def _bid_dict(bid: Bid | None) -> dict[str, Any] | None:
    if bid is None:
        return None
    shape = action_to_dict(bid, with_seat=False)
    del shape["kind"]
    shape["text"] = bid.describe()
    return shape


@dataclass(frozen=True, slots=True)
class PublicView:
    """The public state of a game: what a spectator sees."""

    game: str
    players: int
    phase: str
    version: int
    hand_number: int
    dealer: int
    hand_type: str
    to_act: tuple[int, ...]
    sides: tuple[tuple[int, ...], ...]
    scores: tuple[int, ...]  # per side
    bags: tuple[int, ...]  # per side
    bids: tuple[Bid | None, ...]  # per seat, None until that seat bids
    hand_sizes: tuple[int, ...]
    face_up: tuple[CardMask, ...]  # per seat: face-up dealt cards not yet played
    exposed: tuple[CardMask, ...]  # per seat: cards laid open (failed TRAM with "exposed")
    looked: tuple[bool, ...]  # per seat: has seen its cards (False = may still bid blind)
    leader: int
    trick: tuple[tuple[int, Card], ...]  # the trick in progress, (seat, card) in play order
    trick_number: int  # 1-based number of the trick in progress (or the last one)
    last_trick: tuple[tuple[int, Card], ...]
    last_winner: int  # -1 before the first trick is won
    tricks: tuple[int, ...]  # tricks won per seat this hand
    played: CardMask  # every card played this hand
    broken: bool  # spades broken (Spades) or hearts broken (Hearts)
    discards: CardMask = 0  # two-handed: the face-up discard pile
    pass_direction: str = ""  # Hearts: left / right / across / none this hand
    points: tuple[int, ...] = ()  # Hearts: penalty points taken this hand per seat
    winners: tuple[int, ...] = ()  # once the game is over

    def to_dict(self) -> dict[str, Any]:
        """Plain data with card notation."""
        return {
            "game": self.game,
            "players": self.players,
            "phase": self.phase,
            "version": self.version,
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "hand_type": self.hand_type,
            "to_act": list(self.to_act),
            "sides": [list(side) for side in self.sides],
            "scores": list(self.scores),
            "bags": list(self.bags),
            "bids": [_bid_dict(bid) for bid in self.bids],
            "hand_sizes": list(self.hand_sizes),
            "face_up": [mask_text(mask) for mask in self.face_up],
            "exposed": [mask_text(mask) for mask in self.exposed],
            "looked": list(self.looked),
            "leader": self.leader,
            "trick": [[seat, card_text(card)] for seat, card in self.trick],
            "trick_number": self.trick_number,
            "last_trick": [[seat, card_text(card)] for seat, card in self.last_trick],
            "last_winner": self.last_winner,
            "tricks": list(self.tricks),
            "played": mask_text(self.played),
            "broken": self.broken,
            "discards": mask_text(self.discards),
            "pass_direction": self.pass_direction,
            "points": list(self.points),
            "winners": list(self.winners),
        }


@dataclass(frozen=True, slots=True)
class SeatView(PublicView):
    """The public state plus what `seat` alone knows."""

    seat: int = 0
    hand: CardMask | None = None  # None while the seat has not looked at its cards
    given: tuple[Card, ...] = ()  # cards this seat gave in an exchange or pass this hand
    received: tuple[Card, ...] = ()  # cards it picked up (only once received)
    drawn: Card | None = None  # two-handed draw: the card in hand waiting for keep / discard
    legal: tuple[Action, ...] = field(
        default=()
    )  # without card-choosing actions (see choose_cards)
    choose_cards: tuple[int, ...] = ()  # how many cards to give/discard now (e.g. (2,), or (0, 3))

    def to_dict(self) -> dict[str, Any]:
        out = PublicView.to_dict(self)
        out["seat"] = self.seat
        out["hand"] = None if self.hand is None else mask_text(self.hand)
        out["given"] = [card_text(card) for card in self.given]
        out["received"] = [card_text(card) for card in self.received]
        out["drawn"] = None if self.drawn is None else card_text(self.drawn)
        out["legal"] = [action_to_dict(action, with_seat=False) for action in self.legal]
        out["choose_cards"] = list(self.choose_cards)
        return out
