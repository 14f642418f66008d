"""The ladder's table: a server `Table` with planned deal seeds, house bots, and forfeits.

It is the server's table in every other respect (one task owns the game, write-ahead persistence,
per-seat views, clocks and the fallback), with four changes that a rated duplicate match needs:

- each deal's seed comes from the match's `DuplicatePlan` (both halves get the same cards), so the
  commitment, the deal and the seed's reveal after the hand are the base table's own;
- house seats are sample bots of a named spec (built-in seats: like every built-in decision they
  think in a worker thread, `server.seats.decide_off_loop`, so a search bot does not stall the
  server);
- an entrant that disconnects or leaves mid-match, or whose clock runs out `max_timeouts` times,
  forfeits: the fallback bot takes the seat at once and finishes the game (the seat keeps the
  entrant's account, so the game's result is recorded against it), and the entrant's own `act`s to
  that seat are refused from then on;
- `game_over` and the end of the task are events the ladder can wait on.

Its seeds come through the table's public seam `Table.next_seed()`, and `adopt_table` opens it with
`Lobby.adopt(table)`; the seat, command and apply hooks it overrides are still the table's own.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import trio

from engine.actions import Action as EngineAction
from protocol.errors import ErrorCode
from protocol.messages import Message, Ok
from server.seats import ActCommand, BuiltinBot, make_decider
from server.table import Command, JoinCommand, LeaveCommand, Table, TableError, error_for

if TYPE_CHECKING:
    from server.lobby import Lobby


@dataclass
class LadderTable(Table):
    """A table for one half of a ladder match. Build it, then start it like any table."""

    deal_seed: Callable[[int], bytes] | None = None
    house: dict[int, tuple[str, Any]] = field(default_factory=dict)  # seat -> (spec, account)
    max_timeouts: int = 3
    reserved: dict[int, int] = field(default_factory=dict)  # seat -> the entrant's account id
    forfeits: dict[int, str] = field(default_factory=dict)  # seat -> "disconnected" | ...
    timeouts: dict[int, int] = field(default_factory=dict)
    game_over: trio.Event = field(default_factory=trio.Event)
    ended: trio.Event = field(default_factory=trio.Event)

    def __post_init__(self) -> None:
        super().__post_init__()
        for seat, (_spec, account) in self.house.items():
            self.seats[seat].account = account

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            await super().run(task_status=task_status)
        finally:
            self.ended.set()

    # ---------------------------------------------------------------- seats

    async def _seat_builtin(self, seat: int) -> None:
        if seat not in self.house or seat in self.forfeits:
            # A forfeited seat gets the table's fallback bot; the entrant's account stays on it.
            await super()._seat_builtin(seat)
            return
        spec, _account = self.house[seat]
        used, decide = make_decider(spec, secrets.randbits(64), self.game.ruleset)
        bot = BuiltinBot(
            seat=seat,
            name=f"house:{used}",
            inbox=self.send_inbox.clone(),
            decide=decide,
            view_of=lambda: (self.game.view(seat), self.game.legal_actions(seat)),
            version_of=lambda: self.game.version,
        )
        state = self.seats[seat]
        state.bot = bot
        state.occupant = bot
        assert self._nursery is not None
        self._nursery.start_soon(bot.run)

    async def forfeit(self, seat: int, reason: str) -> None:
        """The entrant at `seat` forfeits (in the table task): the fallback bot plays on for it."""
        if seat in self.forfeits or self.game.is_over:
            return
        self.forfeits[seat] = reason
        state = self.seats[seat]
        state.occupant = None
        state.dropped_at = None
        state.abandoned = True  # the account cannot reclaim the seat by reconnecting
        state.turn_version = -1  # the new occupant needs its your_turn
        self.log.info("ladder_forfeit", seat=seat, reason=reason)
        await super()._seat_builtin(seat)
        self._changed()

    # ---------------------------------------------------------------- commands

    async def _handle(self, command: Command) -> None:
        forfeited = isinstance(command, ActCommand) and command.seat in self.forfeits
        if forfeited and isinstance(command, ActCommand) and command.source != "bot":
            reply = command.reply or self._log_refusal
            reply(
                error_for(
                    ErrorCode.NOT_YOUR_TURN,
                    "you forfeited this match; the fallback bot plays this seat",
                    command.request_id,
                )
            )
            return
        if isinstance(command, JoinCommand) and not command.reattach:
            wanted = self.reserved.get(command.seat) if command.seat is not None else None
            if wanted != command.account.id:
                # A ladder table is listed (anyone may watch) but its seats are the match's.
                command.reply(
                    error_for(
                        ErrorCode.TABLE_FULL,
                        "this is a ladder match: its seats are taken",
                        command.request_id,
                    )
                )
                return
        if isinstance(command, LeaveCommand) and not self.game.is_over:
            seats = [i for i, s in enumerate(self.seats) if s.occupant is command.occupant]
            if seats:
                for seat in seats:
                    await self.forfeit(seat, "disconnected" if command.disconnected else "left")
                if command.reply is not None:
                    command.reply(Ok(id=command.request_id))
                return
        await super()._handle(command)

    async def _apply(
        self,
        action: EngineAction,
        seat: int,
        source: str,
        *,
        reject: Callable[[Message], None],
        request_id: int | None = None,
    ) -> bool:
        applied = await super()._apply(action, seat, source, reject=reject, request_id=request_id)
        if applied and source == "fallback":
            self.timeouts[seat] = self.timeouts.get(seat, 0) + 1
            if self.timeouts[seat] >= self.max_timeouts and seat not in self.house:
                await self.forfeit(seat, "timeouts")
        if self.game.is_over:
            self.game_over.set()
        return applied

    # ---------------------------------------------------------------- dealing

    def next_seed(self) -> bytes:
        """The seed of the next deal: the plan's for this deal number (both halves of a match get
        the same cards); a fresh one without a plan. `Table._deal` commits to it and reveals it."""
        if self.deal_seed is None:
            return super().next_seed()
        return self.deal_seed(self.deals_persisted)


class closed_table_ok:
    """Suppress `TableError` from a table that closed under us (it is over either way)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: object, tb: object) -> bool:
        return isinstance(exc, TableError)


async def first_of(*events: trio.Event) -> None:
    """Return as soon as any of `events` is set."""
    async with trio.open_nursery() as nursery:

        async def wait(event: trio.Event) -> None:
            await event.wait()
            nursery.cancel_scope.cancel()

        for event in events:
            nursery.start_soon(wait, event)


async def adopt_table(lobby: Lobby, table: LadderTable) -> None:
    """Open `table` as the lobby's own (`Lobby.adopt`: stored, listed, and run in the lobby's
    tables nursery); raises `TableError` (server_full) with nothing opened when the server has
    no room for another table."""
    if len(lobby.tables) >= lobby.server.config.limits.max_tables:
        raise TableError(ErrorCode.SERVER_FULL, "the server has no room for a ladder table")
    await lobby.adopt(table)
