"""An arena run: the list of games, the worker pool, the progress bar, the records file, the figures.

`--duplicate` turns N games into N/2 deal sequences each played twice, the second time with every bot
moved one seat on, which in partnership Spades swaps the teams' cards exactly.
"""

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from bots.arena.match import DEFAULT_MAX_HANDS, GameJob, GameResult, play_game
from bots.arena.pool import run_pool
from bots.arena.results import Figures, summarise
from bots.registry import make_bot
from engine.ruleset import Ruleset


@dataclass(frozen=True, slots=True)
class ArenaConfig:
    """One run's settings, as the command line gives them."""

    specs: tuple[str, ...]
    ruleset: Ruleset
    games: int
    seed: int = 0
    jobs: int = 1
    duplicate: bool = False
    record: Path | None = None
    max_hands: int = DEFAULT_MAX_HANDS


def check_specs(config: ArenaConfig) -> None:
    """Build each bot once, so a bad spec fails before any worker starts. Raises BotSpecError."""
    for spec in config.specs:
        make_bot(spec, 0)
    players = config.ruleset.players
    if len(config.specs) not in (2, players):
        raise ValueError(f"name 2 bots or {players} bots (one per seat) for this ruleset")


def game_jobs(config: ArenaConfig) -> list[GameJob]:
    """The games of a run, in order. Duplicate pairs are adjacent: games 2k and 2k+1 share deal k."""
    ruleset = config.ruleset.to_dict()
    jobs = []
    for index in range(config.games):
        deal_index, rotation = (index // 2, index % 2) if config.duplicate else (index, 0)
        jobs.append(
            GameJob(
                index=index,
                deal_index=deal_index,
                rotation=rotation,
                specs=config.specs,
                ruleset=ruleset,
                seed=config.seed,
                record=config.record is not None,
                max_hands=config.max_hands,
            )
        )
    return jobs


def run_games(
    config: ArenaConfig, on_result: Callable[[GameResult], None] | None = None
) -> list[GameResult]:
    """Play every game, calling `on_result` as each finishes; the results come back in game order.

    With `config.record` set, every finished hand goes to that file as one JSON hand record per line,
    in game order, with the arena's game number and seating added under `"arena"`.
    """
    results: list[GameResult] = []
    jobs = game_jobs(config)
    stream: Iterator[GameResult] = run_pool(
        play_game, jobs, processes=min(config.jobs, max(1, len(jobs)))
    )
    for result in stream:
        results.append(result)
        if on_result is not None:
            on_result(result)
    results.sort(key=lambda r: r.index)
    if config.record is not None:
        with config.record.open("w", encoding="utf-8") as out:
            write_records(results, config.specs, out)
    return results


def write_records(results: Sequence[GameResult], specs: Sequence[str], out: IO[str]) -> None:
    """One JSON hand record per line, each tagged with where it came from in the run."""
    for result in results:
        for record in result.records:
            tagged: dict[str, Any] = {
                **record,
                "arena": {
                    "game": result.index,
                    "deal": result.deal_index,
                    "rotation": result.rotation,
                    "seats": [specs[e] for e in result.seat_entrants],
                    # Which bot named on the command line sat where: a replay marks the first's
                    # seats, which the same spec named twice would not tell apart.
                    "entrants": list(result.seat_entrants),
                },
            }
            out.write(json.dumps(tagged, sort_keys=True) + "\n")


def figures(config: ArenaConfig, results: Sequence[GameResult]) -> Figures:
    return summarise(results, config.specs, config.ruleset.partnerships, config.duplicate)
