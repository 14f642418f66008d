"""Scoring, with the sources' worked examples (000, 001, 003) and every scoring option."""

import pytest

from engine.actions import Bid
from engine.game import Outcome
from engine.ruleset import Ruleset
from engine.scoring import game_result, score_side

STANDARD = Ruleset.from_preset("standard")
YAHOO = Ruleset.from_preset("yahoo")
SIDE = (0, 2)


def score(
    ruleset: Ruleset,
    bids: dict[int, Bid | int],
    tricks: dict[int, int],
    *,
    score: int = 0,
    bags: int = 0,
    winners: list[int] | None = None,
    **kw: object,
) -> tuple[int, int, int]:
    all_bids = [Bid(s, 1) for s in range(4)]
    for seat, bid in bids.items():
        all_bids[seat] = bid if isinstance(bid, Bid) else Bid(seat, bid)
    all_tricks = [0, 0, 0, 0]
    for seat, took in tricks.items():
        all_tricks[seat] = took
    result = score_side(
        ruleset,
        SIDE,
        all_bids,
        all_tricks,
        winners or [],
        score=score,
        bags=bags,
        **kw,  # type: ignore[arg-type]
    )
    return result.delta, result.after, result.bags_after


@pytest.mark.parametrize(
    ("took", "after", "bags_after"),
    [(5, 387, 7), (6, 388, 8), (7, 389, 9), (8, 290, 0), (9, 291, 1)],
)
def test_pagat_worked_example_337_with_7_bags(took: int, after: int, bags_after: int) -> None:
    # 000: a side at 337 with 7 bags bids 5: 7 tricks -> 389 (9 bags); 8 -> 290 (0); 9 -> 291.
    _, got_after, got_bags = score(STANDARD, {0: 3, 2: 2}, {0: took, 2: 0}, score=337, bags=7)
    assert (got_after, got_bags) == (after, bags_after)


def test_missed_contract_loses_ten_a_trick_and_takes_no_bags() -> None:
    assert score(STANDARD, {0: 4, 2: 3}, {0: 3, 2: 3}, score=100, bags=4) == (-70, 30, 4)


def test_yahoo_bags_by_the_last_digit() -> None:
    # 001: ten bags are shown by the last digit going from 9 to 0: 100 points off.
    assert score(YAHOO, {0: 2, 2: 2}, {0: 4, 2: 2}, score=187) == (42, 229, 9)
    assert score(YAHOO, {0: 2, 2: 2}, {0: 5, 2: 2}, score=187) == (43 - 100, 130, 0)
    assert score(YAHOO, {0: 2, 2: 2}, {0: 3, 2: 1}, score=187) == (40, 227, 7)
    # The last digit carries the bags even through a loss.
    assert score(YAHOO, {0: 5, 2: 5}, {0: 3, 2: 3}, score=187) == (-100, 87, 7)
    # A negative score keeps its bags as score mod 10: -13 is -20 with 7 bags.
    assert score(YAHOO, {0: 1, 2: 1}, {0: 2, 2: 3}, score=-13)[1:] == (-90, 0)


def test_failed_nil_standard_tricks_do_not_help_partner_but_are_bags() -> None:
    # 000: partner bid 4 and took 3; the nil bidder took 2. Nil -100, partner set -40, 2 bags.
    assert score(STANDARD, {0: 0, 2: 4}, {0: 2, 2: 3}) == (-100 - 40 + 2, -138, 2)
    # Partner makes on their own: -100 + 40 + 2 bags (the nil's tricks).
    assert score(STANDARD, {0: 0, 2: 4}, {0: 2, 2: 4}) == (-100 + 40 + 2, -58, 2)


def test_failed_nil_tricks_help_partner_when_the_option_says_so() -> None:
    # Yahoo: the nil bidder's 2 tricks make the partner's 4 (3 + 2 = 5: one bag).
    assert score(YAHOO, {0: 0, 2: 4}, {0: 2, 2: 3}, score=0) == (-100 + 41, -59, 1)
    # Partner misses even with them.
    assert score(YAHOO, {0: 0, 2: 6}, {0: 2, 2: 3}, score=0) == (-100 - 60, -160, 0)


def test_nil_scored_independently_ignores_the_nil_tricks() -> None:
    ruleset = Ruleset.from_preset("deuces-high")
    assert score(ruleset, {0: 0, 2: 4}, {0: 2, 2: 4}) == (-100 + 40, -60, 0)


def test_made_nil_and_double_nil() -> None:
    assert score(STANDARD, {0: 0, 2: 4}, {0: 0, 2: 5}) == (100 + 41, 141, 1)
    # 003 double nil: each partner's nil is scored on its own.
    assert score(STANDARD, {0: 0, 2: 0}, {0: 0, 2: 1})[0] == 100 - 100 + 1


def test_blind_nil_value_follows_the_ruleset() -> None:
    blind = Bid(0, 0, blind=True)
    assert score(YAHOO, {0: blind, 2: 3}, {0: 0, 2: 3})[0] == 200 + 30
    assert score(YAHOO, {0: blind, 2: 3}, {0: 1, 2: 3})[0] == -200 + 31
    assert score(Ruleset.from_preset("deuces-high"), {0: blind, 2: 3}, {0: 0, 2: 3})[0] == 130


def test_blind_bids_exact_over_and_under() -> None:
    ruleset = STANDARD.with_options(blind_bids=True)
    blind = Bid(0, 4, blind=True)
    assert score(ruleset, {0: blind, 2: 3}, {0: 4, 2: 3})[0] == 40 + 100 + 30
    # Over: no bonus, the surplus helps the partner (3 + 1 surplus: partner makes 3 with 1 bag).
    assert score(ruleset, {0: blind, 2: 3}, {0: 5, 2: 2})[0] == 40 + 30
    assert score(ruleset, {0: blind, 2: 3}, {0: 6, 2: 3})[0] == 40 + 30 + 2
    assert score(ruleset, {0: blind, 2: 3}, {0: 3, 2: 3})[0] == -140 + 30


def test_bags_off_and_overtrick_points() -> None:
    ruleset = STANDARD.with_options(bags="off", overtrick_points=0)
    assert score(ruleset, {0: 2, 2: 2}, {0: 8, 2: 5}, bags=9) == (40, 40, 0)
    three = Ruleset.from_preset("three-player")
    result = score_side(
        three, (1,), [Bid(0, 1), Bid(1, 4), Bid(2, 1)], [0, 6, 0], [], score=0, bags=0
    )
    assert (result.delta, result.bags_after) == (40 - 20, 0)


def test_ten_for_200() -> None:
    ruleset = STANDARD.with_options(ten_for_200=True)
    ten = Bid(0, 10, ten_for_200=True)
    assert score(ruleset, {0: ten, 2: 2}, {0: 8, 2: 3})[0] == 200 + 1
    assert score(ruleset, {0: ten, 2: 2}, {0: 8, 2: 1})[0] == -200


def test_moe_bids_need_a_run_and_make_bags_free() -> None:
    ruleset = STANDARD.with_options(moe=True)
    little = Bid(0, 0, moe="little")
    run_of_six = [0, 2, 0, 2, 0, 2, 1, 3, 1, 3, 1, 3, 0]
    assert score(ruleset, {0: little, 2: 3}, {0: 4, 2: 3}, winners=run_of_six)[0] == 150 + 30
    broken = [0, 2, 0, 1, 0, 2, 0, 3, 1, 3, 1, 3, 0]
    assert score(ruleset, {0: little, 2: 3}, {0: 4, 2: 3}, winners=broken)[0] == -150 + 34
    big = Bid(0, 0, moe="big")
    assert score(ruleset, {0: big, 2: 3}, {0: 4, 2: 3}, winners=run_of_six)[0] == -300 + 34


def test_bemo_needs_the_first_tricks_and_the_contract() -> None:
    ruleset = STANDARD.with_options(bemo=True)
    bemo = Bid(0, 5, bemo="bemo")
    first_six = [0, 0, 2, 2, 0, 0, 1, 1, 1, 1, 3, 3, 3]
    assert score(ruleset, {0: bemo, 2: 1}, {0: 4, 2: 2}, winners=first_six)[0] == 60 + 60
    assert score(ruleset, {0: bemo, 2: 2}, {0: 4, 2: 2}, winners=first_six)[0] == -70 - 60
    big = Bid(0, 5, bemo="big_bemo")
    assert score(ruleset, {0: big, 2: 1}, {0: 4, 2: 2}, winners=first_six)[0] == 60 - 90


def test_no_spade_trumps_pays_its_value_a_trick_unless_a_spade_won() -> None:
    # 003: "A player who successfully makes a bid with the "No Trump" earns double the number of
    # points for each trick (40 points)": 40 a trick by default, 20 (the "double" reading) by option.
    ruleset = STANDARD.with_options(no_spade_trumps=True)
    nst = Bid(0, 3, no_trumps=True)
    assert score(ruleset, {0: nst, 2: 2}, {0: 3, 2: 2})[0] == 3 * 40 + 2 * 10
    assert score(ruleset, {0: nst, 2: 2}, {0: 3, 2: 2}, spade_winners=frozenset({0}))[0] == -140
    doubled = ruleset.with_options(no_spade_trumps_value=20)
    assert score(doubled, {0: nst, 2: 2}, {0: 3, 2: 2})[0] == 60 + 20
    assert score(doubled, {0: nst, 2: 2}, {0: 3, 2: 2}, spade_winners=frozenset({0}))[0] == -80


def test_boston_flag_needs_13_bid_and_taken() -> None:
    ruleset = STANDARD.with_options(boston=True)
    result = score_side(
        ruleset,
        SIDE,
        [Bid(0, 7), Bid(1, 0), Bid(2, 6), Bid(3, 0)],
        [7, 0, 6, 0],
        [],
        score=0,
        bags=0,
    )
    assert result.boston
    result = score_side(
        ruleset,
        SIDE,
        [Bid(0, 7), Bid(1, 0), Bid(2, 5), Bid(3, 0)],
        [7, 0, 6, 0],
        [],
        score=0,
        bags=0,
    )
    assert not result.boston


def test_two_handed_double_nil_is_plus_200_minus_100() -> None:
    ruleset = Ruleset.from_preset("two-player")
    bids = [Bid(0, 0, double_nil=True), Bid(1, 5)]
    assert score_side(ruleset, (0,), bids, [0, 13], [], score=0, bags=0).delta == 200
    assert score_side(ruleset, (0,), bids, [2, 11], [], score=0, bags=0).delta == -100 + 2


# -- the end of the game (game_result, which SpadesGame asks once a hand is scored) ------------------

SIDES = ((0, 2), (1, 3))


def test_game_result_target_floor_boston_and_hands() -> None:
    assert game_result(STANDARD, [420, 300], SIDES, 5, []) is None
    assert game_result(STANDARD, [510, 300], SIDES, 5, []) == Outcome(
        (0, 2), (510, 300), SIDES, "target"
    )
    # Past the target but level: the game plays on.
    assert game_result(STANDARD, [520, 520], SIDES, 5, []) is None
    # A Boston ends the game at once, whatever the scores.
    assert game_result(STANDARD, [100, 300], SIDES, 2, [0]) == Outcome(
        (0, 2), (100, 300), SIDES, "boston"
    )
    floor = Ruleset.from_preset("standard", losing_floor_enabled=True, losing_floor=-200)
    assert game_result(floor, [-210, 50], SIDES, 4, []) == Outcome(
        (1, 3), (-210, 50), SIDES, "floor"
    )
    hands = Ruleset.from_preset("standard", target_score=0, max_hands=3)
    assert game_result(hands, [90, 80], SIDES, 2, []) is None
    assert game_result(hands, [90, 80], SIDES, 3, []) == Outcome((0, 2), (90, 80), SIDES, "hands")
    assert game_result(hands, [90, 90], SIDES, 3, []) == Outcome((), (90, 90), SIDES, "draw")
