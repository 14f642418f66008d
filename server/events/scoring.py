"""An event's results, pure: boards to matchpoints, standings, knockout matches, the winner.

Every number here is computed from the stored boards alone (`BoardResult`s, read back from the
stored games) and the stored plans, with exact fractions and a fixed order, so a server rebuilding
an event after a restart gets the same standings bit for bit. docs/events.md ("Scoring",
"Forfeits") says the same rules for a player.

**Swiss** (pairs and individual). A board is compared within its direction across the round's
tables: a side gets 2 matchpoints for each other table whose same-direction margin it beat, 1 for
each it tied, and its percentage is MP / (2 x (tables - 1)). A board played at one table only is
compared with zero: won 100 %, tied 50 %, lost 0 %. An individual player scores his side's
percentage. Standings: the average percentage over the boards played; ties by total margin, then
by the earlier registration (the lower seed number).

**Forfeits**. A forfeited board scores 0 % for the entrant at fault and 60 % for everyone else at
that table (bridge's usual adjusted score), and its table is left out of the other tables'
comparison (the fallback bot played it). Its margin counts for no one.

**Knockout**. A board is won by the side with the positive margin. The match goes to the side with
more boards won, then the greater total margin, then the first of up to `MAX_EXTRA_BOARDS` extra
boards (sudden death) with a non-zero margin, then the higher seed. A side that forfeits loses the
match (both: the one that forfeited first loses; on the same board, the higher seed goes through).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

from server.events.plans import (
    EW_SEATS,
    NS_SEATS,
    Entrant,
    Plan,
    Plans,
    TablePlan,
    entrants_by_key,
    sides,
)
from server.events.settings import MAX_EXTRA_BOARDS, EventFormat, EventSettings

#: What a side not at fault scores on a forfeited board (and the side at fault: 0).
FORFEIT_SCORE = Fraction(60, 100)
NS, EW = 0, 1


@dataclass(frozen=True, slots=True)
class BoardResult:
    """One board played at one table: each direction's points on the deal (`deal_points`).

    `board` counts from 1 (deal `board - 1` of the round's `BoardSet`); a knockout's extra boards
    are `boards + 1` ... `boards + 3`. `forfeit_ns`/`forfeit_ew` say the side was at fault (not
    seated in time, or gone past its grace): the fallback bot played for it. In an individual
    event `forfeit_seats` may name the seats at fault (then only those players are: their partner
    is not); left empty, the flags put both players of the side at fault.
    """

    round_no: int
    table_no: int
    board: int
    ns_points: int
    ew_points: int
    forfeit_ns: bool = False
    forfeit_ew: bool = False
    forfeit_seats: frozenset[int] = field(default_factory=frozenset)

    @property
    def margin(self) -> int:
        """North-South's points less East-West's."""
        return self.ns_points - self.ew_points

    @property
    def forfeited(self) -> bool:
        return self.forfeit_ns or self.forfeit_ew or bool(self.forfeit_seats)


@dataclass(frozen=True, slots=True)
class StandingLine:
    """One entrant's line: `percent` its average matchpoint percentage (0..100, to 0.01), `boards`
    played (forfeited ones included), `margin` its total margin over them, `forfeits` the boards it
    forfeited and `forfeited_rounds` the rounds it forfeited some board of (two withdraw an
    entrant from a Swiss)."""

    place: int
    key: str
    percent: float
    boards: int
    margin: int
    forfeits: int
    forfeited_rounds: int = 0


@dataclass(frozen=True, slots=True)
class MatchLine:
    """One knockout match: `a` sat North-South (the higher seed), `b` East-West. `winner` is None
    while the match is undecided; `how` says what decided it ("boards", "margin", "extra", "seed",
    "forfeit"), `margin_a` is a's total margin over the boards played (extra ones included)."""

    round_no: int
    table_no: int
    a: str
    b: str
    boards_won_a: int
    boards_won_b: int
    winner: str | None
    how: str | None = None
    margin_a: int = 0


# ---------------------------------------------------------------- one board across the tables


#: A direction's score on one board as a fraction kept in integers: (numerator, denominator).
#: Standings add thousands of them; `Fraction` arithmetic at each step cost seconds on a full field.
Units = tuple[int, int]
_FORFEITER: Units = (0, 1)
_NOT_AT_FAULT: Units = (FORFEIT_SCORE.numerator, FORFEIT_SCORE.denominator)


def board_scores(
    results: Sequence[BoardResult],
) -> dict[tuple[int, int], tuple[Fraction, Fraction]]:
    """The score (0..1) of each direction on each board of `results`, keyed by (table, board).

    `results` are the results of one round. Raises `ValueError` for a board reported twice."""
    return {
        spot: (Fraction(*ns), Fraction(*ew)) for spot, (ns, ew) in _board_units(results).items()
    }


def _board_units(results: Sequence[BoardResult]) -> dict[tuple[int, int], tuple[Units, Units]]:
    by_board: dict[int, list[BoardResult]] = defaultdict(list)
    seen: set[tuple[int, int]] = set()
    for result in results:
        spot = (result.table_no, result.board)
        if spot in seen:
            raise ValueError(
                f"board {result.board} of table {result.table_no} in round {result.round_no} "
                "is reported twice"
            )
        seen.add(spot)
        by_board[result.board].append(result)
    out: dict[tuple[int, int], tuple[Units, Units]] = {}
    for board in sorted(by_board):
        # The comparison field, sorted: a margin's matchpoints are then two searches, not a pass
        # over every other table (a round of 128 tables has 128 x 127 comparisons a board).
        field = sorted(r.margin for r in by_board[board] if not r.forfeited)
        for result in by_board[board]:
            spot = (result.table_no, board)
            if result.forfeited:
                out[spot] = (
                    _FORFEITER if result.forfeit_ns else _NOT_AT_FAULT,
                    _FORFEITER if result.forfeit_ew else _NOT_AT_FAULT,
                )
                continue
            ns, whole = _ns_units(result.margin, field)
            out[spot] = ((ns, whole), (whole - ns, whole))
    return out


def matchpoints(margin: int, others: Iterable[int]) -> int:
    """A side's matchpoints on a board: 2 for each other same-direction margin it beat, 1 a tie."""
    return sum(2 if margin > other else 1 if margin == other else 0 for other in others)


def _ns_units(margin: int, field: Sequence[int]) -> Units:
    """North-South's score on a board, `field` being every same-direction margin of the board's
    comparison (this table's included), sorted: its matchpoints out of 2 x (tables - 1)."""
    others = len(field) - 1
    if not others:  # one table: compared with zero (a win 2 of 2, a tie 1 of 2)
        return (2 if margin > 0 else 1 if margin == 0 else 0, 2)
    below = bisect.bisect_left(field, margin)
    level = bisect.bisect_right(field, margin) - below - 1  # ties, this table left out
    return (2 * below + level, 2 * others)


# ---------------------------------------------------------------- standings


@dataclass
class _Tally:
    parts: dict[int, int] = field(default_factory=dict)  # denominator -> sum of numerators
    boards: int = 0
    margin: int = 0
    forfeited: int = 0  # boards
    forfeited_rounds: set[int] = field(default_factory=set)

    def add(self, units: Units) -> None:
        numerator, denominator = units
        self.parts[denominator] = self.parts.get(denominator, 0) + numerator

    def average(self) -> Fraction:
        """The average score over the boards played (0 with none), exact."""
        if not self.boards:
            return Fraction(0)
        total = sum((Fraction(n, d) for d, n in sorted(self.parts.items())), Fraction(0))
        return total / self.boards


def _tallies(plans: Plans, results: Sequence[BoardResult]) -> dict[str, _Tally]:
    tables = _tables(plans)
    tallies: dict[str, _Tally] = defaultdict(_Tally)
    by_round: dict[int, list[BoardResult]] = defaultdict(list)
    for result in results:
        if (result.round_no, result.table_no) not in tables:
            raise ValueError(
                f"a board of table {result.table_no} in round {result.round_no}, "
                "which the plans do not have"
            )
        by_round[result.round_no].append(result)
    for round_no in sorted(by_round):
        round_results = sorted(by_round[round_no], key=lambda r: (r.table_no, r.board))
        scores = _board_units(round_results)
        for result in round_results:
            plan = tables[(round_no, result.table_no)]
            score = scores[(result.table_no, result.board)]
            for direction, keys in enumerate(sides(plan)):
                for index, key in enumerate(keys):
                    at_fault = _at_fault(plan, result, direction, index)
                    tally = tallies[key]
                    tally.boards += 1
                    if result.forfeited:
                        tally.add(_FORFEITER if at_fault else _NOT_AT_FAULT)
                        if at_fault:
                            tally.forfeited += 1
                            tally.forfeited_rounds.add(round_no)
                        continue
                    tally.add(score[direction])
                    signed = result.margin if direction == NS else -result.margin
                    tally.margin += signed
    return tallies


def at_fault(plan: Plan, result: BoardResult) -> frozenset[str]:
    """The entrants at fault on `result`'s board at `plan`'s table: none unless it was forfeited;
    in an individual event only the players whose seats `forfeit_seats` names, if it names any."""
    if not result.forfeited:
        return frozenset()
    return frozenset(
        key
        for direction, keys in enumerate(sides(plan))
        for index, key in enumerate(keys)
        if _at_fault(plan, result, direction, index)
    )


def _at_fault(plan: Plan, result: BoardResult, direction: int, index: int) -> bool:
    if result.forfeit_seats and not isinstance(plan, TablePlan):
        seat = (NS_SEATS if direction == NS else EW_SEATS)[index]
        return seat in result.forfeit_seats
    return result.forfeit_ns if direction == NS else result.forfeit_ew


def _tables(plans: Plans) -> dict[tuple[int, int], Plan]:
    out: dict[tuple[int, int], Plan] = {}
    for round_no, tables in plans.items():
        for plan in tables:
            if (round_no, plan.table_no) in out:
                raise ValueError(f"round {round_no} has two tables numbered {plan.table_no}")
            out[(round_no, plan.table_no)] = plan
    return out


def standings(
    format: EventFormat,
    entrants: Sequence[Entrant],
    plans: Plans,
    results: Sequence[BoardResult],
    *,
    boards: int | None = None,
) -> list[StandingLine]:
    """Every entrant of `entrants` in order, place 1 first (a total order: no two share a place).

    Swiss: by average percentage, then total margin, then seed. Knockout: the winner, the
    finalist, then by the round each went out in (later first), then seed (its percentages are
    matchpoints too: every match of a round plays the same boards); `boards` (the regular
    boards of a match) is needed to decide a knockout's matches and is ignored in a Swiss. Plans'
    entrants missing from `entrants` (left out by the caller) count for no one."""
    entrants_by_key(entrants)  # refuses two entrants with one key
    tallies = _tallies(plans, results)

    averages = {key: tally.average() for key, tally in tallies.items()}

    def average(key: str) -> Fraction:
        return averages.get(key, Fraction(0))

    if format is EventFormat.KNOCKOUT_PAIRS:
        if boards is None:
            raise ValueError("a knockout's standings need its boards a match")
        reach = _knockout_reach(entrants, plans, results, boards)

        def ko_key(e: Entrant) -> tuple[int, int, int, str]:
            reached, out = reach.get(e.key, (0, True))
            return (-reached, int(out), e.seed, e.key)

        order = sorted(entrants, key=ko_key)
    else:

        def swiss_key(e: Entrant) -> tuple[Fraction, int, int, str]:
            tally = tallies.get(e.key)
            return (-average(e.key), -(tally.margin if tally else 0), e.seed, e.key)

        order = sorted(entrants, key=swiss_key)
    lines = []
    for place, entrant in enumerate(order, start=1):
        tally = tallies.get(entrant.key, _Tally())
        lines.append(
            StandingLine(
                place=place,
                key=entrant.key,
                # Exact until here: the order above used the fractions, this is what is shown.
                percent=round(float(average(entrant.key) * 100), 2),
                boards=tally.boards,
                margin=tally.margin,
                forfeits=tally.forfeited,
                forfeited_rounds=len(tally.forfeited_rounds),
            )
        )
    return lines


# ---------------------------------------------------------------- knockout


def decide_match(
    results: Sequence[BoardResult], boards: int, seeds: tuple[int, int]
) -> tuple[int | None, str | None]:
    """Who won one knockout table's match: 0 (North-South), 1 (East-West) or None (undecided),
    and what decided it. `results` are that table's boards; `seeds` the two sides' seeds."""
    by_board = {r.board: r for r in results}
    first_forfeit = [
        min((r.board for r in results if r.forfeit_ns), default=None),
        min((r.board for r in results if r.forfeit_ew), default=None),
    ]
    higher = NS if seeds[0] <= seeds[1] else EW
    if first_forfeit[NS] is not None or first_forfeit[EW] is not None:
        ns_at, ew_at = first_forfeit
        if ew_at is None or (ns_at is not None and ns_at < ew_at):
            return EW, "forfeit"
        if ns_at is None or ew_at < ns_at:
            return NS, "forfeit"
        return higher, "forfeit"
    if any(b not in by_board for b in range(1, boards + 1)):
        return None, None
    regular = [by_board[b].margin for b in range(1, boards + 1)]
    won = (sum(m > 0 for m in regular), sum(m < 0 for m in regular))
    if won[NS] != won[EW]:
        return (NS if won[NS] > won[EW] else EW), "boards"
    if sum(regular):
        return (NS if sum(regular) > 0 else EW), "margin"
    for extra in range(boards + 1, boards + 1 + MAX_EXTRA_BOARDS):
        if extra not in by_board:
            return None, None
        margin = by_board[extra].margin
        if margin:
            return (NS if margin > 0 else EW), "extra"
    return higher, "seed"


def needs_extra_board(results: Sequence[BoardResult], boards: int) -> bool:
    """Whether a knockout table must play another board now: every regular board played, the
    sides level on boards won and on margin, every extra board so far tied and fewer than
    `MAX_EXTRA_BOARDS` of them played. The next one is board `boards + extras played + 1`
    (deal `boards + extras played` of the round's `BoardSet`). Seeds do not matter here (they
    only decide once the extra boards are spent), hence none are asked for."""
    winner, _how = decide_match(results, boards, (1, 2))
    if winner is not None:
        return False
    played = {r.board for r in results}
    return all(b in played for b in range(1, boards + 1))


def knockout_matches(
    entrants: Sequence[Entrant], plans: Plans, results: Sequence[BoardResult], boards: int
) -> list[MatchLine]:
    """Every match of the bracket so far, by round then table."""
    seeds = {e.key: e.seed for e in entrants_by_key(entrants).values()}
    by_table: dict[tuple[int, int], list[BoardResult]] = defaultdict(list)
    for result in results:
        by_table[(result.round_no, result.table_no)].append(result)
    lines = []
    for round_no in sorted(plans):
        for plan in sorted(plans[round_no], key=lambda p: p.table_no):
            if not isinstance(plan, TablePlan):
                raise ValueError("a knockout's tables are pairs' tables")
            played = sorted(by_table.get((round_no, plan.table_no), ()), key=lambda r: r.board)
            side, how = decide_match(
                played, boards, (seeds.get(plan.north_south, 0), seeds.get(plan.east_west, 0))
            )
            margins = [r.margin for r in played if not r.forfeited]
            lines.append(
                MatchLine(
                    round_no=round_no,
                    table_no=plan.table_no,
                    a=plan.north_south,
                    b=plan.east_west,
                    boards_won_a=sum(m > 0 for m in margins),
                    boards_won_b=sum(m < 0 for m in margins),
                    winner=None if side is None else (plan.north_south, plan.east_west)[side],
                    how=how,
                    margin_a=sum(margins),
                )
            )
    return lines


def _knockout_reach(
    entrants: Sequence[Entrant], plans: Plans, results: Sequence[BoardResult], boards: int
) -> dict[str, tuple[int, bool]]:
    """Each entrant's last round in the bracket and whether it lost there."""
    reach: dict[str, tuple[int, bool]] = {}
    for line in knockout_matches(entrants, plans, results, boards):
        for key in (line.a, line.b):
            lost = line.winner is not None and line.winner != key
            if reach.get(key, (0, False))[0] <= line.round_no:
                reach[key] = (line.round_no, lost)
    return reach


# ---------------------------------------------------------------- the event as a whole


def round_finished(
    settings: EventSettings,
    entrants: Sequence[Entrant],
    plans: Plans,
    results: Sequence[BoardResult],
    round_no: int,
) -> bool:
    """Whether round `round_no` is over: every table has played its boards (a knockout: every
    match is decided, extra boards included). False for a round not planned."""
    tables = plans.get(round_no)
    if not tables:
        return False
    if settings.format is EventFormat.KNOCKOUT_PAIRS:
        lines = knockout_matches(entrants, {round_no: tables}, results, settings.boards)
        return all(line.winner is not None for line in lines)
    played = {(r.table_no, r.board) for r in results if r.round_no == round_no}
    return all(
        (plan.table_no, board) in played
        for plan in tables
        for board in range(1, settings.boards + 1)
    )


def finished(
    settings: EventSettings,
    entrants: Sequence[Entrant],
    plans: Plans,
    results: Sequence[BoardResult],
) -> bool:
    """Whether the event is over: its last round (`settings.rounds_for(len(entrants))`) is."""
    last = settings.rounds_for(len(entrants))
    return all(round_finished(settings, entrants, plans, results, r) for r in range(1, last + 1))


def winner(
    settings: EventSettings,
    entrants: Sequence[Entrant],
    plans: Plans,
    results: Sequence[BoardResult],
) -> str | None:
    """The winning entrant's key once the event is `finished`, else None."""
    if not finished(settings, entrants, plans, results):
        return None
    if settings.format is EventFormat.KNOCKOUT_PAIRS:
        last = settings.rounds_for(len(entrants))
        final = knockout_matches(entrants, {last: plans[last]}, results, settings.boards)
        return final[0].winner
    return standings(settings.format, entrants, plans, results)[0].key
