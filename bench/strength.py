"""Strength of the sample bots, measured in duplicate (each deal played twice with the teams swapped).

    .venv/bin/python bench/strength.py heuristic-vs-random [--games 200]
    .venv/bin/python bench/strength.py search-vs-heuristic [--pairs 300 --ms 50]
    .venv/bin/python bench/strength.py search-vs-heuristic --pairs 100 --ms 200

`heuristic-vs-random` plays duplicate games to 500 (standard preset); the goal is a heuristic win rate of
at least 95 %. `search-vs-heuristic` plays duplicate *hand pairs* (games of one hand, from 0-0) and
reports the search team's mean points-per-hand advantage with its 95 % interval; the goal is an interval
above zero at 50 ms per decision, and a larger advantage at 200 ms. Each prints a table, then one JSON
object on its last line (bench/report.py). Uses every core (`--jobs`), like `spades-bot arena --jobs`.
"""

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from bots.arena.pool import default_jobs
from bots.arena.run import ArenaConfig, figures, run_games
from engine.ruleset import Ruleset


def run(config: ArenaConfig, label: str) -> dict[str, object]:
    started = time.perf_counter()
    done = 0

    def progress(_result: object) -> None:
        nonlocal done
        done += 1
        if done % max(1, config.games // 10) == 0:
            print(f"  {label}: {done}/{config.games} games", file=sys.stderr, flush=True)

    results = run_games(config, progress)
    elapsed = time.perf_counter() - started
    summary = figures(config, results)
    out = summary.as_dict()
    out["seconds"] = round(elapsed, 1)
    out["jobs"] = config.jobs
    out["seed"] = config.seed
    for bot in summary.contenders:
        print(
            f"{bot.label:28s} win rate {bot.win_rate.estimate:6.1%} "
            f"[{bot.win_rate.low:.1%}, {bot.win_rate.high:.1%}]  points/hand "
            f"{bot.points_per_hand.estimate:+7.2f} "
            f"[{bot.points_per_hand.low:+.2f}, {bot.points_per_hand.high:+.2f}]"
        )
    if summary.advantage is not None:
        a = summary.advantage
        print(
            f"advantage of {summary.contenders[0].label}: {a.estimate:+.2f} points per hand "
            f"[{a.low:+.2f}, {a.high:+.2f}] over {summary.advantage_samples} duplicate pairs "
            f"({summary.hands} hands, {elapsed:.0f} s)"
        )
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "match",
        nargs="?",
        default="heuristic-vs-random",
        choices=("heuristic-vs-random", "search-vs-heuristic"),
        help="which match (default: heuristic-vs-random, the quick one, for `make bench`)",
    )
    parser.add_argument("--games", type=int, default=200, help="duplicate games (to 500)")
    parser.add_argument("--pairs", type=int, default=300, help="duplicate hand pairs")
    parser.add_argument("--ms", type=float, default=50.0, help="search time per decision")
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="what the search's time per decision counts: this process's CPU time (default: the "
        "same thinking on a shared, loaded machine) or wall time (what a server's clock counts)",
    )
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--jobs", type=int, default=default_jobs())
    args = parser.parse_args()
    if args.match == "heuristic-vs-random":
        config = ArenaConfig(
            specs=("heuristic", "random"),
            ruleset=Ruleset.from_preset("standard"),
            games=args.games + args.games % 2,
            seed=args.seed,
            jobs=args.jobs,
            duplicate=True,
        )
        out = run(config, "heuristic vs random")
        win_rate = out["bots"][0]["win_rate"]  # type: ignore[index]
        out["goal"] = "heuristic wins >= 95 % of duplicate games to 500"
        out["goal_met"] = win_rate["estimate"] >= 0.95
    else:
        # One hand per game, from 0-0: a duplicate pair is the same deal played twice, seats swapped.
        ruleset = Ruleset.from_preset("standard", target_score=0, max_hands=1)
        search = f"search,ms={args.ms:g},clock={args.clock}"
        config = ArenaConfig(
            specs=(search, "heuristic"),
            ruleset=ruleset,
            games=2 * args.pairs,
            seed=args.seed,
            jobs=args.jobs,
            duplicate=True,
        )
        out = run(config, f"search {args.ms:g} ms vs heuristic")
        advantage = out["advantage"]
        out["ms_per_decision"] = args.ms
        out["clock"] = args.clock
        out["goal"] = "the search team's points-per-hand advantage has a 95 % interval above zero"
        out["goal_met"] = isinstance(advantage, dict) and advantage["low"] > 0
    out["match"] = args.match
    emit(out)


if __name__ == "__main__":
    main()
