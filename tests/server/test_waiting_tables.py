"""A restart reopens the tables that were waiting for players, with their options and seats, and
gives each seat of a game in progress its time bank back; a finished table does not come back.

Each test runs a real server on 127.0.0.1 (port 0) on a SQLite file in tmp_path, stops it, and
starts a new one on the same file.
"""

import sqlite3
from pathlib import Path

import pytest
import trio

from protocol.messages import (
    Act,
    CreateTable,
    Error,
    GameOver,
    Guest,
    HandDealt,
    Join,
    Joined,
    Leave,
    ListTables,
    LoggedIn,
    Ok,
    Register,
    Registered,
    Snapshot,
    Spectate,
    TableClosed,
    TableCreated,
    Tables,
    YourTurn,
)
from protocol.types import Clock, Game, TableInfo, TableStatus
from server.app import local_config, running_server
from server.storage import MIGRATIONS, SCHEMA_VERSION, Tx
from tests.server.players import random_choice
from tests.server.wire_client import WireClient


async def _registered(port: int, name: str) -> tuple[WireClient, str]:
    client = await WireClient.connect(port)
    await client.hello()
    registered = await client.request(Register(name=name))
    assert isinstance(registered, Registered), registered
    return client, registered.token


async def _listing(client: WireClient) -> dict[str, TableInfo]:
    tables = await client.request(ListTables())
    assert isinstance(tables, Tables), tables
    ids = [info.table for info in tables.tables]
    assert len(ids) == len(set(ids)), ids  # no table is opened twice
    return {info.table: info for info in tables.tables}


async def test_a_waiting_table_is_reopened_with_its_options_and_seats(tmp_path: Path) -> None:
    db = tmp_path / "restart.db"
    clock = Clock(turn_ms=20_000, bank_ms=45_000)
    with trio.fail_after(90):
        async with running_server(local_config(db)) as server:
            alice, alice_token = await _registered(server.port, "alice")
            created = await alice.request(
                CreateTable(
                    game=Game.SPADES,
                    preset="standard",
                    options={"target_score": 300},
                    bots=[2],
                    sit=0,
                    private=True,
                    clock=clock,
                )
            )
            assert isinstance(created, TableCreated), created
            assert created.code is not None
            table_id, code = created.table, created.code
            guest = await WireClient.connect(server.port)
            await guest.hello()
            guest_login = await guest.request(Guest())
            assert isinstance(guest_login, LoggedIn) and guest_login.token is not None
            sat = await guest.request(Join(table=table_id, seat=1, code=code))
            assert isinstance(sat, Joined) and sat.seat == 1, sat
            # A bots-only table plays on: its game resumes after the restart (not reopened twice).
            busy = await alice.request(
                CreateTable(game=Game.HEARTS, preset="hearts", bots=[0, 1, 2, 3])
            )
            assert isinstance(busy, TableCreated), busy
            before = (await _listing(alice))[table_id]
            assert before.status is TableStatus.WAITING
            assert [s.player is not None for s in before.seats] == [True, True, True, False]
            await guest.aclose()
            await alice.aclose()

        async with running_server(local_config(db)) as server:
            watcher = await WireClient.connect(server.port)
            await watcher.hello()
            assert isinstance(await watcher.request(Guest()), LoggedIn)
            listing = await _listing(watcher)
            assert busy.table in listing
            info = listing[table_id]
            assert info.status is TableStatus.WAITING
            assert (info.game, info.preset, info.options) == (
                Game.SPADES,
                "standard",
                {"target_score": 300},
            )
            assert info.private and info.clock == clock
            # Alice's seat is held for her, and the guest's for it (it has its resume token);
            # the built-in bot is back.
            assert info.seats[0].player == "alice" and not info.seats[0].connected
            assert info.seats[1].player == guest_login.name and not info.seats[1].connected
            assert info.seats[2].bot and info.seats[2].connected
            assert info.seats[3].player is None
            # Still private: no code, no seat.
            refused = await watcher.request(Join(table=table_id, seat=3))
            assert getattr(refused, "code", None) == "private_table", refused

            back = await WireClient.connect(server.port)
            await back.hello(token=alice_token)
            joined = await back.expect(Joined)
            assert (joined.table, joined.seat) == (table_id, 0)
            snapshot = await back.expect(Snapshot)
            assert snapshot.table == table_id and snapshot.seat == 0
            guest_back = await WireClient.connect(server.port)
            await guest_back.hello(token=guest_login.token)
            guest_joined = await guest_back.expect(Joined)
            assert (guest_joined.table, guest_joined.seat) == (table_id, 1)

            # The held seats are not free; the free one can be taken, and the game starts once
            # the table is full.
            bob, _ = await _registered(server.port, "bob")
            taken_seat = await bob.request(Join(table=table_id, seat=1, code=code))
            assert getattr(taken_seat, "code", None) == "seat_taken", taken_seat
            taken = await bob.request(Join(table=table_id, seat=3, code=code))
            assert isinstance(taken, Joined) and taken.seat == 3, taken
            await bob.expect(HandDealt)  # the game has started
            playing = (await _listing(watcher))[table_id]
            assert playing.status is TableStatus.PLAYING
            assert [s.player for s in playing.seats] == [
                "alice",
                guest_login.name,
                "bot:heuristic",
                "bob",
            ]
            # The creator's limit counts the reopened table: it is still alice's.
            assert server.lobby.creators[table_id] == joined_account_id(db, "alice")
            for client in (back, guest_back, bob, watcher):
                await client.aclose()


def joined_account_id(db: Path, name: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute("SELECT id FROM accounts WHERE name = ?", (name,)).fetchone()[0])
    finally:
        conn.close()


async def test_a_left_seat_stays_free_and_a_finished_table_does_not_come_back(
    tmp_path: Path,
) -> None:
    db = tmp_path / "restart.db"
    with trio.fail_after(120):
        async with running_server(local_config(db)) as server:
            dora, _ = await _registered(server.port, "dora")
            waiting = await dora.request(
                CreateTable(game=Game.HEARTS, preset="hearts", bots=[1], sit=0)
            )
            assert isinstance(waiting, TableCreated), waiting
            assert isinstance(await dora.request(Leave(table=waiting.table)), Ok)
            finished = await dora.request(
                CreateTable(
                    game=Game.HEARTS,
                    preset="hearts",
                    options={"target_score": 30},
                    bots=[0, 1, 2, 3],
                )
            )
            assert isinstance(finished, TableCreated), finished
            await dora.request(Spectate(table=finished.table))
            end = await dora.expect(GameOver | TableClosed)
            assert isinstance(end, GameOver), end
            await dora.request(Leave(table=finished.table))
            await dora.aclose()

        async with running_server(local_config(db)) as server:
            client, _ = await _registered(server.port, "eve")
            listing = await _listing(client)
            assert finished.table not in listing
            info = listing[waiting.table]
            assert info.status is TableStatus.WAITING
            assert [s.player for s in info.seats] == [None, "bot:heuristic", None, None]
            await client.aclose()
    conn = sqlite3.connect(db)
    try:
        closed = conn.execute("SELECT closed_at FROM tables WHERE id = ?", (finished.table,))
        assert closed.fetchone()[0] is not None
    finally:
        conn.close()


async def test_an_older_database_migrates_and_its_waiting_tables_are_not_guessed_at(
    tmp_path: Path,
) -> None:
    """A file from before the waiting tables' seats were stored (schema 2) opens and migrates;
    its open tables have no seats on record (a ladder table looks the same), so none reopens."""
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db, isolation_level=None)
    try:
        for statement in "".join(MIGRATIONS[:2]).split(";"):
            if statement.strip():
                conn.execute(statement)
        conn.execute("PRAGMA user_version = 2")
        conn.execute(
            "INSERT INTO tables (id, config, created_at) VALUES ('old1', '{}', 0)",
        )
    finally:
        conn.close()
    with trio.fail_after(30):
        async with running_server(local_config(db)) as server:
            client, _ = await _registered(server.port, "frank")
            assert await _listing(client) == {}
            created = await client.request(
                CreateTable(game=Game.HEARTS, preset="hearts", bots=[1, 2], sit=0)
            )
            assert isinstance(created, TableCreated), created
            await client.aclose()
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        seats = conn.execute("SELECT seats FROM tables WHERE id = ?", (created.table,))
        assert seats.fetchone()[0] is not None
    finally:
        conn.close()


async def test_a_seat_gets_its_time_bank_back_after_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "bank.db"
    turn_ms, bank_ms = 1_000, 60_000
    with trio.fail_after(90):
        async with running_server(local_config(db, bot_clock=2.0)) as server:
            gina, token = await _registered(server.port, "gina")
            created = await gina.request(
                CreateTable(
                    game=Game.SPADES,
                    preset="standard",
                    bots=[1, 2, 3],
                    sit=0,
                    clock=Clock(turn_ms=turn_ms, bank_ms=bank_ms),
                )
            )
            assert isinstance(created, TableCreated), created
            choose = random_choice(7)
            first = await gina.expect(YourTurn)
            assert abs(first.bank_ms - bank_ms) <= 1  # (rounded up to the ms)
            # Think past the turn's time: the overrun comes off the bank.
            await trio.sleep(turn_ms / 1000 + 0.5)
            await gina.send(Act(table=created.table, version=first.version, action=choose(first)))
            second = await gina.expect(YourTurn)
            assert second.bank_ms < bank_ms - 1
            drawn = second.bank_ms
            await gina.aclose()

        async with running_server(local_config(db, bot_clock=2.0)) as server:
            back = await WireClient.connect(server.port)
            await back.hello(token=token)
            assert (await back.expect(Joined)).table == created.table
            again = await back.expect(YourTurn)
            # The bank as it was (not full again); less if the reconnect itself took past the turn.
            assert again.version == second.version
            assert again.bank_ms <= drawn + 1
            assert again.bank_ms < bank_ms - 1
            await back.aclose()


async def test_a_seat_that_cannot_be_stored_is_not_taken(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A waiting table stores each seat before it says `joined`: if the store refuses, the join is
    refused (`internal`) and the seat stays free, so a restart never brings back other seats."""
    with trio.fail_after(30):
        async with running_server(local_config(tmp_path / "s.db")) as server:
            hank, _ = await _registered(server.port, "hank")
            created = await hank.request(CreateTable(game=Game.HEARTS, preset="hearts", bots=[1]))
            assert isinstance(created, TableCreated), created

            def refuse(tx: Tx, table_id: str, seats: object) -> None:
                raise sqlite3.OperationalError("disk I/O error")

            monkeypatch.setattr(Tx, "update_table_seats", refuse)
            refused = await hank.request(Join(table=created.table, seat=0))
            assert isinstance(refused, Error) and refused.code == "internal", refused
            info = (await _listing(hank))[created.table]
            assert info.seats[0].player is None
            monkeypatch.undo()
            taken = await hank.request(Join(table=created.table, seat=0))
            assert isinstance(taken, Joined) and taken.seat == 0, taken
            await hank.aclose()
