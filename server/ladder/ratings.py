"""Ladder ratings: each entrant's skill as a mean and an uncertainty, learned from the points margins
of the boards of completed matches, by exact Bayesian inference over all entrants jointly.

A match is a duplicate pair (see `server.ladder.duplicate`): every deal is played once from each side,
so on each deal (a **board**) the two teams held the same cards, and the difference of their points on
it (the board's margin) measures how much better one team played those cards. The model: each entrant
has a skill `s` (in rating points), a team's skill is the sum of its two players', and a board's
margin is normally distributed about `POINTS_PER_RATING_POINT * (team skill - other team skill)` with
a spread of `BOARD_SD` points (card luck the duplicate did not cancel, and each bot's own variance).
Margins count up to `MAX_MARGIN` points a board, so one freak board (a doubled nil gone wrong) cannot
swing a rating on its own.

The ladder's belief about the skills is one multivariate normal distribution over every entrant
(`Ratings`): a mean for each and a full covariance matrix. Each match updates it exactly by Bayes'
rule for a linear-Gaussian observation (a Kalman update). Keeping the covariances is what makes it
exact: a board says how two partnerships compare, so after a few matches the ladder knows the sum
of two partners' skills better than either alone, and which entrants it has compared with whom.
Belief kept per entrant alone (TrueSkill's and openskill's approximation, and this ladder's first
ones) throws that away; on the benchmark's matches it needed about twice the matches to separate
the same bots (docs/ladder.md). The boards of one match share their teams, so they are one
observation of the mean margin with the spread of that many boards (the same posterior as taking
them one by one).

A margin only ever compares entrants, so the ladder learns skills relative to each other: what a
rating's `sigma` reports is the uncertainty of the entrant's skill relative to the field (the mean
of every rated entrant's skill, each weighted by how sure the ladder is of it, so a newcomer barely
moves it), not the uncertainty of an absolute level no board can measure. `mu` is the mean itself;
the field's average stays near the starting 25 (a board moves its winners up as far as its losers
down).

Between matches a bot may change (its author improves it), so the uncertainty of each player's skill
grows with the time since its last rated match, as a random walk: `sigma^2` gains `tau^2` per day
(`tau` is `DEFAULT_TAU` rating points per square root of a day). A bot that plays often stays sharply
rated, one that has been away a month is less sure, and a rating can follow a bot that changes.
The growth is by time, not by match: a bot does not change between two matches a minute apart, and
growth per match would put a floor under `sigma` that close bots could never get below.

The standings rank by the conservative estimate `mu - 3 sigma`, which starts at 0 and only climbs once
the ladder is sure of a bot.

Forfeits: a forfeiting entrant is rated as if its team had lost every board the match was to have
(`MatchOutcome.planned_boards`) by `MAX_MARGIN` points, the most a board can count, and nobody else's
rating moves: only the forfeiter's mean and its own uncertainty take the update. The partner could not
have prevented it and the opponents did not earn it, so neither gains nor loses; a rating built on
opponents' disconnects would say nothing about a bot. As no board can count worse, forfeiting a match
that is going badly never pays.

Everything here is deterministic: `RatingModel.apply` updates a `Ratings` with one match, `rate_match`
maps (ratings before, outcome) to the moved ratings without changing its input, and `recompute` folds
the model over a history. The service applies matches as they finish and stores each result;
`recompute` over the stored history gives exactly the same floats, so stored ratings can always be
rebuilt (and a test checks that they are). The cost of a match is a pass over the covariance matrix:
with `n` entrants, about `n^2` multiplications (about a millisecond for a hundred entrants).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping
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
#: How fast a skill may drift, in rating points per square root of a day: an entrant's variance grows
#: by `tau^2` for each day since its last rated match (see docs/ladder.md).
DEFAULT_TAU = 0.5
SECONDS_PER_DAY = 86_400.0

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
    `planned_boards` how many boards the match was to have (what a forfeiter loses);
    `finished_at` when it was rated (Unix seconds; `None` when not known: no time passes for the
    ratings' drift).
    """

    match_id: str
    teams: tuple[Team, Team]
    points: tuple[int, int]
    forfeits: frozenset[EntrantId] = field(default_factory=frozenset)
    boards: tuple[tuple[int, int], ...] = ()
    planned_boards: int = 1
    finished_at: float | None = None

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

    @property
    def entrants(self) -> tuple[EntrantId, ...]:
        """The four, team 0's first."""
        return (*self.teams[0], *self.teams[1])

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
            "finished_at": self.finished_at,
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
            finished_at=None if data.get("finished_at") is None else float(data["finished_at"]),
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


class Ratings(Mapping[EntrantId, Rating]):
    """The ladder's joint belief about every rated entrant's skill: a mean for each and the full
    covariance matrix, with each entrant's rated matches and the time of its last one.

    Read it as a mapping from entrant to `Rating` (`mu`, `sigma` relative to the field, matches);
    change it only through `RatingModel.apply`.
    """

    def __init__(self) -> None:
        self._index: dict[EntrantId, int] = {}
        self._names: list[EntrantId] = []
        self._mean: list[float] = []
        self._cov: list[list[float]] = []  # symmetric; row i is entrant i's covariances
        self._matches: list[int] = []
        self._last: list[float | None] = []  # when each entrant's last rated match finished
        self._report: dict[EntrantId, Rating] | None = None  # what the mapping shows, cached

    @classmethod
    def independent(cls, beliefs: Mapping[EntrantId, Rating]) -> Ratings:
        """Beliefs held about each entrant alone (no covariances), e.g. in tests."""
        if isinstance(beliefs, Ratings):
            return beliefs.copy()
        out = cls()
        for entrant, rating in beliefs.items():
            out._add(entrant, rating.mu, rating.sigma**2, rating.matches)
        return out

    def copy(self) -> Ratings:
        out = Ratings()
        out._index = dict(self._index)
        out._names = list(self._names)
        out._mean = list(self._mean)
        out._cov = [list(row) for row in self._cov]
        out._matches = list(self._matches)
        out._last = list(self._last)
        out._report = None if self._report is None else dict(self._report)
        return out

    # ---------------------------------------------------------------- the mapping

    def __getitem__(self, entrant: EntrantId) -> Rating:
        return self._shown()[entrant]

    def __iter__(self) -> Iterator[EntrantId]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, entrant: object) -> bool:
        return entrant in self._index

    def covariance(self, a: EntrantId, b: EntrantId) -> float:
        """The covariance of two entrants' skills (a's variance when `a == b`)."""
        return self._cov[self._index[a]][self._index[b]]

    def _shown(self) -> dict[EntrantId, Rating]:
        """Each entrant's `Rating`: its mean, and the spread of its skill minus the field's.

        The field is the mean of every entrant's skill weighted by its precision (1 / variance), so
        entrants the ladder is sure of define it and a newcomer barely moves it. With `w` those
        weights, Var(s_i - w.s) = P_ii - 2 (P w)_i + w.P.w.
        """
        if self._report is not None:
            return self._report
        cov = self._cov
        count = len(self._names)
        if count == 1:
            weights = [1.0]
            shown_alone = True
        else:
            precision = [1.0 / cov[i][i] for i in range(count)]
            total = sum(precision)
            weights = [p / total for p in precision]
            shown_alone = False
        pw = [sum(w * c for w, c in zip(weights, row, strict=True)) for row in cov]
        wpw = sum(w * x for w, x in zip(weights, pw, strict=True))
        report = {}
        for i, name in enumerate(self._names):
            # One entrant has no field to be measured against: its own spread is all there is.
            variance = cov[i][i] if shown_alone else cov[i][i] - 2.0 * pw[i] + wpw
            report[name] = Rating(self._mean[i], math.sqrt(max(variance, 0.0)), self._matches[i])
        self._report = report
        return report

    # ---------------------------------------------------------------- changes (RatingModel's)

    def _add(self, entrant: EntrantId, mu: float, variance: float, matches: int = 0) -> int:
        index = len(self._names)
        self._index[entrant] = index
        self._names.append(entrant)
        self._mean.append(mu)
        for row in self._cov:
            row.append(0.0)
        self._cov.append([0.0] * index + [variance])
        self._matches.append(matches)
        self._last.append(None)
        self._report = None
        return index

    def _slot(self, entrant: EntrantId, model: RatingModel) -> int:
        index = self._index.get(entrant)
        return self._add(entrant, model.mu, model.sigma**2) if index is None else index

    def _drift(self, index: int, when: float | None, tau: float) -> None:
        """Widen an entrant's variance by `tau^2` per day since its last rated match."""
        last = self._last[index]
        if when is not None and last is not None and when > last and tau > 0:
            self._cov[index][index] += tau * tau * (when - last) / SECONDS_PER_DAY
            self._report = None

    def _predict(
        self, signs: Mapping[int, float], margin: float, noise: float
    ) -> tuple[list[float], float, float]:
        """For `margin = sum(sign * skill) + N(0, noise)`: `P x` (each skill's covariance with
        the prediction), the prediction's spread `x.P.x + noise`, and the surprise `margin -
        x.mean`. Entrants missing from `signs` are not in the prediction."""
        cov = self._cov
        if len(signs) == 4 and sorted(signs.values()) == [-1.0, -1.0, 1.0, 1.0]:
            # A clean match (two against two), the hot case: P x is two columns less two.
            a, b = (j for j, sign in signs.items() if sign > 0)
            c, d = (j for j, sign in signs.items() if sign < 0)
            px = [row[a] + row[b] - row[c] - row[d] for row in cov]
        else:
            px = [sum(sign * row[j] for j, sign in signs.items()) for row in cov]
        spread = sum(sign * px[j] for j, sign in signs.items()) + noise
        surprise = margin - sum(sign * self._mean[j] for j, sign in signs.items())
        return px, spread, surprise

    def _observe(self, signs: Mapping[int, float], margin: float, noise: float) -> None:
        """Bayes' rule for the observation over the whole belief: the mean moves by the gain
        `P x / spread` times the surprise, and the covariance loses the part the observation
        explains (`P - P x x.P / spread`)."""
        px, spread, surprise = self._predict(signs, margin, noise)
        mean = self._mean
        for i, row in enumerate(self._cov):
            shrink = px[i] / spread
            if shrink:
                mean[i] += shrink * surprise
                # The hot loop of the ladder's ratings: one row of the rank-one downdate.
                row[:] = [value - shrink * pj for value, pj in zip(row, px)]  # noqa: B905
        self._report = None

    def _observe_alone(
        self, index: int, signs: Mapping[int, float], margin: float, noise: float
    ) -> None:
        """The same observation, taken by one entrant alone: the others' skills are held at their
        means (nobody else moves), and the entrant's mean and variance take its share of the
        update. Its covariances shrink in proportion, which keeps the belief a valid one."""
        px, spread, surprise = self._predict(signs, margin, noise)
        cov = self._cov
        self._mean[index] += px[index] / spread * surprise
        variance = cov[index][index]
        kept = max(variance - px[index] ** 2 / spread, 0.0) / variance
        factor = math.sqrt(kept)
        for j in range(len(cov)):
            cov[index][j] *= factor
            cov[j][index] = cov[index][j]
        cov[index][index] = variance * kept
        self._report = None

    def _played(self, index: int, when: float | None) -> None:
        self._matches[index] += 1
        if when is not None:
            self._last[index] = when
        self._report = None


class RatingModel:
    """The margin model with fixed parameters, so that replaying history gives the same numbers.

    `tau`: rating points of skill drift per square root of a day (`None`: `DEFAULT_TAU`);
    `board_sd`: a board's spread in points; `scale`: points of margin per rating point;
    `max_margin`: the most a board counts (and what a forfeit loses each board by).
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
        for name, value in (
            ("tau", self.tau),
            ("sigma", sigma),
            ("board_sd", board_sd),
            ("scale", scale),
            ("max_margin", max_margin),
        ):
            if not math.isfinite(value) or value < 0 or (value == 0 and name != "tau"):
                raise ValueError(f"{name} must be a finite number > 0 (tau >= 0), not {value}")
        self.mu = mu
        self.sigma = sigma
        self.board_sd = board_sd
        self.scale = scale
        self.max_margin = max_margin

    def initial(self) -> Rating:
        return Rating(self.mu, self.sigma, 0)

    def observation(self, outcome: MatchOutcome) -> Observation:
        """What a clean match is rated on: the mean of its boards' margins (each capped), seen
        with the spread of that many boards; without boards, the margin per board over the whole
        match, with the spread of its planned boards."""
        cap = self.max_margin
        if outcome.boards:
            margins = [max(-cap, min(cap, a - b)) for a, b in outcome.boards]
            return Observation(sum(margins) / len(margins), len(margins))
        boards = outcome.planned_boards
        a, b = outcome.points
        return Observation(max(-cap, min(cap, (a - b) / boards)), boards)

    def apply(self, ratings: Ratings, outcome: MatchOutcome) -> list[EntrantId]:
        """Update `ratings` in place with one completed match; returns the entrants it rated (all
        four, or only the forfeiters)."""
        if not outcome.forfeits:
            return self._apply_clean(ratings, outcome)
        rated = sorted(outcome.forfeits)
        for entrant in rated:
            self._apply_forfeit(ratings, outcome, entrant)
        return rated

    def _apply_clean(self, ratings: Ratings, outcome: MatchOutcome) -> list[EntrantId]:
        when = outcome.finished_at
        rated = list(outcome.entrants)
        slots = [ratings._slot(e, self) for e in rated]
        for slot in slots:
            ratings._drift(slot, when, self.tau)
        seen = self.observation(outcome)
        signs = {slots[0]: 1.0, slots[1]: 1.0, slots[2]: -1.0, slots[3]: -1.0}
        ratings._observe(signs, seen.margin / self.scale, self._noise(seen.boards))
        for slot in slots:
            ratings._played(slot, when)
        return rated

    def _apply_forfeit(self, ratings: Ratings, outcome: MatchOutcome, entrant: EntrantId) -> None:
        """Rated as the match in which the forfeiter's team lost every board by the most a board
        counts, whatever the points said, against the others' skills as the ladder believes them;
        only the forfeiter's own belief moves."""
        when = outcome.finished_at
        mine = outcome.team_of(entrant)
        signed = [(e, 1.0) for e in outcome.teams[mine]]
        signed += [(e, -1.0) for e in outcome.teams[1 - mine]]
        slot = ratings._slot(entrant, self)
        ratings._drift(slot, when, self.tau)
        signs: dict[int, float] = {}
        margin = -self.max_margin / self.scale
        noise = self._noise(outcome.planned_boards)
        for other, sign in signed:
            index = ratings._index.get(other)
            if index is not None:
                signs[index] = sign
            else:
                # Not rated yet: in the prediction with the starting belief.
                margin -= sign * self.mu
                noise += self.sigma**2
        ratings._observe_alone(slot, signs, margin, noise)
        ratings._played(slot, when)

    def _noise(self, boards: int) -> float:
        return (self.board_sd / self.scale) ** 2 / boards

    def rate_match(
        self, ratings: Mapping[EntrantId, Rating], outcome: MatchOutcome
    ) -> dict[EntrantId, Rating]:
        """The new ratings of the entrants this match rates (all four, or only the forfeiters),
        without changing `ratings`. A plain mapping is taken as beliefs about each entrant alone;
        entrants missing from it start at the model's initial rating."""
        after = Ratings.independent(ratings)
        rated = self.apply(after, outcome)
        return {entrant: after[entrant] for entrant in rated}


def apply_match(
    model: RatingModel, ratings: Ratings, outcome: MatchOutcome
) -> dict[EntrantId, tuple[Rating, Rating]]:
    """Update `ratings` in place with one match; returns {entrant: (before, after)} of the rated."""
    before = {e: ratings[e] if e in ratings else model.initial() for e in outcome.entrants}
    rated = model.apply(ratings, outcome)
    return {e: (before[e], ratings[e]) for e in rated}


def recompute(history: Iterable[MatchOutcome], model: RatingModel | None = None) -> Ratings:
    """Ratings from nothing but the completed matches, in the order they were rated."""
    model = model or RatingModel()
    ratings = Ratings()
    for outcome in history:
        model.apply(ratings, outcome)
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
