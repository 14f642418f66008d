"""What the ladder keeps, through a `Tx` (the `tx` fixture: each engine in turn): matches, results,
ratings and their rebuild."""

import random

import pytest

from server.ladder import store
from server.ladder.duplicate import (
    TableResult,
    board_points,
    deal_points,
    pair_seating,
    team_points,
)
from server.ladder.ratings import MatchOutcome, RatingModel, Ratings, apply_board_set, apply_match
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
            seats = pair_seating(keys, half)
            # Old matches (every other one) were stored without their hands.
            hands = (
                ()
                if index % 2
                else (("d0", (index * 30 + half * 10, 40)), ("d1", (-20, half * 50 + index)))
            )
            scores = tuple(sum(p[side] for _, p in hands) for side in (0, 1)) if hands else (90, 40)
            halves.append(TableResult(seats, ((0, 2), (1, 3)), scores, hands=hands))
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
        [TableResult.from_dict(h) for h in _stored_halves(tx, history[0].match_id)], teams
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


def _table(
    tx: Tx, four: list[int], seeds: list[str], rng: random.Random
) -> tuple[str, TableResult, tuple[tuple[str, str], tuple[str, str]]]:
    """A running match of `four` and its table's result over the deals `seeds`."""
    keys = tuple(str(i) for i in four)
    match = store.insert_match(
        tx, preset="standard", options={}, hands=2, teams=((four[0], four[2]), (four[1], four[3]))
    )
    hands = tuple((seed, (rng.randrange(-150, 200), rng.randrange(-150, 200))) for seed in seeds)
    scores = tuple(sum(p[side] for _, p in hands) for side in (0, 1))
    teams = ((keys[0], keys[2]), (keys[1], keys[3]))
    return match, TableResult(keys, ((0, 2), (1, 3)), scores, hands=hands), teams


def test_twins_are_stored_one_after_the_other_and_rebuild_to_the_same_floats(
    tx: Tx,
) -> None:
    """History across the upgrade: old duplicate pairs, then twins (one with a forfeit, one whose
    twin was void, one a deal apart after a dead deal) and matches played alone. The stored
    ratings are exactly the ones rebuilt from the stored history."""
    from server.ladder.ratings import recompute
    from tests.server.ladder import made

    rng = random.Random(4)
    ids = _accounts(tx, 10)
    names = [f"bot{i}" for i in range(4)]
    made.rated_match(tx, names, [(120, 40), (60, 90)])
    made.rated_match(tx, [names[1], names[0], names[3], names[2]], [(10, 70), (35, 20)])
    model = RatingModel()
    ratings = recompute(store.rated_outcomes(tx), model)
    when = store.now()

    def finish(
        matches: list[tuple[str, TableResult, tuple[tuple[str, str], tuple[str, str]]]],
        forfeit: str | None = None,
    ) -> None:
        nonlocal when
        outcomes = []
        results = []
        for match, played, teams in matches:
            result = played
            if len(matches) > 1:
                twin = next(m for m, _, _ in matches if m != match)
                result = TableResult(
                    played.seats, played.sides, played.scores, hands=played.hands, twin=twin
                )
            when += 90.0
            outcomes.append(
                MatchOutcome(
                    match,
                    teams,
                    team_points([result], teams),
                    forfeits=frozenset({forfeit})
                    if forfeit in teams[0] + teams[1]
                    else frozenset(),
                    deals=deal_points(result, teams),
                    planned_boards=2,
                    finished_at=when,
                    twin=result.twin,
                )
            )
            results.append(result)
        moves = apply_board_set(model, ratings, outcomes)
        for outcome, result in zip(outcomes, results, strict=True):
            store.finish_match(
                tx,
                outcome.match_id,
                outcome=outcome,
                halves=[result.to_dict()],
                moves={int(e): moves[e] for e in outcome.entrants if e in moves},
                ratings={int(k): v for k, v in ratings.items()},
            )

    for index in range(12):
        order = rng.sample(ids, 8)
        seeds = [f"{index}-a", f"{index}-b"]
        first = _table(tx, order[:4], seeds, rng)
        kind = index % 4
        if kind == 3:
            finish([first])  # played alone
            continue
        # A dead deal at one table puts it a deal ahead: one deal only it played.
        second = _table(tx, order[4:], seeds if kind != 2 else [seeds[0], f"{index}-c"], rng)
        if kind == 1 and index % 8 == 1:
            store.void_match(tx, second[0], "a table could not finish")
            finish([first])
            continue
        finish([first, second], forfeit=str(order[5]) if index == 5 else None)
    history = store.rated_outcomes(tx)
    assert any(o.twin for o in history) and any(o.forfeits and o.twin for o in history)
    twins = [o for o in history if o.twin]
    assert [o.deals for o in history[:2]] == [(), ()]  # the old pairs, rated on their points
    assert all(o.deals for o in history[2:])
    assert len(twins) % 2 == 0
    stored = store.current_ratings(tx)
    assert stored == {int(k): v for k, v in ratings.items()}
    assert store.rebuild_ratings(tx) == stored
