"""Engine-only arena throughput: hands per second with random and heuristic bots, one job and all cores.

    .venv/bin/python bench/arena.py [--seconds S] [--preset P]

Each configuration plays whole games of the standard preset (to 500, capped at 200 hands) for about
`--seconds` of work, through the same code as `spades-bot arena` (process pool, seeded deals, per-hand
results). The goal: random bots at >= 8,000 hands/s with two jobs (wall clock, as `hands_per_second`).

The machine is shared, so every configuration also gives `hands_per_cpu_second`: hands over the CPU
time of this process and its workers (`getrusage`, self and children: worker start-up, pickling and
the pool's hand-over included), and `cpu_share`, the cores the run actually got (CPU seconds per wall
second). In the same run, `engine_limit` plays the same kind of hands with the engine alone (deal, random
bids, `playout(rng)`: no bot, no arena) for the floor the random arena's per-CPU figure is compared with
(`random_vs_engine_limit`). The last line is one JSON object.
"""

import argparse
import os
import random
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from bots.arena.match import DEFAULT_MAX_HANDS, hand_seed
from bots.arena.pool import default_jobs
from bots.arena.run import ArenaConfig, run_games
from engine.game import Phase, new_game
from engine.ruleset import Ruleset

GOAL = 8000  # random bots, two jobs, hands per wall-clock second


def cpu_seconds() -> float:
    """CPU time of this process and of its finished children (pool workers are reaped at the end)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def measure(bot: str, jobs: int, seconds: float, preset: str) -> dict[str, float]:
    """Hands per second over a run sized to take about `seconds` (after a short calibration)."""
    ruleset = Ruleset.from_preset(preset)
    started = time.perf_counter()
    run_games(ArenaConfig(specs=(bot, bot), ruleset=ruleset, games=2, seed=98))
    per_game = max(1e-4, (time.perf_counter() - started) / 2)
    games = max(jobs * 2, int(seconds * jobs / per_game))
    config = ArenaConfig(specs=(bot, bot), ruleset=ruleset, games=games, seed=1, jobs=jobs)
    cpu = cpu_seconds()
    started = time.perf_counter()
    results = run_games(config)
    elapsed = time.perf_counter() - started
    cpu = cpu_seconds() - cpu
    hands = sum(r.hands for r in results)
    return {
        "games": games,
        "hands": hands,
        "seconds": round(elapsed, 3),
        "cpu_seconds": round(cpu, 3),
        "cpu_share": round(cpu / elapsed, 2),
        "hands_per_second": round(hands / elapsed, 1),
        "hands_per_cpu_second": round(hands / cpu, 1),
    }


def engine_limit(seconds: float, preset: str) -> dict[str, float]:
    """The engine alone playing random hands: deal, uniform random bids through `legal_actions` and
    `apply`, then `playout(rng)` (the engine's own uniform play); games capped like the arena's."""
    ruleset = Ruleset.from_preset(preset)
    rng = random.Random(1)
    hands = 0
    cpu = time.process_time()
    started = time.perf_counter()
    game_number = 0
    while time.perf_counter() - started < seconds:
        game = new_game(ruleset, dealer=0)
        dealt = 0
        while not game.is_over and dealt < DEFAULT_MAX_HANDS:
            phase = game.phase
            if phase is Phase.DEALING:
                game.deal(hand_seed(1, game_number, dealt))
                dealt += 1
            elif phase is Phase.PLAYING and hasattr(game, "playout"):
                game.playout(rng)
            else:
                game.apply(rng.choice(game.legal_actions(game.to_act()[0])))
        hands += dealt
        game_number += 1
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu
    return {
        "hands": hands,
        "seconds": round(elapsed, 3),
        "hands_per_second": round(hands / elapsed, 1),
        "hands_per_cpu_second": round(hands / cpu, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--preset", default="standard")
    args = parser.parse_args()
    cores = default_jobs()
    figures: dict[str, object] = {
        "preset": args.preset,
        "cores": cores,
        "load_before": os.getloadavg()[0],
    }
    limit = engine_limit(min(args.seconds, 3.0), args.preset)
    print(f"engine alone:        {limit['hands_per_cpu_second']:>9,.0f} hands/CPU-s", flush=True)
    figures["engine_limit"] = limit
    for bot in ("random", "heuristic"):
        for jobs in sorted({1, 2, cores}):
            result = measure(bot, jobs, args.seconds, args.preset)
            print(
                f"{bot:10s} jobs={jobs}: {result['hands_per_second']:>9,.0f} hands/s "
                f"{result['hands_per_cpu_second']:>9,.0f} hands/CPU-s "
                f"({result['hands']} hands in {result['seconds']} s, "
                f"{result['cpu_share']} cores)",
                flush=True,
            )
            figures[f"{bot}_jobs{jobs}"] = result
    random_one = figures.get("random_jobs1")
    if isinstance(random_one, dict):
        figures["random_vs_engine_limit"] = round(
            random_one["hands_per_cpu_second"] / limit["hands_per_cpu_second"], 3
        )
    random_two = figures.get("random_jobs2")
    if isinstance(random_two, dict):
        figures["goal_random_jobs2_hands_per_second"] = GOAL
        figures["goal_met"] = random_two["hands_per_second"] >= GOAL
        # What two jobs would do with two whole cores: the per-CPU rate times two.
        figures["random_jobs2_at_two_full_cores"] = round(2 * random_two["hands_per_cpu_second"])
    figures["load_after"] = os.getloadavg()[0]
    emit(figures)


if __name__ == "__main__":
    main()
