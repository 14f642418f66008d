"""The ladder's tables on a real SQLite file: matches, results, ratings and their rebuild."""

import sqlite3
from pathlib import Path

import pytest

from server import queries
from server.ladder import store
from server.ladder.ratings import MatchOutcome, Rating, RatingModel, apply_match
from server.storage import connect


@pytest.fixture
def conn(tmp_path: Path) -> sqlite3.Connection:
    conn = connect(tmp_path / "ladder.db")
    store.ensure_schema(conn)
    store.ensure_schema(conn)  # idempotent: it runs at every start
    return conn


def _accounts(conn: sqlite3.Connection, count: int) -> list[int]:
    return [
        queries.insert_account(conn, f"bot{i}", None, None, is_bot=True, is_guest=False)
        for i in range(count)
    ]


def _play(
    conn: sqlite3.Connection, ids: list[int], model: RatingModel, rounds: int
) -> dict[str, Rating]:
    ratings: dict[str, Rating] = {}
    for index in range(rounds):
        four = [ids[(index + k) % len(ids)] for k in (0, 1, 2, 3)]
        teams = ((four[0], four[2]), (four[1], four[3]))
        match = store.insert_match(conn, preset="standard", options={}, hands=2, teams=teams)
        outcome = MatchOutcome(
            match,
            ((str(four[0]), str(four[2])), (str(four[1]), str(four[3]))),
            (index * 7 % 50, index * 11 % 50),
            forfeits=frozenset({str(four[1])}) if index % 5 == 4 else frozenset(),
        )
        moves = apply_match(model, ratings, outcome)
        store.finish_match(
            conn,
            match,
            outcome=outcome,
            halves=[],
            moves={int(k): v for k, v in moves.items()},
        )
    return ratings


def test_stored_ratings_equal_the_ones_rebuilt_from_history(conn: sqlite3.Connection) -> None:
    ids = _accounts(conn, 6)
    incremental = _play(conn, ids, RatingModel(), 23)
    stored = store.current_ratings(conn)
    assert stored == {int(k): v for k, v in incremental.items()}
    assert len(store.rated_outcomes(conn)) == 23
    assert store.rebuild_ratings(conn) == stored
    assert store.current_ratings(conn) == stored


def test_standings_matches_and_detail(conn: sqlite3.Connection) -> None:
    ids = _accounts(conn, 5)
    _play(conn, ids, RatingModel(), 9)
    lines = store.standings(conn, limit=3)
    assert [line.rank for line in lines] == [1, 2, 3]
    values = [line.rating.conservative for line in store.standings(conn)]
    assert values == sorted(values, reverse=True)
    recent = store.matches(conn, limit=4)
    assert [m["match"] for m in recent] == ["m-9", "m-8", "m-7", "m-6"]
    mine = store.matches(conn, "bot0")
    assert mine and all(any("bot0" in team for team in m["teams"]) for m in mine)
    assert store.matches(conn, "nobody") == []
    detail = store.entrant_detail(conn, "bot0")
    assert detail is not None and detail["rank"] is not None and detail["partners"]
    assert store.entrant_detail(conn, "nobody") is None


def test_running_matches_are_void_after_a_restart_and_never_rated(conn: sqlite3.Connection) -> None:
    ids = _accounts(conn, 4)
    match = store.insert_match(
        conn, preset="standard", options={}, hands=1, teams=((ids[0], ids[2]), (ids[1], ids[3]))
    )
    assert store.void_running(conn) == 1
    assert store.rated_outcomes(conn) == []
    outcome = MatchOutcome(match, (("1", "3"), ("2", "4")), (1, 0))
    with pytest.raises(ValueError, match="not running"):
        store.finish_match(conn, match, outcome=outcome, halves=[], moves={})
    assert [m["status"] for m in store.matches(conn)] == ["void"]


def test_house_bots_are_entered_once_and_bad_specs_refused(conn: sqlite3.Connection) -> None:
    assert store.add_house_bots(conn, ["random", "heuristic"]) == [
        "house:random",
        "house:heuristic",
    ]
    assert store.add_house_bots(conn, ["random"]) == []
    assert [name for _, name, _ in store.house_entrants(conn)] == [
        "house:random",
        "house:heuristic",
    ]
    with pytest.raises(ValueError):
        store.add_house_bots(conn, ["no-such-bot"])
    assert store.match_seq("m-12") == 12
    with pytest.raises(ValueError):
        store.match_seq("x-1")
