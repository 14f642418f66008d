"""Who sits in a seat: a remote session or a built-in bot, behind one small interface.

A table talks to every occupant the same way: it calls `deliver(message)` (never blocking) and
receives the occupant's `act` through its own inbox. A remote occupant is a `Session` (its messages
cross a socket); a `BuiltinBot` runs in-process in the table's nursery, reads the same messages
from a bounded channel and sends `act` requests into the same inbox a session would.

The built-in policy is, for now, a seeded random choice among the legal actions; the fallback on
clock expiry is the engine's first legal action. Both are replaced by the sample bots of `bots/`
once those exist (see the report in docs/operations.md).
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import structlog
import trio

from engine.actions import Action as EngineAction
from engine.actions import action_to_dict
from engine.game import Game
from engine.views import SeatView
from protocol.messages import Message, YourTurn
from protocol.schema import from_map
from protocol.types import Action as WireAction

log = structlog.get_logger("server.seats")

FALLBACK_NAME = "first legal action"


class Occupant(Protocol):
    """Anything that can sit at a table: it is sent messages and answers through the table inbox."""

    def deliver(self, message: Message) -> None:
        """Queue `message` for this occupant; never blocks (a slow occupant is dropped instead)."""
        ...


@dataclass(frozen=True)
class ActCommand:
    """An `act` on its way into a table's inbox, from a session or a built-in bot."""

    seat: int
    version: int
    action: dict[str, Any]
    reply: Callable[[Message], None] | None = None
    request_id: int | None = None
    source: str = "player"


def wire_action(action: EngineAction) -> WireAction:
    """The protocol's `Action` for an engine action (the seat is implied by the recipient)."""
    return from_map(WireAction, action_to_dict(action, with_seat=False))


def wire_legal(actions: list[EngineAction]) -> list[WireAction]:
    """The `your_turn.legal` list: every legal action in full (a Hearts pass: 286 of them)."""
    return [wire_action(action) for action in actions]


def fallback_action(game: Game, seat: int) -> EngineAction:
    """What the server plays for a seat whose clock ran out: the engine's first legal action.

    Deterministic on purpose, so that a replay after a crash reaches the same state.
    """
    return game.legal_actions(seat)[0]


@dataclass
class BuiltinBot:
    """An in-process bot seat: reads `your_turn`, answers with `act` through the table inbox."""

    seat: int
    name: str
    inbox: trio.MemorySendChannel[ActCommand]
    seed: int
    view_of: Callable[[], SeatView]
    _send: trio.MemorySendChannel[Message] = field(init=False)
    _receive: trio.MemoryReceiveChannel[Message] = field(init=False)

    def __post_init__(self) -> None:
        # Only the latest your_turn matters, so a small buffer is enough; older ones are dropped.
        self._send, self._receive = trio.open_memory_channel[Message](64)

    def deliver(self, message: Message) -> None:
        if isinstance(message, YourTurn):
            # On a full or closed channel the clock's fallback covers the turn we could not take.
            with contextlib.suppress(trio.WouldBlock, trio.ClosedResourceError):
                self._send.send_nowait(message)

    async def run(self) -> None:
        """Answer each `your_turn` until the table closes our channel or cancels us."""
        rng = random.Random(self.seed)
        async with self._receive:
            async for turn in self._receive:
                assert isinstance(turn, YourTurn)
                # The bot's own view: what this seat may know, nothing more (its hand, its legal
                # actions with the cards of a pass spelled out).
                view = self.view_of()
                if view.version != turn.version or not view.legal:
                    continue  # a newer your_turn is on its way
                action = rng.choice(view.legal)
                command = ActCommand(
                    seat=self.seat,
                    version=turn.version,
                    action=action_to_dict(action, with_seat=False),
                    source="bot",
                )
                try:
                    await self.inbox.send(command)
                except (trio.ClosedResourceError, trio.BrokenResourceError):
                    return

    def close(self) -> None:
        self._send.close()
