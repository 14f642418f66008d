"""The duplicate pair: the same deals in both halves, the teams on the other hands, points summed."""

from engine.game import new_game
from engine.ruleset import Ruleset
from server.ladder.duplicate import DuplicatePlan, HalfResult, team_points

ENTRANTS = ("a0", "b0", "a1", "b1")  # team a at seats 0 and 2 in the first half


def test_the_second_half_puts_each_team_on_the_other_teams_cards() -> None:
    first = DuplicatePlan.seating(ENTRANTS, 0)
    second = DuplicatePlan.seating(ENTRANTS, 1)
    assert first == ENTRANTS
    ruleset = Ruleset.from_preset("standard")
    sides = ruleset.sides
    side_of = {seat: i for i, side in enumerate(sides) for seat in side}
    for who in ENTRANTS:
        assert side_of[first.index(who)] != side_of[second.index(who)]
    # Same seed, same seat, same cards: so a seat's cards go to the other team in the second half.
    plan = DuplicatePlan.seeded(3, seed=11)
    for deal in range(3):
        hands = []
        for _half in range(2):
            game = new_game(ruleset, dealer=0)
            game.deal(plan.deal_seed(deal))
            hands.append([game.view(s).to_dict()["hand"] for s in range(4)])
        assert hands[0] == hands[1]


def test_seeds_are_per_deal_reproducible_when_seeded_and_secret_otherwise() -> None:
    plan = DuplicatePlan.seeded(4, seed=1)
    assert plan.deal_seed(0) == DuplicatePlan.seeded(4, seed=1).deal_seed(0)
    assert len({plan.deal_seed(i) for i in range(8)}) == 8
    assert DuplicatePlan.fresh(4).deal_seed(0) != DuplicatePlan.fresh(4).deal_seed(0)
    assert "secret" not in repr(plan)  # the secret never reaches a log line


def test_team_points_sum_each_team_over_the_halves() -> None:
    sides = ((0, 2), (1, 3))
    halves = [
        HalfResult(DuplicatePlan.seating(ENTRANTS, 0), sides, (150, 40)),
        HalfResult(DuplicatePlan.seating(ENTRANTS, 1), sides, (90, 60)),
    ]
    # Team a held side 0 first (150), then side 1 (60); team b the reverse.
    assert team_points(halves, (("a0", "a1"), ("b0", "b1"))) == (210, 130)
