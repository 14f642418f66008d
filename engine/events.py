"""What happened: frozen, past-tense events returned by `Game.deal()` and `Game.apply()`, each
declared once, here, with everything every reader needs.

Every event has `to_dict()` (everything, for the server's own log and hand records: it may hold hidden
cards) and `for_seat(seat)` (what that seat — or a spectator, `seat=None` — may learn; it never holds a
card the recipient may not know; `None` means the recipient is told nothing). Cards are written in
notation (`"QS"`), card sets as sorted lists of notation.

The class is the event's one declaration. Its docstring and its fields' annotations (`Annotated` with
the markers of `engine.event_fields`: notation, bounds, a sentence each) are what the protocol
declares its message from (protocol/game_events.py: its fields, checks and the docs' field table);
its static `fold` is what the event tells a seat's view (engine/view_fold.py applies it, the page's
js/view_fold.js is its port). `@register` enters it in `EVENT_TYPES`, where both find it. A secret
field (`secret`) is left out of the map of a seat that may not see it (then optional on the wire),
and `secret_counted` tells the others how many cards it held as `count`.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Final, TypeAlias, TypeVar

from engine.actions import Bid, action_to_dict
from engine.cards import Card, CardMask, card_text, mask_of, mask_text, parse_card
from engine.claims import claim_award
from engine.dealing import next_dealer
from engine.event_fields import (
    DERIVED,
    PRIVATE,
    CardList,
    CardNo,
    CardSet,
    Choices,
    Digest,
    Doc,
    HandNo,
    Length,
    Note,
    SeatNo,
    Seed,
    TrickNo,
    Word,
)
from engine.fold_step import (
    FoldStep,
    cards_of_texts,
    count_of,
    mask_of_texts,
    parse_bid,
    plays_of,
)
from engine.hearts_rules import penalty_points
from engine.ruleset import Ruleset

EventDict: TypeAlias = dict[str, Any]
PassDirection = Annotated[str, Choices(("left", "right", "across", "none"))]


def _cards(cards: tuple[Card, ...]) -> list[str]:
    return [card_text(card) for card in cards]


@dataclass(frozen=True, slots=True)
class Event:
    """Base of all events. Subclasses set `kind`, declare their fields, fold and `to_dict`, and
    override `for_seat` when a seat is told more than the fields less the secret."""

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

    @staticmethod
    def fold(s: FoldStep) -> None:
        """What the event (`s.event`, as a seat receives it) changes in that seat's view: writes
        `s.changes`. Every registered event overrides it."""
        raise NotImplementedError


E = TypeVar("E", bound=type[Event])

#: Every event class by kind, in declaration order (the documentation's order too).
EVENT_TYPES: Final[dict[str, type[Event]]] = {}


def register(cls: E) -> E:
    """Enter an event class in `EVENT_TYPES`: the protocol declares its message and the fold applies
    it from there. Raises ValueError for a kind declared twice or an event without its own fold."""
    kind = cls.__dict__.get("kind")
    if not isinstance(kind, str):
        raise ValueError(f"{cls.__name__} names no kind of its own")
    if kind in EVENT_TYPES:
        raise ValueError(f"event kind {kind!r} is declared twice")
    if cls.fold is Event.fold:
        raise ValueError(f"{cls.__name__} has no fold: say what it tells a seat's view")
    EVENT_TYPES[kind] = cls
    return cls


@register
@dataclass(frozen=True, slots=True)
class HandDealt(Event):
    """A hand was dealt. ``cards`` is the receiver's hand: nil for spectators and for a seat that has
    not looked yet (it may still bid blind; it gets ``hand_looked`` when it looks)."""

    # `hands` are the dealt hands; `hidden` seats have not looked at theirs yet (they could bid
    # blind), so even they are sent only their face-up cards. `pass_direction` is None in Spades.
    kind: ClassVar[str] = "hand_dealt"
    hand_number: Annotated[HandNo, Doc("the hand, from 1")]
    dealer: Annotated[SeatNo, Doc("the dealer")]
    hand_type: Annotated[Word, Doc('Crazy Spades: the hand\'s type; "" without a schedule')]
    commitment: Annotated[Digest, Doc("SHA-256 of this deal's seed (see Fair deals)")]
    hands: Annotated[tuple[CardMask, ...], PRIVATE]
    face_up: Annotated[tuple[CardSet, ...], Doc("per seat: cards dealt face up")]
    hidden: Annotated[tuple[SeatNo, ...], Doc("seats that have not looked at their cards")]
    cards: ClassVar[
        Annotated[CardSet | None, DERIVED, Doc("the receiver's cards, if it may see them")]
    ]
    pass_direction: Annotated[
        PassDirection | None,
        Doc("Hearts: where this hand's pass goes (from the engine's event); absent in Spades"),
    ] = None

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

    @staticmethod
    def fold(s: FoldStep) -> None:
        e, r, n = s.event, s.rules, s.view.players
        dealer = int(e["dealer"])
        hidden = {int(seat) for seat in e.get("hidden", ())}
        direction = e.get("pass_direction")
        sizes = [0 if n == 2 else r.tricks_per_hand] * n
        if r.deck == "jokers":
            sizes[dealer] += 2  # the dealer takes the two extra cards and discards two
        if r.game == "hearts":
            phase = "passing" if direction not in (None, "none") else "playing"
        elif n == 2:
            phase = "drawing"
        elif r.deck == "jokers":
            phase = "discarding"
        else:
            phase = "bidding"
        s.changes.update(
            phase=phase,
            hand_number=int(e["hand_number"]),
            dealer=dealer,
            hand_type=str(e.get("hand_type", "")),
            bids=(None,) * n,
            hand_sizes=tuple(sizes),
            face_up=tuple(mask_of_texts(cards) for cards in e.get("face_up", ())) or (0,) * n,
            exposed=(0,) * n,
            looked=tuple(seat not in hidden for seat in range(n)),
            leader=-1,
            trick=(),
            trick_number=1,
            last_trick=(),
            last_winner=-1,
            tricks=(0,) * n,
            played=0,
            broken=False,
            discards=0,
            pass_direction=str(direction) if direction is not None else "",
            points=(0,) * n if r.game == "hearts" else (),
        )
        if s.seat_view:
            cards = e.get("cards")
            s.changes.update(
                hand=None if cards is None else mask_of_texts(cards),
                given=(),
                received=(),
                drawn=None,
            )


@register
@dataclass(frozen=True, slots=True)
class HandLooked(Event):
    """A seat that could bid blind looked at its cards; only that seat gets ``cards``."""

    # Or it bid blind and then picked them up.
    kind: ClassVar[str] = "hand_looked"
    secret: ClassVar[str | None] = "cards"
    seat: Annotated[SeatNo, Doc("who looked")]
    cards: Annotated[CardSet, Doc("its cards, for that seat alone")]

    def to_dict(self) -> EventDict:
        return {"kind": self.kind, "seat": self.seat, "cards": mask_text(self.cards)}

    @staticmethod
    def fold(s: FoldStep) -> None:
        seat = int(s.event["seat"])
        s.set_at("looked", seat, True)
        cards = s.event.get("cards")
        if seat == s.me and cards is not None:
            hand = mask_of_texts(cards)
            before = s.hand()
            taken = hand & ~before
            if s.rules.players == 2 and s.now("hand") is not None and taken:
                # Two-handed double nil: the redraw's cards are the new hand's cards not held
                # before; they left the face-up discard pile.
                s.changes["received"] = tuple(c for c in range(54) if taken >> c & 1)
                s.changes["discards"] = s.now("discards") & ~taken
            s.changes["hand"] = hand


@register
@dataclass(frozen=True, slots=True)
class CardDrawn(Event):
    """Two-handed draw: a seat drew the top card of the stock (``card`` for that seat alone)."""

    kind: ClassVar[str] = "card_drawn"
    secret: ClassVar[str | None] = "card"
    seat: Annotated[SeatNo, Doc("who drew")]
    card: Annotated[CardNo, Doc("the card, for the drawer alone")]

    def to_dict(self) -> EventDict:
        return {"kind": self.kind, "seat": self.seat, "card": card_text(self.card)}

    @staticmethod
    def fold(s: FoldStep) -> None:
        card = s.event.get("card")
        if int(s.event["seat"]) == s.me and card is not None:
            s.changes["drawn"] = parse_card(str(card))


@register
@dataclass(frozen=True, slots=True)
class DrawResolved(Event):
    """Two-handed draw: the seat kept one card (``taken``, private) and discarded one face up."""

    # `taken` joined its hand; `discarded` went face up to the discard pile.
    kind: ClassVar[str] = "draw_resolved"
    secret: ClassVar[str | None] = "taken"
    seat: Annotated[SeatNo, Doc("who drew")]
    kept: Annotated[bool, Doc("whether the drawn card was kept")]
    taken: Annotated[CardNo, Doc("the card taken into hand, for that seat alone")]
    discarded: Annotated[CardNo, Doc("the card discarded face up")]

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "kept": self.kept,
            "taken": card_text(self.taken),
            "discarded": card_text(self.discarded),
        }

    @staticmethod
    def fold(s: FoldStep) -> None:
        e, seat = s.event, int(s.event["seat"])
        s.add_at("hand_sizes", seat, 1)
        s.changes["discards"] = s.now("discards") | 1 << parse_card(str(e["discarded"]))
        if seat == s.me:
            s.changes["drawn"] = None
            if e.get("taken") is not None:
                s.changes["hand"] = s.hand() | 1 << parse_card(str(e["taken"]))
        if all(size == s.rules.tricks_per_hand for size in s.now("hand_sizes")):
            # The stock is spent: a double nil is discarded for, else the bidding starts.
            doubles = any(bid is not None and bid.double_nil for bid in s.now("bids"))
            if doubles:
                s.changes["phase"] = "discarding"
            else:
                _start_bidding(s)
            s.changes["looked"] = (True,) * s.view.players


@register
@dataclass(frozen=True, slots=True)
class CardsDiscarded(Event):
    """Joker Spades: the dealer set cards aside face down (``cards`` for the dealer alone)."""

    kind: ClassVar[str] = "cards_discarded"
    secret: ClassVar[str | None] = "cards"
    secret_counted: ClassVar[bool] = True
    seat: Annotated[SeatNo, Doc("the dealer")]
    cards: Annotated[CardList, Doc("the cards, for the dealer alone")]

    def to_dict(self) -> EventDict:
        return {"kind": self.kind, "seat": self.seat, "cards": _cards(self.cards)}

    @staticmethod
    def fold(s: FoldStep) -> None:
        e, seat = s.event, int(s.event["seat"])
        cards = e.get("cards")
        if s.rules.players == 2:
            # Two-handed double nil: three cards out, three redrawn from the pile (`hand_looked`
            # follows for the seat itself); the three discarded are out of play, not on the pile.
            if seat == s.me and cards:
                s.changes["hand"] = s.hand() & ~mask_of_texts(cards)
            n = s.view.players
            order = [(s.view.dealer + step) % n for step in range(1, n + 1)]
            doubles = [o for o in order if (bid := s.now("bids")[o]) and bid.double_nil]
            if not doubles or seat == doubles[-1]:
                _start_bidding(s)
            return
        s.add_at("hand_sizes", seat, -count_of(e))
        if seat == s.me and cards is not None:
            s.changes["hand"] = s.hand() & ~mask_of_texts(cards)
        _start_bidding(s)


@register
@dataclass(frozen=True, slots=True)
class BidMade(Event):
    """A seat bid."""

    # `bid` is the action; the map form is its wire shape plus a phrase for people.
    kind: ClassVar[str] = "bid_made"
    seat: Annotated[SeatNo, Doc("who bid")]
    bid: Annotated[Bid, Doc("the bid")]
    text: ClassVar[
        Annotated[
            str, DERIVED, Length(0, 64), Doc('the bid in words: "4", "blind nil", "little Moe"')
        ]
    ]

    def to_dict(self) -> EventDict:
        shape = action_to_dict(self.bid, with_seat=False)
        del shape["kind"]
        return {"kind": self.kind, "seat": self.seat, "bid": shape, "text": self.bid.describe()}

    @staticmethod
    def fold(s: FoldStep) -> None:
        seat = int(s.event["seat"])
        s.set_at("bids", seat, parse_bid(seat, s.event["bid"]))
        if s.view.phase != "drawing":  # two-handed: a double nil is declared before the draw
            _after_bids(s)


@register
@dataclass(frozen=True, slots=True)
class CardsGiven(Event):
    """A seat put cards face down for an exchange or pass; only the giver gets ``cards``."""

    kind: ClassVar[str] = "cards_given"
    secret: ClassVar[str | None] = "cards"
    secret_counted: ClassVar[bool] = True
    seat: Annotated[SeatNo, Doc("who gave")]
    receiver: Annotated[SeatNo, Doc("who will receive them")]
    cards: Annotated[CardList, Doc("the cards, for the giver alone")]

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "receiver": self.receiver,
            "cards": _cards(self.cards),
        }

    @staticmethod
    def fold(s: FoldStep) -> None:
        e, seat = s.event, int(s.event["seat"])
        cards = e.get("cards")
        if seat == s.me and cards is not None:
            s.changes["given"] = cards_of_texts(cards)
        if s.view.game == "hearts":
            # A Hearts pass lies face down, out of the hand, until every seat has passed; a blind
            # nil exchange leaves the hand when it changes hands (`cards_exchanged`).
            s.add_at("hand_sizes", seat, -count_of(e))
            if seat == s.me and cards is not None:
                s.changes["hand"] = s.hand() & ~mask_of_texts(cards)


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


@register
@dataclass(frozen=True, slots=True)
class CardsExchanged(_CardsHandedOver):
    """Blind nil exchange: the receiver picked up the giver's cards (both partners see them)."""

    kind: ClassVar[str] = "cards_exchanged"
    giver: Annotated[SeatNo, Doc("who gave")]
    receiver: Annotated[SeatNo, Doc("who received")]
    cards: Annotated[CardList, Doc("the cards, for giver and receiver")]

    @staticmethod
    def fold(s: FoldStep) -> None:
        e = s.event
        giver, receiver = int(e["giver"]), int(e["receiver"])
        cards = e.get("cards")
        count = count_of(e)
        s.add_at("hand_sizes", giver, -count)
        s.add_at("hand_sizes", receiver, count)
        if cards is not None:
            if giver == s.me:
                s.changes["given"] = cards_of_texts(cards)
                s.changes["hand"] = s.hand() & ~mask_of_texts(cards)
            if receiver == s.me:
                s.changes["received"] = cards_of_texts(cards)
                s.changes["hand"] = s.hand() | mask_of_texts(cards)
        pairs = exchanges(s.rules, s.now("bids"), s.view.dealer)
        if pairs and (receiver, giver) == pairs[-1]:
            s.changes["phase"] = "playing"  # the last exchange's return: play starts


@register
@dataclass(frozen=True, slots=True)
class CardsPassed(_CardsHandedOver):
    """Hearts: the receiver picked up the cards the giver passed (only those two see them)."""

    kind: ClassVar[str] = "cards_passed"
    giver: Annotated[SeatNo, Doc("who passed")]
    receiver: Annotated[SeatNo, Doc("who received")]
    cards: Annotated[CardList, Doc("the cards, for giver and receiver")]

    @staticmethod
    def fold(s: FoldStep) -> None:
        e = s.event
        giver, receiver = int(e["giver"]), int(e["receiver"])
        cards = e.get("cards")
        s.add_at("hand_sizes", receiver, count_of(e))  # the giver's went when it gave
        if cards is not None and receiver == s.me:
            s.changes["received"] = tuple(sorted(cards_of_texts(cards)))
            s.changes["hand"] = s.hand() | mask_of_texts(cards)
        if cards is not None and giver == s.me:
            s.changes["given"] = cards_of_texts(cards)
        s.changes["phase"] = "playing"  # the passes change hands together, when every seat passed


@register
@dataclass(frozen=True, slots=True)
class CardPlayed(Event):
    """A seat played a card to the trick."""

    kind: ClassVar[str] = "card_played"
    seat: Annotated[SeatNo, Doc("who played")]
    card: Annotated[CardNo, Doc("the card")]
    trick_number: Annotated[TrickNo, Doc("the trick, from 1")]

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "card": card_text(self.card),
            "trick_number": self.trick_number,
        }

    @staticmethod
    def fold(s: FoldStep) -> None:
        e, seat = s.event, int(s.event["seat"])
        card = parse_card(str(e["card"]))
        bit = 1 << card
        trick = s.now("trick")
        if not trick:
            s.changes["leader"] = seat
        s.changes.update(
            phase="playing",
            trick=(*trick, (seat, card)),
            trick_number=int(e["trick_number"]),
            played=s.now("played") | bit,
        )
        s.add_at("hand_sizes", seat, -1)
        for name in ("face_up", "exposed"):
            masks = s.now(name)
            if seat < len(masks) and masks[seat] & bit:
                s.set_at(name, seat, masks[seat] & ~bit)
        if seat == s.me and s.now("hand") is not None:
            s.changes["hand"] = s.hand() & ~bit


@register
@dataclass(frozen=True, slots=True)
class SpadesBroken(Event):
    """Spades (in Hearts: hearts) may now be led."""

    kind: ClassVar[str] = "spades_broken"
    seat: Annotated[SeatNo, Doc("whose play broke them")]

    def to_dict(self) -> EventDict:
        return {"kind": self.kind, "seat": self.seat}

    @staticmethod
    def fold(s: FoldStep) -> None:
        s.changes["broken"] = True


@register
@dataclass(frozen=True, slots=True)
class TrickWon(Event):
    """A trick is complete; its winner leads next."""

    kind: ClassVar[str] = "trick_won"
    seat: Annotated[SeatNo, Doc("who won it")]
    trick_number: Annotated[TrickNo, Doc("the trick, from 1")]
    plays: Annotated[
        tuple[tuple[SeatNo, CardNo], ...], Doc("`[seat, card]` pairs in the order played")
    ]

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "trick_number": self.trick_number,
            "plays": [[s, card_text(c)] for s, c in self.plays],
        }

    @staticmethod
    def fold(s: FoldStep) -> None:
        e, seat = s.event, int(s.event["seat"])
        plays = plays_of(e["plays"])
        number = int(e["trick_number"])
        s.changes.update(
            last_trick=plays,
            last_winner=seat,
            trick=(),
            leader=seat,
            trick_number=min(number + 1, s.rules.tricks_per_hand),
        )
        s.add_at("tricks", seat, 1)
        if s.view.game == "hearts":
            taken = mask_of(card for _, card in plays)
            s.add_at("points", seat, penalty_points(taken, s.rules.hearts_jack_of_diamonds))


@register
@dataclass(frozen=True, slots=True)
class ClaimMade(Event):
    """A seat laid its cards down and claimed the rest; ``held`` says whether the claim stood."""

    # TRAM: `cards` are now public; `held` is whether the claim stands against every play of the
    # others; `penalty` is what followed when it did not.
    kind: ClassVar[str] = "claim_made"
    seat: Annotated[SeatNo, Doc("who claimed")]
    cards: Annotated[CardSet, Doc("the claimer's cards, now public")]
    held: Annotated[bool, Doc("whether the claim stood against every play")]
    penalty: Annotated[Word, Doc("the ruleset's penalty when it did not (empty if it held)")]

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "cards": mask_text(self.cards),
            "held": self.held,
            "penalty": self.penalty,
        }

    @staticmethod
    def fold(s: FoldStep) -> None:
        e, seat = s.event, int(s.event["seat"])
        held, penalty = bool(e["held"]), str(e.get("penalty", ""))
        if not held and penalty == "exposed":
            s.set_at("exposed", seat, mask_of_texts(e["cards"]))
        awarded = claim_award(seat, held, penalty, s.now("bids"), s.view.sides)
        remaining = s.rules.tricks_per_hand - sum(s.now("tricks"))
        if awarded and remaining > 0:
            # The rest of the tricks go round the awarded seats; `hand_scored` (next) gives the
            # counts.
            s.changes["last_winner"] = awarded[(remaining - 1) % len(awarded)]


@register
@dataclass(frozen=True, slots=True)
class DealDeclaredDead(Event):
    """A seat showed a deficient hand: the deal is void and the next dealer deals."""

    kind: ClassVar[str] = "deal_declared_dead"
    seat: Annotated[SeatNo, Doc("who declared")]
    cards: Annotated[CardSet, Doc("the deficient hand, now public")]
    reason: Annotated[Word, Doc("the deficiency (`no_spades`, `one_spade`, `no_face_cards`)")]
    next_dealer: Annotated[SeatNo, Doc("who deals next")]

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "seat": self.seat,
            "cards": mask_text(self.cards),
            "reason": self.reason,
            "next_dealer": self.next_dealer,
        }

    @staticmethod
    def fold(s: FoldStep) -> None:
        s.changes.update(phase="dealing", dealer=int(s.event["next_dealer"]), leader=-1)


@register
@dataclass(frozen=True, slots=True)
class HandScored(Event):
    """A hand is over and scored. Scores are per side (a partnership, or one seat); ``seed`` reveals
    the deal's seed so anyone can check it against the commitment and recompute the deal."""

    # `tricks` is per seat; `before`, `delta`, `after` and `bags_after` per side.
    kind: ClassVar[str] = "hand_scored"
    hand_number: Annotated[HandNo, Doc("the hand")]
    sides: Annotated[tuple[tuple[SeatNo, ...], ...], Doc("the seats of each side, in side order")]
    tricks: Annotated[tuple[int, ...], Doc("tricks won, per seat")]
    before: Annotated[tuple[int, ...], Doc("each side's score before the hand")]
    delta: Annotated[tuple[int, ...], Doc("each side's points for the hand")]
    after: Annotated[tuple[int, ...], Doc("each side's score after the hand")]
    bags_after: Annotated[tuple[int, ...], Doc("each side's bags after the hand")]
    seed: Annotated[Seed, Doc("the deal's seed (see Fair deals)")]
    notes: Annotated[
        tuple[Note, ...], Doc("what happened, in words (nil made, bags penalty, ...)")
    ] = ()

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

    @staticmethod
    def fold(s: FoldStep) -> None:
        e = s.event
        s.changes.update(
            phase="dealing",
            leader=-1,
            dealer=next_dealer(s.view.dealer, s.view.players),  # unless the game is over
            trick_number=s.rules.tricks_per_hand,  # a claim may have ended the hand early
            tricks=tuple(int(t) for t in e["tricks"]),
            scores=tuple(int(x) for x in e["after"]),
            bags=tuple(int(x) for x in e["bags_after"]),
        )


@register
@dataclass(frozen=True, slots=True)
class GameOver(Event):
    """The game has ended."""

    kind: ClassVar[str] = "game_over"
    winners: Annotated[tuple[SeatNo, ...], Doc("the winning seats (a side, or one player)")]
    scores: Annotated[tuple[int, ...], Doc("each side's final score")]
    reason: Annotated[
        Word,
        Doc(
            "why it ended: `target` (a side reached the target score), `hands` (the game's fixed"
            " number of hands was played), `boston` (a side took every trick with Boston on),"
            " `floor` (a side fell to the losing floor), `draw` (level after the last fixed hand)"
        ),
    ]

    def to_dict(self) -> EventDict:
        return {
            "kind": self.kind,
            "winners": list(self.winners),
            "scores": list(self.scores),
            "reason": self.reason,
        }

    @staticmethod
    def fold(s: FoldStep) -> None:
        s.changes.update(phase="game_over", winners=tuple(int(w) for w in s.event["winners"]))
        if s.view.phase == "dealing":
            # The last hand's `hand_scored` passed the deal on; a game that is over keeps its
            # dealer.
            s.changes["dealer"] = (s.view.dealer - 1) % s.view.players


# -- the rules the folds share ------------------------------------------------------------------------


def _start_bidding(s: FoldStep) -> None:
    """Bidding starts, unless every seat has bid already (two-handed double nil, before the draw)."""
    s.changes["phase"] = "bidding"
    _after_bids(s)


def _after_bids(s: FoldStep) -> None:
    bids: tuple[Bid | None, ...] = s.now("bids")
    if None not in bids:
        s.changes["phase"] = "exchanging" if exchanges(s.rules, bids, s.view.dealer) else "playing"


def exchanges(rules: Ruleset, bids: Sequence[Bid | None], dealer: int) -> list[tuple[int, int]]:
    """The blind nil exchanges a hand's bids call for, in order: (blind nil seat, partner), one per
    side, the first blind nil bidder's (in bidding order, from the dealer's left) first."""
    if not rules.blind_nil_exchange or not rules.partnerships:
        return []
    n = len(bids)
    out: list[tuple[int, int]] = []
    for step in range(1, n + 1):
        seat = (dealer + step) % n
        bid = bids[seat]
        if bid is not None and bid.blind and bid.tricks == 0:
            partner = (seat + 2) % 4
            if not any(partner in pair for pair in out):
                out.append((seat, partner))
    return out
