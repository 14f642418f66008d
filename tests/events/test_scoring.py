"""Scoring: hand-worked boards (percentages written out), forfeits, knockout matches with extra
boards, and properties: matchpoints per board sum to tables x (tables - 1) in each direction;
standings are a total order, the same for the same boards in any order."""

import random
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.events.pairing import Entrant, IndividualTable, TablePlan
from server.events.scoring import (
    BoardResult,
    at_fault,
    board_scores,
    decide_match,
    finished,
    knockout_matches,
    matchpoints,
    needs_extra_board,
    round_finished,
    standings,
    winner,
)
from server.events.settings import EventFormat, EventSettings

SWISS = EventFormat.SWISS_PAIRS


def field(*keys: str) -> list[Entrant]:
    return [Entrant(key, (i,), seed=i + 1) for i, key in enumerate(keys)]


def board(
    table: int, number: int, ns: int, ew: int, *, forfeit_ns: bool = False, forfeit_ew: bool = False
) -> BoardResult:
    return BoardResult(1, table, number, ns, ew, forfeit_ns, forfeit_ew)


F = Fraction


# Three tables, two boards. NS margins: board 1 +70, 0, -160; board 2 +10, +10, -20.
THREE = {1: [TablePlan(1, "A", "B"), TablePlan(2, "C", "D"), TablePlan(3, "E", "F")]}
BOARDS = [
    board(1, 1, 120, 50),
    board(2, 1, 80, 80),
    board(3, 1, -100, 60),
    board(1, 2, 40, 30),
    board(2, 2, 60, 50),
    board(3, 2, 30, 50),
]


def test_three_tables_worked_by_hand() -> None:
    # Board 1, North-South: A beat both (4 of 4) 100 %, C beat E (2/4) 50 %, E 0 %.
    #          East-West: margins B -70, D 0, F +160: F 100 %, D 50 %, B 0 %.
    # Board 2, North-South: A and C tie each other, beat E: 3/4 = 75 % each, E 0 %.
    #          East-West: B and D -10 tie, lose to F +20: 1/4 = 25 % each, F 100 %.
    scores = board_scores(BOARDS)
    assert scores[(1, 1)] == (F(1), F(0))
    assert scores[(2, 1)] == (Fraction(1, 2), Fraction(1, 2))
    assert scores[(1, 2)] == (Fraction(3, 4), Fraction(1, 4))
    lines = standings(SWISS, field(*"ABCDEF"), THREE, BOARDS)
    assert [(s.place, s.key, s.percent, s.boards, s.margin) for s in lines] == [
        (1, "F", 100.0, 2, 180),  # (100 + 100) / 2
        (2, "A", 87.5, 2, 80),  # (100 + 75) / 2
        (3, "C", 62.5, 2, 10),  # (50 + 75) / 2
        (4, "D", 37.5, 2, -10),  # (50 + 25) / 2
        (5, "B", 12.5, 2, -80),  # (0 + 25) / 2
        (6, "E", 0.0, 2, -180),
    ]
    assert all(s.forfeits == 0 for s in lines)


def test_one_table_compares_with_zero() -> None:
    plans = {1: [TablePlan(1, "A", "B")]}
    results = [board(1, 1, 100, 40), board(1, 2, 50, 50), board(1, 3, -100, 80)]
    # A: won 100 %, tied 50 %, lost 0 %: 50 % over three boards; B the complement: 50 % too.
    # Margins A +60 + 0 - 180 = -120: B is ahead on the tie-break.
    lines = standings(SWISS, field("A", "B"), plans, results)
    assert [(s.key, s.percent, s.margin) for s in lines] == [("B", 50.0, 120), ("A", 50.0, -120)]


def test_forfeit_scores_0_and_60_and_leaves_the_comparison() -> None:
    results = [board(1, 1, 120, 50), board(2, 1, 80, 80), board(3, 1, 200, 0, forfeit_ew=True)]
    scores = board_scores(results)
    # F forfeited: E 60 %, F 0 %; table 3 is out of the comparison, so A v C alone: A 100 %, C 0 %.
    assert scores[(3, 1)] == (Fraction(3, 5), F(0))
    assert scores[(1, 1)] == (F(1), F(0))
    assert scores[(2, 1)] == (F(0), F(1))
    lines = {s.key: s for s in standings(SWISS, field(*"ABCDEF"), THREE, results)}
    assert (lines["E"].percent, lines["E"].margin, lines["E"].forfeits) == (60.0, 0, 0)
    assert (lines["F"].percent, lines["F"].margin, lines["F"].forfeits) == (0.0, 0, 1)
    assert (lines["F"].boards, lines["F"].forfeited_rounds) == (1, 1)


def test_both_sides_at_fault_score_nothing() -> None:
    scores = board_scores([board(1, 1, 0, 0, forfeit_ns=True, forfeit_ew=True)])
    assert scores[(1, 1)] == (F(0), F(0))


def test_individual_players_score_their_side_and_only_the_forfeiter_is_at_fault() -> None:
    plans = {1: [IndividualTable(1, ("n", "e", "s", "w"))]}
    results = [
        BoardResult(1, 1, 1, 90, 30),  # NS +60: n and s 100 %, e and w 0 %
        BoardResult(1, 1, 2, 0, 0, forfeit_ns=True, forfeit_seats=frozenset({2})),
    ]
    lines = {
        s.key: s for s in standings(EventFormat.SWISS_INDIVIDUAL, field(*"nesw"), plans, results)
    }
    # Board 2: s forfeited (0 %); his partner n and both opponents get 60 %.
    assert lines["n"].percent == 80.0 and lines["s"].percent == 50.0
    assert lines["e"].percent == 30.0 and lines["w"].percent == 30.0
    assert [lines[k].forfeits for k in "nesw"] == [0, 0, 1, 0]
    assert [lines[k].forfeited_rounds for k in "nesw"] == [0, 0, 1, 0]


def test_ties_go_to_margin_then_to_the_earlier_registration() -> None:
    plans = {1: [TablePlan(1, "A", "B"), TablePlan(2, "C", "D")]}
    # Both boards: table 1 NS +10, table 2 NS +10: every side 50 %, every margin +-10.
    results = [board(1, 1, 20, 10), board(2, 1, 20, 10)]
    order = [s.key for s in standings(SWISS, field("D", "C", "B", "A"), plans, results)]
    # C and A (+10) ahead of D and B (-10); within each, the lower seed (registered first).
    assert order == ["C", "A", "D", "B"]


def test_a_board_reported_twice_or_at_no_table_is_refused() -> None:
    with pytest.raises(ValueError, match="board 1 of table 1 in round 1 is reported twice"):
        board_scores([board(1, 1, 0, 0), board(1, 1, 0, 0)])
    with pytest.raises(ValueError, match="which the plans do not have"):
        standings(SWISS, field("A", "B"), {1: [TablePlan(1, "A", "B")]}, [board(9, 1, 0, 0)])


@given(st.lists(st.integers(-300, 300), min_size=1, max_size=12))
def test_matchpoints_sum_per_board_is_tables_times_tables_less_one(margins: list[int]) -> None:
    tables = len(margins)
    ns = [matchpoints(m, margins[:i] + margins[i + 1 :]) for i, m in enumerate(margins)]
    ew_margins = [-m for m in margins]
    ew = [matchpoints(m, ew_margins[:i] + ew_margins[i + 1 :]) for i, m in enumerate(ew_margins)]
    assert sum(ns) == sum(ew) == tables * (tables - 1)
    results = [board(t + 1, 1, m, 0) for t, m in enumerate(margins)]
    scores = board_scores(results)
    if tables > 1:
        assert [scores[(t + 1, 1)][0] * 2 * (tables - 1) for t in range(tables)] == ns
    assert all(a + b == 1 for a, b in scores.values())


@st.composite
def swiss_round(
    draw: st.DrawFn,
) -> tuple[list[Entrant], dict[int, list[TablePlan]], list[BoardResult]]:
    pairs = draw(st.integers(1, 6)) * 2
    keys = [f"p{i}" for i in range(pairs)]
    entrants = [Entrant(k, (i,), seed=i + 1) for i, k in enumerate(keys)]
    tables = [TablePlan(t + 1, keys[2 * t], keys[2 * t + 1]) for t in range(pairs // 2)]
    boards = draw(st.integers(1, 3))
    results = [
        BoardResult(
            1,
            t.table_no,
            b,
            draw(st.integers(-200, 200)),
            draw(st.integers(-200, 200)),
            forfeit_ns=draw(st.booleans()) and draw(st.booleans()),
        )
        for t in tables
        for b in range(1, boards + 1)
    ]
    return entrants, {1: tables}, results


@given(swiss_round(), st.randoms(use_true_random=False))
def test_standings_are_a_total_order_and_do_not_depend_on_input_order(
    case: tuple[list[Entrant], dict[int, list[TablePlan]], list[BoardResult]], rng: random.Random
) -> None:
    entrants, plans, results = case
    lines = standings(SWISS, entrants, plans, results)
    assert [s.place for s in lines] == list(range(1, len(entrants) + 1))
    assert sorted(s.key for s in lines) == sorted(e.key for e in entrants)
    shuffled_results, shuffled_entrants = list(results), list(entrants)
    rng.shuffle(shuffled_results)
    rng.shuffle(shuffled_entrants)
    assert standings(SWISS, shuffled_entrants, plans, shuffled_results) == lines
    # The order follows the rule: percent down, then margin down, then seed up.
    seeds = {e.key: e.seed for e in entrants}
    keys = [(-s.percent, -s.margin, seeds[s.key]) for s in lines]
    assert keys == sorted(keys)


# ---------------------------------------------------------------- knockout


def match(*margins: int, forfeit: dict[int, str] | None = None) -> list[BoardResult]:
    forfeit = forfeit or {}
    return [
        BoardResult(
            1,
            1,
            number,
            max(m, 0),
            max(-m, 0),
            forfeit_ns=forfeit.get(number) in ("ns", "both"),
            forfeit_ew=forfeit.get(number) in ("ew", "both"),
        )
        for number, m in enumerate(margins, start=1)
    ]


@pytest.mark.parametrize(
    ("margins", "outcome", "extra"),
    [
        ((10, 20, -5), (0, "boards"), False),  # 2 boards to 1
        ((10, -20, 0), (1, "margin"), False),  # 1 to 1, margin -10
        ((10, -10, 0), (None, None), True),  # level: a first extra board
        ((10, -10), (None, None), False),  # a regular board still to play
        ((10, -10, 0, 0), (None, None), True),  # the first extra tied: a second
        ((10, -10, 0, 0, -30), (1, "extra"), False),  # the second decides
        ((10, -10, 0, 0, 0, 0), (0, "seed"), False),  # three extras tied: the higher seed
    ],
)
def test_knockout_match_decisions(
    margins: tuple[int, ...], outcome: tuple[int | None, str | None], extra: bool
) -> None:
    results = match(*margins)
    assert decide_match(results, 3, (1, 8)) == outcome
    assert needs_extra_board(results, 3) is extra


def test_knockout_seed_decides_for_east_west_when_it_is_higher() -> None:
    assert decide_match(match(0, 0, 0, 0, 0, 0), 3, (5, 4)) == (1, "seed")


def test_knockout_forfeits_lose_the_match_at_once() -> None:
    assert decide_match(match(50, forfeit={1: "ns"}), 3, (1, 8)) == (1, "forfeit")
    assert decide_match(match(50, 0, forfeit={2: "ew"}), 3, (1, 8)) == (0, "forfeit")
    # Both: the one that forfeited first loses; on the same board the higher seed goes through.
    assert decide_match(match(0, 0, forfeit={1: "ew", 2: "ns"}), 3, (1, 8)) == (0, "forfeit")
    assert decide_match(match(0, forfeit={1: "both"}), 3, (7, 2)) == (1, "forfeit")
    assert not needs_extra_board(match(0, forfeit={1: "ns"}), 1)


def test_knockout_matches_and_the_final() -> None:
    settings = EventSettings(EventFormat.KNOCKOUT_PAIRS, rounds=0, boards=2)
    entrants = field("A", "B", "C", "D")
    plans: dict[int, list[TablePlan]] = {1: [TablePlan(1, "A", "D"), TablePlan(2, "B", "C")]}
    results = [
        BoardResult(1, 1, 1, 100, 20),
        BoardResult(1, 1, 2, 50, 60),  # A v D 1-1, margin +70: A
        BoardResult(1, 2, 1, 0, 40),
        BoardResult(1, 2, 2, 10, 30),  # B v C 0-2: C
    ]
    lines = knockout_matches(entrants, plans, results, 2)
    assert [(m.a, m.b, m.boards_won_a, m.boards_won_b, m.winner, m.how) for m in lines] == [
        ("A", "D", 1, 1, "A", "margin"),
        ("B", "C", 0, 2, "C", "boards"),
    ]
    assert round_finished(settings, entrants, plans, results, 1)
    assert not finished(settings, entrants, plans, results)
    plans[2] = [TablePlan(1, "A", "C")]
    final = [BoardResult(2, 1, 1, 10, 10), BoardResult(2, 1, 2, 0, 0)]
    assert not finished(settings, entrants, plans, results + final)
    assert needs_extra_board(final, 2)
    final.append(BoardResult(2, 1, 3, 0, 90))
    assert winner(settings, entrants, plans, results + final) == "C"
    order = standings(EventFormat.KNOCKOUT_PAIRS, entrants, plans, results + final, boards=2)
    # The winner, the finalist, then the semi-finalists by seed.
    assert [s.key for s in order] == ["C", "A", "B", "D"]


def test_a_swiss_is_finished_when_its_last_round_is_played() -> None:
    settings = EventSettings(SWISS, rounds=1, boards=2)
    plans = {1: [TablePlan(1, "A", "B")]}
    results = [board(1, 1, 10, 0)]
    assert not finished(settings, field("A", "B"), plans, results)
    assert winner(settings, field("A", "B"), plans, results) is None
    results.append(board(1, 2, 0, 0))
    assert winner(settings, field("A", "B"), plans, results) == "A"


def test_who_is_at_fault_on_a_forfeited_board() -> None:
    pair = TablePlan(1, "A", "B")
    assert at_fault(pair, BoardResult(1, 1, 1, 100, 0)) == frozenset()  # played, not forfeited
    assert at_fault(pair, BoardResult(1, 1, 1, 0, 0, forfeit_ew=True)) == {"B"}
    four = IndividualTable(1, ("n", "e", "s", "w"))
    # A whole direction, or only the seats named (an individual's partner is not at fault).
    assert at_fault(four, BoardResult(1, 1, 1, 0, 0, forfeit_ns=True)) == {"n", "s"}
    only_west = BoardResult(1, 1, 1, 0, 0, forfeit_ew=True, forfeit_seats=frozenset({3}))
    assert at_fault(four, only_west) == {"w"}
