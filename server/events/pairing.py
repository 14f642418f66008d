"""Who meets whom in each round of an event, pure and deterministic.

- **Swiss pairs** (`pair_swiss`): round 1 is a seeded shuffle of the field (the event's seed);
  later rounds go down the standings, the top pair meeting the highest-placed pair it has not met,
  and so on, backtracking (a bounded search) when the bottom of the field would be left with
  rematches only. Where no pairing free of rematches exists, or the search spends its budget, the
  pairing with the fewest rematches the same search finds is taken. The pair that has sat
  East-West more often sits North-South.
- **Swiss individual** (`pair_individual`): round 1 is a seeded shuffle in tables of four; later
  rounds first form partnerships down the standings, nobody partnering a player he partnered
  before while any pairing avoids it, then seat those partnerships against each other down the
  standings, fewest repeated opponents first; each table's four are then split the most even way
  (first and fourth against second and third) that repeats no partner and no more opponents.
- **Knockout** (`bracket`): round 1 places the field in the standard seeding positions (1 v 8,
  4 v 5, 2 v 7, 3 v 6 for eight), so the top seeds can meet only late; each later round pairs the
  winners of neighbouring matches, in bracket order. The higher seed sits North-South.

A field must be whole before pairing: `fill_field` says how many house entrants to add (an even
number of pairs, players a multiple of four, pairs a power of two for a bracket). The entrants
passed to a Swiss round are the ones still playing (withdrawn ones left out); a bracket's are all
of them (a withdrawn pair forfeits its match).
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence

from server.events.plans import (
    Entrant,
    IndividualTable,
    Plan,
    Plans,
    TablePlan,
    entrants_by_key,
    sides,
)
from server.events.scoring import BoardResult, knockout_matches, standings
from server.events.settings import EventFormat, knockout_rounds

__all__ = [
    "Entrant",
    "IndividualTable",
    "TablePlan",
    "bracket",
    "fill_field",
    "pair_individual",
    "pair_swiss",
    "seeding_positions",
]

#: Steps one backtracking search may take before it settles for more repeats (bounds the time a
#: round's pairing costs on any field: a few milliseconds for 256 entrants).
SEARCH_BUDGET = 20_000
#: An individual's cost of facing a player met `k` times before is REPEAT_WEIGHT ** k - 1.
REPEAT_WEIGHT = 4


def fill_field(entrants: Sequence[Entrant], format: EventFormat) -> int:
    """How many house entrants make this field whole for `format` (0 when it is)."""
    count = len(entrants)
    if format is EventFormat.SWISS_PAIRS:
        return max(2, count + count % 2) - count
    if format is EventFormat.SWISS_INDIVIDUAL:
        return max(4, count + (-count) % 4) - count
    size = 2
    while size < count:
        size *= 2
    return size - count


# ---------------------------------------------------------------- Swiss pairs


def pair_swiss(
    entrants: Sequence[Entrant],
    results: Sequence[BoardResult],
    round_no: int,
    seed: int,
    *,
    plans: Plans,
) -> list[TablePlan]:
    """The tables of round `round_no` of a Swiss by pairs. `plans` and `results` are the rounds
    before (later ones are ignored). Raises `ValueError` for an odd field (fill it first)."""
    _check_field(entrants, round_no, 2, "a Swiss by pairs needs an even number of pairs")
    before = _before(plans, round_no)
    if round_no == 1:
        order = _shuffled(entrants, seed, round_no)
        couples = [(order[i], order[i + 1]) for i in range(0, len(order), 2)]
    else:
        ranked = _ranked(EventFormat.SWISS_PAIRS, entrants, before, results, round_no)
        met: Counter[frozenset[str]] = Counter()
        for tables in before.values():
            for plan in tables:
                ns, ew = sides(plan)
                met[frozenset((ns[0], ew[0]))] += 1
        couples = _pair_up(ranked, lambda a, b: met[frozenset((a, b))])
    north = _north_counts(before)
    out = []
    for table_no, (upper, lower) in enumerate(couples, start=1):
        # The better placed sits North-South unless it has done so more often (a tie alternates
        # by table after round 1, so the directions stay mixed down the field).
        swap = north[lower] < north[upper] or (
            north[lower] == north[upper] and round_no > 1 and table_no % 2 == 0
        )
        out.append(TablePlan(table_no, *((lower, upper) if swap else (upper, lower))))
    return out


# ---------------------------------------------------------------- Swiss individual


def pair_individual(
    entrants: Sequence[Entrant],
    results: Sequence[BoardResult],
    round_no: int,
    seed: int,
    *,
    plans: Plans,
) -> list[IndividualTable]:
    """The tables of round `round_no` of an individual Swiss (seats 0 and 2 partners, 1 and 3).
    Raises `ValueError` for a field that is not a multiple of four (fill it first)."""
    _check_field(
        entrants, round_no, 4, "an individual seats four a table: the field must be a multiple of 4"
    )
    before = _before(plans, round_no)
    north = _north_counts(before)
    if round_no == 1:
        order = _shuffled(entrants, seed, round_no)
        return [
            IndividualTable(i // 4 + 1, (order[i], order[i + 1], order[i + 2], order[i + 3]))
            for i in range(0, len(order), 4)
        ]
    partnered: Counter[frozenset[str]] = Counter()
    opposed: Counter[frozenset[str]] = Counter()
    for tables in before.values():
        for plan in tables:
            ns, ew = sides(plan)
            for side in (ns, ew):
                partnered[frozenset(side)] += 1
            for x in ns:
                for y in ew:
                    opposed[frozenset((x, y))] += 1
    ranked = _ranked(EventFormat.SWISS_INDIVIDUAL, entrants, before, results, round_no)
    partnerships = _pair_up(ranked, lambda a, b: partnered[frozenset((a, b))])
    # Partnerships in the order of their better-placed player (the pairing goes top down, so its
    # first member is the better placed); each is named by its index for the second matching.
    names = [str(i) for i in range(len(partnerships))]

    def opponents(p: str, q: str) -> int:
        # Facing a player again costs more the more often it happened: a third meeting outweighs
        # several second ones, so repeats spread over the field rather than pile on one pair.
        return sum(
            REPEAT_WEIGHT ** opposed[frozenset((x, y))] - 1
            for x in partnerships[int(p)]
            for y in partnerships[int(q)]
        )

    rank = {key: place for place, key in enumerate(ranked)}

    def split_key(split: tuple[tuple[str, str], tuple[str, str]]) -> tuple[int, int, int]:
        (a, b), (c, d) = split
        repeats = partnered[frozenset((a, b))] + partnered[frozenset((c, d))]
        facing = sum(
            REPEAT_WEIGHT ** opposed[frozenset((x, y))] - 1 for x in (a, b) for y in (c, d)
        )
        # Evenness: the partnerships' summed places closest (1 and 4 against 2 and 3).
        return (repeats, facing, abs(rank[a] + rank[b] - rank[c] - rank[d]))

    out = []
    for table_no, (p, q) in enumerate(_pair_up(names, opponents), start=1):
        # The table's four are settled; of the three ways to split them into partnerships, keep
        # the one with the fewest repeated partners, then repeated opponents, then the most even.
        w, x, y, z = sorted((*partnerships[int(p)], *partnerships[int(q)]), key=rank.__getitem__)
        first, second = min((((w, z), (x, y)), ((w, y), (x, z)), ((w, x), (y, z))), key=split_key)
        first_north = north[first[0]] + north[first[1]]
        second_north = north[second[0]] + north[second[1]]
        if second_north < first_north or (second_north == first_north and table_no % 2 == 0):
            first, second = second, first
        out.append(IndividualTable(table_no, (first[0], second[0], first[1], second[1])))
    return out


# ---------------------------------------------------------------- knockout


def seeding_positions(size: int) -> list[int]:
    """The seeds (1-based) in bracket order for a bracket of `size` (a power of two): neighbours
    meet in round 1, and seeds 1 and 2 only in the final. For 8: 1 8 4 5 2 7 3 6."""
    if size < 2 or size & (size - 1):
        raise ValueError(f"a bracket's size is a power of two, not {size}")
    order = [1, 2]
    while len(order) < size:
        total = 2 * len(order) + 1
        order = [s for seed in order for s in (seed, total - seed)]
    return order


def bracket(
    entrants: Sequence[Entrant],
    results: Sequence[BoardResult],
    round_no: int,
    *,
    plans: Plans,
    boards: int,
) -> list[TablePlan]:
    """The matches of round `round_no` of a knockout. `plans`/`results` are the rounds before;
    `boards` a match's regular boards (to decide them). Raises `ValueError` for a field that is
    not a power of two (fill it first), for a round past the final, or when a match of the round
    before is not decided yet."""
    by_key = entrants_by_key(entrants)
    count = len(entrants)
    if count < 2 or count & (count - 1):
        raise ValueError(
            f"a bracket needs a power of two of pairs (fill the field with house pairs), not {count}"
        )
    last = knockout_rounds(count)
    if not 1 <= round_no <= last:
        raise ValueError(f"a bracket of {count} pairs has rounds 1 to {last}, not {round_no}")
    if round_no == 1:
        ranked = sorted(entrants, key=lambda e: (e.seed, e.key))
        order = [ranked[s - 1].key for s in seeding_positions(count)]
    else:
        previous = plans.get(round_no - 1)
        if not previous:
            raise ValueError(f"round {round_no - 1} of the bracket was never paired")
        lines = knockout_matches(entrants, {round_no - 1: previous}, results, boards)
        order = []
        for line in lines:
            if line.winner is None:
                raise ValueError(
                    f"the match at table {line.table_no} of round {round_no - 1} is not decided"
                )
            order.append(line.winner)
    tables = []
    for i in range(0, len(order), 2):
        a, b = by_key[order[i]], by_key[order[i + 1]]
        if (b.seed, b.key) < (a.seed, a.key):
            a, b = b, a
        tables.append(TablePlan(i // 2 + 1, a.key, b.key))
    return tables


# ---------------------------------------------------------------- shared parts


def _check_field(entrants: Sequence[Entrant], round_no: int, group: int, why: str) -> None:
    entrants_by_key(entrants)
    if round_no < 1:
        raise ValueError(f"rounds count from 1, not {round_no}")
    if not entrants or len(entrants) % group:
        raise ValueError(f"{why} (fill the field with house entrants), not {len(entrants)}")


def _before(plans: Plans, round_no: int) -> dict[int, Sequence[Plan]]:
    return {r: tables for r, tables in plans.items() if r < round_no}


def _shuffled(entrants: Sequence[Entrant], seed: int, round_no: int) -> list[str]:
    """The field in an order drawn from the event's seed alone (not from the input's order)."""
    keys = sorted(e.key for e in entrants)
    random.Random(f"spades-event:{seed}:{round_no}").shuffle(keys)
    return keys


def _ranked(
    format: EventFormat,
    entrants: Sequence[Entrant],
    before: Plans,
    results: Sequence[BoardResult],
    round_no: int,
) -> list[str]:
    earlier = [r for r in results if r.round_no < round_no]
    return [line.key for line in standings(format, entrants, before, earlier)]


def _north_counts(before: Plans) -> Counter[str]:
    """How many more times each entrant sat North-South than East-West."""
    north: Counter[str] = Counter()
    for tables in before.values():
        for plan in tables:
            ns, ew = sides(plan)
            for key in ns:
                north[key] += 1
            for key in ew:
                north[key] -= 1
    return north


def _pair_up(order: Sequence[str], cost: Callable[[str, str], int]) -> list[tuple[str, str]]:
    """`order` (an even number, best placed first) in couples, top down: the first unpaired meets
    the best-placed unpaired it costs it least to meet. Repeats cost (`cost`: how many times the
    two met before); the search first allows none, then a total of 1, 2, 4, ... and takes the
    first pairing it finds within the allowance, each search bounded by `SEARCH_BUDGET` steps. The
    last allowance is unlimited, where the first choice at each step always succeeds."""
    n = len(order)
    if n == 0:
        return []
    costs = [[cost(order[i], order[j]) if i != j else 0 for j in range(n)] for i in range(n)]
    worst = sum(max(row) for row in costs)
    # Bounded: the allowance doubles until it passes the dearest pairing's cost, where the search
    # succeeds at its first try (every first choice fits, in n / 2 steps).
    allowance = 0
    while allowance <= worst:
        found = _search(costs, allowance)
        if found is not None:
            return [(order[i], order[j]) for i, j in found]
        allowance = max(1, allowance * 2)
    found = _search(costs, worst)
    assert found is not None, "an allowance of every cost admits the first choice at each step"
    return [(order[i], order[j]) for i, j in found]


def _search(costs: list[list[int]], allowance: int) -> list[tuple[int, int]] | None:
    n = len(costs)
    paired = [False] * n
    chosen: list[tuple[int, int]] = []
    steps = 0

    def go(spent: int) -> bool:
        nonlocal steps
        first = next((i for i in range(n) if not paired[i]), None)
        if first is None:
            return True
        paired[first] = True
        # Cheapest first, the best placed among equals.
        options = sorted(
            (j for j in range(first + 1, n) if not paired[j]), key=lambda j: (costs[first][j], j)
        )
        for j in options:
            if spent + costs[first][j] > allowance:
                break
            steps += 1
            if steps > SEARCH_BUDGET:
                break
            paired[j] = True
            chosen.append((first, j))
            if go(spent + costs[first][j]):
                return True
            chosen.pop()
            paired[j] = False
        paired[first] = False
        return False

    return chosen if go(0) else None
