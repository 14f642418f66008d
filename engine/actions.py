"""Commands a seat sends to a game: frozen value objects named imperatively, and their wire shape.

The wire shape is a flat mapping with a `kind` and card notation, e.g. `{"kind": "play", "card": "QS"}`,
`{"kind": "bid", "tricks": 4, "blind": false}`. `action_from_dict` checks everything and raises
`NotationError` (a bad card) or `IllegalAction` with code `bad_action` (anything else); it never raises
KeyError or TypeError, and builds nothing on failure.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, TypeAlias

from engine.cards import Card, card_text, parse_card
from engine.errors import IllegalAction

MOES: Final = ("", "little", "big")
BEMOS: Final = ("", "bemo", "big_bemo")


@dataclass(frozen=True, slots=True)
class Bid:
    """A bid of `tricks` (0 is nil). Variant bids are flags on top:

    - `blind`: made before looking (blind nil when tricks == 0, a blind bid otherwise);
    - `no_trumps`: "no spade trumps" (003), tricks >= 1, the bidder may win no trick with a spade;
    - `moe`: "little" (6 running tricks, 150) or "big" (8, 300), with tricks == 0;
    - `bemo`: "bemo" (first 6 tricks, 60) or "big_bemo" (first 9, 90) on top of an ordinary bid;
    - `ten_for_200`: the side must take 10 tricks for 200 (tricks == 10);
    - `double_nil`: two-handed double nil, declared before the draw (tricks == 0).
    """

    seat: int
    tricks: int
    blind: bool = False
    no_trumps: bool = False
    moe: str = ""
    bemo: str = ""
    ten_for_200: bool = False
    double_nil: bool = False

    @property
    def is_nil(self) -> bool:
        """A nil of any kind (plain, blind, two-handed double): a promise to take no trick."""
        return self.tricks == 0 and not self.moe

    def describe(self) -> str:
        """A short phrase for people: "4", "nil", "blind nil", "3 blind", "little Moe", "5 + bemo"."""
        if self.moe:
            return f"{self.moe} Moe"
        if self.double_nil:
            return "double nil"
        if self.ten_for_200:
            return "10 for 200"
        text = "nil" if self.tricks == 0 else str(self.tricks)
        if self.blind:
            text = f"blind {text}" if self.tricks == 0 else f"{text} blind"
        if self.no_trumps:
            text += " no trumps"
        if self.bemo:
            text += f" + {self.bemo.replace('_', ' ')}"
        return text


@dataclass(frozen=True, slots=True)
class LookAtHand:
    """A seat that could bid blind chooses to look at its cards instead (it may then not bid blind)."""

    seat: int


@dataclass(frozen=True, slots=True)
class PlayCard:
    """Play `card` to the current trick."""

    seat: int
    card: Card


@dataclass(frozen=True, slots=True)
class ExchangeCards:
    """Give these cards face down to the partner (blind nil exchange)."""

    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class PassCards:
    """Pass these cards (Hearts)."""

    seat: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Claim:
    """TRAM: "the rest are mine" — the claimer's side takes every remaining trick."""

    seat: int


@dataclass(frozen=True, slots=True)
class DeclareDeficient:
    """Show a deficient hand before this side has bid; the deal is dead and the next dealer deals."""

    seat: int


@dataclass(frozen=True, slots=True)
class KeepDrawn:
    """Two-handed draw: keep the card just drawn (and discard the next) or discard it (and keep the next)."""

    seat: int
    keep: bool


@dataclass(frozen=True, slots=True)
class Discard:
    """Joker Spades: the dealer discards two cards face down after taking the last two."""

    seat: int
    cards: tuple[Card, ...]


Action: TypeAlias = (
    Bid
    | LookAtHand
    | PlayCard
    | ExchangeCards
    | PassCards
    | Claim
    | DeclareDeficient
    | KeepDrawn
    | Discard
)

_KINDS: Final[dict[type, str]] = {
    Bid: "bid",
    LookAtHand: "look",
    PlayCard: "play",
    ExchangeCards: "exchange",
    PassCards: "pass",
    Claim: "claim",
    DeclareDeficient: "deficient",
    KeepDrawn: "keep_drawn",
    Discard: "discard",
}
ACTION_KINDS: Final = tuple(_KINDS.values())


def action_kind(action: Action) -> str:
    """The wire `kind` of an action: bid, look, play, exchange, pass, claim, deficient, keep_drawn, discard."""
    return _KINDS[type(action)]


def action_to_dict(action: Action, *, with_seat: bool = True) -> dict[str, object]:
    """The wire shape of an action (with its `seat` unless `with_seat=False`)."""
    out: dict[str, object] = {"kind": _KINDS[type(action)]}
    if with_seat:
        out["seat"] = action.seat
    if isinstance(action, Bid):
        out["tricks"] = action.tricks
        out["blind"] = action.blind
        if action.no_trumps:
            out["no_trumps"] = True
        if action.moe:
            out["moe"] = action.moe
        if action.bemo:
            out["bemo"] = action.bemo
        if action.ten_for_200:
            out["ten_for_200"] = True
        if action.double_nil:
            out["double_nil"] = True
    elif isinstance(action, PlayCard):
        out["card"] = card_text(action.card)
    elif isinstance(action, ExchangeCards | PassCards | Discard):
        out["cards"] = [card_text(card) for card in action.cards]
    elif isinstance(action, KeepDrawn):
        out["keep"] = action.keep
    return out


def _bad(message: str) -> IllegalAction:
    return IllegalAction("bad_action", message)


def _field(data: Mapping[str, object], name: str, kind: type, default: object = None) -> object:
    value = data.get(name, default)
    if value is None:
        raise _bad(f"{name!r} is missing")
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
        raise _bad(f"{name!r} must be a whole number")
    if not isinstance(value, kind):
        raise _bad(f"{name!r} must be {kind.__name__}")
    return value


def _card(value: object) -> Card:
    if not isinstance(value, str):
        raise _bad("a card is written as text like 'QS'")
    return parse_card(value)


def _cards(data: Mapping[str, object]) -> tuple[Card, ...]:
    value = data.get("cards")
    if not isinstance(value, list | tuple):
        raise _bad("'cards' must be a list of cards like ['QS', 'TD']")
    cards = tuple(_card(item) for item in value)
    if len(set(cards)) != len(cards):
        raise _bad("the same card is listed twice")
    return cards


def action_from_dict(data: object, seat: int | None = None) -> Action:
    """Parse the wire shape. `seat` (the sender's seat, known to the server) wins over data["seat"].

    Raises NotationError for a bad card and IllegalAction(code "bad_action") for anything else.
    """
    if not isinstance(data, Mapping):
        raise _bad("an action is a mapping with a 'kind'")
    kind = data.get("kind")
    if kind not in ACTION_KINDS:
        raise _bad(f"unknown action kind {kind!r}; known: {', '.join(ACTION_KINDS)}")
    if seat is None:
        seat_value = _field(data, "seat", int)
        assert isinstance(seat_value, int)
        seat = seat_value
    if kind == "bid":
        tricks = _field(data, "tricks", int)
        blind = _field(data, "blind", bool, False)
        no_trumps = _field(data, "no_trumps", bool, False)
        moe = _field(data, "moe", str, "")
        bemo = _field(data, "bemo", str, "")
        ten = _field(data, "ten_for_200", bool, False)
        double = _field(data, "double_nil", bool, False)
        assert isinstance(tricks, int) and isinstance(moe, str) and isinstance(bemo, str)
        if moe not in MOES:
            raise _bad(f"'moe' must be one of {MOES}")
        if bemo not in BEMOS:
            raise _bad(f"'bemo' must be one of {BEMOS}")
        return Bid(seat, tricks, bool(blind), bool(no_trumps), moe, bemo, bool(ten), bool(double))
    if kind == "look":
        return LookAtHand(seat)
    if kind == "play":
        return PlayCard(seat, _card(data.get("card")))
    if kind == "exchange":
        return ExchangeCards(seat, _cards(data))
    if kind == "pass":
        return PassCards(seat, _cards(data))
    if kind == "claim":
        return Claim(seat)
    if kind == "deficient":
        return DeclareDeficient(seat)
    if kind == "keep_drawn":
        keep = _field(data, "keep", bool)
        return KeepDrawn(seat, bool(keep))
    return Discard(seat, _cards(data))
