"""One fold of events into a seat's view: what each event tells a seat (or a spectator), as the engine
knows it.

A seat that is not in the game's process (the bot SDK's tracker, the terminal client) starts from a
`snapshot` (the engine's `SeatView`, or `PublicView` for a spectator, as a plain map: `view_from_dict`)
and then receives, in order, the redacted events (`Event.for_seat`, or their wire maps, which name the
kind as `t` and add `version`) and the `turn` messages saying who must act. `fold(view, event, ruleset)`
applies one event; `fold_turn(view, version, to_act)` applies a `turn`. Pure: no IO, no state but the
view; the view is frozen, so each step returns a new one.

After the events of one action and the `turn` that follows them, the folded view equals
`game.view(seat)` (or `game.spectator_view()`) but for `legal` and `choose_cards`, which only `your_turn`
gives, and for what no event tells a seat (see `UNTOLD`). tests/engine/test_view_fold.py checks this
for every preset after every action of random games; the page's reducer is checked against the same
engine (tests/web/test_page_logic.py). Where the fold needs a rule (how many cards a deal gives, the
phase an event leads to, a trick's Hearts points) it asks the engine's own functions and tables, so
a rule is written once.

What one event changes is that event's own `fold`, beside its declaration in `engine.events`; this
module is the machinery around them and holds nothing per event. `fold` raises `UnknownEvent` for a
kind `engine.events.EVENT_TYPES` does not declare (and registering an event without its fold fails).
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import fields, replace
from typing import Any, Final, TypeVar

from engine import events as ev
from engine.actions import Action, action_from_dict
from engine.cards import parse_card
from engine.errors import EngineError
from engine.fold_step import (
    FoldStep,
    cards_of_texts,
    mask_of_texts,
    parse_bid,
    plays_of,
)
from engine.ruleset import Ruleset
from engine.views import PublicView, SeatView

View = TypeVar("View", PublicView, SeatView)
EventMap = Mapping[str, Any]

#: Where the folded view differs from the engine's, and why (tests/engine/test_view_fold.py allows
#: exactly these): the engine's view shows no hand while its seat has not looked, but a two-handed
#: seat that declared double nil draws its cards unseen and is told each one (`draw_resolved`), and no
#: event says when it may look at them (the draw's end), so the fold keeps them in `hand` meanwhile;
#: and after a two-handed double nil redraw, which three cards left the face-up discard pile (the
#: redrawing seat learns them; the other seat and spectators do not, until the next snapshot), and
#: in which order the redrawing seat drew them (its `received` is in card order here).
UNTOLD: Final = (
    "hand: a two-handed double nil seat's cards drawn before it may look",
    "discards: after a two-handed double nil redraw, but for the redrawing seat",
    "received: the order of a two-handed double nil redraw",
)


class UnknownEvent(EngineError):
    """An event kind the fold does not know (a new event without its fold). The view is unchanged."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"unknown_event: the view fold does not know the event {kind!r}")
        self.code = "unknown_event"
        self.kind = kind


def event_kind(event: EventMap) -> str:
    """The kind of an event map: `kind` (the engine's `for_seat`) or `t` (the wire's)."""
    return str(event.get("t") or event.get("kind"))


def fold(view: View, event: EventMap, ruleset: Ruleset) -> View:
    """The view after `event` (redacted, as `view`'s seat receives it), by its kind's `fold`
    (engine/events.py). Raises UnknownEvent for a kind not declared, NotationError or KeyError for
    a malformed event; `view` itself never changes.

    Events do not say who acts next: `to_act` becomes empty until the `turn` (`fold_turn`); `legal`
    and `choose_cards` likewise wait for `your_turn`. A wire map's `version` is taken."""
    kind = event_kind(event)
    declared = ev.EVENT_TYPES.get(kind)
    if declared is None:
        raise UnknownEvent(kind)
    changes: dict[str, Any] = {"to_act": ()}
    if isinstance(view, SeatView):
        changes["legal"] = ()
        changes["choose_cards"] = ()
    version = event.get("version")
    if isinstance(version, int) and not isinstance(version, bool):
        changes["version"] = version
    declared.fold(FoldStep(view, event, ruleset, changes))
    return _replace(view, changes)


def fold_all(view: View, events: Iterable[EventMap], ruleset: Ruleset) -> View:
    """`fold` over several events, in order."""
    for event in events:
        view = fold(view, event, ruleset)
    return view


def fold_turn(view: View, version: int, to_act: Sequence[int]) -> View:
    """The view after a `turn`: who must act now, at which version (in the order given: the server's
    `turn` lists them in seat order, where the engine's own view may order a simultaneous phase's
    seats otherwise). In play, before a trick's first card, the one seat to act is the trick's
    leader (which no event names before the first lead)."""
    changes: dict[str, Any] = {"version": version, "to_act": tuple(to_act)}
    if view.phase == "playing" and not view.trick and len(to_act) == 1:
        changes["leader"] = to_act[0]
    return _replace(view, changes)


_FIELDS: Final = {cls: tuple(f.name for f in fields(cls)) for cls in (PublicView, SeatView)}
_SET = object.__setattr__


def _replace(view: View, changes: Mapping[str, Any]) -> View:
    """`dataclasses.replace(view, **changes)` for the views, which have no `__post_init__`: filling
    the new frozen instance's slots directly halves the cost of a fold step (a bot's tracker folds
    every event of a game)."""
    cls = type(view)
    names = _FIELDS.get(cls)
    if names is None:  # a subclass of the engine's views: the general way
        return replace(view, **changes)
    new = object.__new__(cls)
    for name in names:
        _SET(new, name, changes[name] if name in changes else getattr(view, name))
    return new


# -- parsing a snapshot's view ---------------------------------------------------------------------------


def view_from_dict(data: Mapping[str, Any]) -> PublicView | SeatView:
    """The typed view of a snapshot's plain map (`to_dict()`'s form): a `SeatView` when it names a
    seat, else a `PublicView`. Raises KeyError, ValueError or an EngineError for a malformed map."""
    n = int(data["players"])
    public: dict[str, Any] = {
        "game": str(data["game"]),
        "players": n,
        "phase": str(data["phase"]),
        "version": int(data["version"]),
        "hand_number": int(data["hand_number"]),
        "dealer": int(data["dealer"]),
        "hand_type": str(data.get("hand_type", "")),
        "to_act": tuple(int(s) for s in data.get("to_act", ())),
        "sides": tuple(tuple(int(s) for s in side) for side in data["sides"]),
        "scores": tuple(int(s) for s in data["scores"]),
        "bags": tuple(int(b) for b in data["bags"]),
        "bids": tuple(parse_bid(seat, bid) for seat, bid in enumerate(data["bids"])),
        "hand_sizes": tuple(int(s) for s in data["hand_sizes"]),
        "face_up": tuple(mask_of_texts(cards) for cards in data["face_up"]),
        "exposed": tuple(mask_of_texts(cards) for cards in data["exposed"]),
        "looked": tuple(bool(x) for x in data["looked"]),
        "leader": int(data["leader"]),
        "trick": plays_of(data["trick"]),
        "trick_number": int(data["trick_number"]),
        "last_trick": plays_of(data["last_trick"]),
        "last_winner": int(data["last_winner"]),
        "tricks": tuple(int(t) for t in data["tricks"]),
        "played": mask_of_texts(data["played"]),
        "broken": bool(data["broken"]),
        "discards": mask_of_texts(data.get("discards")),
        "pass_direction": str(data.get("pass_direction", "")),
        "points": tuple(int(p) for p in data.get("points", ())),
        "winners": tuple(int(w) for w in data.get("winners", ())),
    }
    if data.get("seat") is None:
        return PublicView(**public)
    seat = int(data["seat"])
    hand = data.get("hand")
    drawn = data.get("drawn")
    legal: tuple[Action, ...] = tuple(
        action_from_dict({k: v for k, v in shape.items() if v is not None}, seat)
        for shape in data.get("legal", ())
    )
    return SeatView(
        **public,
        seat=seat,
        hand=None if hand is None else mask_of_texts(hand),
        given=cards_of_texts(data.get("given")),
        received=cards_of_texts(data.get("received")),
        drawn=None if drawn is None else parse_card(str(drawn)),
        legal=legal,
        choose_cards=tuple(int(c) for c in data.get("choose_cards", ())),
    )


#: The fields of a `SeatView` that a `PublicView` lacks.
SEAT_FIELDS: Final = tuple(
    f.name for f in fields(SeatView) if f.name not in {g.name for g in fields(PublicView)}
)


#: Every event kind the fold applies: every kind `engine.events` declares (a test checks it).
HANDLED: Final = frozenset(ev.EVENT_TYPES)
