"""An event's rounds on the memory harness and trio's autojump clock: pairing told in
`event_round`, seating, a no-show's forfeit after the grace, the standings and the records."""

from __future__ import annotations

import time
from functools import partial

import pytest
import trio

from protocol.event_messages import EventFormat, EventStatus, RoundStatus
from protocol.messages import (
    Act,
    EventCreate,
    EventEnded,
    EventInfo,
    EventPlay,
    EventRecords,
    EventRoundPaired,
    EventShow,
    HandRecords,
    Joined,
    Message,
    Ok,
    YourTurn,
)
from server.events import service as event_service
from server.events.scoring import BoardResult
from tests.server.events.players import (
    MAX_EVENT_MESSAGES,
    check_in,
    create_event,
    enter_all,
    events_server,
    play_until_ended,
    register,
    start_events,
)
from tests.server.unit.memory import MemoryClient


@pytest.mark.parametrize(
    "no_show_grace",
    [
        1.0,  # the grace ends during the hand: the seat is given up then
        600.0,  # the hand ends first: a seat never taken is a no-show all the same
    ],
)
async def test_a_no_show_forfeits_after_the_grace_and_the_others_play_on(
    autojump_clock: trio.abc.Clock, no_show_grace: float
) -> None:
    async with events_server() as (server, listener):
        players = await enter_all(partial(MemoryClient.connect, listener), ("ann", "bob", "cy"))
        ann, bob = players["ann"], players["bob"]
        event = await create_event(
            ann,
            EventCreate(
                name="Tiny individual",
                format=EventFormat.SWISS_INDIVIDUAL,
                rounds=1,
                boards=1,
                starts_at=time.time() + 3600,
                max_entrants=4,
                bot_turn_ms=200,
                no_show_grace=no_show_grace,
                round_gap=2.0,
            ),
        )
        for client in players.values():
            await register(client, event)
        await check_in(ann, event)
        await check_in(bob, event)  # cy never checks in: a no-show
        start_events(server)
        with trio.fail_after(3600):  # trio time
            seen: dict[str, list[Message]] = {"ann": [], "bob": []}
            async with trio.open_nursery() as nursery:
                ended: dict[str, EventEnded] = {}

                async def play(name: str, client: MemoryClient) -> None:
                    ended[name] = await play_until_ended(client, seen[name])

                nursery.start_soon(play, "ann", ann)
                nursery.start_soon(play, "bob", bob)
        for name in ("ann", "bob"):
            (notice,) = seen[name]
            assert isinstance(notice, EventRoundPaired)
            assert notice.round == 1 and notice.starts_in == 2.0 and notice.boards == 1
            assert notice.names[notice.seat] == name
            assert any(isinstance(m, Joined) and m.table == notice.table for m in ann.received)
        lines = {line.names[0]: line for line in ended["ann"].standings}
        assert set(lines) >= {"ann", "bob", "cy"}
        assert lines["cy"].forfeits == 1 and lines["cy"].percent == 0.0
        assert lines["ann"].percent == 60.0 and lines["bob"].percent == 60.0
        assert lines["cy"].place == 4
        shown = await ann.request(EventShow(event=event))
        assert isinstance(shown, EventInfo)
        assert shown.summary.status is EventStatus.FINISHED
        (round_1,) = shown.rounds
        assert round_1.status is RoundStatus.FINISHED
        (table,) = round_1.tables
        assert len(table.boards) == 1 and table.table is not None
        assert [s.key for s in shown.standings] == [s.key for s in ended["ann"].standings]
        records = await ann.request(EventRecords(event=event))
        assert isinstance(records, HandRecords) and records.total == 1
        assert records.records[0]["event"] == f"{event}/r1/t1"
        assert records.records[0]["board"] == 1


async def test_a_level_knockout_match_plays_an_extra_board_at_a_table_of_its_own(
    autojump_clock: trio.abc.Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The match is made level after its board (a tie is the scoring's to find, tested in
    # tests/events/): the service must then deal the round's next board at a new table.
    def level_once(results: list[BoardResult], boards: int) -> bool:
        return len(results) == boards

    monkeypatch.setattr(event_service, "needs_extra_board", level_once)
    async with events_server() as (server, listener):
        names = ("ann", "bob", "cy", "dee")
        clients = await enter_all(partial(MemoryClient.connect, listener), names)
        event = await create_event(
            clients["ann"],
            EventCreate(
                name="Final",
                format=EventFormat.KNOCKOUT_PAIRS,
                rounds=0,
                boards=1,
                starts_at=time.time() + 3600,
                max_entrants=4,
                bot_turn_ms=200,
                round_gap=0.0,
            ),
        )
        for name, partner in zip(names, ("bob", "ann", "dee", "cy"), strict=True):
            await register(clients[name], event, partner=partner)
            await check_in(clients[name], event)
        start_events(server)
        with trio.fail_after(3600):
            async with trio.open_nursery() as nursery:
                for client in clients.values():
                    nursery.start_soon(play_until_ended, client)
        shown = await clients["ann"].request(EventShow(event=event))
        records = await clients["ann"].request(EventRecords(event=event))
    assert isinstance(shown, EventInfo) and isinstance(records, HandRecords)
    (final,) = shown.rounds
    (table,) = final.tables
    assert [b.board for b in table.boards] == [1, 2]
    assert [(r["event"], r["board"]) for r in records.records] == [
        (f"{event}/r1/t1", 1),
        (f"{event}/r1/t1", 2),
    ]
    # The extra board is the round's next deal, at its own table.
    assert records.records[0]["seed"] != records.records[1]["seed"]
    (match,) = shown.matches
    assert match.winner in (match.a, match.b)
    assert shown.standings[0].key == match.winner


async def test_an_entrant_checking_in_during_its_round_is_told_its_table_and_seated(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with events_server() as (server, listener):
        clients = await enter_all(partial(MemoryClient.connect, listener), ("ann", "bob"))
        ann, bob = clients["ann"], clients["bob"]
        event = await create_event(
            ann,
            EventCreate(
                name="Late",
                format=EventFormat.SWISS_INDIVIDUAL,
                rounds=1,
                boards=1,
                starts_at=time.time() + 3600,
                max_entrants=4,
                human_turn_ms=600_000,
                bot_turn_ms=600_000,  # nobody's clock runs out: bob's seat waits for him
                no_show_grace=3000.0,
                round_gap=0.0,
            ),
        )
        await register(ann, event)
        await register(bob, event)
        await check_in(ann, event)
        start_events(server)
        with trio.fail_after(3600):
            async with trio.open_nursery() as nursery:
                ended: list[EventEnded] = []
                seated = trio.Event()

                async def play_ann() -> None:
                    for _ in range(MAX_EVENT_MESSAGES):
                        message = await ann.receive()
                        assert message is not None
                        if isinstance(message, Joined):
                            seated.set()
                        elif isinstance(message, YourTurn):
                            action = message.legal[0]
                            await ann.send(
                                Act(table=message.table, version=message.version, action=action)
                            )
                        elif isinstance(message, EventEnded):
                            ended.append(message)
                            return

                nursery.start_soon(play_ann)
                await seated.wait()  # the round is on: bob has not come yet
                reply = await bob.request(EventPlay(event=event))
                assert isinstance(reply, Ok) and reply.note and "now" in reply.note
                late = await bob.expect(EventRoundPaired)
                assert late.round == 1 and late.starts_in == 0.0
                assert late.names[late.seat] == "bob"
                joined = await bob.expect(Joined)
                assert joined.table == late.table and joined.seat == late.seat
                ended.append(await play_until_ended(bob))
        lines = {line.names[0]: line for line in ended[0].standings}
        assert lines["bob"].forfeits == 0 and lines["ann"].forfeits == 0


async def test_two_forfeited_rounds_withdraw_a_swiss_entrant_whose_seat_the_fallback_keeps(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with events_server() as (server, listener):
        clients = await enter_all(partial(MemoryClient.connect, listener), ("ann", "bob", "cy"))
        event = await create_event(
            clients["ann"],
            EventCreate(
                name="Three rounds",
                format=EventFormat.SWISS_INDIVIDUAL,
                rounds=3,
                boards=1,
                starts_at=time.time() + 3600,
                max_entrants=4,
                bot_turn_ms=200,
                no_show_grace=5.0,
                round_gap=0.0,
            ),
        )
        for client in clients.values():
            await register(client, event)
        await check_in(clients["ann"], event)
        await check_in(clients["bob"], event)  # cy never comes: two forfeits withdraw it
        start_events(server)
        with trio.fail_after(3600):
            async with trio.open_nursery() as nursery:
                for name in ("ann", "bob"):
                    nursery.start_soon(play_until_ended, clients[name])
        shown = await clients["ann"].request(EventShow(event=event))
    assert isinstance(shown, EventInfo)
    cy = next(e for e in shown.entrants if e.names == ["cy"])
    assert cy.withdrawn
    line = next(s for s in shown.standings if s.names == ["cy"])
    # Round 3 too: a withdrawn entrant's seat is the fallback's from the start, a forfeit.
    assert line.forfeits == 3 and line.boards == 3 and line.percent == 0.0
    assert line.place == 4


async def test_a_player_gone_past_the_grace_forfeits_the_rest_of_the_round(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with events_server(reconnect_grace=20.0) as (server, listener):
        clients = await enter_all(partial(MemoryClient.connect, listener), ("ann", "bob", "cy"))
        event = await create_event(
            clients["ann"],
            EventCreate(
                name="Gone",
                format=EventFormat.SWISS_INDIVIDUAL,
                rounds=1,
                boards=2,
                starts_at=time.time() + 3600,
                max_entrants=4,
                bot_turn_ms=2000,
                round_gap=0.0,
            ),
        )
        for client in clients.values():
            await register(client, event)
            await check_in(client, event)
        start_events(server)
        with trio.fail_after(3600):
            async with trio.open_nursery() as nursery:
                for name in ("ann", "bob"):
                    nursery.start_soon(play_until_ended, clients[name])
                await clients["cy"].expect(YourTurn)
                await clients["cy"].aclose()  # gone, and not back within the 20 s grace
        shown = await clients["ann"].request(EventShow(event=event))
    assert isinstance(shown, EventInfo)
    lines = {s.names[0]: s for s in shown.standings}
    # Both boards: cy gave the seat up on board 1 (at its first turn) and never came back.
    assert lines["cy"].forfeits == 2 and lines["cy"].percent == 0.0
    assert lines["ann"].forfeits == 0 and lines["bob"].forfeits == 0
    (table,) = shown.rounds[0].tables
    assert len(table.boards) == 2  # the fallback played cy's seat to the end
