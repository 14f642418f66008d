"""A spectator of an event's table sees a deal only once every table of the round has played it
(the ladder's duplicate gate, `server.deal_gate`): a real server on 127.0.0.1, an individual
Swiss of eight bots at two tables, one of which waits on a player."""

from __future__ import annotations

import time
from functools import partial
from pathlib import Path

import trio

from protocol.event_messages import EventFormat
from protocol.messages import (
    Act,
    DealSeed,
    EventCreate,
    EventEnded,
    EventRoundPaired,
    Guest,
    Joined,
    Message,
    Spectate,
    YourTurn,
)
from server.app import local_config, running_server
from tests.server.events.players import (
    MAX_EVENT_MESSAGES,
    check_in,
    create_event,
    enter_all,
    register,
    start_events,
)
from tests.server.watching import a_deal_late
from tests.server.wire_client import WireClient


async def test_an_event_table_is_watched_a_deal_behind_the_slowest_table(tmp_path: Path) -> None:
    db = tmp_path / "events.db"
    names = [f"p{i}" for i in range(8)]
    async with running_server(local_config(db, events_open=True)) as server:
        assert server.events is not None
        with trio.fail_after(120):
            players = await enter_all(partial(WireClient.connect, server.port), names)
            event = await create_event(
                players["p0"],
                EventCreate(
                    name="Watched",
                    format=EventFormat.SWISS_INDIVIDUAL,
                    rounds=1,
                    boards=2,
                    starts_at=time.time() + 3600,
                    max_entrants=8,
                    bot_turn_ms=600_000,  # the stalled player is waited for
                    round_gap=0.0,
                ),
            )
            for client in players.values():
                await register(client, event)
                await check_in(client, event)
            tables: dict[str, str] = {}
            all_paired = trio.Event()
            go = {name: trio.Event() for name in names}
            ahead_dealt_again = trio.Event()

            async def play(name: str) -> None:
                client = players[name]
                for _ in range(MAX_EVENT_MESSAGES):
                    message: Message | None = await client.receive()
                    assert message is not None
                    if isinstance(message, EventRoundPaired):
                        tables[name] = message.table
                        if len(tables) == len(names):
                            all_paired.set()
                    elif isinstance(message, YourTurn):
                        await go[name].wait()
                        await client.send(
                            Act(
                                table=message.table,
                                version=message.version,
                                action=message.legal[0],
                            )
                        )
                    elif isinstance(message, DealSeed) and message.hand_number == 1:
                        if tables[name] == tables["p0"]:
                            ahead_dealt_again.set()
                    elif isinstance(message, EventEnded):
                        return
                raise AssertionError(f"{name}: no event_ended")

            async with trio.open_nursery() as nursery:
                for name in names:
                    nursery.start_soon(play, name)
                start_events(server)
                await all_paired.wait()
                ahead = tables["p0"]
                (behind,) = {t for t in tables.values() if t != ahead}
                stalled = next(n for n in names if tables[n] == behind)
                watcher = await WireClient.connect(server.port)
                await watcher.hello()
                await watcher.request(Guest())
                before = len(watcher.received)
                assert isinstance(await watcher.request(Spectate(table=ahead)), Joined)
                for name in names:
                    if name != stalled:
                        go[name].set()
                # The table ahead plays its first deal through while the other waits on one player.
                await ahead_dealt_again.wait()
                await a_deal_late(watcher, before, db, ahead, behind, go[stalled])
            for client in (*players.values(), watcher):
                await client.aclose()
