"""Match-making, pure: from the entrants available now, the four-seat matches to start.

The rules, in the order they weigh:

1. One account, one seat: candidates are first reduced to one per account, and each is used at most
   once per call, so an account can never sit twice in a match or in two matches at once.
2. Fewest played first: the candidate who has played least anchors the next match, so a newcomer
   (or one who was left out last time) is seated before anyone who has played more.
3. Close ratings: the anchor's three table-mates come from the candidates nearest its rating (a
   window of `window`), chosen to keep the spread of ratings small and the played counts low.
4. Rotating partners: of the three ways to split four into two teams, the one that repeats fewest
   recent partnerships wins, then the one with the most even teams. Over a few matches every bot is
   partnered with different bots, so no rating rests on one partner.

Deterministic: the same candidates and seed give the same matches (ties are broken by a seeded key).
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from server.ladder.ratings import DEFAULT_MU, DEFAULT_SIGMA

#: Seats in a ladder match (four-handed Spades, two teams of two).
MATCH_SEATS = 4


@dataclass(frozen=True, slots=True)
class Candidate:
    """An available entrant as the scheduler sees it.

    `entrant` names it (the ratings' key), `account` is what must never sit twice; `recent_partners`
    are the entrants it partnered lately, most recent first.
    """

    entrant: str
    account: int
    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA
    played: int = 0
    recent_partners: tuple[str, ...] = ()


Pairing = tuple[tuple[Candidate, Candidate], tuple[Candidate, Candidate]]


@dataclass(frozen=True, slots=True)
class PlannedMatch:
    """Two teams of two. Seats go team 0, team 1, team 0, team 1 (partners sit opposite)."""

    teams: Pairing

    @property
    def seats(self) -> tuple[Candidate, Candidate, Candidate, Candidate]:
        (a0, a1), (b0, b1) = self.teams
        return (a0, b0, a1, b1)

    @property
    def entrants(self) -> tuple[str, str, str, str]:
        a, b, c, d = self.seats
        return (a.entrant, b.entrant, c.entrant, d.entrant)


@dataclass(frozen=True, slots=True)
class SchedulerSettings:
    """Weights of the match-making. The defaults suit a ladder of a few to a few dozen bots."""

    window: int = 7  # how many of the nearest-rated candidates are considered beside the anchor
    partner_memory: int = 3  # recent partnerships that count as repeats
    repeat_cost: float = 10.0  # rating points a repeated partnership is worth avoiding
    played_cost: float = 2.0  # rating points one extra match played is worth


def repeats(a: Candidate, b: Candidate, memory: int) -> int:
    """1 when `a` and `b` partnered within either one's last `memory` partnerships, else 0."""
    return int(b.entrant in a.recent_partners[:memory] or a.entrant in b.recent_partners[:memory])


def pairings(four: Sequence[Candidate]) -> list[Pairing]:
    """The three ways to split four candidates into two teams (the first keeps `four[0]` in team 0)."""
    a, b, c, d = four
    return [((a, b), (c, d)), ((a, c), (b, d)), ((a, d), (b, c))]


def pairing_key(pairing: Pairing, memory: int) -> tuple[int, float]:
    """Fewest repeated partnerships first, then the most even teams (by summed means)."""
    (a, b), (c, d) = pairing
    repeated = repeats(a, b, memory) + repeats(c, d, memory)
    return (repeated, abs((a.mu + b.mu) - (c.mu + d.mu)))


def best_pairing(four: Sequence[Candidate], memory: int) -> Pairing:
    return min(pairings(four), key=lambda p: pairing_key(p, memory))


def form_matches(
    candidates: Iterable[Candidate], *, seed: int, settings: SchedulerSettings | None = None
) -> list[PlannedMatch]:
    """As many matches as the candidates fill (floor of distinct accounts / 4), best-suited first."""
    settings = settings or SchedulerSettings()
    rng = random.Random(seed)
    # Shuffle before the stable sort: equal candidates are then ordered by the seed, not by input.
    pool = list(candidates)
    rng.shuffle(pool)
    pool.sort(key=lambda c: c.played)
    seen: set[int] = set()
    unique = []
    for candidate in pool:
        if candidate.account not in seen:
            seen.add(candidate.account)
            unique.append(candidate)
    matches = []
    # Bounded: each pass removes four candidates.
    while len(unique) >= MATCH_SEATS:
        anchor, rest = unique[0], unique[1:]
        nearest = sorted(
            enumerate(rest), key=lambda item: (abs(item[1].mu - anchor.mu), item[1].played, item[0])
        )[: max(3, settings.window)]
        fewest = min(c.played for c in unique)
        best: tuple[float, int, PlannedMatch] | None = None
        for order, trio_ in enumerate(itertools.combinations([c for _, c in nearest], 3)):
            four = (anchor, *trio_)
            pairing = best_pairing(four, settings.partner_memory)
            repeated, _balance = pairing_key(pairing, settings.partner_memory)
            mus = [c.mu for c in four]
            cost = (
                (max(mus) - min(mus))
                + settings.played_cost * sum(c.played - fewest for c in four)
                + settings.repeat_cost * repeated
            )
            if best is None or (cost, order) < (best[0], best[1]):
                best = (cost, order, PlannedMatch(pairing))
        assert best is not None
        chosen = best[2]
        matches.append(chosen)
        used = {c.account for c in chosen.seats}
        unique = [c for c in unique if c.account not in used]
    return matches
