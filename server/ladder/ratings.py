"""Ladder ratings: each entrant's skill as a mean and an uncertainty, learned from the points margins
of the deals of completed matches, by exact Bayesian inference over all entrants jointly.

A match is one table of four, two partnerships, a few deals (see `server.ladder.duplicate`). On each
deal the table's **margin** (team 0's points less team 1's) is modelled as

    margin = luck + 5 * (team 0's skill - team 1's skill) + play noise

in points, with a team's skill the sum of its two players' (in rating points). `luck` is what the
cards alone are worth to team 0's seats, the same at every table dealt that deal; its spread is
`LUCK_SD`. The play noise is each table's own (how the bots' choices and the deal fell together),
with a spread of `BOARD_SD / sqrt(2)`: `BOARD_SD` is the spread of the difference of two plays of one
deal, a duplicate **board** (`POINTS_PER_RATING_POINT` is a board's worth, two plays, of the skill
term). Both spreads were measured on the benchmark's bots (docs/ladder.md).

No entrant ever plays a deal twice. Two matches that start together are **twins**: they are dealt
the same deals, and on each deal both tables played, the difference of their margins is a duplicate
board, luck cancelled: team against team on the same cards (team 0 of one table held what team 0 of
the other did). The sum of the two margins is evidence too, with luck in it; so is a match played
alone, rated on its own margins with luck part of the noise. All of it is one linear-Gaussian model,
so the update is exact: the margins of the tables that played a deal are turned into independent
components (their differences and their sum: `Evidence`), and each component is an observation of a
weighted sum of skills, taken by Bayes' rule. Margins count up to `MAX_MARGIN` points a board (half
that for one table's margin alone), so one freak deal (a doubled nil gone wrong) cannot swing a
rating on its own.

Matches stored before that (a **duplicate pair**: the same four played the deals twice, the teams
swapped for the second half) are rated as they were: each board's margin over both halves,
`10 * (team skill difference)` with the spread `BOARD_SD`. A rebuild from stored history gives the
same floats for them as it always did.

The ladder's belief about the skills is one multivariate normal distribution over every entrant
(`server.ladder.belief.Ratings`): a mean for each and a full covariance matrix. Keeping the
covariances is what makes the update exact: a deal says how two partnerships compare, so after a few
matches the ladder knows the sum of two partners' skills better than either alone, and which
entrants it has compared with whom. Belief kept per entrant alone (TrueSkill's and openskill's
approximation, and this ladder's first ones) throws that away. The deals of one table (or of twin
tables) share their teams, so each component is taken as its mean over those deals with the spread
of that many (the same posterior as taking them one by one).

A margin only ever compares entrants, so the ladder learns skills relative to each other: what a
rating's `sigma` reports is the uncertainty of the entrant's skill relative to the field (the mean
of every rated entrant's skill, each weighted by how sure the ladder is of it, so a newcomer barely
moves it), not the uncertainty of an absolute level no deal can measure. `mu` is the mean itself;
the field's average stays near the starting 25.

Between matches a bot may change (its author improves it), so the uncertainty of each player's skill
grows with the time since its last rated match, as a random walk: `sigma^2` gains `tau^2` per day
(`tau` is `DEFAULT_TAU` rating points per square root of a day). The growth is by time, not by
match: a bot does not change between two matches a minute apart, and growth per match would put a
floor under `sigma` that close bots could never get below.

The standings rank by the conservative estimate `mu - 3 sigma`, which starts at 0 and only climbs once
the ladder is sure of a bot.

Forfeits: a forfeiting entrant is rated as if its team had lost every board the match was to have
(`MatchOutcome.planned_boards`) by `MAX_MARGIN` points, the most a board can count, seen with the
precision of a duplicate board (more than any table's own deals give), and nobody else's rating
moves: only the forfeiter's mean and its own uncertainty take the update. The partner could not have
prevented it and the opponents did not earn it, so neither gains nor loses; a forfeited table is not
compared with its twin either (the twin is rated as a match played alone). As no clean match can
count worse, forfeiting a match that is going badly never pays.

Everything here is deterministic: `RatingModel.apply_set` updates a `Ratings` with one match or a pair
of twins, `rate_match` maps (ratings before, outcome) to the moved ratings without changing its input,
and `recompute` folds the model over a history (twins, stored one after the other, are taken
together). The service applies matches as they finish and stores each result; `recompute` over the
stored history gives exactly the same floats, so stored ratings can always be rebuilt (and a test
checks that they are). The cost of a match is a pass over the covariance matrix per component (two
for twins, one for a match alone): with `n` entrants, about `n^2` multiplications each.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from server.ladder.belief import (
    CONSERVATIVE_Z,
    DEFAULT_MU,
    DEFAULT_SIGMA,
    SECONDS_PER_DAY,
    EntrantId,
    Rating,
    Ratings,
)

__all__ = [
    "BOARD_SD",
    "CONSERVATIVE_Z",
    "DEFAULT_MU",
    "DEFAULT_SIGMA",
    "DEFAULT_TAU",
    "LUCK_SD",
    "MAX_MARGIN",
    "POINTS_PER_RATING_POINT",
    "SECONDS_PER_DAY",
    "Deal",
    "EntrantId",
    "Evidence",
    "MatchOutcome",
    "Observation",
    "Rating",
    "RatingModel",
    "Ratings",
    "apply_board_set",
    "apply_match",
    "board_sets",
    "is_finite",
    "ranked",
    "ranks_of",
    "recompute",
    "separated",
]

#: One rating point of difference between two teams' summed skills is worth this many points of
#: margin on a board, two plays of a deal (so 5 points at one table, and 10 rating points are a
#: team 100 points a board better).
POINTS_PER_RATING_POINT = 10.0
#: How many plays of a deal a board is: the skill term of one table's margin is half a board's.
PLAYS_PER_BOARD = 2
#: The spread (standard deviation) of a board's margin about what the skills predict, in points:
#: the difference of two plays of one deal, luck cancelled. Measured on the benchmark's bots
#: (bench/ladder.py; 396 boards of duplicate pairs: 136; twin tables: docs/ladder.md).
BOARD_SD = 140.0
#: The spread of what the cards alone are worth to one table's team 0 on a deal (the part a second
#: table dealt the same cards cancels), in points: measured on the benchmark's bots (docs/ladder.md).
LUCK_SD = 35.0
#: A board's margin counts up to this many points either way (one table's margin alone, half of
#: it); a forfeit loses each board by it.
MAX_MARGIN = 400
#: How fast a skill may drift, in rating points per square root of a day: an entrant's variance grows
#: by `tau^2` for each day since its last rated match (see docs/ladder.md).
DEFAULT_TAU = 0.5

Team = tuple[EntrantId, EntrantId]
#: One deal of a match: its seed (hex) and each team's points on it at the match's table.
Deal = tuple[str, tuple[int, int]]


@dataclass(frozen=True, slots=True)
class MatchOutcome:
    """What the ratings need of one completed match.

    `teams[0]` and `teams[1]` are the two partnerships; `points` their points over the match;
    `forfeits` the entrants that forfeited (empty for a clean match); `deals` each deal played at the
    match's table, in order (the rated matches since the ladder stopped replaying deals); `twin` the
    match that was dealt the same deals at the same time, if any; `boards` each board's points per
    team of a match stored as a duplicate pair (both halves, in the order dealt); `planned_boards` how
    many deals the match was to have (what a forfeiter loses); `finished_at` when it was rated (Unix
    seconds; `None` when not known: no time passes for the ratings' drift).
    """

    match_id: str
    teams: tuple[Team, Team]
    points: tuple[int, int]
    forfeits: frozenset[EntrantId] = field(default_factory=frozenset)
    boards: tuple[tuple[int, int], ...] = ()
    planned_boards: int = 1
    finished_at: float | None = None
    deals: tuple[Deal, ...] = ()
    twin: str | None = None

    def __post_init__(self) -> None:
        everyone = [*self.teams[0], *self.teams[1]]
        if len(set(everyone)) != 4:
            raise ValueError(f"match {self.match_id}: four different entrants, not {everyone}")
        if not self.forfeits <= set(everyone):
            raise ValueError(f"match {self.match_id}: a forfeit by someone who did not play")
        if any(len(board) != 2 for board in self.boards):
            raise ValueError(f"match {self.match_id}: a board has two teams' points")
        if any(len(points) != 2 for _, points in self.deals):
            raise ValueError(f"match {self.match_id}: a deal has two teams' points")
        if len({seed for seed, _ in self.deals}) != len(self.deals):
            raise ValueError(f"match {self.match_id}: a deal is played once at a table")
        if self.boards and self.deals:
            raise ValueError(f"match {self.match_id}: a duplicate pair's boards or a table's deals")
        if self.planned_boards < 1:
            raise ValueError(f"match {self.match_id}: a match has at least one board")
        if self.twin == self.match_id:
            raise ValueError(f"match {self.match_id}: a match is not its own twin")

    @property
    def ranks(self) -> tuple[int, int]:
        """Places by points (lower is better): (0, 1), (1, 0), or (0, 0) for a draw."""
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
            "deals": [[seed, list(points)] for seed, points in self.deals],
            "twin": self.twin,
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
            deals=tuple(
                (str(seed), (int(points[0]), int(points[1])))
                for seed, points in data.get("deals", ())
            ),
            twin=None if data.get("twin") is None else str(data["twin"]),
        )


def ranks_of(points: tuple[int, int]) -> tuple[int, int]:
    """Places by points (lower is better): (0, 1), (1, 0), or (0, 0) for equal points."""
    a, b = points
    return (0, 0) if a == b else ((0, 1) if a > b else (1, 0))


@dataclass(frozen=True, slots=True)
class Observation:
    """What a duplicate pair's boards say: team 0's margin over team 1 per board, in points, seen
    with the spread of `boards` boards' mean (one board, or a whole match's)."""

    margin: float
    boards: int = 1


@dataclass(frozen=True, slots=True)
class Evidence:
    """One independent component of what the deals of a table (or of twin tables) say:
    `margin` (in rating points) is `sum(sign * skill)` plus normal noise of variance `variance`.

    The components of a set of tables are made so that their noises are independent, so each is
    taken by Bayes' rule on its own and the order does not change the posterior."""

    signs: Mapping[EntrantId, float]
    margin: float
    variance: float
    deals: int


def _components(tables: int) -> list[tuple[float, ...]]:
    """Weights that turn the margins of `tables` plays of one deal into independent parts:
    the differences first (Helmert's: each table against those before it; luck cancels in
    them), then the sum (luck and all). With equal play noise and one luck shared by all, the
    parts' noises are uncorrelated."""
    out: list[tuple[float, ...]] = []
    for i in range(1, tables):
        out.append(tuple([1.0] * i + [-float(i)] + [0.0] * (tables - i - 1)))
    out.append(tuple([1.0] * tables))
    return out


class RatingModel:
    """The margin model with fixed parameters, so that replaying history gives the same numbers.

    `tau`: rating points of skill drift per square root of a day (`None`: `DEFAULT_TAU`);
    `board_sd`: a board's spread in points (two plays of a deal, luck cancelled); `luck_sd`: the
    spread of a deal's luck in one table's margin; `scale`: points of margin per rating point on a
    board; `max_margin`: the most a board counts (and what a forfeit loses each board by).
    """

    def __init__(
        self,
        *,
        mu: float = DEFAULT_MU,
        sigma: float = DEFAULT_SIGMA,
        tau: float | None = None,
        board_sd: float = BOARD_SD,
        luck_sd: float = LUCK_SD,
        scale: float = POINTS_PER_RATING_POINT,
        max_margin: float = MAX_MARGIN,
    ) -> None:
        self.tau = tau if tau is not None else DEFAULT_TAU
        for name, value in (
            ("tau", self.tau),
            ("sigma", sigma),
            ("board_sd", board_sd),
            ("luck_sd", luck_sd),
            ("scale", scale),
            ("max_margin", max_margin),
        ):
            zero_ok = name in ("tau", "luck_sd")
            if not math.isfinite(value) or value < 0 or (value == 0 and not zero_ok):
                raise ValueError(f"{name} must be a finite number > 0 (tau >= 0), not {value}")
        self.mu = mu
        self.sigma = sigma
        self.board_sd = board_sd
        self.luck_sd = luck_sd
        self.scale = scale
        self.max_margin = max_margin

    def initial(self) -> Rating:
        return Rating(self.mu, self.sigma, 0)

    # ---------------------------------------------------------------- what a match says

    def observation(self, outcome: MatchOutcome) -> Observation:
        """What a clean duplicate pair is rated on: the mean of its boards' margins (each capped),
        seen with the spread of that many boards; without boards, the margin per board over the
        whole match, with the spread of its planned boards."""
        cap = self.max_margin
        if outcome.boards:
            margins = [max(-cap, min(cap, a - b)) for a, b in outcome.boards]
            return Observation(sum(margins) / len(margins), len(margins))
        boards = outcome.planned_boards
        a, b = outcome.points
        return Observation(max(-cap, min(cap, (a - b) / boards)), boards)

    def evidence(self, tables: Sequence[MatchOutcome]) -> list[Evidence]:
        """What the deals of clean tables (one match, or twins) say, as independent components.

        Each deal is grouped with the tables that played it (twins play the same deals, unless a
        dead deal put one a deal ahead); for each group the tables' margins are combined by
        `_components` (their difference, luck cancelled, then their sum) and each combination's
        mean over the group's deals, each deal capped, is one `Evidence`. Components that weigh
        no skill (two tables of the same four, or nothing to compare) are left out."""
        per_play = 1.0 / PLAYS_PER_BOARD  # one table's skill term, in boards
        play_var = self.board_sd**2 / PLAYS_PER_BOARD
        luck_var = self.luck_sd**2
        signs: list[dict[EntrantId, float]] = []
        margins: list[dict[str, int]] = []
        order: list[str] = []
        for outcome in tables:
            (a0, a1), (b0, b1) = outcome.teams
            signs.append({a0: per_play, a1: per_play, b0: -per_play, b1: -per_play})
            margins.append({seed: p0 - p1 for seed, (p0, p1) in outcome.deals})
            order.extend(seed for seed, _ in outcome.deals if seed not in order)
        groups: dict[tuple[int, ...], list[str]] = {}
        for seed in order:
            having = tuple(j for j, by_seed in enumerate(margins) if seed in by_seed)
            groups.setdefault(having, []).append(seed)
        out: list[Evidence] = []
        for having, seeds in groups.items():
            for weights in _components(len(having)):
                weighed: dict[EntrantId, float] = {}
                for j, weight in zip(having, weights, strict=True):
                    for entrant, sign in signs[j].items():
                        weighed[entrant] = weighed.get(entrant, 0.0) + weight * sign
                weighed = {e: s for e, s in weighed.items() if s != 0.0}
                if not weighed:
                    continue
                # The cap scales with the plays combined: a board (two plays) counts up to
                # `max_margin`, one table's margin alone up to half of it.
                cap = self.max_margin * per_play * sum(abs(w) for w in weights)
                values = [
                    max(-cap, min(cap, sum(w * margins[j][seed] for j, w in zip(having, weights))))  # noqa: B905
                    for seed in seeds
                ]
                noise = play_var * sum(w * w for w in weights) + luck_var * sum(weights) ** 2
                out.append(
                    Evidence(
                        signs=weighed,
                        margin=sum(values) / len(values) / self.scale,
                        variance=noise / len(values) / self.scale**2,
                        deals=len(values),
                    )
                )
        return out

    # ---------------------------------------------------------------- updating the belief

    def apply(self, ratings: Ratings, outcome: MatchOutcome) -> list[EntrantId]:
        """Update `ratings` in place with one completed match rated alone; returns the entrants it
        rated (all four, or only the forfeiters)."""
        return self.apply_set(ratings, (outcome,))

    def apply_set(self, ratings: Ratings, outcomes: Sequence[MatchOutcome]) -> list[EntrantId]:
        """Update `ratings` in place with one match, or twins (matches dealt the same deals at the
        same time), taken together; returns the entrants rated, in order.

        Forfeits are rated first, each forfeiter alone; a duplicate pair stored by an older
        ladder is rated on its boards; the clean tables that played deals are rated on their
        deals together (`evidence`)."""
        rated: list[EntrantId] = []
        tables: list[MatchOutcome] = []
        for outcome in outcomes:
            if outcome.forfeits:
                for entrant in sorted(outcome.forfeits):
                    self._apply_forfeit(ratings, outcome, entrant)
                    rated.append(entrant)
            elif outcome.deals:
                tables.append(outcome)
            else:
                rated.extend(self._apply_pair(ratings, outcome))
        if tables:
            rated.extend(self._apply_tables(ratings, tables))
        return rated

    def _slot(self, ratings: Ratings, entrant: EntrantId) -> int:
        return ratings._slot(entrant, self.mu, self.sigma**2)

    def _apply_pair(self, ratings: Ratings, outcome: MatchOutcome) -> list[EntrantId]:
        """A clean duplicate pair (both halves played by the same four, stored by an older
        ladder): its boards' mean margin, `scale` points per rating point."""
        when = outcome.finished_at
        rated = list(outcome.entrants)
        slots = [self._slot(ratings, e) for e in rated]
        for slot in slots:
            ratings._drift(slot, when, self.tau)
        seen = self.observation(outcome)
        signs = {slots[0]: 1.0, slots[1]: 1.0, slots[2]: -1.0, slots[3]: -1.0}
        ratings._observe(signs, seen.margin / self.scale, self._noise(seen.boards))
        for slot in slots:
            ratings._played(slot, when)
        return rated

    def _apply_tables(self, ratings: Ratings, tables: Sequence[MatchOutcome]) -> list[EntrantId]:
        """Clean tables that played deals (one match, or twins): every component of their deals'
        evidence, each entrant drifted first to its own table's finishing time."""
        rated: list[EntrantId] = []
        for outcome in tables:
            for entrant in outcome.entrants:
                slot = self._slot(ratings, entrant)
                ratings._drift(slot, outcome.finished_at, self.tau)
                rated.append(entrant)
        for part in self.evidence(tables):
            signs = {self._slot(ratings, e): s for e, s in part.signs.items()}
            ratings._observe(signs, part.margin, part.variance)
        for outcome in tables:
            for entrant in outcome.entrants:
                ratings._played(self._slot(ratings, entrant), outcome.finished_at)
        return rated

    def _apply_forfeit(self, ratings: Ratings, outcome: MatchOutcome, entrant: EntrantId) -> None:
        """Rated as the match in which the forfeiter's team lost every board by the most a board
        counts, whatever the points said, against the others' skills as the ladder believes them;
        only the forfeiter's own belief moves."""
        when = outcome.finished_at
        mine = outcome.team_of(entrant)
        signed = [(e, 1.0) for e in outcome.teams[mine]]
        signed += [(e, -1.0) for e in outcome.teams[1 - mine]]
        slot = self._slot(ratings, entrant)
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
    return apply_board_set(model, ratings, (outcome,))


def apply_board_set(
    model: RatingModel, ratings: Ratings, outcomes: Sequence[MatchOutcome]
) -> dict[EntrantId, tuple[Rating, Rating]]:
    """`apply_match` for one match or twins taken together (`RatingModel.apply_set`)."""
    before = {
        e: ratings[e] if e in ratings else model.initial() for o in outcomes for e in o.entrants
    }
    rated = model.apply_set(ratings, outcomes)
    return {e: (before[e], ratings[e]) for e in rated}


def board_sets(history: Iterable[MatchOutcome]) -> Iterator[tuple[MatchOutcome, ...]]:
    """The history as it was rated: twins (stored one after the other, each naming the other) as
    one set, every other match alone."""
    waiting: MatchOutcome | None = None
    for outcome in history:
        if waiting is not None:
            if waiting.twin == outcome.match_id and outcome.twin == waiting.match_id:
                yield (waiting, outcome)
                waiting = None
                continue
            yield (waiting,)
            waiting = None
        if outcome.twin is not None:
            waiting = outcome
        else:
            yield (outcome,)
    if waiting is not None:
        yield (waiting,)


def recompute(history: Iterable[MatchOutcome], model: RatingModel | None = None) -> Ratings:
    """Ratings from nothing but the completed matches, in the order they were rated."""
    model = model or RatingModel()
    ratings = Ratings()
    for outcomes in board_sets(history):
        model.apply_set(ratings, outcomes)
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
