"""Speed of the double-dummy solver (engine/double_dummy.py) on whole deals, beside DDS's.

    .venv/bin/python bench/double_dummy.py [--deals 12 --seed 1 --cap 60] [--bridge]

Deals `--deals` seeded deals of the standard deck and solves each from its opening lead (seat 1,
left of dealer 0, spades not broken: Spades' own rules), `solve(position, per_card=False)`: the most
tricks each side takes. Each deal is capped at `--cap` seconds (a deal cut off counts as taking the
cap, so the median and 95th percentile printed are then lower bounds, and `capped` says how many).
In the same run, on the same deals, DDS (the `endplay` package, if installed) solves the same
leader with spades trumps: bridge's rules, where spades may be led at once, so the ratio compares
the two solvers' speed on the same cards, not identical problems. With `--bridge` spades start
broken, so both solve the identical problem (and the tricks are checked equal). The time is the process's CPU
time (less disturbed by the shared machine's other work than the wall clock). The last line of
stdout is one JSON object (bench/report.py). Goals (issue 42): median <= 1 s, p95 <= 5 s.
"""

import argparse
import random
import signal
import statistics
import sys
import time
from pathlib import Path
from types import FrameType

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from engine.double_dummy import Position, solve
from engine.ruleset import PRESETS


class _Capped(Exception):
    """A deal ran past its cap."""


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise _Capped


def _pbn(hands: list[int]) -> str:
    return "N:" + " ".join(
        ".".join(
            "".join("23456789TJQKA"[r] for r in range(12, -1, -1) if hand >> (13 * s + r) & 1)
            for s in (3, 2, 1, 0)
        )
        for hand in hands
    )


def _dds(hands: list[int], leader: int) -> tuple[float, int] | None:
    """DDS's CPU seconds for the deal and the most tricks the leader's side takes (None without it)."""
    try:
        from endplay.dds import solve_board
        from endplay.dds.solve import SolveMode
        from endplay.types import Deal, Denom, Player
    except ImportError:
        return None
    deal = Deal.from_pbn(_pbn(hands))
    deal.trump = Denom.spades
    deal.first = Player(leader)
    started = time.process_time()
    # One optimal card and its tricks: DDS's SolveBoard with solutions=1, like per_card=False.
    best = max(won for _, won in solve_board(deal, SolveMode.OptimalOne))
    return time.process_time() - started, best


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=12)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--cap", type=float, default=60.0, help="seconds a deal may take")
    parser.add_argument(
        "--bridge", action="store_true", help="spades broken from the start: DDS's very problem"
    )
    args = parser.parse_args()
    rng = random.Random(args.seed)
    ruleset = PRESETS["standard"]
    ours: list[float] = []
    dds: list[float] = []
    capped = 0
    nodes = 0
    signal.signal(signal.SIGVTALRM, _alarm)
    for index in range(args.deals):
        deck = list(range(52))
        rng.shuffle(deck)
        hands = [sum(1 << c for c in deck[13 * s : 13 * s + 13]) for s in range(4)]
        position = Position.of_ruleset(ruleset, hands, 1, spades_broken=args.bridge)
        started = time.process_time()
        signal.setitimer(signal.ITIMER_VIRTUAL, args.cap)
        try:
            solution = solve(position, per_card=False)
            tricks = f"{solution.tricks}, {solution.nodes} nodes"
            nodes += solution.nodes
        except _Capped:
            capped += 1
            tricks = "capped"
        finally:
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
        took = min(time.process_time() - started, args.cap)
        ours.append(took)
        peer = _dds(hands, 1)
        if peer is not None:
            dds.append(peer[0])
            if args.bridge and tricks != "capped" and solution.tricks[1] != peer[1]:  # leader 1
                raise SystemExit(f"deal {index}: {tricks} but DDS says {peer[1]} for the leader")
        print(f"deal {index}: {tricks} in {took:.2f} s (DDS {peer} s)", flush=True)
    figures: dict[str, object] = {
        "deals": args.deals,
        "seed": args.seed,
        "bridge": args.bridge,
        "cap_s": args.cap,
        "capped": capped,
        "median_s": round(statistics.median(ours), 3),
        "p95_s": round(_percentile(ours, 0.95), 3),
        "max_s": round(max(ours), 3),
        "nodes": nodes,
        "goal_median_s": 1.0,
        "goal_p95_s": 5.0,
    }
    if dds:
        figures["dds_median_s"] = round(statistics.median(dds), 5)
        figures["dds_p95_s"] = round(_percentile(dds, 0.95), 5)
        figures["ratio_median"] = round(statistics.median(ours) / max(statistics.median(dds), 1e-6))
    emit(figures)


if __name__ == "__main__":
    main()
