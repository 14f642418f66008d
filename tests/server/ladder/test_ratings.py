"""Ratings: Plackett-Luce over two teams, draws, forfeits, and the rebuild from history."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.ladder.ratings import (
    DEFAULT_MU,
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
    outcome = MatchOutcome("m-7", TEAMS, (10, -20), forfeits=frozenset({"c"}))
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
    # "s" always beats "h", which always beats "r": partners rotate, the band order emerges.
    strength = {"s1": 3, "s2": 3, "h1": 2, "h2": 2, "r1": 1, "r2": 1}
    rng = random.Random(3)
    model = RatingModel()
    ratings: dict[str, Rating] = {}
    for index in range(400):
        a, b, c, d = rng.sample(sorted(strength), 4)
        pa, pb = strength[a] + strength[b], strength[c] + strength[d]
        apply_match(model, ratings, MatchOutcome(f"m-{index}", ((a, b), (c, d)), (pa, pb)))
    order = [name for name, _ in ranked(ratings)]
    assert {order[0], order[1]} == {"s1", "s2"} and {order[4], order[5]} == {"r1", "r2"}
    assert separated([ratings["h1"], ratings["h2"]], [ratings["r1"], ratings["r2"]])
    assert not separated([], [ratings["r1"]])


def test_the_conservative_estimate_is_three_sigmas_below_the_mean() -> None:
    rating = Rating(30.0, 2.0, 5)
    assert rating.conservative == 24.0
    assert rating.interval == (24.0, 36.0)
    assert Rating().conservative == pytest.approx(0.0)
