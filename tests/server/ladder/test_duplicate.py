"""Board sets: fresh deals per match, the same cards at both twin tables; the old duplicate pair's
records still read."""

from engine.game import new_game
from engine.ruleset import Ruleset
from server.ladder.duplicate import (
    BoardSet,
    TableResult,
    board_points,
    deal_points,
    pair_seating,
    team_points,
)

ENTRANTS = ("a0", "b0", "a1", "b1")  # team a at seats 0 and 2
TEAMS = (("a0", "a1"), ("b0", "b1"))
SIDES = ((0, 2), (1, 3))


def test_twin_tables_deal_each_seat_the_same_cards_and_every_board_set_is_new() -> None:
    ruleset = Ruleset.from_preset("standard")
    boards = BoardSet.seeded(3, seed=11)
    for deal in range(3):
        hands = []
        for _table in range(2):
            game = new_game(ruleset, dealer=0)
            game.deal(boards.deal_seed(deal))
            hands.append([game.view(s).to_dict()["hand"] for s in range(4)])
        # Team 0 of one table holds exactly what team 0 of its twin holds, seat by seat.
        assert hands[0] == hands[1]
    other = BoardSet.seeded(3, seed=12)
    assert {boards.deal_seed(i) for i in range(3)}.isdisjoint(
        {other.deal_seed(i) for i in range(3)}
    )


def test_seeds_are_per_deal_reproducible_when_seeded_and_secret_otherwise() -> None:
    boards = BoardSet.seeded(4, seed=1)
    assert boards.deal_seed(0) == BoardSet.seeded(4, seed=1).deal_seed(0)
    assert len({boards.deal_seed(i) for i in range(8)}) == 8
    assert BoardSet.fresh(4).deal_seed(0) != BoardSet.fresh(4).deal_seed(0)
    assert "secret" not in repr(boards)  # the secret never reaches a log line


def test_a_tables_deals_are_each_teams_points_by_seed() -> None:
    table = TableResult(
        ENTRANTS, SIDES, (150, 40), hands=(("s1", (100, 20)), ("s2", (50, 20))), twin="m-9"
    )
    assert deal_points(table, TEAMS) == (("s1", (100, 20)), ("s2", (50, 20)))
    assert deal_points(table, (TEAMS[1], TEAMS[0])) == (("s1", (20, 100)), ("s2", (20, 50)))
    assert team_points([table], TEAMS) == (150, 40)
    assert TableResult.from_dict(table.to_dict()) == table
    alone = TableResult(ENTRANTS, SIDES, (0, 0))
    assert "twin" not in alone.to_dict() and TableResult.from_dict(alone.to_dict()) == alone


# ---------------------------------------------------------------- the old duplicate pair, as stored


def test_the_old_pairs_second_half_put_each_team_on_the_other_teams_cards() -> None:
    first = pair_seating(ENTRANTS, 0)
    second = pair_seating(ENTRANTS, 1)
    assert first == ENTRANTS
    side_of = {seat: i for i, side in enumerate(SIDES) for seat in side}
    for who in ENTRANTS:
        assert side_of[first.index(who)] != side_of[second.index(who)]


def test_team_points_sum_each_team_over_the_halves() -> None:
    halves = [
        TableResult(pair_seating(ENTRANTS, 0), SIDES, (150, 40)),
        TableResult(pair_seating(ENTRANTS, 1), SIDES, (90, 60)),
    ]
    # Team a held side 0 first (150), then side 1 (60); team b the reverse.
    assert team_points(halves, TEAMS) == (210, 130)


def test_boards_pair_the_halves_hands_by_seed_and_sum_each_team_on_them() -> None:
    first = TableResult(
        pair_seating(ENTRANTS, 0),
        SIDES,
        (150, 40),
        hands=(("s1", (100, 20)), ("s2", (50, 20)), ("only-here", (0, 0))),
    )
    # The second half dealt the same two seeds (in another order, say after a dead deal); team a
    # now sits on side 1.
    second = TableResult(
        pair_seating(ENTRANTS, 1),
        SIDES,
        (90, 60),
        hands=(("s2", (40, 30)), ("s1", (50, 30))),
    )
    # Board s1: team a 100 (side 0) + 30 (side 1); team b 20 + 50.
    assert board_points([first, second], TEAMS) == ((130, 70), (80, 60))
    assert TableResult.from_dict(first.to_dict()) == first


def test_no_boards_without_two_halves_that_know_their_hands() -> None:
    with_hands = TableResult(ENTRANTS, SIDES, (10, 0), hands=(("s1", (10, 0)),))
    old = TableResult(pair_seating(ENTRANTS, 1), SIDES, (0, 10))
    assert board_points([with_hands], TEAMS) == ()  # one table: a match of today, or a forfeit
    assert board_points([with_hands, old], TEAMS) == ()  # stored before hands were kept
    assert "hands" not in old.to_dict() and TableResult.from_dict(old.to_dict()) == old
