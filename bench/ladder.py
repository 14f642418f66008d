"""How many ladder matches until the standings order search > heuristic > random, and how long it takes.

Run: `.venv/bin/python bench/ladder.py` (bounded by `--max-seconds`, 540 by default; `--hands` per
match, `--worlds` for the search bot's sampled worlds per decision (or `--ms` for a time budget
instead), `--jobs` worker processes, `--seed`).

Path: engine only. Eight entrants (three each of search and heuristic, two random; `--field` sets
other counts, e.g. `search=2,heuristic=2,random=2`, or `search=1,heuristic=1,random=2`, the smallest
field that fills a table) are entered; each round the ladder's own scheduler
(`server.ladder.scheduler.form_matches`) picks the matches, as many as the free entrants fill, and
they are dealt as on the server: two matches that start together are twins, dealt the same fresh
board set at their two tables (`server.ladder.duplicate`), a match left over plays a board set of its
own. Every table is played once by the local arena's engine driver (`bots.arena.match.play_game`;
no entrant ever sees a deal twice), and the ladder's ratings module (`server.ladder.ratings`) rates
each round as the service does (`apply_board_set`: the twins' deals compared, luck cancelled). No
sockets and no tables: the figure is about the ratings and the match-making, not the server's
throughput. The search bot's budget is a fixed number of worlds (`search,worlds=12`), so its
strength, and the count of matches, do not depend on the machine's load; only the wall time does.
For the same reason the ratings' drift (`tau`, by the day) sees the rounds a nominal second apart,
not at the wall clock's times.

Done when every search entrant's band (mu - 3 sigma .. mu + 3 sigma) lies wholly above every heuristic
entrant's, and every heuristic entrant's above every random entrant's. The last line of stdout is one
JSON object (bench/report.py): `reached`, `matches` (until the order held, or played when it did not:
a match is one table of `hands` deals), `rounds` (scheduling rounds, each a board set or a pair of
twins), `tables_with_a_twin`, `reached_after_s` (the wall time when it first held), `matches_played`
and `wall_s` (a `--save` run plays on past the order, to its limits), `ordered_by_rating_since` (the
match from which the conservative estimates alone have stood in that order, a weaker test; None if
they do not at the end), `standings` (best first, with mu, sigma, conservative rating and matches),
`first_separated_at_z` (the first match at which bands of mu +- z sigma were in order, for z = 1, 2,
3), `separation_z` (the largest z whose bands are in order at the end), `calibration` (the mean
squared standardized error of each piece of evidence as the ratings predicted it before taking it:
1 is exact), and the settings.

Offline comparison of rating schemes: `--save FILE` writes every round played (its tables: seats and
each deal's points per side, one JSON line each); `--replay FILE` rates those same rounds again,
without playing, with the model's settings the flags name (`--tau`, `--board-sd`, `--luck-sd`), and
reports the same figures (`wall_s` is then the rating time). `--resume FILE` rates what a `--save` run
wrote to FILE and plays on from there, appending (the same rounds the run would have played, had it
not stopped: the scheduling and the deals depend only on the seed and the rounds so far), so a long
run can be done in several sittings; `matches_resumed` says how many were read back;
`--stop-when-reached` ends a `--save` or `--resume` run once the order holds. A file an older
benchmark saved (the duplicate pairs of the old ladder, `{"seated", "halves"}` per line) replays as
those pairs.
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
from server.ladder.duplicate import (
    TableResult,
    board_points,
    deal_points,
    team_points,
    twin_groups,
)
from server.ladder.ratings import (
    BOARD_SD,
    LUCK_SD,
    MatchOutcome,
    Rating,
    RatingModel,
    Ratings,
    apply_board_set,
    ranked,
    separated,
)
from server.ladder.scheduler import Candidate, form_matches

KINDS = ("search", "heuristic", "random")  # strongest first: the order the standings should reach
DEFAULT_WORLDS = 12  # about what 20 ms a decision bought on a quiet core; see docs/ladder.md


DEFAULT_FIELD = "search=3,heuristic=3,random=2"


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


def table_result(result: GameResult, seated: tuple[str, ...], seed: int) -> TableResult:
    """One table as the ladder keeps it: seats, final scores, and each hand's points by its seed."""
    seats = tuple(seated[e] for e in result.seat_entrants)
    hands = tuple(
        (hand_seed(seed, result.deal_index, number).hex(), deltas)
        for number, deltas in enumerate(result.hand_deltas)
    )
    return TableResult(seats=seats, sides=result.sides, scores=result.scores, hands=hands)


#: The time the benchmark stamps between two rounds, for the ratings' drift (`tau` a day): a
#: nominal second, about what a round takes, so that the count of matches does not depend on the
#: machine's load.
NOMINAL_S_PER_ROUND = 1.0

#: One table of a round as the benchmark keeps it: who sat where (team 0 at seats 0 and 2), and
#: what the table played.
Played = tuple[tuple[str, ...], TableResult]


def outcomes_of(round_no: int, tables: list[Played], hands: int) -> list[MatchOutcome]:
    """The round's matches as the ladder rates them: twins name each other."""
    ids = [f"m-{round_no}-{i}" for i in range(len(tables))]
    out = []
    for index, (seated, table) in enumerate(tables):
        teams = ((seated[0], seated[2]), (seated[1], seated[3]))
        twin = ids[1 - index] if len(tables) == 2 else None
        out.append(
            MatchOutcome(
                ids[index],
                teams,
                team_points([table], teams),
                deals=deal_points(table, teams),
                planned_boards=hands,
                finished_at=round_no * NOMINAL_S_PER_ROUND,
                twin=twin,
            )
        )
    return out


def pair_outcome(number: int, seated: tuple[str, ...], halves: list[TableResult]) -> MatchOutcome:
    """A duplicate pair an older benchmark saved (both halves by the same four)."""
    teams = ((seated[0], seated[2]), (seated[1], seated[3]))
    return MatchOutcome(
        f"m-{number}",
        teams,
        team_points(halves, teams),
        boards=board_points(halves, teams),
        planned_boards=max(1, len(halves[0].hands)),
        finished_at=number * NOMINAL_S_PER_ROUND,
    )


class Tracker:
    """The ratings as rounds come in, and the figures the benchmark reports about them."""

    def __init__(self, model: RatingModel, names: list[str]) -> None:
        self.model = model
        self.names = names
        self.ratings = Ratings()
        self.partners: dict[str, list[str]] = {n: [] for n in names}
        self.matches = 0
        self.rounds = 0
        self.twinned = 0  # matches that had a twin
        self.reached_at: int | None = None
        self.reached_after_s: float | None = None  # the wall time when the order first held
        self.started = time.perf_counter()
        self.ordered_at: int | None = None  # from when the conservative estimates were in order
        self.first_at_z: dict[str, int | None] = {"1": None, "2": None, "3": None}
        self.squared_errors: list[float] = []  # each piece of evidence, standardized
        self.resumed_at = 0  # matches a --resume run read back before playing on

    def rate(self, outcomes: list[MatchOutcome]) -> bool:
        """Rate one round's matches together; True once the bands are in order (the end)."""
        self._check_predictions(outcomes)
        apply_board_set(self.model, self.ratings, outcomes)
        for outcome in outcomes:
            for a, b in outcome.teams:
                self.partners[a].insert(0, b)
                self.partners[b].insert(0, a)
        self.matches += len(outcomes)
        self.rounds += 1
        self.twinned += len(outcomes) if len(outcomes) > 1 else 0
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

    def _check_predictions(self, outcomes: list[MatchOutcome]) -> None:
        """How far each piece of evidence fell from what the ratings expected, in its own
        predicted spread (the belief's and the evidence's noise): a mean square of 1 is a model
        as sure as it should be."""
        tables = [o for o in outcomes if o.deals and not o.forfeits]
        variance = self.model.sigma**2
        for part in self.model.evidence(tables):
            mean, spread = self.ratings.predict(part.signs, self.model.mu, variance)
            self.squared_errors.append((part.margin - mean) ** 2 / (spread + part.variance))

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
        errors = self.squared_errors
        return {
            "reached": self.reached_at is not None,
            "matches": self.reached_at if self.reached_at is not None else self.matches,
            # A --save run plays on past the order; this is the wall time it took to reach it.
            "reached_after_s": self.reached_after_s,
            "matches_played": self.matches,
            # A --resume run: the matches read back from the file (their wall time is the earlier
            # runs'; `reached_after_s` and `wall_s` are this run's).
            "matches_resumed": self.resumed_at,
            "rounds": self.rounds,
            "tables_with_a_twin": self.twinned,
            "ordered_by_rating_since": self.ordered_at,
            "first_separated_at_z": self.first_at_z,
            # Bands part like the square root of the matches: a rough guide to how many more the
            # order needs when it was not reached.
            "separation_z": round(separation_z(self.ratings, self.names), 3),
            "calibration": {
                "mean_squared_z": round(sum(errors) / len(errors), 3) if errors else None,
                "pieces_of_evidence": len(errors),
            },
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


def saved_rounds(path: Path, hands: int) -> Iterator[list[MatchOutcome]]:
    """The rounds a `--save` run wrote, in the order played, as the matches to rate together."""
    with path.open() as lines:
        for number, line in enumerate(lines, start=1):
            if not line.strip():
                continue
            data = json.loads(line)
            if "halves" in data:  # an older benchmark's duplicate pair
                halves = [TableResult.from_dict(h) for h in data["halves"]]
                yield [pair_outcome(number, tuple(data["seated"]), halves)]
                continue
            tables = [
                (tuple(t["seated"]), TableResult.from_dict(t["table"])) for t in data["tables"]
            ]
            yield outcomes_of(number, tables, int(data.get("hands", hands)))


def play(args: argparse.Namespace, tracker: Tracker, specs: dict[str, str]) -> None:
    """Play rounds the scheduler picks until the order holds or the time or count runs out."""
    ruleset = Ruleset.from_preset(args.preset, target_score=0, max_hands=args.hands).to_dict()
    start = time.perf_counter()
    context = multiprocessing.get_context("spawn")
    with contextlib.ExitStack() as stack:
        # A resumed run appends to the file it was resumed from.
        mode = "a" if args.resume else "w"
        target = args.resume or args.save
        save = stack.enter_context(Path(target).open(mode)) if target else None
        pool = stack.enter_context(context.Pool(processes=max(1, args.jobs)))
        while tracker.matches < args.max_matches and time.perf_counter() - start < args.max_seconds:
            planned = form_matches(tracker.candidates(), seed=args.seed * 100_003 + tracker.rounds)
            jobs: list[GameJob] = []
            seats: list[tuple[str, ...]] = []
            # As on the server: two matches that start together are twins, on one board set (one
            # `deal_index`); a match left over gets a board set of its own.
            groups = twin_groups([match.entrants for match in planned])
            for group in groups:
                board_set = tracker.rounds * len(tracker.names) + len(seats)
                for seated in group:
                    jobs.append(
                        GameJob(
                            # Every table of the run its own number: the bots' own seeds.
                            index=tracker.matches + len(jobs),
                            deal_index=board_set,
                            rotation=0,
                            specs=tuple(specs[n] for n in seated),
                            ruleset=ruleset,
                            seed=args.seed,
                            max_hands=args.hands,
                        )
                    )
                    seats.append(seated)
            results = pool.map(play_game, jobs)
            played = [
                (seated, table_result(result, seated, args.seed))
                for seated, result in zip(seats, results, strict=True)
            ]
            done = False
            first = 0
            for group in groups:
                tables = played[first : first + len(group)]
                first += len(group)
                if save is not None:
                    record = {
                        "hands": args.hands,
                        "tables": [{"seated": list(s), "table": t.to_dict()} for s, t in tables],
                    }
                    save.write(json.dumps(record) + "\n")
                    save.flush()
                outcomes = outcomes_of(tracker.rounds + 1, tables, args.hands)
                done = tracker.rate(outcomes) or done
            # A --save (or --resume) run plays on to its limits, so the file serves any
            # scheme's replay, and a later --resume; unless told to stop at the order.
            if (done or tracker.reached_at is not None) and (
                save is None or args.stop_when_reached
            ):
                break
            if tracker.rounds % 25 == 0:
                elapsed = time.perf_counter() - start
                print(
                    f"{tracker.matches} matches, {tracker.rounds} board sets,"
                    f" {elapsed:.0f} s: {tracker.progress()}"
                )


def replay(args: argparse.Namespace, tracker: Tracker) -> None:
    """Rate the saved rounds in order until the order holds (or the file or count ends)."""
    for outcomes in saved_rounds(Path(args.replay), args.hands):
        if tracker.matches >= args.max_matches:
            break
        if tracker.rate(outcomes):
            break


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--max-seconds", type=float, default=540.0)
    parser.add_argument("--max-matches", type=int, default=100_000)
    parser.add_argument("--hands", type=int, default=4, help="hands per match")
    parser.add_argument("--worlds", type=int, default=DEFAULT_WORLDS, help="search worlds/decision")
    parser.add_argument("--ms", type=float, default=None, help="search CPU ms/decision instead")
    parser.add_argument("--jobs", type=int, default=2, help="worker processes (tables at once)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--preset", default="standard")
    parser.add_argument(
        "--tau", type=float, default=None, help="rating drift, points per sqrt(day)"
    )
    parser.add_argument("--board-sd", type=float, default=BOARD_SD, help="a board's spread, points")
    parser.add_argument("--luck-sd", type=float, default=LUCK_SD, help="a deal's luck, points")
    parser.add_argument(
        "--field",
        default=DEFAULT_FIELD,
        help="entrants of each kind, e.g. search=2,heuristic=2,random=2",
    )
    parser.add_argument("--save", default=None, help="write every match played to FILE")
    parser.add_argument("--replay", default=None, help="rate the matches a --save run wrote")
    parser.add_argument(
        "--stop-when-reached",
        action="store_true",
        help="a --save or --resume run stops once the order holds (it plays on by default)",
    )
    parser.add_argument(
        "--resume",
        default=None,
        help="rate what a --save run wrote to FILE, then play on where it stopped, appending",
    )
    args = parser.parse_args()

    search = (
        f"search,ms={args.ms:g},clock=cpu"
        if args.ms is not None
        else f"search,worlds={args.worlds}"
    )
    specs = entrants(search, parse_field(args.field))
    names = sorted(specs)
    model = RatingModel(tau=args.tau, board_sd=args.board_sd, luck_sd=args.luck_sd)
    tracker = Tracker(model, names)
    start = time.perf_counter()
    if args.replay:
        replay(args, tracker)
    else:
        if args.resume:
            # The same rounds the saved run played, rated again: the ratings, partners and
            # counts it had, so the scheduler picks on as it would have.
            for outcomes in saved_rounds(Path(args.resume), args.hands):
                tracker.rate(outcomes)
            tracker.resumed_at = tracker.matches
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
            "hands_per_match": args.hands,
            "search": search,
            "jobs": args.jobs,
            "field": args.field,
            "seed": args.seed,
            "preset": args.preset,
            "max_seconds": args.max_seconds,
            "band": "mu +- 3 sigma",
            "rated_on": "each deal's margin, twins' deals compared",
            "board_sd": model.board_sd,
            "luck_sd": model.luck_sd,
            "points_per_rating_point": model.scale,
            "tau_per_day": model.tau,
            "nominal_s_per_round": NOMINAL_S_PER_ROUND,
        },
    }
    emit(figures)


if __name__ == "__main__":
    main()
