"""How long an event's pure core takes on the largest fields: pairing a round and the standings.

Plays out (random boards) a Swiss by pairs of 256 pairs and an individual of 256 players, 20 rounds
of 26 boards each (the most `EventSettings` allows), and a 256-pair knockout, timing each round's
pairing (which ranks the field by the standings so far) and the final standings. Prints one JSON
object on its last line (bench/report.py). Run: .venv/bin/python bench/events.py [--rounds N]
"""

import argparse
import random
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from server.events.pairing import Entrant, bracket, pair_individual, pair_swiss
from server.events.plans import Plan
from server.events.scoring import BoardResult, knockout_matches, standings
from server.events.settings import MAX_BOARDS, EventFormat

Pairer = Callable[..., Sequence[Plan]]


def play(tables: list[Plan], round_no: int, boards: int, rng: random.Random) -> list[BoardResult]:
    return [
        BoardResult(round_no, t.table_no, b, rng.choice([-100, 0, 50, 130]), rng.choice([0, 60]))
        for t in tables
        for b in range(1, boards + 1)
    ]


def swiss(pair: Pairer, fmt: EventFormat, count: int, rounds: int) -> dict[str, float]:
    rng = random.Random(1)
    entrants = [Entrant(f"e{i:03}", (i,), seed=i + 1) for i in range(count)]
    plans: dict[int, list[Plan]] = {}
    results: list[BoardResult] = []
    worst = 0.0
    for round_no in range(1, rounds + 1):
        start = time.perf_counter()
        plans[round_no] = list(pair(entrants, results, round_no, 1, plans=plans))
        worst = max(worst, time.perf_counter() - start)
        results += play(plans[round_no], round_no, MAX_BOARDS, rng)
    start = time.perf_counter()
    standings(fmt, entrants, plans, results)
    return {
        "worst_round_pairing_ms": round(worst * 1000, 1),
        "standings_ms": round((time.perf_counter() - start) * 1000, 1),
        "boards": len(results),
    }


def knockout(count: int) -> dict[str, float]:
    rng = random.Random(1)
    entrants = [Entrant(f"e{i:03}", (i,), seed=i + 1) for i in range(count)]
    plans: dict[int, list[Plan]] = {}
    results: list[BoardResult] = []
    start = time.perf_counter()
    round_no = 1
    while round_no == 1 or len(plans[round_no - 1]) > 1:
        plans[round_no] = list(bracket(entrants, results, round_no, plans=plans, boards=MAX_BOARDS))
        results += play(plans[round_no], round_no, MAX_BOARDS, rng)
        # Sudden death, bounded: three extra boards at most.
        for extra in range(1, 4):
            lines = knockout_matches(entrants, {round_no: plans[round_no]}, results, MAX_BOARDS)
            results += [
                BoardResult(round_no, line.table_no, MAX_BOARDS + extra, rng.choice([0, 10]), 0)
                for line in lines
                if line.winner is None
            ]
        round_no += 1
    return {"whole_bracket_ms": round((time.perf_counter() - start) * 1000, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args()
    emit(
        {
            "swiss_pairs_256": swiss(pair_swiss, EventFormat.SWISS_PAIRS, 256, args.rounds),
            "individual_256": swiss(
                pair_individual, EventFormat.SWISS_INDIVIDUAL, 256, args.rounds
            ),
            "knockout_256": knockout(256),
            "rounds": args.rounds,
        }
    )


if __name__ == "__main__":
    main()
