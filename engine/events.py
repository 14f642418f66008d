"""What happened: frozen, past-tense events returned by `Game.deal()` and `Game.apply()`.

Every event has `to_dict()` (everything, for the server's own log and hand records: it may hold hidden
cards) and `for_seat(seat)` (what that seat — or a spectator, `seat=None` — may learn; it never holds a
card the recipient may not know; `None` means the recipient is told nothing). Cards are written in
notation (`"QS"`), card sets as sorted lists of notation.
"""

from dataclasses import dataclass
from typing import Any, ClassVar, TypeAlias

from engine.actions import Bid, action_to_dict
from engine.cards import Card, CardMask, card_text, mask_text

EventDict: TypeAlias = dict[str, Any]


def _cards(cards: tuple[Card, ...]) -> list[str]:
    return [card_text(card) for card in cards]


@dataclass(frozen=True, slots=True)
class Event:
    """Base of all events. Subclasses set `kind` and override `for_seat` when they hold secrets."""

    kind: ClassVar[str] = "event"

    def to_dict(self) -> EventDict:
        """Everything the event holds (hidden cards included): for the server's log, not for players."""
        raise NotImplementedError

    #: The one field of `to_dict()` that only `may_see_secret` seats learn (None: a public event),
    #: and whether the others are told how many cards it held instead.
    secret: ClassVar[str | None] = None
    secret_counted: ClassVar[bool] = False

    def may_see_secret(self, seat: int | None) -> bool:
        """Whether `seat` may see the secret field: by default only the event's own `seat`."""
        return seat is not None and seat == getattr(self, "seat", None)

    def for_seat(self, seat: int | None) -> EventDict | None:
        """What `seat` (None = a spectator) may learn from this event: everything but the secret field,
        unless it is theirs to see."""
        out = self.to_dict()
        if self.secret is not None and not self.may_see_secret(seat):
            hidden = out.pop(self.secret)
            if self.secret_counted:
                out["count"] = len(hidden)
        return out


@dataclass(frozen=True, slots=True)
class HandDealt(Event):
    """A new hand was dealt. `hands` are the dealt hands; `hidden` seats have not looked at theirs yet
    (they could bid blind), so even they are sent only their face-up cards. `hand_type` is the Crazy
    Spades hand type ("" without a schedule); `pass_direction` is where a Hearts hand passes (left,
    right, across or none), None in Spades (then absent from the dict)."""

    kind: ClassVar[str] = "hand_dealt"
    hand_number: int
    dealer: int
    hands: tuple[CardMask, ...]
    face_up: tuple[CardMask, ...]
    hidden: tuple[int, ...]
    hand_type: str
    commitment: str
    pass_direction: str | None = None

    def to_dict(self) -> EventDict:
        out: EventDict = {
            "kind": self.kind,
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "hand_type": self.hand_type,
            "commitment": self.commitment,
            "hands": [mask_text(hand) for hand in self.hands],
            "face_up": [mask_text(mask) for mask in self.face_up],
            "hidden": list(self.hidden),
        }
        if self.pass_direction is not None:
            out["pass_direction"] = self.pass_direction
        return out

    def for_seat(self, seat: int | None) -> EventDict | None:
        out = self.to_dict()
        del out["hands"]
        # `cards` before `pass_direction`: the wire message's order (its bytes are this map's).
        direction = out.pop("pass_direction", None)
        out["cards"] = (
            None
            if seat is None or seat in self.hidden or seat >= len(self.hands)
            else mask_text(self.hands[seat])
        )
        if direction is not None:
            out["pass_direction"] = direction
        return out


@dataclass(frozen=True, slots=True)
class HandLooked(Event):
    """A seat that could have bid blind looked at its cards (or bid blind and then picked them up)."""

    kind: ClassVar[str] = "hand_looked"
    secret: ClassVar[str | None] = "cards"
    seat: int
    cards: CardMask

    def to_dict(self) -> EventDict:
        return {"kind": self.kind, "seat": self.seat, "cards": mask_text(self.cards)}


@dataclass(frozen=True, slots=True)
class CardDrawn(Event):
    """Two-handed draw: `seat` drew the top card of the stock (seen by that seat alone)."""

    kind: ClassVar[str] = "card_drawn"
    secret: ClassVar[str | None] = "card"
    seat: int
    card: Card

    def to_dict(self) -> EventDict:
        return {"kind": self.kind, "seat": self.seat, "card": card_text(self.card)}


@dataclass(frozen=True, slots=True)
class DrawResolved(Event):
    """Two-handed draw: `seat` kept the drawn card or not; `taken` joined its hand (private) and
    `discarded` went face up to the discard pile (public)."""

    kind: ClassVar[str] = "draw_resolved"
    secret: ClassVar[str | None] = "taken"
    seat: int
    kept: bool
    taken: Card
    discarded: Card

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "kept": self.kept,
            "taken": card_text(self.taken),
            "discarded": card_text(self.discarded),
        }


@dataclass(frozen=True, slots=True)
class CardsDiscarded(Event):
    """Joker Spades: the dealer set two cards aside face down (seen by the dealer alone)."""

    kind: ClassVar[str] = "cards_discarded"
    secret: ClassVar[str | None] = "cards"
    secret_counted: ClassVar[bool] = True
    seat: int
    cards: tuple[Card, ...]

    def to_dict(self) -> EventDict:
        return {"kind": self.kind, "seat": self.seat, "cards": _cards(self.cards)}


@dataclass(frozen=True, slots=True)
class BidMade(Event):
    """`seat` bid. `bid` is the action; the dict form is its wire shape plus a phrase for people."""

    kind: ClassVar[str] = "bid_made"
    seat: int
    bid: Bid

    def to_dict(self) -> EventDict:
        shape = action_to_dict(self.bid, with_seat=False)
        del shape["kind"]
        return {"kind": self.kind, "seat": self.seat, "bid": shape, "text": self.bid.describe()}


@dataclass(frozen=True, slots=True)
class CardsGiven(Event):
    """`seat` put cards face down for an exchange or a pass; nobody else sees them yet."""

    kind: ClassVar[str] = "cards_given"
    secret: ClassVar[str | None] = "cards"
    secret_counted: ClassVar[bool] = True
    seat: int
    receiver: int
    cards: tuple[Card, ...]

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "receiver": self.receiver,
            "cards": _cards(self.cards),
        }


@dataclass(frozen=True, slots=True)
class _CardsHandedOver(Event):
    """Cards that went face down from `giver` to `receiver`: only those two may see which."""

    secret: ClassVar[str | None] = "cards"
    secret_counted: ClassVar[bool] = True

    giver: int
    receiver: int
    cards: tuple[Card, ...]

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "giver": self.giver,
            "receiver": self.receiver,
            "cards": _cards(self.cards),
        }

    def may_see_secret(self, seat: int | None) -> bool:
        return seat is not None and seat in (self.giver, self.receiver)


@dataclass(frozen=True, slots=True)
class CardsExchanged(_CardsHandedOver):
    """Blind nil exchange: `receiver` picked up `cards` from `giver` (both partners see them)."""

    kind: ClassVar[str] = "cards_exchanged"


@dataclass(frozen=True, slots=True)
class CardsPassed(_CardsHandedOver):
    """Hearts: `receiver` picked up the cards `giver` passed (only those two see them)."""

    kind: ClassVar[str] = "cards_passed"


@dataclass(frozen=True, slots=True)
class CardPlayed(Event):
    """`seat` played `card` to trick `trick_number` (1-based)."""

    kind: ClassVar[str] = "card_played"
    seat: int
    card: Card
    trick_number: int

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "card": card_text(self.card),
            "trick_number": self.trick_number,
        }


@dataclass(frozen=True, slots=True)
class SpadesBroken(Event):
    """Spades (or, in Hearts, hearts) may now be led."""

    kind: ClassVar[str] = "spades_broken"
    seat: int

    def to_dict(self) -> EventDict:
        return {"kind": self.kind, "seat": self.seat}


@dataclass(frozen=True, slots=True)
class TrickWon(Event):
    """`seat` won trick `trick_number`; `plays` are (seat, card) in the order played."""

    kind: ClassVar[str] = "trick_won"
    seat: int
    trick_number: int
    plays: tuple[tuple[int, Card], ...]

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "trick_number": self.trick_number,
            "plays": [[s, card_text(c)] for s, c in self.plays],
        }


@dataclass(frozen=True, slots=True)
class ClaimMade(Event):
    """TRAM: `seat` laid down `cards` (now public) and claimed the rest; `held` says whether the claim
    stands against every play of the others; `penalty` is what followed when it did not."""

    kind: ClassVar[str] = "claim_made"
    seat: int
    cards: CardMask
    held: bool
    penalty: str

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "cards": mask_text(self.cards),
            "held": self.held,
            "penalty": self.penalty,
        }


@dataclass(frozen=True, slots=True)
class DealDeclaredDead(Event):
    """`seat` showed a deficient hand (`cards`, now public); the deal is void and the deal passes on."""

    kind: ClassVar[str] = "deal_declared_dead"
    seat: int
    cards: CardMask
    reason: str
    next_dealer: int

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "cards": mask_text(self.cards),
            "reason": self.reason,
            "next_dealer": self.next_dealer,
        }


@dataclass(frozen=True, slots=True)
class HandScored(Event):
    """The hand is over. Per side (teams, or single seats): score before, delta, after, bags after.
    `tricks` is per seat. `seed` (hex) is revealed now so anyone can recompute the deal."""

    kind: ClassVar[str] = "hand_scored"
    hand_number: int
    sides: tuple[tuple[int, ...], ...]
    tricks: tuple[int, ...]
    before: tuple[int, ...]
    delta: tuple[int, ...]
    after: tuple[int, ...]
    bags_after: tuple[int, ...]
    seed: str
    notes: tuple[str, ...] = ()

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "hand_number": self.hand_number,
            "sides": [list(side) for side in self.sides],
            "tricks": list(self.tricks),
            "before": list(self.before),
            "delta": list(self.delta),
            "after": list(self.after),
            "bags_after": list(self.bags_after),
            "seed": self.seed,
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True)
class GameOver(Event):
    """The game ended: `winners` are the winning seats (a team, or one player), `reason` why."""

    kind: ClassVar[str] = "game_over"
    winners: tuple[int, ...]
    scores: tuple[int, ...]
    reason: str

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "winners": list(self.winners),
            "scores": list(self.scores),
            "reason": self.reason,
        }
