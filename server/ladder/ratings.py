"""Ladder ratings: each entrant's skill as a mean and an uncertainty, learned from the points margins
of the boards of completed matches.

A match is a duplicate pair (see `server.ladder.duplicate`): every deal is played once from each side,
so on each deal (a **board**) the two teams held the same cards, and the difference of their points on
it (the board's margin) measures how much better one team played those cards. The model: each entrant
has a skill `s` (in rating points), a team's skill is the sum of its two players', and a board's
margin is normally distributed about `POINTS_PER_RATING_POINT * (team skill - other team skill)` with
a spread of `BOARD_SD` points (card luck the duplicate did not cancel, and each bot's own variance).
Each entrant's belief about its skill is a normal distribution `N(mu, sigma^2)`; each board updates
the four beliefs exactly as Bayes' rule does for a linear-Gaussian observation (a Kalman update, the
observation TrueSkill and openskill make of a rank, here made of the margin), the boards of a match one
after the other in the order dealt. A match is then as many pieces of evidence as it has boards, and
each says by how much, not only who won. Margins count up to `MAX_MARGIN` points a board, so one freak
board (a doubled nil gone wrong) cannot swing a rating on its own.

Between matches a bot may change (its author improves it), so every entrant's `sigma` grows by the
dynamics term `tau` before each match it plays: `sigma^2 + tau^2`. The ladder's `tau` is small: a
rating follows a bot that changes, slowly, and keeps learning about a bot that does not.

A match stored without its boards (rated before the ladder kept them) is one observation of the teams'
combined points per board (the margin over the match divided by its boards, with its spread shrunk
accordingly).

The standings rank by the conservative estimate `mu - 3 sigma`, which starts at 0 and only climbs once
the ladder is sure of a bot.

Forfeits: a forfeiting entrant is rated as if its team had lost every board the match was to have
(`MatchOutcome.planned_boards`) by `MAX_MARGIN` points, the most a board can count, and nobody else's
rating moves. The partner could not have prevented it and the opponents did not earn it, so neither
gains nor loses; a rating built on opponents' disconnects would say nothing about a bot. As no board
can count worse, forfeiting a match that is going badly never pays.

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

DEFAULT_MU = 25.0
DEFAULT_SIGMA = DEFAULT_MU / 3
#: How many sigmas below the mean the leaderboard's conservative estimate sits.
CONSERVATIVE_Z = 3.0
#: One rating point of difference between two teams' summed skills is worth this many points of
#: margin on a board (so 10 rating points are a team 100 points a board better).
POINTS_PER_RATING_POINT = 10.0
#: The spread (standard deviation) of a board's margin about what the skills predict, in points:
#: measured on the benchmark's bots (bench/ladder.py, 99 matches, 396 boards: 136).
BOARD_SD = 140.0
#: A board's margin counts up to this many points either way; a forfeit loses each board by it.
MAX_MARGIN = 400
#: The skill change per match the ratings allow for, in rating points (sigma grows by it in
#: quadrature before each match); see docs/ladder.md.
DEFAULT_TAU = 0.02

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
    halves of the duplicate pair; `forfeits` the entrants that forfeited (empty for a clean match);
    `boards` each board's points per team, in the order dealt (empty when not known);
    `planned_boards` how many boards the match was to have (what a forfeiter loses).
    """

    match_id: str
    teams: tuple[Team, Team]
    points: tuple[int, int]
    forfeits: frozenset[EntrantId] = field(default_factory=frozenset)
    boards: tuple[tuple[int, int], ...] = ()
    planned_boards: int = 1

    def __post_init__(self) -> None:
        everyone = [*self.teams[0], *self.teams[1]]
        if len(set(everyone)) != 4:
            raise ValueError(f"match {self.match_id}: four different entrants, not {everyone}")
        if not self.forfeits <= set(everyone):
            raise ValueError(f"match {self.match_id}: a forfeit by someone who did not play")
        if any(len(board) != 2 for board in self.boards):
            raise ValueError(f"match {self.match_id}: a board has two teams' points")
        if self.planned_boards < 1:
            raise ValueError(f"match {self.match_id}: a match has at least one board")

    @property
    def ranks(self) -> tuple[int, int]:
        """Places by combined points (lower is better): (0, 1), (1, 0), or (0, 0) for a draw."""
        return ranks_of(self.points)

    def team_of(self, entrant: EntrantId) -> int:
        return 0 if entrant in self.teams[0] else 1

    def to_dict(self) -> dict[str, Any]:
        return {
            "match": self.match_id,
            "teams": [list(self.teams[0]), list(self.teams[1])],
            "points": list(self.points),
            "forfeits": sorted(self.forfeits),
            "boards": [list(board) for board in self.boards],
            "planned_boards": self.planned_boards,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> MatchOutcome:
        a, b = data["teams"]
        return cls(
            match_id=str(data["match"]),
            teams=((str(a[0]), str(a[1])), (str(b[0]), str(b[1]))),
            points=(int(data["points"][0]), int(data["points"][1])),
            forfeits=frozenset(str(x) for x in data.get("forfeits", ())),
            boards=tuple((int(a), int(b)) for a, b in data.get("boards", ())),
            planned_boards=int(data.get("planned_boards", 1)),
        )


def ranks_of(points: tuple[int, int]) -> tuple[int, int]:
    """Places by points (lower is better): (0, 1), (1, 0), or (0, 0) for equal points."""
    a, b = points
    return (0, 0) if a == b else ((0, 1) if a > b else (1, 0))


@dataclass(frozen=True, slots=True)
class Observation:
    """What one piece of evidence says: team 0's margin over team 1 per board, in points, seen
    with the spread of `boards` boards' mean (one board, or a whole match's)."""

    margin: float
    boards: int = 1


class RatingModel:
    """The margin model with fixed parameters, so that replaying history gives the same numbers.

    `tau`: rating points of skill change allowed per match (`None`: `DEFAULT_TAU`); `board_sd`: a
    board's spread in points; `scale`: points of margin per rating point; `max_margin`: the most a
    board counts (and what a forfeit loses each board by).
    """

    def __init__(
        self,
        *,
        mu: float = DEFAULT_MU,
        sigma: float = DEFAULT_SIGMA,
        tau: float | None = None,
        board_sd: float = BOARD_SD,
        scale: float = POINTS_PER_RATING_POINT,
        max_margin: float = MAX_MARGIN,
    ) -> None:
        self.tau = tau if tau is not None else DEFAULT_TAU
        for name, value, least in (
            ("tau", self.tau, 0.0),
            ("sigma", sigma, 0.0),
            ("board_sd", board_sd, 0.0),
            ("scale", scale, 0.0),
            ("max_margin", max_margin, 0.0),
        ):
            if not math.isfinite(value) or value < least or (value == 0 and name != "tau"):
                raise ValueError(f"{name} must be a finite number > 0 (tau >= 0), not {value}")
        self.mu = mu
        self.sigma = sigma
        self.board_sd = board_sd
        self.scale = scale
        self.max_margin = max_margin

    def initial(self) -> Rating:
        return Rating(self.mu, self.sigma, 0)

    def _widened(self, rating: Rating) -> Rating:
        """The rating with one match's dynamics added: sigma grows to sqrt(sigma^2 + tau^2)."""
        return Rating(rating.mu, math.sqrt(rating.sigma**2 + self.tau**2), rating.matches)

    def observations(self, outcome: MatchOutcome) -> list[Observation]:
        """What a clean match is rated on: each board's margin (capped), or without boards the
        margin per board over the whole match."""
        cap = self.max_margin
        if outcome.boards:
            return [Observation(max(-cap, min(cap, a - b))) for a, b in outcome.boards]
        boards = outcome.planned_boards
        a, b = outcome.points
        return [Observation(max(-cap, min(cap, (a - b) / boards)), boards)]

    def _observe(self, teams: list[list[Rating]], seen: Observation) -> None:
        """Bayes' rule for one linear-Gaussian observation, in place: the margin (in rating
        points) is team 0's summed skill minus team 1's plus noise. Each rating moves by its share
        of the uncertainty (its sigma^2 over the prediction's whole spread) of the surprise, and
        its sigma shrinks by the same share."""
        predicted = sum(r.mu for r in teams[0]) - sum(r.mu for r in teams[1])
        noise = (self.board_sd / self.scale) ** 2 / seen.boards
        spread = sum(r.sigma**2 for team in teams for r in team) + noise
        surprise = seen.margin / self.scale - predicted
        for side, index in ((0, 0), (0, 1), (1, 0), (1, 1)):
            rating = teams[side][index]
            gain = rating.sigma**2 / spread
            sign = 1.0 if side == 0 else -1.0
            teams[side][index] = Rating(
                rating.mu + sign * gain * surprise,
                rating.sigma * math.sqrt(1.0 - gain),
                rating.matches,
            )

    def rate_match(
        self, ratings: Mapping[EntrantId, Rating], outcome: MatchOutcome
    ) -> dict[EntrantId, Rating]:
        """The new ratings of the entrants this match moves (all four, or only the forfeiters).

        Entrants missing from `ratings` start at the model's initial rating. Pure: `ratings` is not
        changed.
        """

        def counted(rating: Rating) -> Rating:
            return Rating(rating.mu, rating.sigma, rating.matches + 1)

        if not outcome.forfeits:
            rated = self._rate(ratings, outcome.teams, self.observations(outcome))
            return {entrant: counted(rating) for entrant, rating in rated.items()}
        changed: dict[EntrantId, Rating] = {}
        lost = [Observation(-self.max_margin)] * outcome.planned_boards
        for entrant in sorted(outcome.forfeits):
            mine = outcome.team_of(entrant)
            # Rated as the match in which the forfeiter's team lost every board by the most a
            # board counts, whatever the points said; only the forfeiter's own rating is kept (its
            # partner and the opponents stay as they were).
            teams = (outcome.teams[mine], outcome.teams[1 - mine])
            changed[entrant] = counted(self._rate(ratings, teams, lost)[entrant])
        return changed

    def _rate(
        self,
        ratings: Mapping[EntrantId, Rating],
        teams: tuple[Team, Team],
        seen: Iterable[Observation],
    ) -> dict[EntrantId, Rating]:
        """All four ratings after one match's observations (margins of `teams[0]` over
        `teams[1]`), each widened by `tau` first."""
        current = [
            [self._widened(ratings.get(e) or self.initial()) for e in team] for team in teams
        ]
        for observation in seen:
            self._observe(current, observation)
        return {
            entrant: rating
            for team, rated in zip(teams, current, strict=True)
            for entrant, rating in zip(team, rated, strict=True)
        }


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
