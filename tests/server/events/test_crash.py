"""kill -9 a server in the middle of an event's round: started again on the same database, it goes
on with the event at the same round, with the same plans and the same boards, and the results read
back from the stored boards give the standings `event_ended` told, bit for bit."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import trio

from protocol.event_messages import EventFormat
from protocol.messages import (
    Act,
    EventCreate,
    EventEnded,
    EventRoundPaired,
    YourTurn,
)
from server.events import store as event_store
from server.events.scoring import standings
from server.storage import read_transaction
from tests.server import test_crash as crash
from tests.server.events.players import check_in, create_event, enter, play_until_ended, register
from tests.server.wire_client import WireClient

PLAYERS = 8
#: Acts into round 2 before the kill (the round is then well under way at every table).
ACTS_INTO_ROUND_2 = 24


async def start_server(db: Path) -> tuple[trio.Process, int]:
    """`spades-server serve` as a child process, events open to every account; its port from its
    first line."""
    flags = ("--no-web", "--no-ladder", "--no-hand-analysis", "--events-open")
    return await crash.start_server(db, *flags)


def stored(db: Path) -> tuple[list[tuple[int, str]], list[str]]:
    """The stored rounds' plans and every hand record, straight from the file."""
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        plans = [
            (int(r[0]), str(r[1]))
            for r in conn.execute("SELECT round, plan FROM event_rounds ORDER BY round")
        ]
        records = [
            str(r[0])
            for r in conn.execute("SELECT record FROM hand_records ORDER BY game_id, hand_no")
        ]
        return plans, records
    finally:
        conn.close()


async def test_kill_9_mid_round_then_restart_finishes_the_event_the_same(tmp_path: Path) -> None:
    db = tmp_path / "event.db"
    tokens: list[str] = []
    with trio.fail_after(120):
        process, port = await start_server(db)
        try:
            clients = []
            for index in range(PLAYERS):
                client = await WireClient.connect(port)
                tokens.append(await enter(client, f"p{index}"))
                clients.append(client)
            event = await create_event(
                clients[0],
                EventCreate(
                    name="Crash Swiss",
                    format=EventFormat.SWISS_INDIVIDUAL,
                    rounds=3,
                    boards=2,
                    starts_at=time.time() + 3,
                    max_entrants=8,
                    bot_turn_ms=3000,
                    round_gap=0.2,
                ),
            )
            for client in clients:
                await register(client, event)
                await check_in(client, event)
            into_round_2 = 0
            killing = trio.Event()

            async def play(client: WireClient) -> None:
                nonlocal into_round_2
                in_round_2 = False
                while not killing.is_set():  # bounded by the acts into round 2
                    message = await client.receive()
                    assert message is not None
                    if isinstance(message, EventRoundPaired) and message.round == 2:
                        in_round_2 = True
                    if isinstance(message, YourTurn):
                        if in_round_2:
                            into_round_2 += 1
                            if into_round_2 >= ACTS_INTO_ROUND_2:
                                killing.set()
                                return
                        await client.send(
                            Act(
                                table=message.table,
                                version=message.version,
                                action=message.legal[0],
                            )
                        )

            async with trio.open_nursery() as nursery:
                for client in clients:
                    nursery.start_soon(play, client)
                await killing.wait()
                nursery.cancel_scope.cancel()
        finally:
            process.kill()  # SIGKILL: no cleanup of any kind
            await process.wait()
        for client in clients:
            await client.aclose()
        plans_before, records_before = stored(db)
        assert [r for r, _plan in plans_before] == [1, 2]  # killed during round 2

        process, port = await start_server(db)
        try:
            back = []
            for token in tokens:
                client = await WireClient.connect(port)
                await client.hello(token=token)
                await check_in(client, event)
                back.append(client)
            ended: list[EventEnded] = []
            async with trio.open_nursery() as nursery:

                async def finish(client: WireClient) -> None:
                    ended.append(await play_until_ended(client))

                for client in back:
                    nursery.start_soon(finish, client)
            for client in back:
                await client.aclose()
        finally:
            process.terminate()
            await process.wait()
    plans_after, records_after = stored(db)
    # The same pairings of the rounds paired before the kill, and every hand stored before it.
    assert plans_after[:2] == plans_before and [r for r, _p in plans_after] == [1, 2, 3]
    assert set(records_before) <= set(records_after)
    with read_transaction(db) as tx:
        loaded = event_store.load(tx, event_store.event_number(event))
        assert loaded is not None
        results = event_store.board_results(tx, loaded)
        exported, _total, _after = event_store.records(tx, loaded)
    # Every table of a round was dealt the round's boards, from the event's secret.
    for record in exported:
        _number, round_no, _table = event_store.parse_label(str(record["event"]))
        boards = loaded.settings.board_set(loaded.row.secret, round_no)
        assert record["seed"] == boards.deal_seed(int(record["board"]) - 1).hex()
    assert len(results) == 3 * 2 * 2  # 3 rounds, 2 tables, 2 boards
    # The standings rebuilt from the stored boards are the ones the event ended with.
    rebuilt = standings(
        loaded.settings.format,
        event_store.entrants(loaded),
        event_store.plans_of(loaded),
        results,
    )
    told = ended[0].standings
    assert [(s.key, s.place, s.percent, s.margin, s.boards) for s in told] == [
        (line.key, line.place, line.percent, line.margin, line.boards) for line in rebuilt
    ]
    assert json.loads(plans_after[0][1])
