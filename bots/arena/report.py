"""How the arena shows its figures: a rich table for people, one JSON object for programs."""

import json
import math

from rich.console import Console
from rich.table import Table

from bots.arena.results import Figures
from bots.arena.stats import Interval


def _pct(interval: Interval) -> str:
    if math.isnan(interval.estimate):
        return "-"
    return f"{interval.estimate:6.1%}  [{interval.low:.1%}, {interval.high:.1%}]"


def _num(interval: Interval) -> str:
    if math.isnan(interval.estimate):
        return "-"
    if math.isinf(interval.low):
        return f"{interval.estimate:+.2f}"
    return f"{interval.estimate:+.2f}  [{interval.low:+.2f}, {interval.high:+.2f}]"


def render(figures: Figures, console: Console, *, hearts: bool = False) -> None:
    """Print the results table, then the paired advantage when there are two contenders."""
    table = Table(title="Arena results (95 % confidence intervals)")
    table.add_column("bot / team")
    table.add_column("games", justify="right")
    table.add_column("wins", justify="right")
    table.add_column("win rate", justify="right")
    table.add_column("points per hand", justify="right")
    for c in figures.contenders:
        table.add_row(
            c.label, str(c.games), f"{c.wins:g}", _pct(c.win_rate), _num(c.points_per_hand)
        )
    console.print(table)
    mode = "duplicate pairs" if figures.duplicate else "games"
    console.print(f"{figures.games} games, {figures.hands} hands.")
    if figures.advantage is not None and len(figures.contenders) == 2:
        first, second = (c.label for c in figures.contenders)
        note = " (Hearts: lower is better)" if hearts else ""
        console.print(
            f"Points per hand, {first} minus {second}, over {figures.advantage_samples} "
            f"{mode}: {_num(figures.advantage)}{note}"
        )
    for t in figures.thinking:
        console.print(
            f"{t.spec}: {t.mean_ms:.2f} ms a decision, the longest {t.longest_ms:.1f} ms "
            f"(CPU, {t.decisions:,} decisions)"
        )
    if figures.fallbacks:
        console.print(
            f"[yellow]{figures.fallbacks} decisions were made by the SDK because a bot failed "
            "(an exception or an illegal answer).[/yellow]"
        )


def as_json(figures: Figures) -> str:
    """The figures as one JSON object (non-finite interval bounds become null)."""

    def clean(value: object) -> object:
        if isinstance(value, float) and not math.isfinite(value):
            return None
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items()}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    return json.dumps(clean(figures.as_dict()), sort_keys=True)
