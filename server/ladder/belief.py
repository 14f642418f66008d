"""The ladder's belief about its entrants' skills: one multivariate normal distribution over all of
them, a mean for each and the full covariance matrix (`Ratings`), and one entrant's rating as the
standings show it (`Rating`).

The belief changes only by the exact linear-Gaussian steps the rating model
(`server.ladder.ratings.RatingModel`) asks for: a new entrant's row, a variance that drifts with
time, and Bayes' rule for an observation of a weighted sum of skills plus normal noise (the whole
belief moves, or one entrant's alone). What the observations are, and why, is the model's business.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

DEFAULT_MU = 25.0
DEFAULT_SIGMA = DEFAULT_MU / 3
#: How many sigmas below the mean the leaderboard's conservative estimate sits.
CONSERVATIVE_Z = 3.0
SECONDS_PER_DAY = 86_400.0

EntrantId = str


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


class Ratings(Mapping[EntrantId, Rating]):
    """The ladder's joint belief about every rated entrant's skill: a mean for each and the full
    covariance matrix, with each entrant's rated matches and the time of its last one.

    Read it as a mapping from entrant to `Rating` (`mu`, `sigma` relative to the field, matches);
    change it only through `server.ladder.ratings.RatingModel`.
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

    def _slot(self, entrant: EntrantId, mu: float, variance: float) -> int:
        """The entrant's row, added with the starting belief (`mu`, `variance`) when new."""
        index = self._index.get(entrant)
        return self._add(entrant, mu, variance) if index is None else index

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

    def predict(
        self, signs: Mapping[EntrantId, float], mu: float, variance: float
    ) -> tuple[float, float]:
        """What the belief expects of `sum(sign * skill)`: its mean and variance. Entrants not
        rated yet count with the starting belief (`mu`, `variance`, independent of everyone)."""
        mean = 0.0
        spread = 0.0
        known: list[tuple[int, float]] = []
        for entrant, sign in signs.items():
            index = self._index.get(entrant)
            if index is None:
                mean += sign * mu
                spread += sign * sign * variance
            else:
                known.append((index, sign))
        for i, si in known:
            mean += si * self._mean[i]
            row = self._cov[i]
            spread += si * sum(sj * row[j] for j, sj in known)
        return mean, spread
