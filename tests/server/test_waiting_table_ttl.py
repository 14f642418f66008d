"""A table waiting for players that nobody sits at closes on its own after `waiting_table_ttl`:
gone from the listing, closed in the store, and not reopened by a restart. A table with a player
seated (connected, or dropped and within the reconnect grace) stays.

The tests that read the store's file or restart run a real server on 127.0.0.1 (port 0) on a SQLite
file in tmp_path; the others the whole server over memory streams on trio's autojump clock. Every
wait is bounded by `trio.fail_after`, every loop by a count too.
"""

import sqlite3
from pathlib import Path

import trio

from protocol.messages import (
    CreateTable,
    ListTables,
    Register,
    Registered,
    TableClosed,
    TableCreated,
    Tables,
)
from protocol.types import Game
from server.app import local_config, running_server
from tests.hostile.proc import ServerProcess
from tests.server.unit.memory import MemoryClient, MemoryListener, memory_config
from tests.server.wire_client import WireClient

TTL = 0.5  # seconds; the sweep then looks four times a ttl


async def _registered(port: int | MemoryListener, name: str) -> WireClient:
    """An account over TCP to 127.0.0.1 at `port`, or over a memory stream of a `MemoryListener`."""
    if isinstance(port, MemoryListener):
        client: WireClient = await MemoryClient.connect(port)
    else:
        client = await WireClient.connect(port)
    await client.hello()
    registered = await client.request(Register(name=name))
    assert isinstance(registered, Registered), registered
    return client


async def _listed(client: WireClient) -> set[str]:
    tables = await client.request(ListTables())
    assert isinstance(tables, Tables), tables
    return {info.table for info in tables.tables}


async def _create(client: WireClient, *, sit: int | None, bots: list[int]) -> str:
    created = await client.request(
        CreateTable(game=Game.HEARTS, preset="hearts", bots=bots, sit=sit)
    )
    assert isinstance(created, TableCreated), created
    return created.table


async def _until_closed(client: WireClient, table_id: str) -> None:
    """Wait for the lobby's notice that a table closed (the client has listed, so it is told; the
    caller's fail_after bounds the wait): it is `table_id`'s, and the listing agrees."""
    notice = await client.expect(TableClosed)
    assert notice.table == table_id, notice
    assert table_id not in await _listed(client)


def _closed_at(db: Path, table_id: str) -> float | None:
    conn = sqlite3.connect(db)
    try:
        row = conn.execute("SELECT closed_at FROM tables WHERE id = ?", (table_id,)).fetchone()
    finally:
        conn.close()
    assert row is not None, table_id
    return None if row[0] is None else float(row[0])


async def test_an_empty_waiting_table_closes_and_an_occupied_one_stays(tmp_path: Path) -> None:
    db = tmp_path / "ttl.db"
    with trio.fail_after(60):
        async with running_server(local_config(db, waiting_table_ttl=TTL)) as server:
            ada = await _registered(server.port, "ada")
            started = trio.current_time()
            # Nobody sits: its built-in bot does not count.
            empty = await _create(ada, sit=None, bots=[1])
            occupied = await _create(ada, sit=0, bots=[1])
            watcher = await _registered(server.port, "watcher")
            assert {empty, occupied} <= await _listed(watcher)  # table notices from now on
            await _until_closed(watcher, empty)
            assert trio.current_time() - started >= TTL
            assert server.lobby.tables.get(empty) is None
            # The table ada sits at is still there, waiting (several ttls later too: below).
            assert occupied in await _listed(watcher)
            for client in (ada, watcher):
                await client.aclose()
    assert _closed_at(db, empty) is not None
    assert _closed_at(db, occupied) is None

    # A restart on the same file does not bring the closed one back; the other is reopened.
    with trio.fail_after(30):
        async with running_server(local_config(db)) as server:
            eve = await _registered(server.port, "eve")
            listed = await _listed(eve)
            assert empty not in listed and occupied in listed
            await eve.aclose()


async def test_an_occupied_waiting_table_stays_for_many_ttls(
    autojump_clock: trio.abc.Clock,
) -> None:
    # Over memory streams on trio's autojump clock: six ttls (a dozen sweeps) in no real time.
    listener = MemoryListener()
    async with running_server(memory_config(waiting_table_ttl=TTL), listeners=[listener]):
        with trio.fail_after(60):
            ada = await _registered(listener, "ada")
            occupied = await _create(ada, sit=0, bots=[1])
            empty = await _create(ada, sit=None, bots=[1])
            watcher = await _registered(listener, "watcher")
            assert {empty, occupied} <= await _listed(watcher)
            await _until_closed(watcher, empty)
            await trio.sleep(6 * TTL)  # trio time
            assert occupied in await _listed(watcher)
            for client in (ada, watcher):
                await client.aclose()


async def test_a_seat_held_within_the_grace_keeps_its_table(
    autojump_clock: trio.abc.Clock,
) -> None:
    # Over memory streams on trio's autojump clock: the grace and the ttl pass in no time. The
    # clock may jump further while the store works in a thread, never less far: what is checked is
    # that the table outlived the grace and the ttl, a lower bound.
    grace = 2.0
    listener = MemoryListener()
    config = memory_config(waiting_table_ttl=TTL, reconnect_grace=grace)
    async with running_server(config, listeners=[listener]):
        with trio.fail_after(60):
            bea = await _registered(listener, "bea")
            table_id = await _create(bea, sit=2, bots=[])
            watcher = await _registered(listener, "watcher")
            assert table_id in await _listed(watcher)
            await bea.aclose()
            dropped = trio.current_time()
            await _until_closed(watcher, table_id)
            # Held for bea through the grace, then free, then closed once the ttl passed too.
            assert trio.current_time() - dropped >= grace + TTL
            await watcher.aclose()


async def test_zero_keeps_waiting_tables_open(autojump_clock: trio.abc.Clock) -> None:
    listener = MemoryListener()
    async with running_server(memory_config(waiting_table_ttl=0), listeners=[listener]):
        with trio.fail_after(30):
            cleo = await _registered(listener, "cleo")
            table_id = await _create(cleo, sit=None, bots=[])
            await trio.sleep(2.5)  # trio time: more than two sweeps
            assert table_id in await _listed(cleo)
            await cleo.aclose()


async def test_the_serve_flag_sets_the_ttl(tmp_path: Path) -> None:
    db = tmp_path / "flag.db"
    server = ServerProcess(db, "--waiting-table-ttl", "0.5", "--no-ladder")
    with server, trio.fail_after(60):
        client = await _registered(server.port, "dora")
        table_id = await _create(client, sit=None, bots=[])
        assert table_id in await _listed(client)  # told of the listing's changes from now on
        await _until_closed(client, table_id)
        await client.aclose()
        for _ in range(100):  # the log line is written by the server process: bounded poll
            if "waiting_table_closed" in server.logs():
                break
            await trio.sleep(0.05)
        assert "waiting_table_closed" in server.logs(), server.log_tail()
    assert _closed_at(db, table_id) is not None


def test_the_ttl_must_not_be_negative() -> None:
    from typer.testing import CliRunner

    from server.cli import app

    result = CliRunner().invoke(app, ["serve", "--waiting-table-ttl", "-1"])
    assert result.exit_code == 2 and "--waiting-table-ttl" in result.output
