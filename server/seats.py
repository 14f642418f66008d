"""Who sits in a seat: a remote session or a built-in bot, behind one small interface.

A table talks to every occupant the same way: it calls `deliver(message)` (never blocking) and
receives the occupant's `act` through its own inbox. A remote occupant is a `Session` (its messages
cross a socket); a `BuiltinBot` runs in-process in the table's nursery, reads the same messages
from a bounded channel and sends `act` requests into the same inbox a session would.

Built-in seats and the clock's fallback are the sample bots of `bots/` (`bots.registry.make_bot`),
`heuristic` by default. When a sample cannot be loaded the seat plays a seeded random legal action
and the fallback the engine's first legal action; the log and the table's notice say which.

A sample bot may think for a while (`search`: 50-200 ms), so every built-in decision (a table's
seats, the ladder's house seats, the clock's fallback) runs in a worker thread through
`decide_off_loop`, at most one per CPU at once (`decision_limiter`), within the seat's deadline.
Each decider keeps one `HandMemory` per seat for the game (it resets itself on a new hand), so
bots that count cards or read voids see the whole hand's tricks, as under the SDK's runner.
"""

from __future__ import annotations

import contextlib
import os
import random
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import structlog
import trio

from engine.actions import Action as EngineAction
from engine.game import Game
from engine.ruleset import Ruleset
from engine.views import SeatView
from protocol.messages import Error, Message, YourTurn
from server.peers import SharedEvent
from server.table_commands import ActCommand

log = structlog.get_logger("server.seats")

# One limiter per trio run (a `CapacityLimiter` belongs to the run that made it).
_LIMITER: trio.lowlevel.RunVar[trio.CapacityLimiter] = trio.lowlevel.RunVar("decision_limiter")


def decision_limiter() -> trio.CapacityLimiter:
    """The worker threads built-in decisions may use at once: one per CPU, server-wide."""
    try:
        return _LIMITER.get()
    except LookupError:
        limiter = trio.CapacityLimiter(max(1, os.cpu_count() or 1))
        _LIMITER.set(limiter)
        return limiter


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
        from bots.sdk.view import BotView, HandMemory
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
    memories: dict[int, HandMemory] = {}  # seat -> the tricks of its hand in play
    hands: dict[int, int] = {}  # seat -> the hand `on_hand_start` was last told
    busy = threading.Lock()  # one decision at a time (an abandoned one may still be running)

    def decide(view: SeatView, legal: list[EngineAction]) -> EngineAction:
        # `legal` is the engine's full `legal_actions(seat)` (a pass or an exchange spelled out
        # card by card), never the view's list, which may omit the card-choosing actions.
        if not busy.acquire(blocking=False):
            log.warning("builtin_bot_busy", bot=name, seat=view.seat)
            return spare.choice(legal)
        try:
            memory = memories.setdefault(view.seat, HandMemory())
            seen = BotView.from_seat_view(view, ruleset, memory=memory)
            if hands.get(view.seat) != seen.hand_number:
                hands[view.seat] = seen.hand_number
                bot.on_hand_start(seen)
            return bot.decide(seen)
        except Exception as exc:  # BotError, or any bug in a sample bot
            # A sample bot's bug must not stall the table; note it and play a legal action.
            log.warning("builtin_bot_failed", bot=name, error=str(exc))
            return spare.choice(legal)
        finally:
            busy.release()

    return name, decide


def _random_decider(seed: int) -> Decider:
    rng = random.Random(seed)
    return lambda view, legal: rng.choice(legal)


# How a built-in decision is thought: `decide_off_loop` (a worker thread) on a server, `decide_inline`
# where a test wants the table's clock to be its own (trio's autojump clock jumps while a thread
# thinks, which would make every bot late).
Thinker = Callable[..., Awaitable[EngineAction | None]]


async def decide_inline(
    decide: Decider, view: SeatView, legal: list[EngineAction], *, deadline: float
) -> EngineAction | None:
    """`decide(view, legal)` in the calling task: for tests of tables, never for a server."""
    await trio.lowlevel.checkpoint()
    return decide(view, legal)


async def decide_off_loop(
    decide: Decider, view: SeatView, legal: list[EngineAction], *, deadline: float
) -> EngineAction | None:
    """`decide(view, legal)` in a worker thread (at most one per CPU at once), so a bot that
    thinks does not stall the server; None if it has not answered by `deadline` (trio time).

    The caller takes `view` and `legal` in the trio thread; the worker gets only these copies,
    never the live game. A thread that overruns is abandoned (it cannot be interrupted); it keeps
    its limiter token until it ends, and its decider refuses to start another meanwhile."""
    with trio.move_on_at(deadline):
        return await trio.to_thread.run_sync(
            decide, view, legal, limiter=decision_limiter(), abandon_on_cancel=True
        )
    return None


async def fallback_action(
    game: Game,
    seat: int,
    decide: Decider | None,
    *,
    within: float = 1.0,
    think: Thinker = decide_off_loop,
) -> EngineAction:
    """What the server plays for a seat whose clock ran out: the fallback bot's choice (thought in
    a worker thread, for at most `within` seconds) when one is configured and loads, else the
    engine's first legal action. Either way the action is persisted like any other, so a replay
    after a crash reaches the same state. Called in the table task: the game cannot change
    while the fallback thinks."""
    legal = game.legal_actions(seat)
    if decide is not None:
        deadline = trio.current_time() + within
        action = await think(decide, game.view(seat), legal, deadline=deadline)
        if action is not None:
            return action
    return legal[0]


@dataclass(eq=False)
class BuiltinBot:
    """An in-process bot seat: a peer of its table that reads `your_turn` and answers with `act`
    through the table inbox, as a remote bot would over its connection.

    Buffered `your_turn`s are skipped for the latest; the decision is made on the game as it is
    then (in a worker thread, `decide_off_loop`) and must end before the seat's deadline. The table
    judges the act like any other: one for a decision the seat no longer has to make (the clock's
    fallback made it meanwhile) is refused, and the refusal is only logged.
    """

    seat: int
    name: str
    inbox: trio.MemorySendChannel[ActCommand]
    decide: Decider
    view_of: Callable[[], tuple[SeatView, list[EngineAction]]]
    think: Thinker = decide_off_loop
    margin_s: float = 0.05  # answer this long before the seat's deadline, so the act arrives first
    _send: trio.MemorySendChannel[Message] = field(init=False)
    _receive: trio.MemoryReceiveChannel[Message] = field(init=False)

    def __post_init__(self) -> None:
        # Only the latest your_turn matters; older ones still buffered are skipped.
        self._send, self._receive = trio.open_memory_channel[Message](64)

    @property
    def peer_id(self) -> str:
        return f"{self.name}@{self.seat}"

    @property
    def connected(self) -> bool:
        return True

    def deliver(self, message: Message) -> None:
        if isinstance(message, YourTurn):
            # On a full or closed channel the clock's fallback covers the turn we could not take.
            with contextlib.suppress(trio.WouldBlock, trio.ClosedResourceError):
                self._send.send_nowait(message)
        elif isinstance(message, Error):
            # Overtaken by the clock's fallback while it thought, or a bug: only worth a log line.
            log.debug("bot_action_refused", bot=self.name, seat=self.seat, code=message.code)

    def deliver_shared(self, shared: SharedEvent) -> None:
        # Only its `your_turn`s matter (decoded from their bytes: the table never builds one); the
        # game's other events are not even looked at.
        if shared.kind is YourTurn:
            self.deliver(shared.message)

    def _latest(self, turn: YourTurn) -> YourTurn:
        """`turn`, or the newest `your_turn` buffered behind it."""
        while True:
            try:
                newer = self._receive.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                return turn
            if isinstance(newer, YourTurn):
                turn = newer

    async def run(self) -> None:
        """Answer each `your_turn` until the table closes our channel or cancels us."""
        async with self._receive:
            async for message in self._receive:
                assert isinstance(message, YourTurn)
                turn = self._latest(message)
                # The bot's own view: what this seat may know, nothing more (its hand, its legal
                # actions with the cards of a pass spelled out), taken here in the trio thread.
                view, legal = self.view_of()
                if not legal:
                    continue  # the decision was made meanwhile (the clock's fallback)
                left_s = (turn.deadline_ms + turn.bank_ms) / 1000 - self.margin_s
                deadline = trio.current_time() + max(0.0, left_s)
                action = await self.think(self.decide, view, legal, deadline=deadline)
                if action is None:
                    log.info("builtin_bot_late", bot=self.name, seat=self.seat)
                    continue  # the clock's fallback plays this turn
                command = ActCommand(peer=self, version=view.version, action=action, source="bot")
                try:
                    await self.inbox.send(command)
                except (trio.ClosedResourceError, trio.BrokenResourceError):
                    return

    def close(self) -> None:
        self._send.close()
