"""Clients that take part in events over the real protocol, for the events' tests: an account made
(a bot's, by default), registered, checked in, and a loop that plays each seat the server gives it
(the first legal action of every `your_turn`) until `event_ended`."""

from __future__ import annotations

from protocol.messages import (
    Act,
    EventEnded,
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
from tests.server.wire_client import WireClient

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
