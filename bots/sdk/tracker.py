"""`ViewTracker`: a seat's view kept up to date from the server's stream, a snapshot then events.

The server sends a full `snapshot` when a seat joins (or rejoins after a drop), then one event per thing
that happens, a `turn` saying who must act, and `your_turn` with the legal actions when the seat must
act (lichess's bot stream works the same way). The tracker holds the engine's own typed view and moves
it on with the engine's fold (`engine.view_fold`: the one fold the terminal client uses too), so that at
`your_turn` the bot gets the same `to_dict()` form the engine would give in-process. A test plays whole
games in-process, feeds the engine's per-seat events here, and compares with the engine's own views
whenever the seat must act (tests/bots/test_tracker.py); the fold itself is property-tested against the
engine after every action (tests/engine/test_view_fold.py).
"""

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from engine.ruleset import Ruleset
from engine.view_fold import HANDLED, event_kind, fold, fold_turn, view_from_dict
from engine.views import PublicView, SeatView


class ViewTracker:
    """One seat's view of one table: the engine's `SeatView`, kept by the engine's fold."""

    def __init__(self, ruleset: Ruleset) -> None:
        self.ruleset = ruleset
        self.current: PublicView | None = None  # None until the first snapshot

    @property
    def ready(self) -> bool:
        return self.current is not None

    @property
    def view(self) -> dict[str, Any]:
        """The view's plain map (`SeatView.to_dict()`), {} before the first snapshot."""
        return {} if self.current is None else self.current.to_dict()

    def snapshot(self, view: Mapping[str, Any]) -> None:
        """Start again from a full view (a snapshot's plain map)."""
        self.current = view_from_dict(view)

    def for_turn(
        self, seat: int, version: int, legal: Sequence[Mapping[str, Any]]
    ) -> dict[str, Any]:
        """The view to decide on at a `your_turn`, as a plain map: its version and legal actions from
        the message, and the seat among those to act (a server that sent no `turn` says so too)."""
        view = self.current
        assert view is not None, "a your_turn before any snapshot"
        to_act = view.to_act if seat in view.to_act else (*view.to_act, seat)
        view = fold_turn(view, version, to_act)
        if isinstance(view, SeatView) and view.hand is not None and not view.looked[seat]:
            # A two-handed double nil drawn unseen: the bot may not look yet (the engine's view
            # shows no hand then; engine.view_fold.UNTOLD).
            view = dataclasses.replace(view, hand=None)
        data = view.to_dict()
        data.update(seat=seat, legal=[dict(action) for action in legal])
        return data

    def apply(self, event: Mapping[str, Any]) -> None:
        """Apply one message of the stream (its map, `t` or `kind` naming it): a game event or a `turn`;
        the others (clocks, seats, chat) say nothing about the view and are ignored."""
        if self.current is None:
            return
        kind = event_kind(event)
        if kind in HANDLED:
            self.current = fold(self.current, event, self.ruleset)
        elif kind == "turn":
            self.current = fold_turn(
                self.current, int(event["version"]), [int(s) for s in event["to_act"]]
            )
