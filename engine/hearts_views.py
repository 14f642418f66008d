"""The views of `HeartsGame` (engine/hearts.py): what each seat, and a spectator, may know.

A seat sees its own hand, the cards it passed and, once every seat has passed, the cards it received; a
spectator sees no hand. Everything else in a view is public: scores, the trick, the cards played, the
penalty points taken, who is still to pass.
"""

from typing import Any, Protocol

from engine.actions import Action
from engine.cards import Card, CardMask, Seat, cards_in, mask_of
from engine.errors import IllegalAction
from engine.game import Outcome, Phase
from engine.hearts_rules import penalty_points
from engine.hearts_search import PASSING, PLAYING
from engine.ruleset import Ruleset
from engine.views import PublicView, SeatView


class _Viewable(Protocol):
    """The state the views read (HeartsGame's slots and two of its methods)."""

    _n: int
    _ruleset: Ruleset
    _phase: Phase
    _version: int
    _hand_number: int
    _dealer: Seat
    _sides: tuple[tuple[int, ...], ...]
    _scores: list[int]
    _hands: list[CardMask]
    _given: list[tuple[Card, ...] | None]
    _received: list[CardMask]
    _trick: list[Card]
    _leader: Seat
    _trick_number: int
    _last_trick: tuple[tuple[Seat, Card], ...]
    _last_winner: Seat
    _tricks: list[int]
    _played: CardMask
    _broken: bool
    _direction: str
    _taken: list[CardMask]
    _outcome: Outcome | None

    def to_act(self) -> tuple[int, ...]: ...

    def legal_actions(self, seat: int) -> list[Action]: ...


class HeartsViews:
    """Mixin of HeartsGame: `view(seat)` and `spectator_view()`."""

    __slots__ = ()

    def spectator_view(self: "_Viewable") -> PublicView:
        """What anyone may know: scores, the trick, the cards played, who has passed; no hand."""
        return PublicView(**_public_fields(self))

    def view(self: "_Viewable", seat: int) -> SeatView:
        """What `seat` may know: the public view plus its own hand, the cards it passed, the cards it
        received (only once every seat has passed) and the cards it may play. Like the Spades views,
        `legal` does not list the hundreds of ways to pass: while a seat is to pass, `choose_cards` is
        `(hearts_pass_count,)` and it may pass any that many cards of `hand`. Raises
        IllegalAction("bad_seat") for a seat that is not at the table; nothing changes."""
        if not 0 <= seat < self._n:
            raise IllegalAction("bad_seat", f"there is no seat {seat} at this table")
        given = self._given[seat] or ()
        hand = self._hands[seat]
        if self._phase is PASSING:
            # Passed cards lie face down, out of the hand, until everyone has passed.
            hand &= ~mask_of(given)
        received = self._received[seat]
        passing = self._phase is PASSING
        to_pass = passing and self._given[seat] is None
        return SeatView(
            **_public_fields(self),
            seat=seat,
            hand=hand,
            given=given,
            received=tuple(cards_in(received)),
            legal=tuple(self.legal_actions(seat)) if not passing else (),
            choose_cards=(self._ruleset.hearts_pass_count,) if to_pass else (),
        )


def _public_fields(self: _Viewable) -> dict[str, Any]:
    """The fields every view shares (all public)."""
    n = self._n
    passing = self._phase is PASSING
    sizes = tuple(
        self._hands[seat].bit_count() - (len(self._given[seat] or ()) if passing else 0)
        for seat in range(n)
    )
    trick = self._trick
    leader = self._leader
    playing = self._phase is PLAYING
    return {
        "game": "hearts",
        "players": n,
        "phase": self._phase.value,
        "version": self._version,
        "hand_number": self._hand_number,
        "dealer": self._dealer,
        "hand_type": "",
        "to_act": self.to_act(),
        "sides": self._sides,
        "scores": tuple(self._scores),
        "bags": (0,) * n,
        "bids": (None,) * n,
        "hand_sizes": sizes,
        "face_up": (0,) * n,
        "exposed": (0,) * n,
        "looked": (True,) * n,
        # -1 unless a trick is being played (docs/protocol.md, "Game views").
        "leader": leader if playing else -1,
        "trick": tuple(((leader + i) % n, card) for i, card in enumerate(trick)),
        "trick_number": self._trick_number,
        "last_trick": self._last_trick,
        "last_winner": self._last_winner,
        "tricks": tuple(self._tricks),
        "played": self._played,
        "broken": self._broken,
        "pass_direction": self._direction,
        "points": tuple(
            penalty_points(taken, self._ruleset.hearts_jack_of_diamonds) for taken in self._taken
        ),
        "winners": () if self._outcome is None else self._outcome.winners,
    }
