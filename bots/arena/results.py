"""From game results to the arena's figures: per bot (or team) games, wins, win rate and points per hand,
each with its 95 % interval, and, for two contenders, the paired points-per-hand advantage.

Points per hand are averaged per game first, and the interval is taken over games (or over duplicate
pairs), because the hands of one game are not independent (a side near its bag limit plays differently).
In duplicate mode the unit of the advantage is the pair: both games share their deals, so the card luck
that dominates a single game cancels in the difference.
"""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from bots.arena.match import GameResult
from bots.arena.stats import Interval, mean_interval, wilson


@dataclass(frozen=True, slots=True)
class Contender:
    """A bot, or a team of two bots (four entrants in partnership Spades), as the report names it."""

    label: str
    entrants: tuple[int, ...]


def contenders(specs: Sequence[str], partnerships: bool) -> list[Contender]:
    """Who is compared: each entrant, except that four entrants in partnerships form two teams."""
    if partnerships and len(specs) == 4:
        return [
            Contender(f"{specs[0]} + {specs[2]}", (0, 2)),
            Contender(f"{specs[1]} + {specs[3]}", (1, 3)),
        ]
    return [Contender(spec, (index,)) for index, spec in enumerate(specs)]


def points_per_hand(result: GameResult, entrants: tuple[int, ...]) -> float:
    """The mean per-hand points of the sides these entrants sit on (averaged over those sides)."""
    side_of = {seat: index for index, side in enumerate(result.sides) for seat in side}
    sides = sorted(
        {side_of[seat] for seat, who in enumerate(result.seat_entrants) if who in entrants}
    )
    if not sides or not result.hand_deltas:
        return 0.0
    total = sum(delta[side] for delta in result.hand_deltas for side in sides)
    return total / (len(sides) * len(result.hand_deltas))


def win_share(result: GameResult, entrants: tuple[int, ...]) -> float:
    """1 for a win, 0 for a loss; a tie between contenders splits the win by winning seats."""
    if not result.winners:
        return 0.0
    mine = sum(1 for seat in result.winners if result.seat_entrants[seat] in entrants)
    return mine / len(result.winners)


@dataclass(frozen=True, slots=True)
class ContenderFigures:
    label: str
    games: int
    wins: float
    win_rate: Interval
    points_per_hand: Interval

    def as_dict(self) -> dict[str, Any]:
        return {
            "bot": self.label,
            "games": self.games,
            "wins": self.wins,
            "win_rate": self.win_rate.as_dict(),
            "points_per_hand": self.points_per_hand.as_dict(),
        }


@dataclass(frozen=True, slots=True)
class Thinking:
    """How long one bot (every entrant of that spec) took a decision, in CPU time."""

    spec: str
    decisions: int
    mean_ms: float
    longest_ms: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "bot": self.spec,
            "decisions": self.decisions,
            "mean_ms": round(self.mean_ms, 3),
            "longest_ms": round(self.longest_ms, 3),
        }


def thinking(results: Sequence[GameResult], specs: Sequence[str]) -> list[Thinking]:
    """CPU time a decision for each distinct spec, over every seat it sat in, in the specs' order."""
    count: dict[str, int] = defaultdict(int)
    seconds: dict[str, float] = defaultdict(float)
    longest: dict[str, float] = defaultdict(float)
    for r in results:
        for seat, entrant in enumerate(r.seat_entrants):
            spec = specs[entrant]
            count[spec] += r.decisions[seat]
            seconds[spec] += r.think_seconds[seat]
            longest[spec] = max(longest[spec], r.longest_seconds[seat])
    return [
        Thinking(
            spec=spec,
            decisions=count[spec],
            mean_ms=1000 * seconds[spec] / count[spec] if count[spec] else 0.0,
            longest_ms=1000 * longest[spec],
        )
        for spec in dict.fromkeys(specs)
        if count[spec]
    ]


@dataclass(frozen=True, slots=True)
class Figures:
    """Everything the arena prints."""

    contenders: list[ContenderFigures]
    games: int
    hands: int
    fallbacks: int
    duplicate: bool
    advantage: Interval | None  # first contender's points per hand minus the second's
    advantage_samples: int
    thinking: list[Thinking]

    def as_dict(self) -> dict[str, Any]:
        return {
            "games": self.games,
            "hands": self.hands,
            "fallbacks": self.fallbacks,
            "duplicate": self.duplicate,
            "bots": [c.as_dict() for c in self.contenders],
            "advantage": None if self.advantage is None else self.advantage.as_dict(),
            "advantage_samples": self.advantage_samples,
            "thinking": [t.as_dict() for t in self.thinking],
        }


def summarise(
    results: Sequence[GameResult], specs: Sequence[str], partnerships: bool, duplicate: bool
) -> Figures:
    """The figures of a finished (or interrupted) run."""
    who = contenders(specs, partnerships)
    figures = []
    for contender in who:
        wins = sum(win_share(r, contender.entrants) for r in results)
        per_game = [points_per_hand(r, contender.entrants) for r in results]
        figures.append(
            ContenderFigures(
                label=contender.label,
                games=len(results),
                wins=wins,
                win_rate=wilson(wins, len(results)),
                points_per_hand=mean_interval(per_game),
            )
        )
    advantage: Interval | None = None
    samples: list[float] = []
    if len(who) == 2:
        first, second = who[0].entrants, who[1].entrants
        by_unit: dict[int, list[float]] = defaultdict(list)
        for r in results:
            diff = points_per_hand(r, first) - points_per_hand(r, second)
            by_unit[r.deal_index if duplicate else r.index].append(diff)
        # A duplicate pair counts only when both of its games finished.
        samples = [sum(v) / len(v) for v in by_unit.values() if not duplicate or len(v) == 2]
        advantage = mean_interval(samples) if samples else None
    return Figures(
        contenders=figures,
        games=len(results),
        hands=sum(r.hands for r in results),
        fallbacks=sum(r.fallbacks for r in results),
        duplicate=duplicate,
        advantage=advantage,
        advantage_samples=len(samples),
        thinking=thinking(results, specs),
    )
