"""Ratings: the joint margin model, draws, forfeits, drift by time, and the rebuild from history."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.ladder.ratings import (
    BOARD_SD,
    DEFAULT_MU,
    DEFAULT_SIGMA,
    MAX_MARGIN,
    POINTS_PER_RATING_POINT,
    SECONDS_PER_DAY,
    MatchOutcome,
    Rating,
    RatingModel,
    Ratings,
    apply_board_set,
    apply_match,
    board_sets,
    ranked,
    recompute,
    separated,
)

TEAMS = (("a", "b"), ("c", "d"))


def test_a_win_moves_winners_up_losers_down_and_everyone_surer() -> None:
    model = RatingModel()
    after = model.rate_match({}, MatchOutcome("m-1", TEAMS, (120, 80)))
    assert set(after) == {"a", "b", "c", "d"}
    assert after["a"].mu > DEFAULT_MU > after["c"].mu
    assert after["a"].mu == after["b"].mu and after["c"].mu == after["d"].mu
    assert all(r.sigma < model.sigma and r.matches == 1 for r in after.values())


def test_a_draw_between_equals_moves_no_mean() -> None:
    after = RatingModel().rate_match({}, MatchOutcome("m-1", TEAMS, (90, 90)))
    assert all(r.mu == pytest.approx(DEFAULT_MU) for r in after.values())
    assert MatchOutcome("m-1", TEAMS, (90, 90)).ranks == (0, 0)


def test_a_forfeit_moves_only_the_forfeiter_and_down_even_with_more_points() -> None:
    outcome = MatchOutcome("m-1", TEAMS, (300, -50), forfeits=frozenset({"a"}))
    before = {"b": Rating(30.0, 5.0, 7)}
    after = RatingModel().rate_match(before, outcome)
    assert set(after) == {"a"}
    assert after["a"].mu < DEFAULT_MU
    assert after["a"].matches == 1


def test_forfeits_on_both_teams_each_lose() -> None:
    outcome = MatchOutcome("m-1", TEAMS, (0, 0), forfeits=frozenset({"a", "d"}))
    after = RatingModel().rate_match({}, outcome)
    assert set(after) == {"a", "d"}
    assert after["a"].mu < DEFAULT_MU and after["d"].mu < DEFAULT_MU


def test_an_outcome_needs_four_different_entrants_and_forfeits_among_them() -> None:
    with pytest.raises(ValueError, match="four different"):
        MatchOutcome("m-1", (("a", "b"), ("a", "c")), (1, 0))
    with pytest.raises(ValueError, match="did not play"):
        MatchOutcome("m-1", TEAMS, (1, 0), forfeits=frozenset({"z"}))


def test_outcomes_round_trip_through_plain_data() -> None:
    outcome = MatchOutcome("m-7", TEAMS, (10, -20), forfeits=frozenset({"c"}), planned_boards=3)
    assert MatchOutcome.from_dict(outcome.to_dict()) == outcome
    outcome = MatchOutcome(
        "m-8", TEAMS, (10, -20), boards=((40, 10), (-30, -30)), planned_boards=2, finished_at=9.5
    )
    assert MatchOutcome.from_dict(outcome.to_dict()) == outcome


def _history(seed: int, matches: int, entrants: int = 7) -> list[MatchOutcome]:
    rng = random.Random(seed)
    names = [f"e{i}" for i in range(entrants)]
    out = []
    when = 1_700_000_000.0
    for index in range(matches):
        four = rng.sample(names, 4)
        forfeits = frozenset({four[0]}) if rng.random() < 0.1 else frozenset()
        points = (rng.randrange(-200, 300), rng.randrange(-200, 300))
        boards = tuple((rng.randrange(-500, 500), 0) for _ in range(rng.randrange(0, 5)))
        when += rng.choice((1.0, 90.0, 3 * SECONDS_PER_DAY))
        out.append(
            MatchOutcome(
                f"m-{index}",
                ((four[0], four[1]), (four[2], four[3])),
                points,
                forfeits,
                boards=boards,
                planned_boards=max(1, len(boards)),
                finished_at=when,
            )
        )
    return out


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 40))
def test_recompute_from_history_equals_the_incremental_ratings(seed: int, count: int) -> None:
    model = RatingModel()
    incremental = Ratings()
    for outcome in _history(seed, count):
        apply_match(model, incremental, outcome)
    rebuilt = recompute(_history(seed, count), RatingModel())
    assert rebuilt == incremental
    assert all(math.isfinite(r.mu) and r.sigma > 0 for r in rebuilt.values())


def test_better_teams_rise_to_the_top_with_separated_bands() -> None:
    # Each "s" plays 40 points a board better than an "h", each "h" 40 better than an "r"; boards
    # are noisy (sd 140, as measured); partners rotate, and the band order emerges.
    strength = {"s1": 2, "s2": 2, "h1": 1, "h2": 1, "r1": 0, "r2": 0}
    rng = random.Random(3)
    model = RatingModel()
    ratings = Ratings()
    for index in range(400):
        a, b, c, d = rng.sample(sorted(strength), 4)
        edge = 40 * (strength[a] + strength[b] - strength[c] - strength[d])
        boards = tuple((round(edge + rng.gauss(0, 140)), 0) for _ in range(4))
        points = (sum(x for x, _ in boards), 0)
        outcome = MatchOutcome(f"m-{index}", ((a, b), (c, d)), points, boards=boards)
        apply_match(model, ratings, outcome)
    order = [name for name, _ in ranked(ratings)]
    assert {order[0], order[1]} == {"s1", "s2"} and {order[4], order[5]} == {"r1", "r2"}
    assert separated([ratings["s1"], ratings["s2"]], [ratings["h1"], ratings["h2"]])
    assert separated([ratings["h1"], ratings["h2"]], [ratings["r1"], ratings["r2"]])
    assert not separated([ratings["s1"]], [ratings["s2"]])  # equal bots stay inseparable
    assert not separated([], [ratings["r1"]])


def test_the_conservative_estimate_is_three_sigmas_below_the_mean() -> None:
    rating = Rating(30.0, 2.0, 5)
    assert rating.conservative == 24.0
    assert rating.interval == (24.0, 36.0)
    assert Rating().conservative == pytest.approx(0.0)


# ---------------------------------------------------------------- the margin model, by hand


def test_one_board_moves_each_rating_by_its_share_of_the_surprise() -> None:
    # Bayes' rule for a linear-Gaussian observation, worked by hand: four fresh ratings (variance
    # s2 each, no covariance) predict a margin of 0; team a won the board by 100 points, 10 rating
    # points at 10 points each.
    s2 = DEFAULT_SIGMA**2
    spread = 4 * s2 + (BOARD_SD / POINTS_PER_RATING_POINT) ** 2
    gain = s2 / spread
    ratings = Ratings()
    RatingModel().apply(ratings, MatchOutcome("m-1", TEAMS, (100, 0), boards=((100, 0),)))
    assert ratings["a"].mu == pytest.approx(DEFAULT_MU + gain * 10)
    assert ratings["d"].mu == pytest.approx(DEFAULT_MU - gain * 10)
    # The joint belief: each variance shrinks by its share, partners become positively
    # correlated and opponents negatively (P - P x x.P / spread).
    assert ratings.covariance("a", "a") == pytest.approx(s2 * (1 - gain))
    assert ratings.covariance("a", "b") == pytest.approx(-s2 * gain)
    assert ratings.covariance("a", "c") == pytest.approx(s2 * gain)
    # Shown: the spread relative to the field (here the four's mean, all equally sure):
    # Var(s_a - mean) = P_aa - 2 (P w)_a + w.P.w with w = 1/4 each, and the rows sum to s2.
    assert ratings["a"].sigma == pytest.approx(math.sqrt(s2 * (1 - gain) - s2 / 2 + s2 / 4))
    # The field's average stays where it started.
    assert sum(ratings[e].mu for e in "abcd") == pytest.approx(4 * DEFAULT_MU)


def test_a_wider_margin_on_the_same_result_moves_further() -> None:
    model = RatingModel()
    narrow = model.rate_match({}, MatchOutcome("m-1", TEAMS, (20, 0), boards=((10, 0), (10, 0))))
    wide = model.rate_match({}, MatchOutcome("m-1", TEAMS, (300, 0), boards=((150, 0), (150, 0))))
    assert DEFAULT_MU < narrow["a"].mu < wide["a"].mu
    assert wide["c"].mu < narrow["c"].mu < DEFAULT_MU
    assert (
        wide["a"].sigma == narrow["a"].sigma
    )  # the certainty gained depends on boards, not points


def test_every_board_is_evidence_and_a_freak_board_counts_only_up_to_the_cap() -> None:
    model = RatingModel()
    one = model.rate_match({}, MatchOutcome("m-1", TEAMS, (0, 0), boards=((0, 0),)))
    four = model.rate_match({}, MatchOutcome("m-1", TEAMS, (0, 0), boards=((0, 0),) * 4))
    assert four["a"].sigma < one["a"].sigma
    capped = model.rate_match({}, MatchOutcome("m-1", TEAMS, (400, 0), boards=((400, 0),)))
    freak = model.rate_match({}, MatchOutcome("m-1", TEAMS, (5000, 0), boards=((5000, 0),)))
    assert freak == capped and MAX_MARGIN == 400


def test_the_boards_of_a_match_are_taken_as_their_mean_and_equal_one_by_one() -> None:
    # Same teams on every board: one observation of the mean margin with the spread of four
    # boards is the posterior the four boards taken one after the other give.
    model = RatingModel()
    boards = ((120, 0), (80, 0), (100, 0), (100, 0))
    together = model.rate_match({}, MatchOutcome("m-1", TEAMS, (400, 0), boards=boards))
    ratings = Ratings()
    for index, board in enumerate(boards):
        model.apply(ratings, MatchOutcome(f"m-{index}", TEAMS, board, boards=(board,)))
    for name in "abcd":
        assert ratings[name].mu == pytest.approx(together[name].mu)
        assert ratings[name].sigma == pytest.approx(together[name].sigma)


def test_a_match_stored_without_boards_is_rated_on_its_margin_per_board() -> None:
    # Rated before the ladder kept each board: the same four boards' evidence, as one observation.
    model = RatingModel()
    boards = ((120, 0), (80, 0), (100, 0), (100, 0))
    per_board = model.rate_match({}, MatchOutcome("m-1", TEAMS, (400, 0), boards=boards))
    whole = model.rate_match({}, MatchOutcome("m-1", TEAMS, (400, 0), planned_boards=4))
    assert whole["a"].mu > DEFAULT_MU > whole["c"].mu
    for name in "abcd":
        assert whole[name].mu == pytest.approx(per_board[name].mu)
        assert whole[name].sigma == pytest.approx(per_board[name].sigma)


def test_a_forfeit_is_never_better_than_losing_every_board() -> None:
    model = RatingModel()
    before = {e: Rating(25.0 + i, 2.0 + i / 3, 10) for i, e in enumerate("abcd")}
    forfeit = Ratings.independent(before)
    model.apply(forfeit, MatchOutcome("m-1", TEAMS, (900, 0), frozenset({"a"}), planned_boards=4))
    worst = Ratings.independent(before)
    model.apply(
        worst, MatchOutcome("m-1", TEAMS, (-1600, 0), boards=((-400, 0),) * 4, planned_boards=4)
    )
    # The forfeiter's own belief is exactly that of losing every board by the cap.
    assert forfeit["a"].mu == pytest.approx(worst["a"].mu)
    assert forfeit.covariance("a", "a") == pytest.approx(worst.covariance("a", "a"))
    # ... and nobody else's belief moved.
    for name in "bcd":
        assert forfeit[name].mu == before[name].mu
        assert forfeit.covariance(name, name) == before[name].sigma ** 2
    short = model.rate_match(
        before, MatchOutcome("m-1", TEAMS, (900, 0), frozenset({"a"}), planned_boards=1)
    )
    assert forfeit["a"].mu < short["a"].mu < before["a"].mu  # a longer match forfeited costs more


def test_a_forfeit_moves_nobody_else_in_a_joint_belief() -> None:
    # After matches that correlate everyone, a forfeit still leaves every other mean where it was.
    model = RatingModel()
    ratings = Ratings()
    rng = random.Random(5)
    names = [f"e{i}" for i in range(6)]
    for index in range(30):
        a, b, c, d = rng.sample(names, 4)
        board = (rng.randrange(-200, 200), 0)
        model.apply(ratings, MatchOutcome(f"m-{index}", ((a, b), (c, d)), board, boards=(board,)))
    means = {n: ratings[n].mu for n in names}
    model.apply(
        ratings, MatchOutcome("m-f", (("e0", "e1"), ("e2", "e3")), (0, 0), frozenset({"e0"}))
    )
    assert ratings["e0"].mu < means["e0"]
    assert all(ratings[n].mu == means[n] for n in names[1:])


def test_partners_who_always_play_together_are_learned_as_a_pair() -> None:
    # The same two teams every match: the boards measure the teams' difference, and say nothing
    # of who within a team is the better. The joint belief knows that (the difference of the
    # teams is sure, one player against an opponent is not); beliefs kept per entrant alone
    # cannot tell the two apart.
    model = RatingModel()
    ratings = Ratings()
    rng = random.Random(8)
    for index in range(40):
        board = (round(rng.gauss(100, 140)), 0)
        model.apply(
            ratings, MatchOutcome(f"m-{index}", (("a", "b"), ("c", "d")), board, boards=(board,))
        )
    x = {"a": 1, "b": 1, "c": -1, "d": -1}
    teams = sum(x[i] * x[j] * ratings.covariance(i, j) for i in x for j in x)
    one_each = sum(
        s * t * ratings.covariance(i, j)
        for i, s in (("a", 1), ("c", -1))
        for j, t in (("a", 1), ("c", -1))
    )
    assert ratings.covariance("a", "b") < 0  # one partner's skill is the pair's less the other's
    assert teams < 0.1 * one_each


def test_a_newcomer_barely_moves_the_established_ratings_sigma() -> None:
    model = RatingModel()
    ratings = Ratings()
    rng = random.Random(2)
    names = [f"e{i}" for i in range(6)]
    for index in range(200):
        a, b, c, d = rng.sample(names, 4)
        board = (round(rng.gauss(0, 140)), 0)
        model.apply(ratings, MatchOutcome(f"m-{index}", ((a, b), (c, d)), board, boards=(board,)))
    before = ratings["e0"].sigma
    model.apply(
        ratings, MatchOutcome("m-new", (("new", "e1"), ("e2", "e3")), (0, 0), boards=((0, 0),))
    )
    assert ratings["new"].sigma > 5 * before
    assert ratings["e0"].sigma == pytest.approx(before, rel=0.05)


def test_skill_drifts_with_the_days_between_matches_not_with_matches() -> None:
    def sigma_after(gap_s: float, tau: float) -> float:
        model = RatingModel(tau=tau)
        ratings = Ratings()
        for index, when in enumerate((0.0, gap_s)):
            model.apply(
                ratings,
                MatchOutcome(
                    f"m-{index}", TEAMS, (0, 0), boards=((0, 0),) * 4, finished_at=1e9 + when
                ),
            )
        return ratings.covariance("a", "a")

    day = SECONDS_PER_DAY
    assert sigma_after(60.0, 0.5) == pytest.approx(sigma_after(60.0, 0.0), rel=1e-4)
    assert sigma_after(30 * day, 0.5) > sigma_after(day, 0.5) > sigma_after(60.0, 0.5)
    assert sigma_after(30 * day, 0.0) == sigma_after(60.0, 0.0)
    with pytest.raises(ValueError, match="tau"):
        RatingModel(tau=-1.0)


# ---------------------------------------------------------------- tables, twins and luck

EIGHT = (("a", "b"), ("c", "d")), (("e", "f"), ("g", "h"))


def _table(
    match: str,
    teams: tuple[tuple[str, str], tuple[str, str]],
    deals: list[tuple[str, tuple[int, int]]],
    twin: str | None = None,
) -> MatchOutcome:
    points = (sum(p[0] for _, p in deals), sum(p[1] for _, p in deals))
    return MatchOutcome(match, teams, points, deals=tuple(deals), planned_boards=4, twin=twin)


def _brute_force(
    model: RatingModel,
    prior: dict[str, Rating],
    tables: list[tuple[tuple[tuple[str, str], tuple[str, str]], dict[str, int]]],
) -> tuple[dict[str, float], dict[tuple[str, str], float]]:
    """The posterior by the book: every skill and each deal's luck in one state (luck independent
    of everything, spread `luck_sd`), each table's margin on each deal one scalar observation
    (`luck + 5 * skill difference + play noise`), one after the other; then the skills' part."""
    names = sorted({e for teams, _ in tables for team in teams for e in team})
    seeds = sorted({seed for _, margins in tables for seed in margins})
    state = names + [f"luck:{s}" for s in seeds]
    mean = [prior[n].mu if n in prior else model.mu for n in names] + [0.0] * len(seeds)
    size = len(state)
    cov = [[0.0] * size for _ in range(size)]
    for i, n in enumerate(names):
        cov[i][i] = (prior[n].sigma if n in prior else model.sigma) ** 2
    for k in range(len(seeds)):
        cov[len(names) + k][len(names) + k] = (model.luck_sd / model.scale) ** 2
    noise = model.board_sd**2 / 2 / model.scale**2
    for teams, margins in tables:
        for seed, margin in margins.items():
            x = [0.0] * size
            for e in teams[0]:
                x[names.index(e)] += 0.5
            for e in teams[1]:
                x[names.index(e)] -= 0.5
            x[len(names) + seeds.index(seed)] = 1.0
            px = [sum(row[j] * x[j] for j in range(size)) for row in cov]
            spread = sum(x[i] * px[i] for i in range(size)) + noise
            surprise = margin / model.scale - sum(x[i] * mean[i] for i in range(size))
            mean = [m + p / spread * surprise for m, p in zip(mean, px, strict=True)]
            cov = [[cov[i][j] - px[i] * px[j] / spread for j in range(size)] for i in range(size)]
    return (
        {n: mean[i] for i, n in enumerate(names)},
        {(a, b): cov[i][j] for i, a in enumerate(names) for j, b in enumerate(names)},
    )


def test_twin_tables_are_rated_exactly_as_margins_that_share_each_deals_luck() -> None:
    model = RatingModel()
    prior = {e: Rating(20.0 + 2 * i, 3.0 + i / 4, 5) for i, e in enumerate("abcdefgh")}
    one = {"s1": 130, "s2": -60, "s3": 45}  # team 0's margin at each table, by deal
    two = {"s1": 20, "s2": -10, "s4": 90}  # a dead deal put table two a deal apart
    first = _table("m-1", EIGHT[0], [(s, (m, 0)) for s, m in one.items()], twin="m-2")
    second = _table("m-2", EIGHT[1], [(s, (0, -m)) for s, m in two.items()], twin="m-1")
    ratings = Ratings.independent(prior)
    assert model.apply_set(ratings, (first, second)) == list("abcdefgh")
    means, cov = _brute_force(model, prior, [(EIGHT[0], one), (EIGHT[1], two)])
    for a in "abcdefgh":
        assert ratings._mean[ratings._index[a]] == pytest.approx(means[a], abs=1e-9)
        for b in "abcdefgh":
            assert ratings.covariance(a, b) == pytest.approx(cov[(a, b)], abs=1e-9)
    # The parts: the difference and the sum of the two deals both tables played, then the deal
    # each played alone.
    parts = model.evidence((first, second))
    assert [p.deals for p in parts] == [2, 2, 1, 1]
    assert parts[0].signs == {
        "a": 0.5,
        "b": 0.5,
        "c": -0.5,
        "d": -0.5,
        "e": -0.5,
        "f": -0.5,
        "g": 0.5,
        "h": 0.5,
    }


def test_a_match_played_alone_counts_luck_as_noise() -> None:
    model = RatingModel()
    prior = {e: Rating(24.0 + i, 4.0, 3) for i, e in enumerate("abcd")}
    margins = {"s1": 90, "s2": -140, "s3": 10, "s4": 200}
    ratings = Ratings.independent(prior)
    model.apply(ratings, _table("m-1", EIGHT[0], [(s, (m, 0)) for s, m in margins.items()]))
    means, cov = _brute_force(model, prior, [(EIGHT[0], margins)])
    for a in "abcd":
        assert ratings._mean[ratings._index[a]] == pytest.approx(means[a], abs=1e-9)
        assert ratings.covariance(a, "b") == pytest.approx(cov[(a, "b")], abs=1e-9)
    # One table's margin counts up to half a board's cap.
    capped = model.rate_match({}, _table("m-2", EIGHT[0], [("s1", (200, 0))]))
    freak = model.rate_match({}, _table("m-3", EIGHT[0], [("s1", (900, 0))]))
    assert freak == capped


def test_luck_both_twins_share_cancels_when_luck_is_all_there_is() -> None:
    # With luck far wider than play, only the twins' difference says anything: cards that favour
    # team 0 at both tables by the same 300 points move nobody.
    model = RatingModel(luck_sd=1e6)
    base = {"s1": 60, "s2": -20}
    lucky = {seed: m + 300 for seed, m in base.items()}

    def rated(one: dict[str, int], two: dict[str, int]) -> Ratings:
        ratings = Ratings()
        model.apply_set(
            ratings,
            (
                _table("m-1", EIGHT[0], [(s, (m, 0)) for s, m in one.items()], twin="m-2"),
                _table("m-2", EIGHT[1], [(s, (m, 0)) for s, m in two.items()], twin="m-1"),
            ),
        )
        return ratings

    plain, shifted = rated(base, {"s1": 0, "s2": 0}), rated(lucky, {"s1": 300, "s2": 300})
    for e in "abcdefgh":
        assert shifted[e].mu == pytest.approx(plain[e].mu, abs=1e-6)
    # ... whereas a table alone cannot tell the cards from the play.
    alone = model.rate_match({}, _table("m-3", EIGHT[0], [(s, (m, 0)) for s, m in lucky.items()]))
    assert alone["a"].mu == pytest.approx(DEFAULT_MU, abs=1e-3)


def test_a_forfeit_is_never_better_than_losing_every_deal_at_a_table_or_its_twin() -> None:
    model = RatingModel()
    before = {e: Rating(25.0 + i, 2.0 + i / 3, 10) for i, e in enumerate("abcdefgh")}
    lost = [(f"s{i}", (-600, 0)) for i in range(4)]
    forfeit = model.rate_match(
        before, MatchOutcome("m-1", EIGHT[0], (900, 0), frozenset({"a"}), planned_boards=4)
    )
    alone = model.rate_match(before, _table("m-1", EIGHT[0], lost))
    twin_won = Ratings.independent(before)
    model.apply_set(
        twin_won,
        (
            _table("m-1", EIGHT[0], lost, twin="m-2"),
            _table("m-2", EIGHT[1], [(f"s{i}", (600, 0)) for i in range(4)], twin="m-1"),
        ),
    )
    assert forfeit["a"].mu < twin_won["a"].mu < alone["a"].mu < before["a"].mu


def test_a_forfeit_at_one_twin_rates_the_forfeiter_alone_and_the_other_table_on_its_own() -> None:
    model = RatingModel()
    deals = [("s1", (80, 10)), ("s2", (-30, 40))]
    forfeited = MatchOutcome(
        "m-1",
        EIGHT[0],
        (50, 50),
        frozenset({"c"}),
        deals=tuple(deals),
        planned_boards=4,
        twin="m-2",
    )
    clean = _table("m-2", EIGHT[1], deals, twin="m-1")
    together = Ratings()
    assert model.apply_set(together, (forfeited, clean)) == ["c", "e", "f", "g", "h"]
    apart = Ratings()
    model.apply(apart, MatchOutcome("m-1", EIGHT[0], (50, 50), frozenset({"c"}), planned_boards=4))
    model.apply(apart, _table("m-2", EIGHT[1], deals))
    assert together == apart
    assert set(together) == {
        "c",
        "e",
        "f",
        "g",
        "h",
    }  # the forfeiter's partner and opponents: not rated


def test_the_history_is_replayed_in_the_sets_it_was_rated_in() -> None:
    a = _table("m-1", EIGHT[0], [("s1", (10, 0))], twin="m-2")
    b = _table("m-2", EIGHT[1], [("s1", (0, 10))], twin="m-1")
    c = _table("m-3", EIGHT[0], [("s2", (10, 0))], twin="m-9")  # its twin was void
    d = _table("m-4", EIGHT[1], [("s3", (0, 10))])
    old = MatchOutcome("m-0", EIGHT[0], (100, 20), boards=((100, 20),))
    assert list(board_sets([old, a, b, c, d])) == [(old,), (a, b), (c,), (d,)]
    assert list(board_sets([a, c, b])) == [(a,), (c,), (b,)]  # twins are stored side by side
    model = RatingModel()
    ratings = Ratings()
    for outcomes in ((old,), (a, b), (c,), (d,)):
        model.apply_set(ratings, outcomes)
    assert recompute([old, a, b, c, d], model) == ratings


def _twin_history(seed: int, sets: int) -> list[MatchOutcome]:
    rng = random.Random(seed)
    names = [f"e{i}" for i in range(10)]
    out: list[MatchOutcome] = []
    when = 1_700_000_000.0
    for index in range(sets):
        eight = rng.sample(names, 8)
        seeds = [f"{index}-{k}" for k in range(rng.randrange(1, 4))]
        twinned = rng.random() < 0.7
        ids = [f"m-{index}a", f"m-{index}b"]
        for half in range(2 if twinned else 1):
            four = eight[4 * half : 4 * half + 4]
            deals = tuple((s, (rng.randrange(-300, 300), rng.randrange(-300, 300))) for s in seeds)
            if rng.random() < 0.2:
                deals = (*deals[:-1], (f"{index}-dead{half}", (5, 5)))
            when += rng.choice((1.0, 90.0, 3 * SECONDS_PER_DAY))
            out.append(
                MatchOutcome(
                    ids[half],
                    ((four[0], four[1]), (four[2], four[3])),
                    (0, 0),
                    frozenset({four[0]}) if rng.random() < 0.1 else frozenset(),
                    deals=deals,
                    planned_boards=len(seeds),
                    finished_at=when,
                    twin=ids[1 - half] if twinned else None,
                )
            )
    return out


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 25))
def test_recompute_of_twins_and_lone_matches_equals_the_incremental_ratings(
    seed: int, count: int
) -> None:
    model = RatingModel()
    incremental = Ratings()
    history = _twin_history(seed, count) + _history(seed, 5)
    for outcomes in board_sets(history):
        apply_board_set(model, incremental, outcomes)
    rebuilt = recompute(list(history), RatingModel())
    assert rebuilt == incremental
    assert all(math.isfinite(r.mu) and r.sigma > 0 for r in rebuilt.values())


def test_a_twins_deals_must_be_a_tables() -> None:
    with pytest.raises(ValueError, match="its own twin"):
        MatchOutcome("m-1", TEAMS, (0, 0), deals=(("s", (0, 0)),), twin="m-1")
    with pytest.raises(ValueError, match="played once"):
        MatchOutcome("m-1", TEAMS, (0, 0), deals=(("s", (0, 0)), ("s", (1, 0))))
    with pytest.raises(ValueError, match="boards or a table"):
        MatchOutcome("m-1", TEAMS, (0, 0), boards=((0, 0),), deals=(("s", (0, 0)),))
    outcome = _table("m-5", TEAMS, [("s1", (10, -20))], twin="m-6")
    assert MatchOutcome.from_dict(outcome.to_dict()) == outcome
