"""How many ladder matches until the standings order search > heuristic > random, and how long it takes.

Run: `.venv/bin/python bench/ladder.py` (bounded by `--max-seconds`, 600 by default; `--hands`, `--ms`
for the search bot's budget per decision, `--jobs` worker processes, `--seed`).

Path: engine only. Six entrants (two each of random, heuristic and search) are entered; each round the
ladder's own scheduler (`server.ladder.scheduler.form_matches`) picks the match, the two halves of the
duplicate pair are played by the local arena's engine driver (`bots.arena.match.play_game`, the same
deal seeds in both halves, every bot moved one seat on in the second), and the ladder's ratings module
(`server.ladder.ratings`) rates the combined points. No sockets and no tables: the figure is about the
ratings and the match-making, not the server's throughput.

Done when every search entrant's band (mu - 3 sigma .. mu + 3 sigma) lies wholly above every heuristic
entrant's, and every heuristic entrant's above every random entrant's. The last line of stdout is one
JSON object (bench/report.py): `reached`, `matches` (until the order held, or played when it did not),
`wall_s`, `ordered_by_rating_since` (the match from which the conservative estimates alone have stood in
that order, a weaker test; None if they do not at the end), `standings` (best first, with mu, sigma,
conservative rating and matches), `first_separated_at_z` (the first match at which bands of mu +- z
sigma were in order, for z = 1, 2, 3), and the settings.
"""

import argparse
import itertools
import multiprocessing
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from bots.arena.match import GameJob, GameResult, play_game
from engine.ruleset import Ruleset
from server.ladder.duplicate import HalfResult, team_points
from server.ladder.ratings import MatchOutcome, Rating, RatingModel, apply_match, ranked, separated
from server.ladder.scheduler import Candidate, form_matches

KINDS = ("search", "heuristic", "random")  # strongest first: the order the standings should reach


def entrants(ms: float) -> dict[str, str]:
    """Entrant name -> bot spec: two of each kind."""
    spec = {"search": f"search,ms={ms:g}", "heuristic": "heuristic", "random": "random"}
    return {f"{kind}-{i}": spec[kind] for kind in KINDS for i in (1, 2)}


def ordered(ratings: dict[str, Rating], names: list[str]) -> bool:
    """True once each kind's bands lie wholly above the next kind's."""
    by_kind = {
        kind: [ratings.get(n, Rating()) for n in names if n.startswith(kind)] for kind in KINDS
    }
    return all(
        separated(by_kind[upper], by_kind[lower]) for upper, lower in itertools.pairwise(KINDS)
    )


def ordered_at_z(ratings: dict[str, Rating], names: list[str], z: float) -> bool:
    """`ordered` with bands of mu +- z sigma (z = 3 is the standings' own band)."""
    r = {n: ratings.get(n, Rating()) for n in names}
    low = {k: min(r[n].mu - z * r[n].sigma for n in names if n.startswith(k)) for k in KINDS}
    high = {k: max(r[n].mu + z * r[n].sigma for n in names if n.startswith(k)) for k in KINDS}
    return all(low[u] > high[lo] for u, lo in itertools.pairwise(KINDS))


def by_conservative(ratings: dict[str, Rating], names: list[str]) -> bool:
    """The weaker figure: each kind's conservative estimates all above the next kind's."""
    value = {n: ratings.get(n, Rating()).conservative for n in names}
    by_kind = {kind: [value[n] for n in names if n.startswith(kind)] for kind in KINDS}
    return all(min(by_kind[u]) > max(by_kind[lo]) for u, lo in itertools.pairwise(KINDS))


def half_result(result: GameResult, seated: tuple[str, ...]) -> HalfResult:
    seats = tuple(seated[e] for e in result.seat_entrants)
    return HalfResult(seats=seats, sides=result.sides, scores=result.scores)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-seconds", type=float, default=600.0)
    parser.add_argument("--max-matches", type=int, default=100_000)
    parser.add_argument("--hands", type=int, default=4, help="hands per half")
    parser.add_argument("--ms", type=float, default=50.0, help="search budget per decision")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (halves at once)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--preset", default="standard")
    parser.add_argument("--beta", type=float, default=None, help="model beta (default sigma/2)")
    parser.add_argument("--tau", type=float, default=None, help="model tau (default mu/300)")
    args = parser.parse_args()

    specs = entrants(args.ms)
    names = sorted(specs)
    ruleset = Ruleset.from_preset(args.preset, target_score=0, max_hands=args.hands).to_dict()
    model = RatingModel(beta=args.beta, tau=args.tau)
    first_at_z: dict[str, int | None] = {"1": None, "2": None, "3": None}
    ratings: dict[str, Rating] = {}
    partners: dict[str, list[str]] = {n: [] for n in names}
    matches = 0
    reached_at: int | None = None
    ordered_at: int | None = (
        None  # first match after which the conservative estimates were in order
    )
    start = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes=max(1, args.jobs)) as pool:
        while matches < args.max_matches and time.perf_counter() - start < args.max_seconds:
            candidates = [
                Candidate(
                    entrant=n,
                    account=i,
                    mu=ratings.get(n, Rating()).mu,
                    sigma=ratings.get(n, Rating()).sigma,
                    played=ratings.get(n, Rating()).matches,
                    recent_partners=tuple(partners[n][:8]),
                )
                for i, n in enumerate(names)
            ]
            (planned,) = form_matches(candidates, seed=args.seed * 100_003 + matches)
            seated = planned.entrants
            jobs = [
                GameJob(
                    index=2 * matches + half,
                    deal_index=matches,
                    rotation=half,
                    specs=tuple(specs[n] for n in seated),
                    ruleset=ruleset,
                    seed=args.seed,
                    max_hands=args.hands,
                )
                for half in (0, 1)
            ]
            halves = [half_result(r, seated) for r in pool.map(play_game, jobs)]
            teams = ((seated[0], seated[2]), (seated[1], seated[3]))
            outcome = MatchOutcome(f"m-{matches + 1}", teams, team_points(halves, teams))
            apply_match(model, ratings, outcome)
            for a, b in teams:
                partners[a].insert(0, b)
                partners[b].insert(0, a)
            matches += 1
            for z, seen in list(first_at_z.items()):
                if seen is None and ordered_at_z(ratings, names, float(z)):
                    first_at_z[z] = matches
            in_order = by_conservative(ratings, names)
            ordered_at = (ordered_at or matches) if in_order else None
            if ordered(ratings, names):
                reached_at = matches
                break
            if matches % 25 == 0:
                line = ", ".join(f"{n} {r.conservative:.1f}" for n, r in ranked(ratings))
                print(f"{matches} matches, {time.perf_counter() - start:.0f} s: {line}", flush=True)
    wall = time.perf_counter() - start
    figures: dict[str, Any] = {
        "path": "engine (bots.arena.match.play_game) + server.ladder scheduler and ratings",
        "reached": reached_at is not None,
        "matches": reached_at if reached_at is not None else matches,
        "wall_s": round(wall, 2),
        "ordered_by_rating_since": ordered_at,
        "first_separated_at_z": first_at_z,
        "s_per_match": round(wall / max(1, matches), 3),
        "standings": [
            {
                "entrant": n,
                "spec": specs[n],
                "mu": round(r.mu, 3),
                "sigma": round(r.sigma, 3),
                "rating": round(r.conservative, 3),
                "matches": r.matches,
            }
            for n, r in ranked(ratings)
        ],
        "settings": {
            "hands_per_half": args.hands,
            "search_ms": args.ms,
            "jobs": args.jobs,
            "seed": args.seed,
            "preset": args.preset,
            "max_seconds": args.max_seconds,
            "band": "mu +- 3 sigma",
            "beta": model.model.beta,
            "tau": model.model.tau,
        },
    }
    emit(figures)


if __name__ == "__main__":
    main()
