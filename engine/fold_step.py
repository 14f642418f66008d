"""One event being folded into a seat's view: what each event's `fold` (engine/events.py) reads and
changes, and the notation helpers it shares with the snapshot parser (engine/view_fold.py).

The generic machinery (`view_fold.fold`) makes a `FoldStep` from the view before the event, the
event's redacted map and the rules, asks the event class of that kind to `fold` it, and builds the
new view from `changes` once. Pure: no IO; the view itself never changes.
"""

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engine.actions import Bid, action_from_dict
from engine.cards import Card, CardMask, mask_of, parse_card
from engine.ruleset import Ruleset
from engine.views import PublicView, SeatView

EventMap = Mapping[str, Any]


def mask_of_texts(cards: Iterable[str] | None) -> CardMask:
    """The card set of a list of notation (none: the empty set)."""
    return mask_of(parse_card(card) for card in cards or ())


def cards_of_texts(cards: Iterable[str] | None) -> tuple[Card, ...]:
    """The cards of a list of notation, in its order."""
    return tuple(parse_card(card) for card in cards or ())


def plays_of(plays: Iterable[Sequence[Any]]) -> tuple[tuple[int, Card], ...]:
    """A trick's `[seat, card]` pairs as the engine's (seat, card)."""
    return tuple((int(seat), parse_card(str(card))) for seat, card in plays)


def parse_bid(seat: int, shape: Mapping[str, Any] | None) -> Bid | None:
    """A bid of a view or a `bid_made` event (its wire shape, `text` and absent fields ignored)."""
    if shape is None:
        return None
    clean = {k: v for k, v in shape.items() if v is not None and k not in ("text", "kind")}
    bid = action_from_dict({"kind": "bid", **clean}, seat)
    assert isinstance(bid, Bid)
    return bid


def count_of(event: EventMap) -> int:
    """How many cards an event moved: its `cards` when shown, else its `count`."""
    cards = event.get("cards")
    return len(cards) if cards is not None else int(event.get("count") or 0)


class FoldStep:
    """One event being folded: the view before it, the event (`event`, its redacted map), the rules
    and the changes so far (`now(field)` reads a field's value with the changes applied)."""

    __slots__ = ("changes", "event", "rules", "view")

    def __init__(
        self, view: PublicView, event: EventMap, rules: Ruleset, changes: dict[str, Any]
    ) -> None:
        self.view = view
        self.event = event
        self.rules = rules
        self.changes = changes

    def now(self, name: str) -> Any:
        return self.changes[name] if name in self.changes else getattr(self.view, name)

    @property
    def me(self) -> int | None:
        """The view's seat (None for a spectator)."""
        return self.view.seat if isinstance(self.view, SeatView) else None

    @property
    def seat_view(self) -> bool:
        return isinstance(self.view, SeatView)

    def set_at(self, name: str, index: int, value: Any) -> None:
        items = list(self.now(name))
        items[index] = value
        self.changes[name] = tuple(items)

    def add_at(self, name: str, index: int, delta: int) -> None:
        self.set_at(name, index, self.now(name)[index] + delta)

    def hand(self) -> CardMask:
        hand = self.now("hand")
        return 0 if hand is None else int(hand)
