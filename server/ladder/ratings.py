"""Ladder ratings: openskill's Plackett-Luce over two teams of two, from completed matches only.

A match is a duplicate pair (see `server.ladder.duplicate`): the team with more combined points over
both halves ranks first, equal points are a draw. Each entrant has a mean `mu` and an uncertainty
`sigma`; the standings rank by the conservative estimate `mu - 3 sigma`, which starts at 0 and only
climbs once the ladder is sure of a bot.

Forfeits: a forfeiting entrant is rated as having lost to the opposing team, and nobody else's rating
moves. The partner could not have prevented it and the opponents did not earn it, so neither gains nor
loses; a rating built on opponents' disconnects would say nothing about a bot.

Everything here is pure: `rate_match` maps (ratings before, outcome) to ratings after, and `recompute`
folds it over a history. The service applies `rate_match` as matches finish and stores each result;
`recompute` over the stored history gives exactly the same floats, so stored ratings can always be
rebuilt (and a test checks that they are).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from openskill.models import PlackettLuce

DEFAULT_MU = 25.0
DEFAULT_SIGMA = DEFAULT_MU / 3
#: How many sigmas below the mean the leaderboard's conservative estimate sits.
CONSERVATIVE_Z = 3.0

EntrantId = str
Team = tuple[EntrantId, EntrantId]


@dataclass(frozen=True, slots=True)
class Rating:
    """One entrant's rating: the model's mean and uncertainty, and the rated matches behind it."""

    mu: float = DEFAULT_MU
    sigma: float = DEFAULT_SIGMA
    matches: int = 0

    @property
    def conservative(self) -> float:
        """`mu - 3 sigma`: the ladder is fairly sure the entrant is at least this good."""
        return self.mu - CONSERVATIVE_Z * self.sigma

    @property
    def interval(self) -> tuple[float, float]:
        """`(mu - 3 sigma, mu + 3 sigma)`, the band the standings say the skill lies in."""
        return (self.mu - CONSERVATIVE_Z * self.sigma, self.mu + CONSERVATIVE_Z * self.sigma)

    def as_dict(self) -> dict[str, Any]:
        return {
            "mu": self.mu,
            "sigma": self.sigma,
            "rating": self.conservative,
            "matches": self.matches,
        }


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """What the ratings need of one completed match.

    `teams[0]` and `teams[1]` are the two partnerships; `points` their combined points over both
    halves of the duplicate pair; `forfeits` the entrants that forfeited (empty for a clean match).
    """

    match_id: str
    teams: tuple[Team, Team]
    points: tuple[int, int]
    forfeits: frozenset[EntrantId] = field(default_factory=frozenset)

    def __post_init__(self) -> None:
        everyone = [*self.teams[0], *self.teams[1]]
        if len(set(everyone)) != 4:
            raise ValueError(f"match {self.match_id}: four different entrants, not {everyone}")
        if not self.forfeits <= set(everyone):
            raise ValueError(f"match {self.match_id}: a forfeit by someone who did not play")

    @property
    def ranks(self) -> tuple[int, int]:
        """openskill ranks (lower is better) by points: (0, 1), (1, 0), or (0, 0) for a draw."""
        a, b = self.points
        return (0, 0) if a == b else ((0, 1) if a > b else (1, 0))

    def team_of(self, entrant: EntrantId) -> int:
        return 0 if entrant in self.teams[0] else 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "match": self.match_id,
            "teams": [list(self.teams[0]), list(self.teams[1])],
            "points": list(self.points),
            "forfeits": sorted(self.forfeits),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MatchOutcome:
        a, b = data["teams"]
        return cls(
            match_id=str(data["match"]),
            teams=((str(a[0]), str(a[1])), (str(b[0]), str(b[1]))),
            points=(int(data["points"][0]), int(data["points"][1])),
            forfeits=frozenset(str(x) for x in data.get("forfeits", ())),
        )


class RatingModel:
    """Plackett-Luce with fixed parameters, so that replaying history gives the same numbers.

    `tau` is openskill's dynamics term (added uncertainty per match, which lets a rating follow a bot
    that improves); `None` keeps openskill's default of `mu / 300`.
    """

    def __init__(
        self,
        *,
        mu: float = DEFAULT_MU,
        sigma: float = DEFAULT_SIGMA,
        beta: float | None = None,
        tau: float | None = None,
    ) -> None:
        # openskill's own defaults, spelled out so that a stored history always replays alike.
        self.model = PlackettLuce(
            mu=mu,
            sigma=sigma,
            beta=beta if beta is not None else sigma / 2,
            tau=tau if tau is not None else mu / 300,
        )
        self.mu = mu
        self.sigma = sigma

    def initial(self) -> Rating:
        return Rating(self.mu, self.sigma, 0)

    def _rate(self, teams: list[list[Rating]], ranks: list[int]) -> list[list[tuple[float, float]]]:
        model_teams = [[self.model.rating(mu=r.mu, sigma=r.sigma) for r in team] for team in teams]
        rated = self.model.rate(model_teams, ranks=[float(r) for r in ranks])
        return [[(float(p.mu), float(p.sigma)) for p in team] for team in rated]

    def rate_match(
        self, ratings: Mapping[EntrantId, Rating], outcome: MatchOutcome
    ) -> dict[EntrantId, Rating]:
        """The new ratings of the entrants this match moves (all four, or only the forfeiters).

        Entrants missing from `ratings` start at the model's initial rating. Pure: `ratings` is not
        changed.
        """

        def before(entrant: EntrantId) -> Rating:
            return ratings.get(entrant) or self.initial()

        teams = [[before(e) for e in team] for team in outcome.teams]
        if not outcome.forfeits:
            rated = self._rate(teams, list(outcome.ranks))
            return {
                entrant: Rating(mu, sigma, before(entrant).matches + 1)
                for team, new_team in zip(outcome.teams, rated, strict=True)
                for entrant, (mu, sigma) in zip(team, new_team, strict=True)
            }
        changed: dict[EntrantId, Rating] = {}
        for entrant in sorted(outcome.forfeits):
            mine = outcome.team_of(entrant)
            # The forfeiter's team loses to the other, whatever the points said; only the
            # forfeiter's own rating takes it.
            rated = self._rate([teams[1 - mine], teams[mine]], [0, 1])
            index = outcome.teams[mine].index(entrant)
            mu, sigma = rated[1][index]
            changed[entrant] = Rating(mu, sigma, before(entrant).matches + 1)
        return changed


def apply_match(
    model: RatingModel, ratings: dict[EntrantId, Rating], outcome: MatchOutcome
) -> dict[EntrantId, tuple[Rating, Rating]]:
    """Update `ratings` in place with one match; returns {entrant: (before, after)} of the moved."""
    changed = model.rate_match(ratings, outcome)
    moves = {e: (ratings.get(e) or model.initial(), after) for e, after in changed.items()}
    ratings.update(changed)
    return moves


def recompute(
    history: Iterable[MatchOutcome], model: RatingModel | None = None
) -> dict[EntrantId, Rating]:
    """Ratings from nothing but the completed matches, in the order they were rated."""
    model = model or RatingModel()
    ratings: dict[EntrantId, Rating] = {}
    for outcome in history:
        apply_match(model, ratings, outcome)
    return ratings


def ranked(ratings: Mapping[EntrantId, Rating]) -> list[tuple[EntrantId, Rating]]:
    """Best first by the conservative estimate; ties by mean, then by name, so the order is total."""
    return sorted(ratings.items(), key=lambda item: (-item[1].conservative, -item[1].mu, item[0]))


def separated(upper: Iterable[Rating], lower: Iterable[Rating]) -> bool:
    """True when every `upper` rating's band lies wholly above every `lower` rating's band."""
    lows = [r.interval[0] for r in upper]
    highs = [r.interval[1] for r in lower]
    if not lows or not highs:
        return False
    return min(lows) > max(highs)


def is_finite(rating: Rating) -> bool:
    return math.isfinite(rating.mu) and math.isfinite(rating.sigma) and rating.sigma > 0
