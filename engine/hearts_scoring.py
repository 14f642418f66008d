"""The end of a Hearts hand as pure functions over values: its points, its notes, whether the game ends.

`HeartsGame` (engine/hearts.py) calls `score_hand` once the hand's last trick is won, on both of its
paths (the checked `apply`, which builds the events, and the search path, which builds none), and keeps
what follows in its own state: the scores, the hand's record, the phase. The card arithmetic is that of
`engine.hearts_rules`; this module adds the ruleset's options (moon, jack of diamonds, target, number
of hands) and the sentences a record shows.
"""

from collections.abc import Sequence
from operator import add
from typing import NamedTuple

from engine.cards import Card, CardMask
from engine.hearts_rules import hand_points, moon_shooter, pass_offset, penalty_points
from engine.history import Transfer
from engine.ruleset import Ruleset


class HandScore(NamedTuple):
    """A scored hand: the points each seat took (`delta`), the running scores after it, the notes a
    record shows, and why the game ends with it ("target" or "hands"; "" while it goes on). A named
    tuple rather than a frozen dataclass: every playout scores its hand, and a frozen dataclass's
    `__init__` (one `object.__setattr__` a field) costs about a microsecond more."""

    delta: tuple[int, ...]
    after: tuple[int, ...]
    notes: tuple[str, ...]
    end: str


def score_hand(
    ruleset: Ruleset, taken: Sequence[CardMask], before: Sequence[int], hand_number: int
) -> HandScore:
    """Score hand `hand_number` from the cards each seat took in tricks (`taken`) and the scores
    `before` it."""
    jack = ruleset.hearts_jack_of_diamonds
    moon = ruleset.hearts_moon
    # Each seat's penalty points once, for the notes and (unless the moon was shot) the score.
    took = [penalty_points(cards, jack) for cards in taken]
    shooter = moon_shooter(taken)
    shot = shooter is not None and moon != "off"
    points = hand_points(taken, moon, jack) if shot else took
    after = tuple(map(add, before, points))
    notes: list[str] = []
    if shot:
        notes.append(f"seat {shooter} shot the moon ({moon.replace('_', ' ')})")
    for seat, count in enumerate(took):
        if count:
            notes.append(f"seat {seat} took {count} points")
    end = ""
    if ruleset.target_score and max(after) >= ruleset.target_score:
        end = "target"
    elif ruleset.max_hands and hand_number >= ruleset.max_hands:
        end = "hands"
    return HandScore(tuple(points), after, tuple(notes), end)


def pass_transfers(
    given: Sequence[tuple[Card, ...] | None], direction: str
) -> tuple[Transfer, ...]:
    """The hand's passes as a record keeps them: each seat that passed, to whom, what (`given[seat]`
    is None for a seat that did not pass, as in a hand without passing)."""
    n = len(given)
    offset = pass_offset(direction, n)
    return tuple(
        Transfer(giver, (giver + offset) % n, cards)
        for giver, cards in enumerate(given)
        if cards is not None
    )
