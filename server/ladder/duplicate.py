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
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
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

    def points_of(self, team: Sequence[str]) -> int:
        """The score of the side these entrants sat on (a team always sits on one side)."""
        seats = {seat for seat, who in enumerate(self.seats) if who in team}
        for side, members in enumerate(self.sides):
            if seats and seats <= set(members):
                return self.scores[side]
        raise ValueError(f"{list(team)} did not sit together on one side: {self.seats}")

    def to_dict(self) -> dict[str, Any]:
        return {
            "seats": list(self.seats),
            "sides": [list(s) for s in self.sides],
            "scores": list(self.scores),
            "game": self.game_id,
            "table": self.table_id,
        }


def team_points(
    halves: Sequence[HalfResult], teams: tuple[Sequence[str], Sequence[str]]
) -> tuple[int, int]:
    """Each team's combined points over the halves played."""
    return (
        sum(h.points_of(teams[0]) for h in halves),
        sum(h.points_of(teams[1]) for h in halves),
    )
