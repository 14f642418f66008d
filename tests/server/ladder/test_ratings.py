"""Ratings: Plackett-Luce over two teams, draws, forfeits, and the rebuild from history."""

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.ladder.ratings import (
    BOARD_SD,
    DEFAULT_MU,
    DEFAULT_SIGMA,
    DEFAULT_TAU,
    MAX_MARGIN,
    POINTS_PER_RATING_POINT,
    MatchOutcome,
    Rating,
    RatingModel,
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
    outcome = MatchOutcome("m-8", TEAMS, (10, -20), boards=((40, 10), (-30, -30)), planned_boards=2)
    assert MatchOutcome.from_dict(outcome.to_dict()) == outcome


def _history(seed: int, matches: int, entrants: int = 7) -> list[MatchOutcome]:
    rng = random.Random(seed)
    names = [f"e{i}" for i in range(entrants)]
    out = []
    for index in range(matches):
        four = rng.sample(names, 4)
        forfeits = frozenset({four[0]}) if rng.random() < 0.1 else frozenset()
        points = (rng.randrange(-200, 300), rng.randrange(-200, 300))
        out.append(
            MatchOutcome(f"m-{index}", ((four[0], four[1]), (four[2], four[3])), points, forfeits)
        )
    return out


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(0, 40))
def test_recompute_from_history_equals_the_incremental_ratings(seed: int, count: int) -> None:
    model = RatingModel()
    incremental: dict[str, Rating] = {}
    for outcome in _history(seed, count):
        apply_match(model, incremental, outcome)
    assert recompute(_history(seed, count), RatingModel()) == incremental


def test_better_teams_rise_to_the_top_with_separated_bands() -> None:
    # Each "s" plays 40 points a board better than an "h", each "h" 40 better than an "r"; boards
    # are noisy (sd 140, as measured); partners rotate, and the band order emerges.
    strength = {"s1": 2, "s2": 2, "h1": 1, "h2": 1, "r1": 0, "r2": 0}
    rng = random.Random(3)
    model = RatingModel()
    ratings: dict[str, Rating] = {}
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
    # Bayes' rule for a linear-Gaussian observation, worked by hand: four fresh ratings predict a
    # margin of 0; team a won the board by 100 points, 10 rating points at 10 points each.
    sigma2 = DEFAULT_SIGMA**2 + DEFAULT_TAU**2  # widened by tau before the match
    spread = 4 * sigma2 + (BOARD_SD / POINTS_PER_RATING_POINT) ** 2
    gain = sigma2 / spread
    after = RatingModel().rate_match({}, MatchOutcome("m-1", TEAMS, (100, 0), boards=((100, 0),)))
    assert after["a"].mu == pytest.approx(DEFAULT_MU + gain * 10)
    assert after["d"].mu == pytest.approx(DEFAULT_MU - gain * 10)
    assert all(r.sigma == pytest.approx(math.sqrt(sigma2 * (1 - gain))) for r in after.values())


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


def test_a_match_stored_without_boards_is_rated_on_its_margin_per_board() -> None:
    # Rated before the ladder kept each board: the same four boards' evidence, as one observation.
    model = RatingModel()
    boards = ((120, 0), (80, 0), (100, 0), (100, 0))
    per_board = model.rate_match({}, MatchOutcome("m-1", TEAMS, (400, 0), boards=boards))
    whole = model.rate_match({}, MatchOutcome("m-1", TEAMS, (400, 0), planned_boards=4))
    assert whole["a"].mu > DEFAULT_MU > whole["c"].mu
    for name in "abcd":
        assert whole[name].mu == pytest.approx(per_board[name].mu, abs=0.5)
        assert whole[name].sigma == pytest.approx(per_board[name].sigma, rel=0.2)


def test_a_forfeit_is_never_better_than_losing_every_board() -> None:
    model = RatingModel()
    before = {e: Rating(25.0 + i, 2.0 + i / 3, 10) for i, e in enumerate("abcd")}
    forfeit = model.rate_match(
        before, MatchOutcome("m-1", TEAMS, (900, 0), frozenset({"a"}), planned_boards=4)
    )
    worst = model.rate_match(
        before, MatchOutcome("m-1", TEAMS, (-1600, 0), boards=((-400, 0),) * 4, planned_boards=4)
    )
    assert set(forfeit) == {"a"} and forfeit["a"] == worst["a"]
    short = model.rate_match(
        before, MatchOutcome("m-1", TEAMS, (900, 0), frozenset({"a"}), planned_boards=1)
    )
    assert forfeit["a"].mu < short["a"].mu < before["a"].mu  # a longer match forfeited costs more


def test_tau_widens_every_rating_before_its_match() -> None:
    rating = {e: Rating(25.0, 1.0, 50) for e in "abcd"}
    draw = MatchOutcome("m-1", TEAMS, (0, 0), boards=((0, 0),))
    still = RatingModel(tau=0.0).rate_match(rating, draw)
    moving = RatingModel(tau=0.5).rate_match(rating, draw)
    assert still["a"].sigma < moving["a"].sigma
    with pytest.raises(ValueError, match="tau"):
        RatingModel(tau=-1.0)
