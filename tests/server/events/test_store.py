"""The events' store on each engine (SQLite's file and memory, PostgreSQL: the `tx` fixture): an
event, its entrants, its rounds' plans and tables, and its results read back from the tables'
games (each hand's points, the seats given up), the same on every engine."""

from __future__ import annotations

import pytest

from server.events import store as event_store
from server.events.plans import IndividualTable, TablePlan
from server.events.scoring import BoardResult
from server.events.settings import EventFormat, EventSettings
from server.storage import EventEntrantRow, Tx


def entrant(key: str, *members: int, at: float, partner: str | None = None) -> EventEntrantRow:
    return EventEntrantRow(
        key=key,
        members=members,
        partner=partner,
        house=None,
        registered_at=at,
        withdrawn=False,
        forfeits=0,
    )


def hand(tx: Tx, game: int, number: int, ns: int, ew: int, east: str = "player") -> None:
    """A hand of four actions (one a seat, in seat order) and its record; `east` says who made
    seat 1's action: its player, or the server (`bot`: the fallback playing a seat given up)."""
    first = 4 * (number - 1)
    for seat in range(4):
        source = east if seat == 1 else "player"
        tx.insert_action(game, first + seat, seat=seat, action={"n": seat}, source=source)
    tx.insert_hand_record(
        game,
        number,
        {
            "format": "spades-hand/1",
            "seed": f"s{number}",
            "actions": [{"seat": seat} for seat in range(4)],
            "score": {"delta": [ns, ew]},
        },
    )


def test_an_event_and_its_results_read_back_from_its_games(tx: Tx) -> None:
    ids = [tx.insert_account(f"p{i}", None, None, is_bot=True, is_guest=False) for i in range(4)]
    settings = EventSettings(format=EventFormat.SWISS_PAIRS, rounds=1, boards=2)
    number = event_store.create(
        tx, name="Cup", host=ids[0], settings=settings, secret=b"k" * 32, seed=7, starts_at=5.0
    )
    assert event_store.event_id(number) == f"E{number}"
    # Registrations, one withdrawn and back, then the entrants formed at the start.
    assert tx.add_event_entrant(number, entrant(f"a{ids[0]}", ids[0], at=1.0, partner="p1"))
    assert not tx.add_event_entrant(number, entrant(f"a{ids[0]}", ids[0], at=2.0))
    assert tx.update_event_entrant(number, f"a{ids[0]}", withdrawn=True, forfeits=0)
    tx.remove_event_entrants(number)
    tx.add_event_entrant(number, entrant("e10", ids[2], ids[3], at=3.0))
    tx.add_event_entrant(number, entrant("e2", ids[0], ids[1], at=3.0))
    plan = [TablePlan(1, "e2", "e10")]
    event_store.store_round(tx, number, 1, plan, "playing")
    table_id = event_store.table_id_for(number, 1, 1)
    tx.insert_table(table_id, {}, seats=None, creator=None)
    game = tx.insert_game(table_id, "spades", {}, [{"account": i} for i in ids])
    tx.put_event_table(number, 1, 1, table_id, None)
    hand(tx, game, 1, 120, -40)
    hand(tx, game, 2, 30, 61, east="bot")
    # East (seat 1) gave up its seat after board 1: East-West forfeited board 2.
    tx.update_game_seats(
        game, [{"account": i, **({"abandoned": True} if s == 1 else {})} for s, i in enumerate(ids)]
    )
    event_store.store_round(tx, number, 1, plan, "finished")

    loaded = event_store.load(tx, number)
    assert loaded is not None
    assert loaded.row.status == "running" and loaded.row.round == 1 and loaded.row.seed == 7
    assert loaded.row.secret == b"k" * 32 and loaded.settings == settings
    # In order of registration, then of key: e2 before e10.
    assert [e.key for e in loaded.entrants] == ["e2", "e10"]
    assert loaded.names[ids[0]] == "p0" and ids[0] in loaded.bots
    assert loaded.plans == {1: plan} and loaded.round_status == {1: "finished"}
    assert [(t.round, t.table_no, t.table_id) for t in loaded.tables] == [(1, 1, table_id)]
    results = event_store.board_results(tx, loaded)
    assert results == [
        BoardResult(1, 1, 1, 120, -40, forfeit_ns=False, forfeit_ew=False),
        BoardResult(1, 1, 2, 30, 61, forfeit_ns=False, forfeit_ew=True),
    ]
    assert event_store.given_up_from(tx, game, [1], list(tx.hand_records(game))) == {1: 1}
    # Records that do not line up with the actions: every board of the table.
    assert event_store.given_up_from(tx, game, [1], [{"actions": [{}] * 9}]) == {1: 0}
    records, total, after = event_store.records(tx, loaded)
    assert [(r["event"], r["board"], r["seed"]) for r in records] == [
        (f"E{number}/r1/t1", 1, "s1"),
        (f"E{number}/r1/t1", 2, "s2"),
    ]
    assert (total, after) == (2, None)
    # A page at a time: at least one record a page, `after` the start of the next.
    first, total, after = event_store.records(tx, loaded, 0, budget=1)
    assert [r["board"] for r in first] == [1] and (total, after) == (2, 1)
    second, total, after = event_store.records(tx, loaded, 1, budget=1)
    assert [r["board"] for r in second] == [2] and (total, after) == (2, None)
    lines = event_store.standing_lines(loaded, results)
    assert [(line.key, line.forfeits) for line in lines] == [("e2", 0), ("e10", 1)]
    assert event_store.names_of(loaded, "e10") == ["p2", "p3"]
    tx.set_event_status(number, "finished")
    finished = tx.event(number)
    assert finished is not None and finished.finished_at is not None
    assert [e.id for e in tx.events("finished")] == [number]


def test_labels_and_seats() -> None:
    assert event_store.parse_label("E12/r3/t1004") == (12, 3, 1004)
    assert event_store.table_id_for(12, 3, 4) == "E12-r3-t4"
    members = {"a": (1, 2), "b": (3, 4), "x": (5,), "y": (6,), "z": (7,), "w": (8,)}
    assert event_store.seats_of(TablePlan(1, "a", "b"), members) == [
        ("a", 1),
        ("b", 3),
        ("a", 2),
        ("b", 4),
    ]
    assert [
        a for _k, a in event_store.seats_of(IndividualTable(1, ("x", "y", "z", "w")), members)
    ] == [
        5,
        6,
        7,
        8,
    ]
    for bad in ("E1", "E1/r2", "X1/r2/t3", "E1/q2/t3"):
        with pytest.raises(ValueError, match="is not an event's table"):
            event_store.parse_label(bad)
