"""The end of a hand of `HeartsGame` (engine/hearts.py): its points, its record, and the end of the game.

Kept apart from the state machine because it runs once a hand, after the last trick, on both paths: the
checked one (`apply`, which wants the events) and the search path (`play_fast`, `play_to_end`, which
passes no list and gets none built). `HeartsScoring` is a mixin of `HeartsGame` that reads and writes
its slots, like `engine.hearts_search` and `engine.hearts_views`; the points themselves are the pure
functions of `engine.hearts_rules`.
"""

from typing import Protocol

from engine.actions import Action
from engine.cards import Card, CardMask, Seat
from engine.events import Event, GameOver, HandScored
from engine.game import Outcome, Phase
from engine.hearts_rules import hand_points, moon_shooter, pass_offset, penalty_points, winners
from engine.hearts_search import DEALING, GAME_OVER
from engine.history import HandHistory, Transfer
from engine.ruleset import Ruleset


class _Scorable(Protocol):
    """The state the end of a hand reads and writes (HeartsGame's slots)."""

    _ruleset: Ruleset
    _n: int
    _sides: tuple[tuple[int, ...], ...]
    _phase: Phase
    _hand_number: int
    _dealer: Seat
    _scores: list[int]
    _histories: list[HandHistory]
    _outcome: Outcome | None
    _seed: bytes
    _dealt: tuple[CardMask, ...]
    _set_aside: CardMask
    _direction: str
    _given: list[tuple[Card, ...] | None]
    _taken: list[CardMask]
    _tricks: list[int]
    _plays: list[tuple[Seat, Card]]
    _trick_winners: list[Seat]
    _actions: list[Action]


class HeartsScoring:
    """Mixin of HeartsGame: `_score_hand`, called once the hand's last trick is won."""

    __slots__ = ()

    # HeartsGame's slot, declared here with its type: mypy would otherwise take the type of the
    # Outcome assigned below as this class's own, narrower than the slot's.
    _outcome: Outcome | None

    def _score_hand(self: "_Scorable", events: list[Event] | None) -> None:
        """Score the finished hand, record it, and end the game or wait for the next deal; `events`
        (None on the fast path) receives HandScored and GameOver."""
        ruleset = self._ruleset
        n = self._n
        jack = ruleset.hearts_jack_of_diamonds
        points = hand_points(self._taken, ruleset.hearts_moon, jack)
        before = tuple(self._scores)
        after = tuple(before[seat] + points[seat] for seat in range(n))
        self._scores = list(after)
        notes: list[str] = []
        shooter = moon_shooter(self._taken)
        if shooter is not None and ruleset.hearts_moon != "off":
            notes.append(f"seat {shooter} shot the moon ({ruleset.hearts_moon.replace('_', ' ')})")
        sides = self._sides
        offset = pass_offset(self._direction, n)
        transfers = tuple(
            Transfer(giver, (giver + offset) % n, cards)
            for giver, cards in enumerate(self._given)
            if cards is not None
        )
        for seat in range(n):
            taken = penalty_points(self._taken[seat], jack)
            if taken:
                notes.append(f"seat {seat} took {taken} points")
        scored = (
            HandScored(
                hand_number=self._hand_number,
                sides=sides,
                tricks=tuple(self._tricks),
                before=before,
                delta=tuple(points),
                after=after,
                bags_after=(0,) * n,
                seed=self._seed.hex(),
                notes=tuple(notes),
            )
            if events is not None
            else None
        )
        if scored is not None and events is not None:
            events.append(scored)
        self._histories.append(
            HandHistory(
                hand_number=self._hand_number,
                dealer=self._dealer,
                seed=self._seed,
                players=n,
                hand_type="",
                deal=self._dealt,
                face_up=(0,) * n,
                set_aside=self._set_aside,
                bids=(),
                transfers=transfers,
                plays=tuple(self._plays),
                trick_winners=tuple(self._trick_winners),
                tricks=tuple(self._tricks),
                sides=sides,
                score_before=before,
                score_delta=tuple(points),
                score_after=after,
                bags_after=(0,) * n,
                actions=tuple(self._actions),
                notes=tuple(notes),
            )
        )
        reason = ""
        if ruleset.target_score and max(after) >= ruleset.target_score:
            reason = "target"
        elif ruleset.max_hands and self._hand_number >= ruleset.max_hands:
            reason = "hands"
        if reason:
            won = winners(after)
            self._outcome = Outcome(
                winners=won, scores=after, sides=sides, reason=reason, lowest_wins=True
            )
            self._phase = GAME_OVER
            if events is not None:
                events.append(GameOver(winners=won, scores=after, reason=reason))
        else:
            self._phase = DEALING
            self._dealer = (self._dealer + 1) % n
