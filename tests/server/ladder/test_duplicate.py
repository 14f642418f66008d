"""The duplicate pair: the same deals in both halves, the teams on the other hands, points summed."""

from engine.game import new_game
from engine.ruleset import Ruleset
from server.ladder.duplicate import DuplicatePlan, HalfResult, board_points, team_points

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


def test_boards_pair_the_halves_hands_by_seed_and_sum_each_team_on_them() -> None:
    sides = ((0, 2), (1, 3))
    teams = (("a0", "a1"), ("b0", "b1"))
    first = HalfResult(
        DuplicatePlan.seating(ENTRANTS, 0),
        sides,
        (150, 40),
        hands=(("s1", (100, 20)), ("s2", (50, 20)), ("only-here", (0, 0))),
    )
    # The second half dealt the same two seeds (in another order, say after a dead deal); team a
    # now sits on side 1.
    second = HalfResult(
        DuplicatePlan.seating(ENTRANTS, 1),
        sides,
        (90, 60),
        hands=(("s2", (40, 30)), ("s1", (50, 30))),
    )
    # Board s1: team a 100 (side 0) + 30 (side 1); team b 20 + 50.
    assert board_points([first, second], teams) == ((130, 70), (80, 60))
    assert HalfResult.from_dict(first.to_dict()) == first


def test_no_boards_without_two_halves_that_know_their_hands() -> None:
    sides = ((0, 2), (1, 3))
    teams = (("a0", "a1"), ("b0", "b1"))
    with_hands = HalfResult(ENTRANTS, sides, (10, 0), hands=(("s1", (10, 0)),))
    old = HalfResult(DuplicatePlan.seating(ENTRANTS, 1), sides, (0, 10))
    assert board_points([with_hands], teams) == ()  # a forfeit ended the match after one half
    assert board_points([with_hands, old], teams) == ()  # stored before hands were kept
    assert "hands" not in old.to_dict() and HalfResult.from_dict(old.to_dict()) == old
