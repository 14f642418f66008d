"""How many ladder matches until the standings order search > heuristic > random, and how long it takes.

Run: `.venv/bin/python bench/ladder.py` (bounded by `--max-seconds`, 540 by default; `--hands` per
half, `--worlds` for the search bot's sampled worlds per decision (or `--ms` for a time budget instead),
`--jobs` worker processes, `--seed`).

Path: engine only. Six entrants (two each of random, heuristic and search; `--field` sets other counts,
e.g. `search=1,heuristic=1,random=2`, the smallest field that fills a table) are entered; each round the
ladder's own scheduler (`server.ladder.scheduler.form_matches`) picks the match, the two halves of the
duplicate pair are played by the local arena's engine driver (`bots.arena.match.play_game`, the same
deal seeds in both halves, every bot moved one seat on in the second), and the ladder's ratings module
(`server.ladder.ratings`) rates the match on each board's margin (`server.ladder.duplicate.board_points`). No
sockets and no tables: the figure is about the ratings and the match-making, not the server's
throughput. The search bot's budget is a fixed number of worlds (`search,worlds=12`), so its strength,
and the count of matches, do not depend on the machine's load; only the wall time does. For the same
reason the ratings' drift (`tau`, by the day) sees the matches a nominal second apart, not at the wall
clock's times.

Done when every search entrant's band (mu - 3 sigma .. mu + 3 sigma) lies wholly above every heuristic
entrant's, and every heuristic entrant's above every random entrant's. The last line of stdout is one
JSON object (bench/report.py): `reached`, `matches` (until the order held, or played when it did not),
`reached_after_s` (the wall time when it first held), `matches_played` and `wall_s` (a `--save` run
plays on past the order, to its limits), `ordered_by_rating_since` (the match from which the
conservative estimates alone have stood in that order, a weaker test; None if they do not at the
end), `standings` (best first, with mu, sigma, conservative rating and matches),
`first_separated_at_z` (the first match at which bands of mu +- z sigma were in order, for z = 1, 2,
3), `separation_z` (the largest z whose bands are in order at the end), and the settings.

Offline comparison of rating schemes: `--save FILE` writes every match played (its seats and each
half's points per hand, one JSON line each); `--replay FILE` rates those same matches again, without
playing, with the model's settings the flags name (`--tau`, `--board-sd`), and reports the same figures
(`wall_s` is then the rating time).
"""

import argparse
import contextlib
import itertools
import json
import multiprocessing
import resource
import sys
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from bots.arena.match import GameJob, GameResult, hand_seed, play_game
from engine.ruleset import Ruleset
from server.ladder.duplicate import HalfResult, board_points, team_points
from server.ladder.ratings import (
    BOARD_SD,
    MatchOutcome,
    Rating,
    RatingModel,
    Ratings,
    apply_match,
    ranked,
    separated,
)
from server.ladder.scheduler import Candidate, form_matches

KINDS = ("search", "heuristic", "random")  # strongest first: the order the standings should reach
DEFAULT_WORLDS = 12  # about what 20 ms a decision bought on a quiet core; see docs/ladder.md


DEFAULT_FIELD = "search=2,heuristic=2,random=2"


def parse_field(text: str) -> dict[str, int]:
    """`--field`: how many entrants of each kind, e.g. "search=1,heuristic=1,random=2"."""
    counts: dict[str, int] = {}
    for part in text.split(","):
        kind, _, count = part.partition("=")
        if kind not in KINDS or not count.isdigit() or int(count) < 1:
            raise SystemExit(f"--field: {part!r} is not KIND=N with KIND one of {KINDS} and N >= 1")
        counts[kind] = int(count)
    if set(counts) != set(KINDS) or sum(counts.values()) < 4:
        raise SystemExit(f"--field: every kind of {KINDS} at least once, four entrants at least")
    return counts


def entrants(search: str, field: dict[str, int]) -> dict[str, str]:
    """Entrant name -> bot spec: `field[kind]` of each kind."""
    spec = {"search": search, "heuristic": "heuristic", "random": "random"}
    return {f"{kind}-{i}": spec[kind] for kind in KINDS for i in range(1, field[kind] + 1)}


def ordered(ratings: Mapping[str, Rating], names: list[str]) -> bool:
    """True once each kind's bands lie wholly above the next kind's."""
    by_kind = {
        kind: [ratings.get(n, Rating()) for n in names if n.startswith(kind)] for kind in KINDS
    }
    return all(
        separated(by_kind[upper], by_kind[lower]) for upper, lower in itertools.pairwise(KINDS)
    )


def ordered_at_z(ratings: Mapping[str, Rating], names: list[str], z: float) -> bool:
    """`ordered` with bands of mu +- z sigma (z = 3 is the standings' own band)."""
    r = {n: ratings.get(n, Rating()) for n in names}
    low = {k: min(r[n].mu - z * r[n].sigma for n in names if n.startswith(k)) for k in KINDS}
    high = {k: max(r[n].mu + z * r[n].sigma for n in names if n.startswith(k)) for k in KINDS}
    return all(low[u] > high[lo] for u, lo in itertools.pairwise(KINDS))


def separation_z(ratings: Mapping[str, Rating], names: list[str]) -> float:
    """The largest z for which `ordered_at_z` holds: the smallest (mu_upper - mu_lower) /
    (sigma_upper + sigma_lower) over the pairs of adjacent kinds. The benchmark ends above 3."""
    r = {n: ratings.get(n, Rating()) for n in names}
    return min(
        (r[u].mu - r[lo].mu) / (r[u].sigma + r[lo].sigma)
        for upper, lower in itertools.pairwise(KINDS)
        for u in names
        if u.startswith(upper)
        for lo in names
        if lo.startswith(lower)
    )


def by_conservative(ratings: Mapping[str, Rating], names: list[str]) -> bool:
    """The weaker figure: each kind's conservative estimates all above the next kind's."""
    value = {n: ratings.get(n, Rating()).conservative for n in names}
    by_kind = {kind: [value[n] for n in names if n.startswith(kind)] for kind in KINDS}
    return all(min(by_kind[u]) > max(by_kind[lo]) for u, lo in itertools.pairwise(KINDS))


def half_result(result: GameResult, seated: tuple[str, ...], seed: int) -> HalfResult:
    """One half as the ladder keeps it: seats, final scores, and each hand's points by its seed."""
    seats = tuple(seated[e] for e in result.seat_entrants)
    hands = tuple(
        (hand_seed(seed, result.deal_index, number).hex(), deltas)
        for number, deltas in enumerate(result.hand_deltas)
    )
    return HalfResult(seats=seats, sides=result.sides, scores=result.scores, hands=hands)


#: The time the benchmark stamps between two matches, for the ratings' drift (`tau` a day): a
#: nominal second, about what a match takes, so that the count of matches does not depend on the
#: machine's load.
NOMINAL_S_PER_MATCH = 1.0


def outcome_of(number: int, seated: tuple[str, ...], halves: list[HalfResult]) -> MatchOutcome:
    teams = ((seated[0], seated[2]), (seated[1], seated[3]))
    return MatchOutcome(
        f"m-{number}",
        teams,
        team_points(halves, teams),
        boards=board_points(halves, teams),
        planned_boards=max(1, len(halves[0].hands)),
        finished_at=number * NOMINAL_S_PER_MATCH,
    )


class Tracker:
    """The ratings as matches come in, and the figures the benchmark reports about them."""

    def __init__(self, model: RatingModel, names: list[str]) -> None:
        self.model = model
        self.names = names
        self.ratings = Ratings()
        self.partners: dict[str, list[str]] = {n: [] for n in names}
        self.matches = 0
        self.reached_at: int | None = None
        self.reached_after_s: float | None = None  # the wall time when the order first held
        self.started = time.perf_counter()
        self.ordered_at: int | None = None  # from when the conservative estimates were in order
        self.first_at_z: dict[str, int | None] = {"1": None, "2": None, "3": None}

    def rate(self, outcome: MatchOutcome) -> bool:
        """Rate one match; True once the bands are in order (the benchmark's end)."""
        apply_match(self.model, self.ratings, outcome)
        for a, b in outcome.teams:
            self.partners[a].insert(0, b)
            self.partners[b].insert(0, a)
        self.matches += 1
        for z, seen in list(self.first_at_z.items()):
            if seen is None and ordered_at_z(self.ratings, self.names, float(z)):
                self.first_at_z[z] = self.matches
        in_order = by_conservative(self.ratings, self.names)
        self.ordered_at = (self.ordered_at or self.matches) if in_order else None
        if ordered(self.ratings, self.names):
            # The first time counts (a --save run plays on past it).
            if self.reached_at is None:
                self.reached_at = self.matches
                self.reached_after_s = round(time.perf_counter() - self.started, 2)
            return True
        return False

    def candidates(self) -> list[Candidate]:
        return [
            Candidate(
                entrant=n,
                account=i,
                mu=self.ratings.get(n, Rating()).mu,
                sigma=self.ratings.get(n, Rating()).sigma,
                played=self.ratings.get(n, Rating()).matches,
                recent_partners=tuple(self.partners[n][:8]),
            )
            for i, n in enumerate(self.names)
        ]

    def progress(self) -> str:
        return ", ".join(f"{n} {r.conservative:.1f}" for n, r in ranked(self.ratings))

    def figures(self, specs: dict[str, str]) -> dict[str, Any]:
        return {
            "reached": self.reached_at is not None,
            "matches": self.reached_at if self.reached_at is not None else self.matches,
            # A --save run plays on past the order; this is the wall time it took to reach it.
            "reached_after_s": self.reached_after_s,
            "matches_played": self.matches,
            "ordered_by_rating_since": self.ordered_at,
            "first_separated_at_z": self.first_at_z,
            # Bands part like the square root of the matches: a rough guide to how many more the
            # order needs when it was not reached.
            "separation_z": round(separation_z(self.ratings, self.names), 3),
            "standings": [
                {
                    "entrant": n,
                    "spec": specs.get(n, "?"),
                    "mu": round(r.mu, 3),
                    "sigma": round(r.sigma, 3),
                    "rating": round(r.conservative, 3),
                    "matches": r.matches,
                }
                for n, r in ranked(self.ratings)
            ],
        }


def saved_matches(path: Path) -> Iterator[tuple[tuple[str, ...], list[HalfResult]]]:
    """The matches a `--save` run wrote, in the order played."""
    with path.open() as lines:
        for line in lines:
            if line.strip():
                data = json.loads(line)
                halves = [HalfResult.from_dict(h) for h in data["halves"]]
                yield tuple(data["seated"]), halves


def play(args: argparse.Namespace, tracker: Tracker, specs: dict[str, str]) -> None:
    """Play matches the scheduler picks until the order holds or the time or count runs out."""
    ruleset = Ruleset.from_preset(args.preset, target_score=0, max_hands=args.hands).to_dict()
    start = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    with contextlib.ExitStack() as stack:
        save = stack.enter_context(Path(args.save).open("w")) if args.save else None
        pool = stack.enter_context(context.Pool(processes=max(1, args.jobs)))
        while tracker.matches < args.max_matches and time.perf_counter() - start < args.max_seconds:
            (planned,) = form_matches(
                tracker.candidates(), seed=args.seed * 100_003 + tracker.matches
            )
            seated = planned.entrants
            jobs = [
                GameJob(
                    index=2 * tracker.matches + half,
                    deal_index=tracker.matches,
                    rotation=half,
                    specs=tuple(specs[n] for n in seated),
                    ruleset=ruleset,
                    seed=args.seed,
                    max_hands=args.hands,
                )
                for half in (0, 1)
            ]
            halves = [half_result(r, seated, args.seed) for r in pool.map(play_game, jobs)]
            if save is not None:
                record = {"seated": list(seated), "halves": [h.to_dict() for h in halves]}
                save.write(json.dumps(record) + "\n")
                save.flush()
            # A --save run plays on to its limits, so the file serves any scheme's replay.
            if tracker.rate(outcome_of(tracker.matches + 1, seated, halves)) and save is None:
                break
            if tracker.matches % 25 == 0:
                elapsed = time.perf_counter() - start
                print(f"{tracker.matches} matches, {elapsed:.0f} s: {tracker.progress()}")


def replay(args: argparse.Namespace, tracker: Tracker) -> None:
    """Rate the saved matches in order until the order holds (or the file or count ends)."""
    for seated, halves in saved_matches(Path(args.replay)):
        if tracker.matches >= args.max_matches:
            break
        if tracker.rate(outcome_of(tracker.matches + 1, seated, halves)):
            break


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-seconds", type=float, default=540.0)
    parser.add_argument("--max-matches", type=int, default=100_000)
    parser.add_argument("--hands", type=int, default=4, help="hands per half")
    parser.add_argument("--worlds", type=int, default=DEFAULT_WORLDS, help="search worlds/decision")
    parser.add_argument("--ms", type=float, default=None, help="search CPU ms/decision instead")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (halves at once)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--preset", default="standard")
    parser.add_argument(
        "--tau", type=float, default=None, help="rating drift, points per sqrt(day)"
    )
    parser.add_argument("--board-sd", type=float, default=BOARD_SD, help="a board's spread, points")
    parser.add_argument(
        "--field",
        default=DEFAULT_FIELD,
        help="entrants of each kind, e.g. search=1,heuristic=1,random=2",
    )
    parser.add_argument("--save", default=None, help="write every match played to FILE")
    parser.add_argument("--replay", default=None, help="rate the matches a --save run wrote")
    args = parser.parse_args()

    search = (
        f"search,ms={args.ms:g},clock=cpu"
        if args.ms is not None
        else f"search,worlds={args.worlds}"
    )
    specs = entrants(search, parse_field(args.field))
    names = sorted(specs)
    model = RatingModel(tau=args.tau, board_sd=args.board_sd)
    tracker = Tracker(model, names)
    start = time.perf_counter()
    if args.replay:
        replay(args, tracker)
    else:
        play(args, tracker, specs)
    wall = time.perf_counter() - start
    # The workers' CPU time counts once the pool has reaped them (the `with` block above).
    cpu = sum(
        usage.ru_utime + usage.ru_stime
        for usage in (
            resource.getrusage(resource.RUSAGE_SELF),
            resource.getrusage(resource.RUSAGE_CHILDREN),
        )
    )
    figures: dict[str, Any] = {
        "path": (
            f"replay of {args.replay}"
            if args.replay
            else "engine (bots.arena.match.play_game) + server.ladder scheduler and ratings"
        ),
        **tracker.figures(specs),
        "wall_s": round(wall, 2),
        "s_per_match": round(wall / max(1, tracker.matches), 3),
        "cpu_s": round(cpu, 1),
        "cpu_s_per_match": round(cpu / max(1, tracker.matches), 3),
        "settings": {
            "hands_per_half": args.hands,
            "search": search,
            "jobs": args.jobs,
            "field": args.field,
            "seed": args.seed,
            "preset": args.preset,
            "max_seconds": args.max_seconds,
            "band": "mu +- 3 sigma",
            "rated_on": "each board's margin",
            "board_sd": model.board_sd,
            "points_per_rating_point": model.scale,
            "tau_per_day": model.tau,
            "nominal_s_per_match": NOMINAL_S_PER_MATCH,
        },
    }
    emit(figures)


if __name__ == "__main__":
    main()
