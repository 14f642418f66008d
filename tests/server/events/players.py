"""Clients that take part in events over the real protocol, for the events' tests: accounts made
(a bot's, by default), a server on the memory harness, an event announced and started,
registered, checked in, and a loop that plays each seat the server gives it (the first legal
action of every `your_turn`) until `event_ended`."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from protocol.messages import (
    Act,
    EventCreate,
    EventEnded,
    EventInfo,
    EventPlay,
    EventRegister,
    EventRoundPaired,
    Message,
    Ok,
    Register,
    Registered,
    YourTurn,
)
from protocol.types import ClientKind
from server.app import Server, running_server
from server.config import Limits
from tests.server.unit.memory import MemoryListener, memory_config
from tests.server.wire_client import WireClient

C = TypeVar("C", bound=WireClient)

#: Messages one player reads at most in an event (every loop bounded).
MAX_EVENT_MESSAGES = 200_000


async def enter(
    client: WireClient,
    name: str,
    *,
    kind: ClientKind = ClientKind.BOT,
) -> str:
    """Say hello and make the account; returns its token."""
    await client.hello(kind=kind)
    made = await client.request(Register(name=name))
    assert isinstance(made, Registered), made
    return made.token


async def enter_all(connect: Callable[[], Awaitable[C]], names: Iterable[str]) -> dict[str, C]:
    """A client for each name, connected by `connect()` and entered as a bot's account."""
    clients: dict[str, C] = {}
    for name in names:
        client = await connect()
        await enter(client, name)
        clients[name] = client
    return clients


async def create_event(host: WireClient, create: EventCreate) -> str:
    """Announce an event as `host` (`event_create`); the new event's id."""
    info = await host.request(create)
    assert isinstance(info, EventInfo), info
    return info.summary.event


@asynccontextmanager
async def events_server(**settings: Any) -> AsyncIterator[tuple[Server, MemoryListener]]:
    """A server on the memory harness whose events any account may announce (no idle or write
    timeout: the autojump clock runs far ahead); `settings` more of its config."""
    listener = MemoryListener()
    limits = Limits(idle_timeout=0, write_timeout=0)
    config = memory_config(limits=limits, events_open=True, **settings)
    async with running_server(config, listeners=[listener]) as server:
        assert server.events is not None
        yield server, listener


def start_events(server: Server) -> None:
    """Move the events service's clock two hours on, past every test event's start (announced
    an hour ahead, so nobody is late to register), and wake it to start what is due."""
    assert server.events is not None
    server.events.now = lambda: time.time() + 7200
    server.events.wake()


async def register(client: WireClient, event: str, partner: str | None = None) -> None:
    reply = await client.request(EventRegister(event=event, partner=partner))
    assert isinstance(reply, Ok), reply


async def check_in(client: WireClient, event: str) -> None:
    reply = await client.request(EventPlay(event=event))
    assert isinstance(reply, Ok), reply


async def play_until_ended(client: WireClient, seen: list[Message] | None = None) -> EventEnded:
    """Play every seat given (the first legal action each time) until the event ends; every
    `event_round` is kept in `seen`, when given."""
    for _ in range(MAX_EVENT_MESSAGES):
        message = await client.receive()
        assert message is not None, "the server closed the connection during the event"
        if isinstance(message, YourTurn):
            await client.send(
                Act(table=message.table, version=message.version, action=message.legal[0])
            )
        elif isinstance(message, EventRoundPaired) and seen is not None:
            seen.append(message)
        elif isinstance(message, EventEnded):
            return message
    raise AssertionError(f"no event_ended in {MAX_EVENT_MESSAGES} messages")
