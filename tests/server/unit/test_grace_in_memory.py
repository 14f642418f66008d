"""A dropped seat at a table still waiting for players is held for the reconnect grace, then freed,
and the lobby hears both: the whole server over memory streams, on trio's autojump clock (the grace
is two minutes of trio time and none of real time)."""

from __future__ import annotations

import trio

from protocol.messages import CreateTable, Guest, ListTables, Register, TableChanged, TableCreated
from protocol.types import Game, TableStatus
from server.app import running_server
from server.config import Limits
from tests.server.unit.memory import MemoryClient, MemoryListener, memory_config


async def test_a_dropped_seat_at_a_waiting_table_is_freed_after_the_grace(
    autojump_clock: trio.abc.Clock,
) -> None:
    listener = MemoryListener()
    # No sweep and no deadline until the seat drops: hashing a token runs in a worker thread, and an
    # autojump clock jumps to the next deadline while a thread works.
    limits = Limits(idle_timeout=0, write_timeout=0)
    config = memory_config(limits=limits, waiting_table_ttl=0)
    async with running_server(config, listeners=[listener]) as server:
        lobby = await MemoryClient.connect(listener)
        await lobby.hello()
        await lobby.request(Guest())
        await lobby.request(ListTables())  # table_changed notices from now on
        client = await MemoryClient.connect(listener)
        await client.hello()
        await client.request(Register(name="wanderer"))
        created = await client.request(CreateTable(game=Game.SPADES, preset="standard", sit=2))
        assert isinstance(created, TableCreated) and created.seat == 2
        with trio.fail_after(600):  # trio time, from here on: no more threads
            await client.aclose()
            dropped_at = None
            for _ in range(100):  # each notice is one change of the table
                change = await lobby.expect(TableChanged)
                seat = change.table.seats[2]
                if seat.player == "wanderer" and not seat.connected and dropped_at is None:
                    dropped_at = trio.current_time()  # held for its player ...
                if dropped_at is not None and seat.player is None:
                    break  # ... until the grace period (120 s by default) ran out
            assert dropped_at is not None and seat.player is None
            assert trio.current_time() - dropped_at >= server.config.reconnect_grace - 0.1
            assert change.table.status is TableStatus.WAITING
            await lobby.aclose()
