"""Every `Tx` method, on each engine (the `tx` fixture): what a caller of the store relies on."""

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from server.storage import (
    MIGRATIONS,
    EventEntrantRow,
    HouseEntrant,
    StoredAction,
    StoredRating,
    Tx,
    read_transaction,
)
from server.storage.dialect import POSTGRES, SQLITE
from server.storage.schema import statements


def test_accounts_are_found_by_id_and_by_name_without_case(tx: Tx) -> None:
    ada = tx.insert_account("Ada", b"s" * 16, b"h" * 32, is_bot=False, is_guest=False)
    bot = tx.insert_account("bot:x", None, None, is_bot=True, is_guest=False)
    assert bot > ada
    row = tx.account_by_name("ADA")
    assert row is not None and row.id == ada and row.name == "Ada"
    assert row.token_salt == b"s" * 16 and row.token_hash == b"h" * 32
    assert not row.is_bot and not row.is_guest
    found = tx.account_by_id(bot)
    assert found is not None and found.is_bot and found.token_hash is None
    with pytest.raises(ValueError, match="taken"):
        tx.insert_account("ada", None, None, is_bot=False, is_guest=True)
    assert tx.account_by_name("nobody") is None
    assert tx.account_by_id(10**6) is None
    # An id no engine can hold is simply no account (not an error from the driver).
    assert tx.account_by_id(9 * 10**24) is None
    assert tx.account_by_id(-(2**70)) is None


def test_a_token_hash_is_upgraded_only_from_the_hash_it_replaces(tx: Tx) -> None:
    ada = tx.insert_account("ada", b"s" * 16, b"h" * 32, is_bot=False, is_guest=False)
    assert not tx.upgrade_token_hash(ada, b"x" * 32, b"t" * 16, b"n" * 33)  # not its hash
    assert tx.upgrade_token_hash(ada, b"h" * 32, b"t" * 16, b"n" * 33)
    row = tx.account_by_id(ada)
    assert row is not None and (row.token_salt, row.token_hash) == (b"t" * 16, b"n" * 33)
    assert not tx.upgrade_token_hash(ada, b"h" * 32, b"u" * 16, b"m" * 33)  # upgraded already
    assert not tx.upgrade_token_hash(10**6, b"h" * 32, b"u" * 16, b"m" * 33)  # no account


def test_tables_wait_until_a_game_starts_or_they_close(tx: Tx) -> None:
    tx.insert_table("w1", {"game": "hearts"}, seats=[None, None, None, None], creator=None)
    tx.insert_table("w2", {"game": "spades"}, seats=[7, None, None, None], creator=7)
    tx.insert_table("ladder", {"game": "spades"})  # no seats: never reopened
    assert [w.id for w in tx.waiting_tables()] == ["w1", "w2"]
    tx.update_table_seats("w1", [None, 3, None, None])
    tx.update_table_seats("ladder", [1, 2, 3, 4])  # not one that reopens: unchanged
    w1, w2 = tx.waiting_tables()
    assert w1.seats == [None, 3, None, None] and w1.config == {"game": "hearts"}
    assert w2.creator == 7 and tx.table_creator("w2") == 7 and tx.table_creator("w1") is None
    assert tx.table_creator("nope") is None
    tx.insert_game("w1", "hearts", {}, [])
    tx.close_table("w2")
    assert tx.waiting_tables() == []


def test_a_game_from_start_to_finish(tx: Tx) -> None:
    tx.insert_table("t", {"game": "spades", "x": [1, 2]})
    five = tx.insert_account("five", None, None, is_bot=False, is_guest=False)
    game = tx.insert_game("t", "spades", {"preset": "standard"}, [{"account": None}] * 4)
    assert tx.game_status(game) == "running" and tx.game_status(game + 1) is None
    tx.insert_hand(game, hand_no=0, seed="aa", commitment="cc", first_seq=0)
    tx.insert_action(game, 0, seat=1, action={"bid": 3}, source="player", bank_left_ms=900)
    tx.insert_action(game, 1, seat=2, action={"bid": 4}, source="bot")
    with pytest.raises(ValueError, match="already has an action 1"):
        tx.insert_action(game, 1, seat=3, action={}, source="player")
    tx.update_game_seats(game, [{"account": five}] * 4)
    (stored,) = tx.unfinished_games()
    assert stored == tx.load_game(game)
    assert stored.table_config == {"game": "spades", "x": [1, 2]}
    assert stored.ruleset == {"preset": "standard"} and stored.seats == [{"account": five}] * 4
    assert [(h.hand_no, h.seed, h.commitment, h.first_seq) for h in stored.hands] == [
        (0, "aa", "cc", 0)
    ]
    assert [(a.seq, a.seat, a.action, a.source, a.bank_left_ms) for a in stored.actions] == [
        (0, 1, {"bid": 3}, "player", 900),
        (1, 2, {"bid": 4}, "bot", None),
    ]
    assert tx.action_count(game) == 2 and tx.hand_count(game) == (1, 0)
    tx.insert_hand_record(game, 0, {"hand": "first"})
    tx.insert_hand_record(game, 0, {"hand": "again"})  # the same hand replaces its record
    tx.finish_game(game, "finished", [(0, five, 510, 1), (1, None, 200, 2)])
    assert tx.unfinished_games() == [] and tx.game_status(game) == "finished"
    assert tx.results(game) == [(0, five, 510, 1), (1, None, 200, 2)]
    assert list(tx.hand_records(game)) == [{"hand": "again"}]
    assert tx.game_ids() == [game] and tx.game_ids("finished") == [game]
    assert tx.game_ids("running") == [] and tx.load_game(game + 1) is None
    assert tx.latest_game_at("t") == game and tx.latest_game_at("elsewhere") is None
    assert tx.game_status(10**30) is None and tx.load_game(10**30) is None


def test_hand_records_of_every_game_come_in_game_then_hand_order(tx: Tx) -> None:
    tx.insert_table("t", {})
    first = tx.insert_game("t", "spades", {}, [])
    second = tx.insert_game("t", "spades", {}, [])
    tx.insert_hand_record(second, 0, {"g": 2, "h": 0})
    tx.insert_hand_record(first, 1, {"g": 1, "h": 1})
    tx.insert_hand_record(first, 0, {"g": 1, "h": 0})
    assert [(r["g"], r["h"]) for r in tx.hand_records()] == [(1, 0), (1, 1), (2, 0)]


def test_ratings_by_game_key(tx: Tx) -> None:
    a = tx.insert_account("a", None, None, is_bot=True, is_guest=False)
    b = tx.insert_account("b", None, None, is_bot=True, is_guest=False)
    tx.set_rating(a, "ladder", mu=30.5, sigma=2.25, games=3)
    tx.set_rating(a, "ladder", mu=31.0, sigma=2.0, games=4)  # replaces
    tx.set_rating(b, "ladder", mu=20.0, sigma=5.0, games=1)
    tx.set_rating(b, "other", mu=1.0, sigma=1.0, games=1)
    assert tx.rating(a, "ladder") == StoredRating(31.0, 2.0, 4)
    assert tx.rating(a, "other") is None
    assert tx.ratings("ladder") == {a: StoredRating(31.0, 2.0, 4), b: StoredRating(20.0, 5.0, 1)}
    rated = sorted(tx.rated_accounts("ladder"), key=lambda r: r.account_id)
    assert [(r.name, r.rating.mu) for r in rated] == [("a", 31.0), ("b", 20.0)]
    tx.delete_ratings("ladder")
    assert tx.ratings("ladder") == {} and tx.ratings("other") == {b: StoredRating(1.0, 1.0, 1)}


def test_ladder_matches_from_running_to_rated_or_void(tx: Tx) -> None:
    teams = ((1, 3), (2, 4))
    first = tx.insert_match(
        preset="standard", options={"x": 1}, hands=2, teams=teams, created_at=5.0
    )
    second = tx.insert_match(preset="standard", options={}, hands=1, teams=teams, created_at=6.0)
    third = tx.insert_match(preset="standard", options={}, hands=1, teams=teams, created_at=7.0)
    assert first < second < third
    row = tx.match(first)
    assert row is not None and row.status == "running" and row.options == {"x": 1}
    assert row.teams == [[1, 3], [2, 4]] and row.hands == 2 and row.created_at == 5.0
    assert row.points is None and row.forfeits == [] and row.halves is None
    assert tx.match(third + 1) is None
    assert list(tx.settled_matches()) == []
    halves = [{"seats": ["1", "2", "3", "4"], "game": 9}]
    assert (
        tx.rate_match(
            second, points=[10, 20], forfeits=[], halves=halves, changes={"1": {}}, finished_at=8.0
        )
        == 1
    )
    assert (
        tx.rate_match(first, points=[5, 0], forfeits=[2], halves=[], changes={}, finished_at=9.0)
        == 2
    )
    # Only a running match can be rated, once.
    assert (
        tx.rate_match(first, points=[], forfeits=[], halves=[], changes={}, finished_at=9.5) is None
    )
    tx.void_match(first, reason="too late", finished_at=10.0)  # not running: unchanged
    rated = tx.rated_matches()
    assert [(m.seq, m.rated_seq) for m in rated] == [(second, 1), (first, 2)]
    assert rated[0].halves == halves and rated[0].changes == {"1": {}}
    assert rated[0].points == [10, 20] and rated[1].forfeits == [2]
    assert rated[1].status == "rated" and rated[1].finished_at == 9.0
    assert [m.seq for m in tx.rated_matches(newest_first=True, limit=1)] == [first]
    assert tx.void_running(reason="server restarted", finished_at=11.0) == 1
    void = tx.match(third)
    assert (
        void is not None and void.status == "void" and void.halves == {"void": "server restarted"}
    )
    assert [m.seq for m in tx.settled_matches()] == [third, second, first]
    assert tx.void_running(reason="again", finished_at=12.0) == 0


def test_the_games_of_a_match_in_half_order(tx: Tx) -> None:
    tx.insert_table("t", {})
    games = [tx.insert_game("t", "spades", {}, []) for _ in range(3)]
    tx.record_ladder_game(games[1], {"match": "m-1", "half": 1})
    tx.record_ladder_game(games[0], {"match": "m-1", "half": 0})
    tx.record_ladder_game(games[2], {"match": "m-2", "half": 0})
    assert tx.match_games("m-1") == [games[0], games[1]]
    assert tx.match_games("m-2") == [games[2]] and tx.match_games("m-3") == []


def test_house_entrants_are_entered_once(tx: Tx) -> None:
    bot = tx.insert_account("house:random", None, None, is_bot=True, is_guest=False)
    assert tx.add_house_entrant(bot, "random", added_at=1.0)
    assert not tx.add_house_entrant(bot, "random", added_at=2.0)
    assert tx.house_entrants() == [HouseEntrant(bot, "house:random", "random")]


def test_operator_tokens_and_bans(tx: Tx) -> None:
    assert not tx.operator_token_known(b"\x01" * 32)
    tx.add_operator_token(b"\x01" * 32)
    assert tx.operator_token_known(b"\x01" * 32)
    assert not tx.operator_token_known(b"\x02" * 32)
    assert tx.bans() == []
    tx.set_ban("account", "Mallory", None)
    tx.set_ban("address", "198.51.100.0/24", "flood")
    tx.set_ban("account", "Mallory", "cheating")  # again: the reason replaced, the order kept
    assert [tuple(b) for b in tx.bans()] == [
        ("account", "Mallory", "cheating"),
        ("address", "198.51.100.0/24", "flood"),
    ]
    assert tx.remove_ban("account", "Mallory")
    assert not tx.remove_ban("account", "Mallory")
    assert [b.target for b in tx.bans()] == ["198.51.100.0/24"]


def _every_query(tx: Tx) -> dict[str, Callable[[], object]]:
    """One call of each `Tx` method, in an order where each finds what it reads (lazy reads are
    used up, so their statements run)."""
    made: dict[str, int] = {}

    def account() -> int:
        made["account"] = tx.insert_account("q", None, None, is_bot=True, is_guest=True)
        return made["account"]

    def game() -> int:
        made["game"] = tx.insert_game("q", "spades", {}, [])
        return made["game"]

    def event() -> int:
        made["event"] = tx.insert_event(
            name="q", host=made["account"], settings={}, secret=b"s", seed=1, starts_at=1.0
        )
        return made["event"]

    entrant = EventEntrantRow(
        key="e1",
        members=(1, 2),
        partner="p",
        house=None,
        registered_at=1.0,
        withdrawn=False,
        forfeits=0,
    )

    def match() -> int:
        made["match"] = tx.insert_match(
            preset="standard", options={}, hands=1, teams=((1, 2), (3, 4)), created_at=1.0
        )
        return made["match"]

    return {
        "insert_account": account,
        "account_by_id": lambda: tx.account_by_id(made["account"]),
        "account_by_name": lambda: tx.account_by_name("Q"),
        "upgrade_token_hash": lambda: tx.upgrade_token_hash(made["account"], b"o", b"s", b"h"),
        "guest_seen": lambda: tx.guest_seen([made["account"]]),
        "expire_guests": lambda: tx.expire_guests(0.0, []),
        "insert_table": lambda: tx.insert_table("q", {}, seats=[None], creator=None),
        "update_table_seats": lambda: tx.update_table_seats("q", [made["account"]]),
        "waiting_tables": tx.waiting_tables,
        "table_creator": lambda: tx.table_creator("q"),
        "close_table": lambda: tx.close_table("q"),
        "insert_game": game,
        "update_game_seats": lambda: tx.update_game_seats(made["game"], []),
        "insert_hand": lambda: tx.insert_hand(
            made["game"], hand_no=0, seed="s", commitment="c", first_seq=0
        ),
        "insert_action": lambda: tx.insert_action(made["game"], 0, seat=0, action={}, source="bot"),
        "insert_hand_record": lambda: tx.insert_hand_record(made["game"], 0, {}),
        "finish_game": lambda: tx.finish_game(
            made["game"], "finished", [(0, made["account"], 1, 1)]
        ),
        "unfinished_games": tx.unfinished_games,
        "load_game": lambda: tx.load_game(made["game"]),
        "game_ids": lambda: (tx.game_ids(), tx.game_ids("finished")),
        "latest_game_at": lambda: tx.latest_game_at("q"),
        "game_status": lambda: tx.game_status(made["game"]),
        "hand_count": lambda: tx.hand_count(made["game"]),
        "action_count": lambda: tx.action_count(made["game"]),
        "hand_records": lambda: (list(tx.hand_records()), list(tx.hand_records(made["game"]))),
        "results": lambda: tx.results(made["game"]),
        "set_rating": lambda: tx.set_rating(made["account"], "q", mu=1.0, sigma=1.0, games=1),
        "rating": lambda: tx.rating(made["account"], "q"),
        "ratings": lambda: tx.ratings("q"),
        "rated_accounts": lambda: tx.rated_accounts("q"),
        "delete_ratings": lambda: tx.delete_ratings("q"),
        "record_ladder_game": lambda: tx.record_ladder_game(made["game"], {"match": "m"}),
        "insert_match": match,
        "match": lambda: tx.match(made["match"]),
        "rate_match": lambda: tx.rate_match(
            made["match"], points=[], forfeits=[], halves=[], changes={}, finished_at=2.0
        ),
        "void_match": lambda: tx.void_match(made["match"], reason="r", finished_at=3.0),
        "void_running": lambda: tx.void_running(reason="r", finished_at=3.0),
        "rated_matches": lambda: (tx.rated_matches(), tx.rated_matches(limit=1)),
        "settled_matches": lambda: list(tx.settled_matches()),
        "match_games": lambda: tx.match_games("m"),
        "add_house_entrant": lambda: tx.add_house_entrant(made["account"], "x", added_at=1.0),
        "house_entrants": tx.house_entrants,
        "add_operator_token": lambda: tx.add_operator_token(b"d"),
        "operator_token_known": lambda: tx.operator_token_known(b"d"),
        "set_ban": lambda: tx.set_ban("account", "q", None),
        "remove_ban": lambda: tx.remove_ban("account", "q"),
        "bans": tx.bans,
        "count_stats_hand": lambda: tx.count_stats_hand(
            made["game"], 0, {made["account"]: [1] * 11}
        ),
        "player_stats": lambda: tx.player_stats(made["account"]),
        "rated_player_stats": lambda: tx.rated_player_stats("ladder"),
        "games_finished": lambda: tx.games_finished(made["account"]),
        "uncounted_hands": lambda: tx.uncounted_hands(5),
        "stats_hand_input": lambda: tx.stats_hand_input(made["game"], 0),
        "forget_stats": tx.forget_stats,
        "count_dd_hand": lambda: tx.count_dd_hand(made["game"], 0, {made["account"]: (1, 2)}),
        "dd_stats": lambda: tx.dd_stats(made["account"]),
        "insert_event": event,
        "event": lambda: tx.event(made["event"]),
        "events": lambda: (tx.events(), tx.events("running", limit=1)),
        "open_events_hosted": lambda: tx.open_events_hosted(made["account"]),
        "set_event_status": lambda: tx.set_event_status(made["event"], "finished", 2),
        "add_event_entrant": lambda: tx.add_event_entrant(made["event"], entrant),
        "event_entrants": lambda: tx.event_entrants(made["event"]),
        "update_event_entrant": lambda: tx.update_event_entrant(
            made["event"], "e1", withdrawn=True, forfeits=1
        ),
        "remove_event_entrant": lambda: tx.remove_event_entrant(made["event"], "e1"),
        "remove_event_entrants": lambda: tx.remove_event_entrants(made["event"]),
        "put_event_round": lambda: tx.put_event_round(made["event"], 1, [{"table": 1}], "paired"),
        "event_rounds": lambda: tx.event_rounds(made["event"]),
        "put_event_table": lambda: tx.put_event_table(made["event"], 1, 1, "q", made["game"]),
        "event_tables": lambda: tx.event_tables(made["event"]),
        "game_seats": lambda: tx.game_seats(made["game"]),
    }


def test_every_query_runs_on_each_engine(tx: Tx) -> None:
    """Each query is written once (server/storage/tx.py) and spelt per engine: every method of
    `Tx` runs here on every engine, so a statement one engine cannot run fails here, not in a
    server. The table of calls must name every method: a new one is added here too."""
    calls = _every_query(tx)
    methods = {name for name in vars(Tx) if not name.startswith("_") and callable(vars(Tx)[name])}
    assert set(calls) == methods
    for call in calls.values():
        call()


def test_a_statement_is_refused_a_literal_percent_sign() -> None:
    # psycopg would read it as a parameter: written as a parameter's value instead.
    assert POSTGRES.render("SELECT ? WHERE {name_is}") == (
        'SELECT %s WHERE lower(name COLLATE "C") = lower(%s::text COLLATE "C")'
    )
    assert SQLITE.render("SELECT ? WHERE {name_is}") == "SELECT ? WHERE name = ?"
    with pytest.raises(ValueError, match="literal '%'"):
        POSTGRES.render("SELECT 5 % 2")


def test_a_file_not_yet_migrated_is_read_as_it_is(tmp_path: Path) -> None:
    """A command reads a SQLite file without migrating it (`read_transaction`): a game stored
    before actions kept the time bank left (schema version 2) loads, with no bank."""
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        for statement in statements("".join(MIGRATIONS[:2])):
            conn.execute(statement)
        conn.execute("PRAGMA user_version = 2")
        conn.execute("INSERT INTO tables (id, config, created_at) VALUES ('t', '{}', 1)")
        conn.execute(
            "INSERT INTO games (id, table_id, game, ruleset, seats, status, created_at)"
            " VALUES (7, 't', 'spades', '{}', '[]', 'running', 2)"
        )
        conn.execute(
            "INSERT INTO actions (game_id, seq, seat, action, source, created_at)"
            " VALUES (7, 0, 1, '{\"bid\": 3}', 'player', 3)"
        )
    finally:
        conn.close()
    with read_transaction(db) as tx:
        game = tx.load_game(7)
    assert game is not None and game.created_at == 2.0
    assert game.actions == [StoredAction(0, 1, {"bid": 3}, "player", None, 3.0)]
