"""Announcing, listing, showing, registering, withdrawing, checking in and cancelling events, with
every refusal's code: the whole server over memory streams, on trio's autojump clock."""

from __future__ import annotations

import time
from functools import partial

import trio

from protocol.errors import ErrorCode
from protocol.event_messages import EventEntry, EventFormat, EventStatus
from protocol.messages import (
    Error,
    EventCancel,
    EventCreate,
    EventEnded,
    EventInfo,
    EventList,
    EventPlay,
    EventRecords,
    EventRegister,
    Events,
    EventShow,
    EventWithdraw,
    Guest,
    HandRecords,
    Ok,
    OperatorLogin,
)
from protocol.types import ClientKind
from server.app import running_server
from server.config import Limits
from server.operator import new_token
from tests.server.events.players import (
    create_event,
    enter,
    enter_all,
    events_server,
    start_events,
)
from tests.server.unit.memory import MemoryClient, MemoryListener, memory_config

LATER = 3600.0  # an hour from now: registration stays open through the test


def refused(reply: object, code: ErrorCode) -> None:
    assert isinstance(reply, Error), reply
    assert reply.code == code.value, reply
    assert reply.message  # a sentence for a person


def create(**overrides: object) -> EventCreate:
    values: dict[str, object] = {
        "name": "Friday Swiss",
        "format": EventFormat.SWISS_PAIRS,
        "rounds": 2,
        "boards": 1,
        "starts_at": time.time() + LATER,
    }
    values.update(overrides)
    return EventCreate(**values)  # type: ignore[arg-type]


async def test_announce_register_withdraw_play_and_cancel_with_every_refusal(
    autojump_clock: trio.abc.Clock,
) -> None:
    limits = Limits(idle_timeout=0, write_timeout=0)
    closed = MemoryListener()
    async with running_server(memory_config(limits=limits), listeners=[closed]) as server:
        # Only the operator announces on a server whose events_open is off.
        someone = await MemoryClient.connect(closed)
        await enter(someone, "someone", kind=ClientKind.HUMAN)
        refused(await someone.request(create()), ErrorCode.NOT_ALLOWED)
        token, digest = new_token()
        await server.store.call(lambda tx: tx.add_operator_token(digest))
        operator = await MemoryClient.connect(closed)
        await operator.hello()
        assert isinstance(await operator.request(OperatorLogin(token=token)), Ok)
        announced = await operator.request(create())
        assert isinstance(announced, EventInfo) and announced.summary.host is None
        # The operator cancels any event; nobody else but its host.
        theirs = announced.summary.event
        refused(await someone.request(EventCancel(event=theirs)), ErrorCode.NOT_ALLOWED)
        assert isinstance(await operator.request(EventCancel(event=theirs)), Ok)
    listener = MemoryListener()
    config = memory_config(limits=limits, events_open=True)
    async with running_server(config, listeners=[listener]) as server:
        assert server.events is not None
        host = await MemoryClient.connect(listener)
        await enter(host, "host", kind=ClientKind.HUMAN)
        guest = await MemoryClient.connect(listener)
        await guest.hello()
        await guest.request(Guest())
        refused(await guest.request(create()), ErrorCode.NOT_AUTHENTICATED)
        refused(await host.request(create(boards=30)), ErrorCode.BAD_EVENT)
        refused(await host.request(create(starts_at=time.time() - 7200)), ErrorCode.BAD_EVENT)
        refused(await host.request(create(preset="no-such-preset")), ErrorCode.BAD_EVENT)
        info = await host.request(create(max_entrants=4, entry=EventEntry.PEOPLE))
        assert isinstance(info, EventInfo), info
        event = info.summary.event
        assert info.summary.status is EventStatus.REGISTERING
        assert info.summary.host == "host" and info.summary.entrants == 0

        listed = await guest.request(Events(status=EventStatus.REGISTERING))
        assert isinstance(listed, EventList) and [e.event for e in listed.events] == [event]
        refused(await guest.request(EventShow(event="E999")), ErrorCode.NO_SUCH_EVENT)
        refused(await guest.request(EventRegister(event=event)), ErrorCode.NOT_AUTHENTICATED)

        people = []
        for name in ("ann", "bea", "cid", "dot", "eve", "fay", "gus", "hal"):
            client = await MemoryClient.connect(listener)
            await enter(client, name, kind=ClientKind.HUMAN)
            people.append(client)
        ann, bea, cid, dot, eve, fay, gus, hal = people
        bot = await MemoryClient.connect(listener)
        await enter(bot, "robo")
        refused(await bot.request(EventRegister(event=event)), ErrorCode.NOT_ALLOWED)
        refused(
            await ann.request(EventRegister(event=event, partner="nobody")),
            ErrorCode.NO_SUCH_ACCOUNT,
        )
        assert isinstance(await ann.request(EventRegister(event=event, partner="bea")), Ok)
        refused(await ann.request(EventRegister(event=event)), ErrorCode.ALREADY_REGISTERED)
        assert isinstance(await bea.request(EventRegister(event=event, partner="ann")), Ok)
        refused(
            await cid.request(EventRegister(event=event, partner="ann")),
            ErrorCode.ALREADY_REGISTERED,
        )
        for client in (cid, dot, eve, fay, gus, hal):
            assert isinstance(await client.request(EventRegister(event=event)), Ok)
        # Four pairs: ann and bea, then the others two by two in order; the field is full.
        shown = await ann.request(EventShow(event=event))
        assert isinstance(shown, EventInfo) and shown.summary.entrants == 4
        late = await MemoryClient.connect(listener)
        await enter(late, "ivy", kind=ClientKind.HUMAN)
        refused(await late.request(EventRegister(event=event)), ErrorCode.EVENT_FULL)
        refused(await late.request(EventWithdraw(event=event)), ErrorCode.NOT_REGISTERED)
        refused(await late.request(EventPlay(event=event)), ErrorCode.NOT_REGISTERED)
        assert isinstance(await hal.request(EventWithdraw(event=event)), Ok)
        assert isinstance(await late.request(EventRegister(event=event)), Ok)
        refused(await hal.request(EventWithdraw(event=event)), ErrorCode.NOT_REGISTERED)
        assert isinstance(await ann.request(EventPlay(event=event)), Ok)
        records = await guest.request(EventRecords(event=event))
        assert isinstance(records, HandRecords) and records.total == 0 and records.next is None

        refused(await ann.request(EventCancel(event=event)), ErrorCode.NOT_ALLOWED)
        assert isinstance(await host.request(EventCancel(event=event)), Ok)
        refused(await host.request(EventCancel(event=event)), ErrorCode.EVENT_CLOSED)
        refused(await bea.request(EventPlay(event=event)), ErrorCode.EVENT_CLOSED)
        refused(await bea.request(EventWithdraw(event=event)), ErrorCode.EVENT_CLOSED)
        with trio.fail_after(10):
            ended = await ann.expect(EventEnded)
        assert ended.cancelled and ended.event == event
        # Registration closes at the start (the service's wall clock moved past it).
        started = await host.request(create(name="Now"))
        assert isinstance(started, EventInfo)
        now = started.summary.event
        assert isinstance(await ann.request(EventRegister(event=now)), Ok)
        start_events(server)
        with trio.fail_after(30):
            for _ in range(100):
                shown = await guest.request(EventShow(event=now))
                assert isinstance(shown, EventInfo)
                if shown.summary.status is not EventStatus.REGISTERING:
                    break
                await trio.sleep(0.5)
        assert shown.summary.status is EventStatus.RUNNING
        refused(await bea.request(EventRegister(event=now)), ErrorCode.EVENT_CLOSED)


async def test_pairs_naming_each_other_register_in_any_order(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Only a pair both of whose accounts named each other is taken: k0 names k1 and k2 names k3
    before either partner registers (the server partners k0 and k2 for now, as it would at the
    start), then k1 and k3 name theirs back, and both pairs form (four bots registering at once
    were refused `already_registered` about half the time)."""
    async with events_server() as (_server, listener):
        names = ("k0", "k1", "k2", "k3")
        clients = await enter_all(partial(MemoryClient.connect, listener), names)
        event = await create_event(clients["k0"], create())
        for name, partner in (("k0", "k1"), ("k2", "k3"), ("k1", "k0"), ("k3", "k2")):
            reply = await clients[name].request(EventRegister(event=event, partner=partner))
            assert isinstance(reply, Ok), (name, reply)
        # A pair that both named each other is taken: a third naming one of them is refused.
        late = await MemoryClient.connect(listener)
        await enter(late, "k4")
        refused(
            await late.request(EventRegister(event=event, partner="k1")),
            ErrorCode.ALREADY_REGISTERED,
        )


async def test_registration_opens_at_its_time_and_closes_at_the_start(
    autojump_clock: trio.abc.Clock,
) -> None:
    """The host's registration window: before `registration_opens` a registration is refused
    `event_closed` saying when it opens; from then until the start it is taken; a window that
    opens at or after the start is refused `bad_event`."""
    limits = Limits(idle_timeout=0, write_timeout=0)
    listener = MemoryListener()
    config = memory_config(limits=limits, events_open=True)
    async with running_server(config, listeners=[listener]) as server:
        assert server.events is not None
        host = await MemoryClient.connect(listener)
        await enter(host, "host")
        now = time.time()
        refused(
            await host.request(create(starts_at=now + LATER, registration_opens=now + LATER)),
            ErrorCode.BAD_EVENT,
        )
        info = await host.request(create(starts_at=now + LATER, registration_opens=now + 600))
        assert isinstance(info, EventInfo)
        assert info.summary.registration_opens == now + 600
        event = info.summary.event
        early = await host.request(EventRegister(event=event))
        refused(early, ErrorCode.EVENT_CLOSED)
        assert isinstance(early, Error) and "opens at" in early.message
        server.events.now = lambda: time.time() + 601
        assert isinstance(await host.request(EventRegister(event=event)), Ok)
        listed = await host.request(Events())
        assert isinstance(listed, EventList)
        assert [e.registration_opens for e in listed.events] == [now + 600]


async def test_an_account_may_have_four_events_announced_and_not_over(
    autojump_clock: trio.abc.Clock,
) -> None:
    """On a server whose `events_open` lets any account announce, one account cannot fill the
    events list (or the tables) with its own: a fifth event not over is refused `not_allowed`
    with a sentence; once one is cancelled, another may be announced."""
    limits = Limits(idle_timeout=0, write_timeout=0)
    listener = MemoryListener()
    config = memory_config(limits=limits, events_open=True)
    async with running_server(config, listeners=[listener]):
        host = await MemoryClient.connect(listener)
        await enter(host, "host")
        announced = []
        for number in range(4):
            info = await host.request(create(name=f"Night {number}"))
            assert isinstance(info, EventInfo)
            announced.append(info.summary.event)
        fifth = await host.request(create(name="Night 4"))
        refused(fifth, ErrorCode.NOT_ALLOWED)
        assert isinstance(fifth, Error) and "4 events announced" in fifth.message
        assert isinstance(await host.request(EventCancel(event=announced[0])), Ok)
        assert isinstance(await host.request(create(name="Night 4")), EventInfo)
