"""Bots for tests/bots/test_arena_pinned.py: their every choice depends on everything their view shows.

`ViewDigestBot` hashes the whole `BotView` (every field and the helpers' answers) and picks its action
from that hash, so a run's results change whenever any part of any view changes: pinning the results
pins what the arena shows bots, not only what it deals. `EventDigestBot` also folds every event and
hand result it is told into the hash (the arena's event path).
"""

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from bots.sdk.bot import Bot, Decision
from bots.sdk.view import BotView

Choice = TypeVar("Choice")


def view_summary(view: BotView) -> tuple[Any, ...]:
    """Every field of the view (but the clock) and the answers of its helpers, as plain values."""
    return (
        view.ruleset.to_dict(),
        view.seat,
        view.phase,
        view.hand_number,
        view.dealer,
        view.hand_type,
        view.to_act,
        view.sides,
        view.scores,
        view.bags,
        view.bids,
        view.hand_sizes,
        view.hand_mask,
        view.looked,
        view.face_up,
        view.exposed,
        view.leader,
        view.trick,
        view.trick_number,
        view.last_trick,
        view.last_winner,
        view.tricks_won,
        view.played_mask,
        view.broken,
        view.pass_direction,
        view.points,
        view.given,
        view.received,
        view.drawn,
        view.legal,
        view.choose_count,
        view.history,
        view.hand,
        view.legal_cards,
        view.legal_bids,
        view.led_suit,
        view.partner,
        view.my_side,
        view.players,
        view.unseen_mask,
        sorted(view.voids.items()),
        [view.known_cards(seat) for seat in range(view.players)],
        view.trick_winner(),
    )


class ViewDigestBot(Bot):
    """Chooses by a hash of its whole view (and its own random source)."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        self.state = hashlib.sha256()

    def _pick(self, view: BotView, options: Sequence[Choice]) -> Choice:
        self.state.update(repr(view_summary(view)).encode())
        self.state.update(repr(self.random.random()).encode())
        return options[int.from_bytes(self.state.digest()[:4], "big") % len(options)]

    def bid(self, view: BotView) -> Decision:
        return self._pick(view, view.legal)

    def play(self, view: BotView) -> Decision:
        return self._pick(view, view.legal_cards)

    def _cards(self, view: BotView) -> Decision:
        hand = view.hand
        first = self._pick(view, range(len(hand)))
        return [hand[(first + step) % len(hand)] for step in range(view.choose_count)]

    def exchange(self, view: BotView) -> Decision:
        return self._cards(view)

    def pass_cards(self, view: BotView) -> Decision:
        return self._cards(view)

    def discard(self, view: BotView) -> Decision:
        return self._cards(view)

    def other(self, view: BotView) -> Decision:
        return self._pick(view, view.legal)


class EventDigestBot(ViewDigestBot):
    """A `ViewDigestBot` that also hashes every event, hand start, hand result and game end it is told."""

    def _fold(self, what: str, data: Any) -> None:
        self.state.update(f"{what}:{data!r}".encode())

    def on_hand_start(self, view: BotView) -> None:
        self._fold("hand_start", view_summary(view))

    def on_event(self, event: Mapping[str, Any]) -> None:
        self._fold("event", sorted(event.items()))

    def on_hand_end(self, result: Mapping[str, Any]) -> None:
        self._fold("hand_end", sorted(result.items()))

    def on_game_end(self, outcome: Mapping[str, Any]) -> None:
        self._fold("game_end", sorted(outcome.items()))
