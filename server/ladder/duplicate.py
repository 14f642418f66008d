"""The deals of ladder matches, and what a table's game leaves for the ratings.

A match is one table of four playing a **board set**: `hands` deals made for it, team 0 at seats 0
and 2, team 1 at seats 1 and 3, the dealer seat 0. No entrant ever plays a deal twice: each board
set is new. When two matches start together they are **twins** and get the same board set, each at
its own table with its own four: a true duplicate across tables. On each deal, team 0 of one table
held the very cards team 0 of the other held (same seed, same seat, same dealer), so the ratings
compare the two tables' margins deal by deal, luck cancelled (`server.ladder.ratings`). While both
tables play, a spectator of either sees a deal only once both have played it (`DealGate`).

A deal's seed is SHA-256(board-set secret || deal number), so a table asks for "deal `i`" and gets
the same cards as its twin, also after a dead deal is re-dealt. The secret comes from `secrets` on
the server (the players never see it; each hand's own seed is revealed after that hand, as at any
table, and reveals nothing of the next) or from an integer in tests and benchmarks.

Each table's game is kept as a `TableResult`: who sat where, the score per side, and each deal's
points per side keyed by the deal's seed. `deal_points` turns it into each team's points per deal.

Ladders before this one played a **duplicate pair** instead: the same four played the deals twice,
the teams swapped onto the other hands for the second half, so each had seen every deal of the second
half before playing it. Those matches stay stored (two `TableResult`s, one per half) and are read with
`pair_seating`, `team_points` and `board_points`; none is played any more.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from bots.arena.match import seat_entrants

T = TypeVar("T")

HALVES = 2  # the halves of an old duplicate pair
#: Matches that start together share a board set this many at a time: twins.
TWINS = 2


@dataclass(frozen=True, slots=True)
class BoardSet:
    """The deals of one match (and of its twin): `hands` deals, each derived from `secret`."""

    hands: int
    secret: bytes = field(repr=False)

    @classmethod
    def fresh(cls, hands: int) -> BoardSet:
        """A board set with an unpredictable secret (the server's matches)."""
        return cls(hands, secrets.token_bytes(32))

    @classmethod
    def seeded(cls, hands: int, seed: int) -> BoardSet:
        """A reproducible board set (tests, benchmarks)."""
        return cls(hands, hashlib.sha256(f"spades-ladder:{seed}".encode()).digest())

    def deal_seed(self, deal: int) -> bytes:
        """The seed of deal number `deal` (0-based, counting re-deals): the same at both twins."""
        return hashlib.sha256(self.secret + deal.to_bytes(8, "big")).digest()


def twin_groups(matches: Sequence[T]) -> list[list[T]]:
    """Matches that start together, in the order formed, as the sets that share a board set:
    two by two (twins), the last one alone when they are odd in number."""
    return [list(matches[i : i + TWINS]) for i in range(0, len(matches), TWINS)]


@dataclass(frozen=True, slots=True)
class TableResult:
    """One finished table: who sat where, the sides (seats per side) and the final score per side.

    Stored as one entry of a match's `halves` (the name is the duplicate pair's, which had two)."""

    seats: tuple[str, ...]
    sides: tuple[tuple[int, ...], ...]
    scores: tuple[int, ...]
    game_id: int | None = None
    table_id: str | None = None
    #: Each hand played, in order: (its seed in hex, its points per side). Empty when not known
    #: (matches stored before the ladder kept them).
    hands: tuple[tuple[str, tuple[int, ...]], ...] = ()
    #: The match that was dealt the same deals at the same time (its twin), if any.
    twin: str | None = None

    def side_of(self, team: Sequence[str]) -> int:
        """The side these entrants sat on (a team always sits on one side)."""
        seats = {seat for seat, who in enumerate(self.seats) if who in team}
        for side, members in enumerate(self.sides):
            if seats and seats <= set(members):
                return side
        raise ValueError(f"{list(team)} did not sit together on one side: {self.seats}")

    def points_of(self, team: Sequence[str]) -> int:
        """The score of the side these entrants sat on."""
        return self.scores[self.side_of(team)]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "seats": list(self.seats),
            "sides": [list(s) for s in self.sides],
            "scores": list(self.scores),
            "game": self.game_id,
            "table": self.table_id,
        }
        if self.hands:
            out["hands"] = [[seed, list(points)] for seed, points in self.hands]
        if self.twin is not None:
            out["twin"] = self.twin
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TableResult:
        return cls(
            seats=tuple(str(s) for s in data["seats"]),
            sides=tuple(tuple(int(x) for x in side) for side in data["sides"]),
            scores=tuple(int(x) for x in data["scores"]),
            game_id=data.get("game"),
            table_id=data.get("table"),
            hands=tuple(
                (str(seed), tuple(int(x) for x in points)) for seed, points in data.get("hands", ())
            ),
            twin=None if data.get("twin") is None else str(data["twin"]),
        )


def deal_points(
    table: TableResult, teams: tuple[Sequence[str], Sequence[str]]
) -> tuple[tuple[str, tuple[int, int]], ...]:
    """Each deal the table played: its seed and each team's points on it, in the order dealt."""
    sides = (table.side_of(teams[0]), table.side_of(teams[1]))
    return tuple((seed, (points[sides[0]], points[sides[1]])) for seed, points in table.hands)


# ---------------------------------------------------------------- the old duplicate pair


def pair_seating(entrants: Sequence[str], half: int) -> tuple[str, ...]:
    """Who sat where in `half` (0 or 1) of an old duplicate pair: `entrants` is team 0, team 1,
    team 0, team 1; the second half moved everyone one seat on (each team onto the other's cards)."""
    order = seat_entrants(len(entrants), len(entrants), half)
    return tuple(entrants[i] for i in order)


def team_points(
    halves: Sequence[TableResult], teams: tuple[Sequence[str], Sequence[str]]
) -> tuple[int, int]:
    """Each team's combined points over the tables played (both halves of a pair, or one table)."""
    return (
        sum(h.points_of(teams[0]) for h in halves),
        sum(h.points_of(teams[1]) for h in halves),
    )


def board_points(
    halves: Sequence[TableResult], teams: tuple[Sequence[str], Sequence[str]]
) -> tuple[tuple[int, int], ...]:
    """A duplicate pair's boards: each deal both halves played (matched by seed, in the first
    half's order), each team's points on it summed over the two halves.

    Empty unless there are exactly two halves and both know their hands (a forfeit stopped a pair
    after one half; older stored pairs kept no hands; a match of one table is no pair). A deal
    dealt in one half only (a hand cap reached at a different point) is no board and is left out.
    """
    if len(halves) != HALVES or not all(h.hands for h in halves):
        return ()
    sides = [(h.side_of(teams[0]), h.side_of(teams[1])) for h in halves]
    second = dict(halves[1].hands)
    boards = []
    for seed, points in halves[0].hands:
        other = second.get(seed)
        if other is None:
            continue
        boards.append(
            (
                points[sides[0][0]] + other[sides[1][0]],
                points[sides[0][1]] + other[sides[1][1]],
            )
        )
    return tuple(boards)
