"""Strength of the sample bots, measured in duplicate (each deal played twice with the teams swapped).

    .venv/bin/python bench/strength.py heuristic-vs-random [--games 200]
    .venv/bin/python bench/strength.py search-vs-heuristic [--pairs 300 --ms 50]
    .venv/bin/python bench/strength.py search-with-heuristic-partner [--pairs 300 --ms 50]
    .venv/bin/python bench/strength.py search-with-random-partner [--pairs 1000 --ms 50]
    .venv/bin/python bench/strength.py search-vs-heuristic --pairs 100 --worlds 12

`heuristic-vs-random` plays duplicate games to 500 (standard preset); the goal is a heuristic win rate of
at least 95 %. The other matches play duplicate *hand pairs* (games of one hand, from 0-0; `--hands H`
plays games of H hands instead) and report the first team's mean points-per-hand advantage with its 95 %
interval over the pairs:

- `search-vs-heuristic`: two search bots against two heuristic ones (goal: above the old bot's +28.5);
- `search-with-heuristic-partner`: one search bot and a heuristic partner against two heuristic bots
  (goal: at least +20 a hand with the interval above +10);
- `search-with-random-partner`: a search bot and a random partner against a heuristic bot and a random
  partner (goal: at least +15 a hand).

`vs-ismcts` plays duplicate hand pairs on OpenSpiel's own `spades` game against OpenSpiel's ISMCTS bot
(`--bot heuristic` or the search spec; `--simulations 100` or `1000`), OpenSpiel refereeing and scoring
(bench/openspiel_spades.py says how): our bot's points a hand minus ISMCTS's, with its 95 % interval,
the time per decision of each side (CPU time), and the decisions where the engines' rules differ.

    .venv/bin/python bench/strength.py vs-ismcts --bot heuristic --simulations 100 --pairs 100
    .venv/bin/python bench/strength.py vs-ismcts --bot search --simulations 1000 --pairs 100

`decision-time` plays `--pairs` hands of four search bots at their default budget (`--search SPEC`
for another) with a bot account's clock running, and reports each decision's wall time against it.

    .venv/bin/python bench/strength.py decision-time --pairs 8

The search bot thinks `--ms` per decision (in CPU time by default, `--clock`), or samples exactly
`--worlds N` worlds per decision (a budget the load cannot change, for development); `--search SPEC`
names another search spec outright. Each prints a table, then one JSON object on its last line
(bench/report.py). Uses every core (`--jobs`), like `spades-bot arena --jobs`.
"""

import argparse
import sys
import time
from collections.abc import Coroutine
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from bots.arena.pool import default_jobs
from bots.arena.run import ArenaConfig, figures, run_games
from engine.ruleset import Ruleset

#: The hand-pair matches: the seats' bots (entrant i plays seat i, then seat i+1 in the pair's second
#: game; seats 0 and 2 are the first team), what the goal is, and whether a figure meets it.
#: `S` stands for the search spec.
PAIR_MATCHES: dict[str, tuple[tuple[str, ...], str, float, float]] = {
    # name: (specs, goal, least estimate, least low end of the interval)
    "search-vs-heuristic": (
        ("S", "heuristic"),
        "two search bots beat two heuristic ones by more than the old bot's best (+28.5 a hand)",
        28.5,
        -1e9,
    ),
    "search-with-heuristic-partner": (
        ("S", "heuristic", "heuristic", "heuristic"),
        "search + heuristic beat heuristic + heuristic by >= +20 a hand, the interval above +10",
        20.0,
        10.0,
    ),
    "search-with-random-partner": (
        ("S", "heuristic", "random", "random"),
        "search + random beat heuristic + random by >= +15 a hand",
        15.0,
        -1e9,
    ),
}


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
    for spent in summary.thinking:
        print(
            f"{spent.spec:28s} {spent.mean_ms:8.2f} ms a decision (CPU), the longest "
            f"{spent.longest_ms:.1f} ms, over {spent.decisions} decisions"
        )
    if summary.advantage is not None:
        a = summary.advantage
        print(
            f"advantage of {summary.contenders[0].label}: {a.estimate:+.2f} points per hand "
            f"[{a.low:+.2f}, {a.high:+.2f}] over {summary.advantage_samples} duplicate pairs "
            f"({summary.hands} hands, {elapsed:.0f} s)"
        )
    return out


def versus_ismcts(args: argparse.Namespace) -> dict[str, object]:
    """Duplicate hand pairs against OpenSpiel's ISMCTS on OpenSpiel's `spades` (see the docstring)."""
    from bench.openspiel_spades import PairJob, play_pair, summary_seconds
    from bots.arena.pool import run_pool
    from bots.arena.stats import mean_interval

    spec = args.bot if args.bot != "search" else search_spec(args)
    jobs = [
        PairJob(deal, spec, args.simulations, args.uct_c, args.seed) for deal in range(args.pairs)
    ]
    started = time.perf_counter()
    pairs: list[dict[str, object]] = []
    for pair in run_pool(play_pair, jobs, processes=min(args.jobs, len(jobs))):
        pairs.append(pair)
        if len(pairs) % max(1, args.pairs // 10) == 0:
            print(f"  vs-ismcts: {len(pairs)}/{args.pairs} pairs", file=sys.stderr, flush=True)
    elapsed = time.perf_counter() - started
    margin = mean_interval([float(p["margin"]) for p in pairs])  # type: ignore[arg-type]
    ours = [t for p in pairs for t in p["ours_seconds"]]  # type: ignore[attr-defined]
    theirs = [t for p in pairs for t in p["ismcts_seconds"]]  # type: ignore[attr-defined]
    differing = sum(int(p["differing"]) for p in pairs)  # type: ignore[call-overload]
    differing_ours = sum(int(p["differing_ours"]) for p in pairs)  # type: ignore[call-overload]
    decisions = len(ours) + len(theirs)
    print(
        f"{spec} vs OpenSpiel ISMCTS ({args.simulations} simulations, uct_c {args.uct_c:g}): "
        f"{margin.estimate:+.2f} points a hand [{margin.low:+.2f}, {margin.high:+.2f}] over "
        f"{len(pairs)} duplicate pairs ({elapsed:.0f} s); rules differ at {differing} of "
        f"{decisions} decisions ({differing_ours} of ours)"
    )
    return {
        "bot": spec,
        "simulations": args.simulations,
        "uct_c": args.uct_c,
        "pairs": len(pairs),
        "advantage": margin.as_dict(),
        "ours_per_decision": summary_seconds(ours),
        "ismcts_per_decision": summary_seconds(theirs),
        "decisions": decisions,
        "rules_differ": differing,
        "rules_differ_ours": differing_ours,
        "seconds": round(elapsed, 1),
        "jobs": args.jobs,
        "seed": args.seed,
    }


def decision_times(args: argparse.Namespace) -> dict[str, object]:
    """Wall time of every decision of `--search` (the search at its default budget unless told) in
    `--pairs` hands of four such bots, beside the server's clock for a bot account. The search
    promises never to take more than half the time its clock leaves (the rest is for the network
    and the server); on a loaded machine the wall time runs past the budget by what the scheduler
    takes away, which this measures."""
    from bench.openspiel_spades import summary_seconds
    from bots.registry import make_bot
    from bots.sdk.view import BotView, HandMemory
    from engine.game import Phase, new_game
    from server.config import ServerConfig

    spec = args.search or "search"
    ruleset = Ruleset.from_preset("standard", target_score=0, max_hands=1)
    clock = ServerConfig().bot_clock
    times: dict[str, list[float]] = {"bid": [], "play": []}
    started = time.perf_counter()
    for hand in range(args.pairs):
        game = new_game(ruleset, dealer=hand % 4)
        bots = [make_bot(spec, args.seed * 1000 + 10 * hand + seat) for seat in range(4)]
        memories = [HandMemory() for _ in range(4)]
        for step in range(400):
            if game.is_over:
                break
            if game.phase is Phase.DEALING:
                game.deal(f"{args.seed}/{hand}/{step}".encode())
                continue
            seat = game.to_act()[0]
            view = BotView.from_dict(
                game.view(seat).to_dict(), ruleset, memory=memories[seat], deadline=clock
            )
            before = time.perf_counter()
            action = bots[seat].decide(view)
            times["bid" if view.phase == "bidding" else "play"].append(time.perf_counter() - before)
            if isinstance(action, Coroutine):  # the sample bots decide at once
                raise TypeError(f"{spec} decides asynchronously")
            game.apply(action)
    every = times["bid"] + times["play"]
    slowest = max(every, default=0.0)
    print(
        f"{spec}: {len(every)} decisions in {args.pairs} hands, slowest {1000 * slowest:.0f} ms "
        f"(wall) against a bot account's clock of {clock:g} s"
    )
    return {
        "bot": spec,
        "hands": args.pairs,
        "bid": summary_seconds(times["bid"]),
        "play": summary_seconds(times["play"]),
        "bot_clock_s": clock,
        "goal": "no decision takes half of a bot account's clock (wall time, on this machine)",
        "goal_met": slowest < clock / 2,
        "seconds": round(time.perf_counter() - started, 1),
        "seed": args.seed,
    }


def search_spec(args: argparse.Namespace) -> str:
    if args.search:
        return str(args.search)
    if args.worlds:
        return f"search,worlds={args.worlds}"
    return f"search,ms={args.ms:g},clock={args.clock}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "match",
        nargs="?",
        default="heuristic-vs-random",
        choices=("heuristic-vs-random", *PAIR_MATCHES, "vs-ismcts", "decision-time"),
        help="which match (default: heuristic-vs-random, the quick one, for `make bench`)",
    )
    parser.add_argument("--games", type=int, default=200, help="duplicate games (to 500)")
    parser.add_argument("--pairs", type=int, default=300, help="duplicate hand pairs")
    parser.add_argument("--hands", type=int, default=1, help="hands per game of a pair (from 0-0)")
    parser.add_argument("--ms", type=float, default=50.0, help="search time per decision")
    parser.add_argument("--worlds", type=int, default=0, help="search worlds per decision, not ms")
    parser.add_argument("--search", default="", help="the search bot's spec, outright")
    parser.add_argument(
        "--clock",
        choices=("cpu", "wall"),
        default="cpu",
        help="what the search's time per decision counts: this process's CPU time (default: the "
        "same thinking on a shared, loaded machine) or wall time (what a server's clock counts)",
    )
    parser.add_argument("--bot", default="heuristic", help="vs-ismcts: heuristic, search or a spec")
    parser.add_argument("--simulations", type=int, default=100, help="vs-ismcts: ISMCTS's")
    parser.add_argument(
        "--uct-c", type=float, default=2.0, help="vs-ismcts: ISMCTS's exploration constant"
    )
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--jobs", type=int, default=default_jobs())
    args = parser.parse_args()
    if args.match == "vs-ismcts":
        out = versus_ismcts(args)
    elif args.match == "decision-time":
        out = decision_times(args)
    elif args.match == "heuristic-vs-random":
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
        # Games of `--hands` hands from 0-0 (one by default): a duplicate pair is the same deals
        # played twice, every bot moved one seat on, so each team plays the other's cards.
        ruleset = Ruleset.from_preset("standard", target_score=0, max_hands=args.hands)
        search = search_spec(args)
        specs, goal, least, least_low = PAIR_MATCHES[args.match]
        config = ArenaConfig(
            specs=tuple(search if spec == "S" else spec for spec in specs),
            ruleset=ruleset,
            games=2 * args.pairs,
            seed=args.seed,
            jobs=args.jobs,
            duplicate=True,
        )
        out = run(config, args.match)
        advantage = out["advantage"]
        out["search"] = search
        out["hands_per_game"] = args.hands
        out["goal"] = goal
        out["goal_met"] = (
            isinstance(advantage, dict)
            and advantage["estimate"] >= least
            and advantage["low"] > least_low
        )
    out["match"] = args.match
    emit(out)


if __name__ == "__main__":
    main()
