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
    apply_match,
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
