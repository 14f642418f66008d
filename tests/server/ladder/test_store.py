"""What the ladder keeps, through a `Tx` (the `tx` fixture: each engine in turn): matches, results,
ratings and their rebuild."""

import pytest

from server.ladder import store
from server.ladder.duplicate import DuplicatePlan, HalfResult, board_points, team_points
from server.ladder.ratings import MatchOutcome, RatingModel, Ratings, apply_match
from server.storage import Tx


def _accounts(tx: Tx, count: int) -> list[int]:
    return [
        tx.insert_account(f"bot{i}", None, None, is_bot=True, is_guest=False) for i in range(count)
    ]


def _play(tx: Tx, ids: list[int], model: RatingModel, rounds: int) -> Ratings:
    ratings = Ratings()
    for index in range(rounds):
        four = [ids[(index + k) % len(ids)] for k in (0, 1, 2, 3)]
        teams = ((four[0], four[2]), (four[1], four[3]))
        match = store.insert_match(tx, preset="standard", options={}, hands=2, teams=teams)
        outcome = MatchOutcome(
            match,
            ((str(four[0]), str(four[2])), (str(four[1]), str(four[3]))),
            (index * 7 % 50, index * 11 % 50),
            forfeits=frozenset({str(four[1])}) if index % 5 == 4 else frozenset(),
            planned_boards=2,
            finished_at=1_700_000_000.0 + 60 * index,
        )
        moves = apply_match(model, ratings, outcome)
        store.finish_match(
            tx,
            match,
            outcome=outcome,
            halves=[],
            moves={int(k): v for k, v in moves.items()},
            ratings={int(k): v for k, v in ratings.items()},
        )
    return ratings


def test_stored_ratings_equal_the_ones_rebuilt_from_history(tx: Tx) -> None:
    ids = _accounts(tx, 6)
    incremental = _play(tx, ids, RatingModel(), 23)
    stored = store.current_ratings(tx)
    assert stored == {int(k): v for k, v in incremental.items()}
    assert len(store.rated_outcomes(tx)) == 23
    assert store.rebuild_ratings(tx) == stored
    assert store.current_ratings(tx) == stored


def test_standings_matches_and_detail(tx: Tx) -> None:
    ids = _accounts(tx, 5)
    _play(tx, ids, RatingModel(), 9)
    lines = store.standings(tx, limit=3)
    assert [line.rank for line in lines] == [1, 2, 3]
    values = [line.rating.conservative for line in store.standings(tx)]
    assert values == sorted(values, reverse=True)
    recent = store.matches(tx, limit=4)
    assert [m["match"] for m in recent] == ["m-9", "m-8", "m-7", "m-6"]
    mine = store.matches(tx, "bot0")
    assert mine and all(any("bot0" in team for team in m["teams"]) for m in mine)
    assert store.matches(tx, "nobody") == []
    detail = store.entrant_detail(tx, "bot0")
    assert detail is not None and detail["rank"] is not None and detail["partners"]
    assert store.entrant_detail(tx, "nobody") is None


def test_running_matches_are_void_after_a_restart_and_never_rated(tx: Tx) -> None:
    ids = _accounts(tx, 4)
    match = store.insert_match(
        tx, preset="standard", options={}, hands=1, teams=((ids[0], ids[2]), (ids[1], ids[3]))
    )
    assert store.void_running(tx) == 1
    assert store.rated_outcomes(tx) == []
    outcome = MatchOutcome(match, (("1", "3"), ("2", "4")), (1, 0), finished_at=store.now())
    with pytest.raises(ValueError, match="not running"):
        store.finish_match(tx, match, outcome=outcome, halves=[], moves={})
    assert [m["status"] for m in store.matches(tx)] == ["void"]


def test_house_bots_are_entered_once_and_bad_specs_refused(tx: Tx) -> None:
    assert store.add_house_bots(tx, ["random", "heuristic"]) == [
        "house:random",
        "house:heuristic",
    ]
    assert store.add_house_bots(tx, ["random"]) == []
    assert [name for _, name, _ in store.house_entrants(tx)] == [
        "house:random",
        "house:heuristic",
    ]
    with pytest.raises(ValueError):
        store.add_house_bots(tx, ["no-such-bot"])
    assert store.match_seq("m-12") == 12
    with pytest.raises(ValueError):
        store.match_seq("x-1")


def test_boards_are_stored_with_the_halves_and_old_matches_stay_rateable(
    tx: Tx,
) -> None:
    """A match rated board by board keeps each half's hands; a match stored before the ladder
    kept them (its halves have no hands) is still rated, on its combined points, and the stored
    ratings of both kinds rebuild to the same floats."""
    ids = _accounts(tx, 4)
    keys = [str(i) for i in ids]
    teams = ((keys[0], keys[2]), (keys[1], keys[3]))
    model = RatingModel()
    ratings = Ratings()
    for index in range(6):
        match = store.insert_match(
            tx, preset="standard", options={}, hands=2, teams=((ids[0], ids[2]), (ids[1], ids[3]))
        )
        halves = []
        for half in (0, 1):
            seats = DuplicatePlan.seating(keys, half)
            # Old matches (every other one) were stored without their hands.
            hands = (
                ()
                if index % 2
                else (("d0", (index * 30 + half * 10, 40)), ("d1", (-20, half * 50 + index)))
            )
            scores = tuple(sum(p[side] for _, p in hands) for side in (0, 1)) if hands else (90, 40)
            halves.append(HalfResult(seats, ((0, 2), (1, 3)), scores, hands=hands))
        outcome = MatchOutcome(
            match,
            teams,
            team_points(halves, teams),
            boards=board_points(halves, teams),
            planned_boards=2,
            finished_at=1_700_000_000.0 + 3_600 * index,
        )
        assert bool(outcome.boards) == (index % 2 == 0)
        moves = apply_match(model, ratings, outcome)
        store.finish_match(
            tx,
            match,
            outcome=outcome,
            halves=[h.to_dict() for h in halves],
            moves={int(k): v for k, v in moves.items()},
            ratings={int(k): v for k, v in ratings.items()},
        )
    history = store.rated_outcomes(tx)
    assert [len(o.boards) for o in history] == [2, 0, 2, 0, 2, 0]
    assert history[0].boards == board_points(
        [HalfResult.from_dict(h) for h in _stored_halves(tx, history[0].match_id)], teams
    )
    stored = store.current_ratings(tx)
    assert stored == {int(k): v for k, v in ratings.items()}
    assert store.rebuild_ratings(tx) == stored


def _stored_halves(tx: Tx, match: str) -> list[dict[str, object]]:
    row = tx.match(store.match_seq(match))
    assert row is not None
    halves: list[dict[str, object]] = row.halves
    return halves


def test_a_result_must_be_rated_on_the_boards_the_match_was_planned_with(
    tx: Tx,
) -> None:
    ids = _accounts(tx, 4)
    match = store.insert_match(
        tx, preset="standard", options={}, hands=4, teams=((ids[0], ids[2]), (ids[1], ids[3]))
    )
    outcome = MatchOutcome(
        match,
        ((str(ids[0]), str(ids[2])), (str(ids[1]), str(ids[3]))),
        (0, 0),
        forfeits=frozenset({str(ids[0])}),
        planned_boards=1,
        finished_at=store.now(),
    )
    with pytest.raises(ValueError, match="planned with 4 boards"):
        store.finish_match(tx, match, outcome=outcome, halves=[], moves={})
    unstamped = MatchOutcome(outcome.match_id, outcome.teams, (0, 0), planned_boards=4)
    with pytest.raises(ValueError, match="needs its finished_at"):
        store.finish_match(tx, match, outcome=unstamped, halves=[], moves={})
