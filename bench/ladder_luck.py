"""How much of a deal's margin is card luck, and how much evidence each way of dealing gives per hand.

Run: `.venv/bin/python bench/ladder_luck.py` (`--deals` board sets of `--hands` deals, `--field` the
bots tables are drawn from, `--jobs`, `--seed`; bounded by `--max-seconds`).

Path: engine only (`bots.arena.match.play_game`). For each board set, a table of four drawn from the
field (team 0 at seats 0 and 2) plays the deals; the same four play them again with the teams swapped
onto the other cards (the old ladder's duplicate pair); another table of four drawn from the field
plays them once (a twin). Each table's margin on a deal (team 0's points less team 1's) is modelled
as the ratings model it (`server.ladder.ratings`):

    margin = luck + beta * (the search bots' count in team 0 less in team 1, and so on) + play noise

and the spreads are read off the residuals of a least-squares fit of `beta` (a skill per kind of bot,
random fixed at 0): `pair` is the old pair's difference (the same four, both sides), `twins` the
difference of the twins' margins (luck cancelled: twice the play noise), `sum` their sum (twice the
play noise and four times the luck), `alone` one table's margin (play noise and luck). So `play_sd`
is `twins / sqrt 2`, and `luck_sd` comes twice: from `alone` and from `sum`.

`evidence_per_hand` is what each way of dealing tells about the skills, per hand played: the
summed squared z of the fitted skills (their squared estimate over its variance, one term per kind
fitted) over the hands it took (two per deal for a pair and for twins, one for a table alone). Twins
add their difference's and their sum's (independent parts). The ladder's ratings use the same
decomposition with `BOARD_SD` (two plays) and `LUCK_SD`.

The last line of stdout is one JSON object (bench/report.py).
"""

import argparse
import math
import multiprocessing
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from bots.arena.match import GameJob, GameResult, play_game
from engine.ruleset import Ruleset

SPECS = {"search": "search,worlds=12", "heuristic": "heuristic", "random": "random"}
#: A table's kinds of bot by seat; team 0 at seats 0 and 2.
Seating = tuple[str, str, str, str]


def parse_field(text: str) -> list[str]:
    field: list[str] = []
    for part in text.split(","):
        kind, _, count = part.partition("=")
        if kind not in SPECS or not count.isdigit():
            raise SystemExit(f"--field: {part!r} is not KIND=N with KIND one of {sorted(SPECS)}")
        field += [kind] * int(count)
    if len(field) < 4:
        raise SystemExit("--field: four bots at least")
    return field


def skill_terms(seating: Seating, kinds: list[str]) -> list[float]:
    """Team 0's count of each kind less team 1's (the fitted kinds only)."""
    return [
        float(sum((1 if seat % 2 == 0 else -1) for seat, k in enumerate(seating) if k == kind))
        for kind in kinds
    ]


def margins(result: GameResult) -> list[int]:
    """Side 0's margin on each deal (side 0 is seats 0 and 2)."""
    return [deltas[0] - deltas[1] for deltas in result.hand_deltas]


def fit(rows: list[tuple[list[float], float]]) -> dict[str, Any]:
    """Least squares of margin on the skill terms: the residual spread and the evidence (summed
    squared z of the fitted skills)."""
    width = len(rows[0][0])
    xtx = [[sum(x[i] * x[j] for x, _ in rows) for j in range(width)] for i in range(width)]
    xty = [sum(x[i] * y for x, y in rows) for i in range(width)]
    inverse = invert(xtx)
    beta = [sum(inverse[i][j] * xty[j] for j in range(width)) for i in range(width)]
    residual = [y - sum(b * v for b, v in zip(beta, x, strict=True)) for x, y in rows]
    variance = sum(r * r for r in residual) / max(1, len(rows) - width)
    # z^2 of the fit as a whole: beta' (X'X) beta / variance.
    signal = sum(beta[i] * xtx[i][j] * beta[j] for i in range(width) for j in range(width))
    return {
        "n": len(rows),
        "sd": math.sqrt(variance),
        "beta": [round(b, 2) for b in beta],
        "z2": signal / variance,
    }


def invert(matrix: list[list[float]]) -> list[list[float]]:
    """Gauss-Jordan on a small symmetric matrix."""
    size = len(matrix)
    work = [row[:] + [1.0 if i == j else 0.0 for j in range(size)] for i, row in enumerate(matrix)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(work[r][col]))
        work[col], work[pivot] = work[pivot], work[col]
        lead = work[col][col]
        if abs(lead) < 1e-12:
            raise SystemExit("the field does not tell these kinds apart: widen --field")
        work[col] = [v / lead for v in work[col]]
        for row in range(size):
            if row != col:
                factor = work[row][col]
                work[row] = [a - factor * b for a, b in zip(work[row], work[col], strict=True)]
    return [row[size:] for row in work]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--deals", type=int, default=200, help="board sets")
    parser.add_argument("--hands", type=int, default=4, help="deals per board set")
    parser.add_argument("--field", default="search=2,heuristic=2,random=2")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--max-seconds", type=float, default=3600.0)
    args = parser.parse_args()
    field = parse_field(args.field)
    rng = random.Random(args.seed)
    ruleset = Ruleset.from_preset("standard", target_score=0, max_hands=args.hands).to_dict()
    # Random is fixed at 0 (skills are relative); with no random bot, heuristic is.
    present = sorted(set(field), key=list(SPECS).index)
    kinds = present[:-1]
    plays: list[tuple[int, str, Seating, int]] = []
    for deal in range(args.deals):
        first: Seating = tuple(rng.sample(field, 4))  # type: ignore[assignment]
        twin: Seating = tuple(rng.sample(field, 4))  # type: ignore[assignment]
        plays += [(deal, "first", first, 0), (deal, "swapped", first, 1), (deal, "twin", twin, 0)]
    jobs = [
        GameJob(
            index=i,
            deal_index=deal,
            rotation=rotation,
            specs=tuple(SPECS[k] for k in seating),
            ruleset=ruleset,
            seed=args.seed,
            max_hands=args.hands,
        )
        for i, (deal, _, seating, rotation) in enumerate(plays)
    ]
    start = time.perf_counter()
    got: dict[tuple[int, str], tuple[Seating, list[int]]] = {}
    with multiprocessing.get_context("spawn").Pool(max(1, args.jobs)) as pool:
        for (deal, name, seating, _rotation), result in zip(
            plays, pool.imap(play_game, jobs, chunksize=1), strict=False
        ):
            seats = tuple(seating[e] for e in result.seat_entrants)
            got[(deal, name)] = (seats, margins(result))  # type: ignore[assignment]
            if time.perf_counter() - start > args.max_seconds:
                pool.terminate()
                break
    rows: dict[str, list[tuple[list[float], float]]] = {
        "pair": [],
        "twins": [],
        "sum": [],
        "alone": [],
    }
    board_sets = 0
    for deal in range(args.deals):
        if not all((deal, n) in got for n in ("first", "swapped", "twin")):
            continue
        board_sets += 1
        (s1, m1), (s2, m2), (s3, m3) = (got[(deal, n)] for n in ("first", "swapped", "twin"))
        x1, x2, x3 = (skill_terms(s, kinds) for s in (s1, s2, s3))
        for a, b, c in zip(m1, m2, m3, strict=False):
            rows["pair"].append(([p - q for p, q in zip(x1, x2, strict=True)], float(a - b)))
            rows["twins"].append(([p - q for p, q in zip(x1, x3, strict=True)], float(a - c)))
            rows["sum"].append(([p + q for p, q in zip(x1, x3, strict=True)], float(a + c)))
            rows["alone"].append((x1, float(a)))
    fits = {name: fit(data) for name, data in rows.items() if data}
    deals = fits["pair"]["n"]
    play_var = fits["twins"]["sd"] ** 2 / 2
    luck_alone = fits["alone"]["sd"] ** 2 - play_var
    luck_sum = (fits["sum"]["sd"] ** 2 - 2 * play_var) / 4
    emit(
        {
            "path": "engine (bots.arena.match.play_game): each deal by a pair both ways, by twins,"
            " and by one table",
            "board_sets": board_sets,
            "deals": deals,
            "fits": {
                n: {**f, "sd": round(f["sd"], 1), "z2": round(f["z2"], 2)} for n, f in fits.items()
            },
            "play_sd": round(math.sqrt(play_var), 1),
            "luck_sd_from_alone": round(math.sqrt(max(luck_alone, 0.0)), 1),
            "luck_sd_from_sum": round(math.sqrt(max(luck_sum, 0.0)), 1),
            "evidence_per_hand": {
                "pair": round(fits["pair"]["z2"] / (2 * deals), 4),
                "twins": round((fits["twins"]["z2"] + fits["sum"]["z2"]) / (2 * deals), 4),
                "alone": round(fits["alone"]["z2"] / deals, 4),
            },
            "wall_s": round(time.perf_counter() - start, 1),
            "settings": {
                "field": args.field,
                "hands": args.hands,
                "seed": args.seed,
                "fitted": kinds,
                "search": SPECS["search"],
            },
        }
    )


if __name__ == "__main__":
    main()
