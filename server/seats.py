"""Who sits in a seat: a remote session or a built-in bot, behind one small interface.

A table talks to every occupant the same way: it calls `deliver(message)` (never blocking) and
receives the occupant's `act` through its own inbox. A remote occupant is a `Session` (its messages
cross a socket); a `BuiltinBot` runs in-process in the table's nursery, reads the same messages
from a bounded channel and sends `act` requests into the same inbox a session would.

Built-in seats and the clock's fallback are the sample bots of `bots/` (`bots.registry.make_bot`),
`heuristic` by default. When a sample cannot be loaded the seat plays a seeded random legal action
and the fallback the engine's first legal action; the log and the table's notice say which.
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
from engine.ruleset import Ruleset
from engine.views import SeatView
from protocol.messages import Message, YourTurn
from protocol.schema import from_map
from protocol.types import Action as WireAction

log = structlog.get_logger("server.seats")


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


# A decision from what the seat knows: its view and its legal actions (the engine's view may omit
# the legal list when it is long, e.g. the 286 ways to pass 3 of 13 cards).
Decider = Callable[[SeatView, list[EngineAction]], EngineAction]


def make_decider(name: str, seed: int, ruleset: Ruleset) -> tuple[str, Decider]:
    """A decision function for a built-in seat: the sample bot `name` from `bots/`, if it loads.

    Returns the name actually used. When `bots/` cannot build `name`, the seat plays a seeded
    random legal action instead, and the name says so (`random-legal`).
    """
    try:
        from bots.registry import BotSpecError, make_bot
        from bots.sdk.bot import AsyncBot
        from bots.sdk.view import BotView
    except ImportError:
        return "random-legal", _random_decider(seed)
    try:
        bot = make_bot(name, seed=seed)
    except BotSpecError as exc:
        log.warning("builtin_bot_unavailable", bot=name, error=str(exc), using="random-legal")
        return "random-legal", _random_decider(seed)
    if isinstance(bot, AsyncBot):
        # The table decides synchronously; asynchronous sample bots are not seated in-process.
        return "random-legal", _random_decider(seed)
    spare = random.Random(seed)

    def decide(view: SeatView, legal: list[EngineAction]) -> EngineAction:
        try:
            action = bot.decide(BotView.from_dict(view.to_dict(), ruleset))
        except Exception as exc:  # BotError, or any bug in a sample bot
            # A sample bot's bug must not stall the table; note it and play a legal action.
            log.warning("builtin_bot_failed", bot=name, error=str(exc))
            return spare.choice(legal)
        return action

    return name, decide


def _random_decider(seed: int) -> Decider:
    rng = random.Random(seed)
    return lambda view, legal: rng.choice(legal)


def fallback_action(game: Game, seat: int, decide: Decider | None) -> EngineAction:
    """What the server plays for a seat whose clock ran out: the fallback bot's choice when one is
    configured and loads, else the engine's first legal action. Either way the action is persisted
    like any other, so a replay after a crash reaches the same state."""
    legal = game.legal_actions(seat)
    if decide is not None:
        return decide(game.view(seat), legal)
    return legal[0]


@dataclass
class BuiltinBot:
    """An in-process bot seat: reads `your_turn`, answers with `act` through the table inbox."""

    seat: int
    name: str
    inbox: trio.MemorySendChannel[ActCommand]
    decide: Decider
    view_of: Callable[[], tuple[SeatView, list[EngineAction]]]
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
        async with self._receive:
            async for turn in self._receive:
                assert isinstance(turn, YourTurn)
                # The bot's own view: what this seat may know, nothing more (its hand, its legal
                # actions with the cards of a pass spelled out).
                view, legal = self.view_of()
                if view.version != turn.version or not legal:
                    continue  # a newer your_turn is on its way
                action = self.decide(view, legal)
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
