"""Engine-only arena throughput: hands per second with random and heuristic bots, one job and all cores.

    .venv/bin/python bench/arena.py [--seconds S]

Each configuration plays whole games of the standard preset (to 500, capped at 200 hands) for about
`--seconds` of work, through the same code as `spades-bot arena` (process pool, seeded deals, per-hand
results). The goal: random bots at >= 8,000 hands/s with two jobs. The last line is one JSON object.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from bots.arena.pool import default_jobs
from bots.arena.run import ArenaConfig, run_games
from engine.ruleset import Ruleset


def measure(bot: str, jobs: int, seconds: float, preset: str) -> dict[str, float]:
    """Hands per second over a run sized to take about `seconds` (after a short calibration)."""
    ruleset = Ruleset.from_preset(preset)
    started = time.perf_counter()
    run_games(ArenaConfig(specs=(bot, bot), ruleset=ruleset, games=2, seed=98))
    per_game = max(1e-4, (time.perf_counter() - started) / 2)
    games = max(jobs * 2, int(seconds * jobs / per_game))
    config = ArenaConfig(specs=(bot, bot), ruleset=ruleset, games=games, seed=1, jobs=jobs)
    started = time.perf_counter()
    results = run_games(config)
    elapsed = time.perf_counter() - started
    hands = sum(r.hands for r in results)
    return {
        "games": games,
        "hands": hands,
        "seconds": round(elapsed, 3),
        "hands_per_second": round(hands / elapsed, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--preset", default="standard")
    args = parser.parse_args()
    cores = default_jobs()
    figures: dict[str, object] = {"preset": args.preset, "cores": cores}
    for bot in ("random", "heuristic"):
        for jobs in sorted({1, 2, cores}):
            result = measure(bot, jobs, args.seconds, args.preset)
            print(
                f"{bot:10s} jobs={jobs}: {result['hands_per_second']:>9,.0f} hands/s "
                f"({result['hands']} hands in {result['seconds']} s)",
                flush=True,
            )
            figures[f"{bot}_jobs{jobs}"] = result
    random_two = figures.get("random_jobs2")
    if isinstance(random_two, dict):
        figures["goal_random_jobs2_hands_per_second"] = 8000
        figures["goal_met"] = random_two["hands_per_second"] >= 8000
    emit(figures)


if __name__ == "__main__":
    main()
