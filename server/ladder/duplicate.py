"""The duplicate pair: one set of deals played twice, the second time with the teams on the other hands.

The first half seats the match's entrants in order (team 0 at seats 0 and 2, team 1 at 1 and 3); the
second half moves everyone one seat on, exactly as the local arena does (`bots.arena.match`), which in
partnership Spades puts each team on the cards the other team held. The dealer is seat 0 in both
halves and hand `i` is dealt from the same seed in both, so every deal is played once from each side
and card luck cancels in the sum: the result is each team's combined points over both halves.

A deal's seed is SHA-256(match secret || deal number), so the table asks for "deal `i`" and gets the
same cards in both halves, also after a dead deal is re-dealt. The match secret comes from `secrets`
on the server (the players never see it; each hand's own seed is revealed after that hand, as at any
table) or from an integer in tests and benchmarks.

A deal played in both halves is a **board**, as in duplicate bridge: each half keeps its hands' points
per side keyed by the hand's seed (`HalfResult.hands`), and `board_points` pairs the halves' hands by
seed into each team's points on each board. The ratings compare the teams board by board.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bots.arena.match import seat_entrants

HALVES = 2


@dataclass(frozen=True, slots=True)
class DuplicatePlan:
    """The deals of one match: `hands` per half, each derived from `secret`."""

    hands: int
    secret: bytes = field(repr=False)

    @classmethod
    def fresh(cls, hands: int) -> DuplicatePlan:
        """A plan with an unpredictable secret (the server's matches)."""
        return cls(hands, secrets.token_bytes(32))

    @classmethod
    def seeded(cls, hands: int, seed: int) -> DuplicatePlan:
        """A reproducible plan (tests, benchmarks)."""
        return cls(hands, hashlib.sha256(f"spades-ladder:{seed}".encode()).digest())

    def deal_seed(self, deal: int) -> bytes:
        """The seed of deal number `deal` (0-based, counting re-deals); the same in both halves."""
        return hashlib.sha256(self.secret + deal.to_bytes(8, "big")).digest()

    @staticmethod
    def seating(entrants: Sequence[str], half: int) -> tuple[str, ...]:
        """Who sits where in `half` (0 or 1): `entrants` is team 0, team 1, team 0, team 1."""
        order = seat_entrants(len(entrants), len(entrants), half)
        return tuple(entrants[i] for i in order)


@dataclass(frozen=True, slots=True)
class HalfResult:
    """One finished half: who sat where, the sides (seats per side) and the final score per side."""

    seats: tuple[str, ...]
    sides: tuple[tuple[int, ...], ...]
    scores: tuple[int, ...]
    game_id: int | None = None
    table_id: str | None = None
    #: Each hand played, in order: (its seed in hex, its points per side). Empty when not known
    #: (matches stored before the ladder kept them).
    hands: tuple[tuple[str, tuple[int, ...]], ...] = ()

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
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> HalfResult:
        return cls(
            seats=tuple(str(s) for s in data["seats"]),
            sides=tuple(tuple(int(x) for x in side) for side in data["sides"]),
            scores=tuple(int(x) for x in data["scores"]),
            game_id=data.get("game"),
            table_id=data.get("table"),
            hands=tuple(
                (str(seed), tuple(int(x) for x in points)) for seed, points in data.get("hands", ())
            ),
        )


def team_points(
    halves: Sequence[HalfResult], teams: tuple[Sequence[str], Sequence[str]]
) -> tuple[int, int]:
    """Each team's combined points over the halves played."""
    return (
        sum(h.points_of(teams[0]) for h in halves),
        sum(h.points_of(teams[1]) for h in halves),
    )


def board_points(
    halves: Sequence[HalfResult], teams: tuple[Sequence[str], Sequence[str]]
) -> tuple[tuple[int, int], ...]:
    """Each board's points per team: the deals both halves played (matched by seed, in the first
    half's order), each team's points on it summed over the two halves.

    Empty unless there are exactly two halves and both know their hands (a forfeit stops a match
    after one half; older stored matches kept no hands). A deal dealt in one half only (a hand cap
    reached at a different point) is no board and is left out.
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
