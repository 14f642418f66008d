"""One table: the only owner of its game. An actor: one task, one bounded inbox, one command at a time.

Everything that touches a table's seats or game is a command in its inbox (`server.table_commands`),
handled by its task in order. For each applied action the table keeps the write-ahead order:

1. apply it to a COPY of the game (an `IllegalAction` is answered to the actor alone, state unchanged);
2. persist it, with the hand record and the result when it ends a hand or the game, in one transaction
   (`await store.call`, which returns once committed);
3. swap the copy in, answer the actor `ok`, then tell everyone the events, each as its recipient may
   see it (`server.broadcast`), then `turn` and the `your_turn`s. Nothing is told before it is on disk,
   so a crash can never take back what a player has seen.

The parts that need no task live beside it as plain modules: the clock arithmetic
(`server.clocks`), who may see what (`server.broadcast`), crash recovery (`server.recovery`), the
seating rules (`server.seating`). What the lobby reads of the table (its listing) and the upkeep of
a table that waits for players (its stored seats, its idle time, its close when nobody came) are the
table's own methods: the close ends its lifecycle, which changes here alone. What differs between
kinds of table (the ladder's) is a `TablePolicy` the table is given. Each hand's seed comes from the policy
(`secrets` for a lobby table); its SHA-256 commitment is persisted and told before the deal, the seed
after it.

While the store is down (`store.health`), play pauses: commands are still taken (an action then
waits for its commit, as always), but no deadline passes; once the store is back each outage is
given back to the decisions it interrupted (`clocks.pause`) and everyone gets a fresh `turn`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

import structlog
import trio

from engine.actions import Action as EngineAction
from engine.actions import action_to_dict
from engine.deal import commitment
from engine.errors import EngineError
from engine.events import Event as EngineEvent
from engine.game import Game, Phase, new_game
from engine.ruleset import Ruleset
from protocol.errors import ErrorCode
from protocol.messages import (
    ClockExpired,
    DealCommitment,
    Event,
    Ok,
    Snapshot,
)
from protocol.types import Clock, TableInfo, TableStatus
from server import broadcast, clocks, recovery, seating, turns
from server.broadcast import DealInPlay
from server.peers import Peer
from server.seating import SeatState
from server.seats import (
    Thinker,
    decide_off_loop,
    fallback_action,
)
from server.spectator_delay import SpectatorDelay
from server.storage import StorageError, StoredGame
from server.table_bots import BotAccounts, TableBots
from server.table_commands import (
    ActCommand,
    ChatCommand,
    Command,
    JoinCommand,
    LeaveCommand,
    Lifecycle,
    OperatorCloseCommand,
    SpectateCommand,
    TableConfig,
    answer_unserved,
    error_for,
)
from server.table_policy import LobbyPolicy, TablePolicy
from server.table_records import GameRecorder, ResultRow, game_seats
from server.table_seats import Membership

if TYPE_CHECKING:
    from server.metrics import ActionMeter
    from server.storage import Store

log = structlog.get_logger("server.table")


class Table:
    """The state a table task owns. Build it, then `await table.run()` in the tables nursery; the
    lobby reads its listing (`info`, `status`, `free_seats`, ...) between the task's steps."""

    def __init__(
        self,
        config: TableConfig,
        store: Store,
        bot_account: BotAccounts,
        *,
        policy: TablePolicy | None = None,
        inbox_size: int = 64,
        max_spectators: int = 64,
        think: Thinker = decide_off_loop,
        meter: ActionMeter | None = None,
    ) -> None:
        self.config = config
        self.meter = meter  # counts each applied action and its latency (server.metrics)
        self.think = think  # how built-in seats and the fallback think (a thread, on a server)
        self.policy: TablePolicy = policy if policy is not None else LobbyPolicy()
        self.max_spectators = max_spectators
        self.game: Game = new_game(config.ruleset())
        self.members = Membership(config.table_id, config.players, config.bank_ms, config.grace_s)
        self.members.no_watching = config.no_watching
        if config.spectator_delay > 0:
            self.members.delay = SpectatorDelay(config.spectator_delay, self.members.spectators)
        for seat in range(config.players):
            house = self.policy.house_seat(seat)
            if house is not None:
                self.seats[seat].account = house.account
        self.lifecycle = Lifecycle.WAITING
        self.closed_reason: str | None = None  # the operator's, when it closed the table
        self.records = GameRecorder(store, config.table_id)
        # While the store is down play is paused and no clock runs (`_step_while_paused`); each
        # outage over is then given back to the decisions it interrupted (`_catch_up`).
        self.health = store.health
        self._caught_up_to = store.health.periods[-1][1] if store.health.periods else -math.inf
        self.deal = DealInPlay()
        self.on_change: Callable[[Table], None] | None = None
        self.forfeits: dict[int, str] = {}  # seat -> why its player forfeited (policy's say)
        self.game_over = trio.Event()  # set once the game is over (and stored)
        self.ended = trio.Event()  # set when the task has ended
        # Told before the next action of a seat the fallback bot now plays (its player left).
        self._abandon_notice: dict[int, ClockExpired] = {}
        self._turn_told: tuple[int, tuple[int, ...]] | None = None
        self._preface: Event | None = None
        self.send_inbox, self.receive_inbox = trio.open_memory_channel[Command](inbox_size)
        self.log = log.bind(table=config.table_id)
        self.bots = TableBots(config, self.policy, bot_account, self.send_inbox, think)
        self.bots.prepare_fallback(self.game)

    # ---------------------------------------------------------------- facts for the lobby

    @property
    def table_id(self) -> str:
        return self.config.table_id

    @property
    def game_id(self) -> int | None:
        """The stored game's id, once the game has started."""
        return self.records.game_id

    @property
    def status(self) -> TableStatus:
        if self.lifecycle is Lifecycle.WAITING:
            return TableStatus.WAITING
        if self.lifecycle is Lifecycle.PLAYING:
            return TableStatus.PLAYING
        return TableStatus.FINISHED

    @property
    def seats(self) -> list[SeatState]:
        return self.members.seats

    @property
    def spectators(self) -> set[Peer]:
        return self.members.spectators

    def info(self) -> TableInfo:
        return TableInfo(
            table=self.table_id,
            game=self.config.game,  # type: ignore[arg-type]
            preset=self.config.preset,
            options=self.config.options,
            seats=self.members.seat_infos(),
            clock=Clock(turn_ms=self.config.human_turn_ms, bank_ms=self.config.bank_ms),
            bot_clock=Clock(turn_ms=self.config.bot_turn_ms, bank_ms=self.config.bank_ms),
            private=self.config.private,
            status=self.status,
            spectators=len(self.spectators),
            no_watching=self.config.no_watching or None,
            spectator_delay=self.config.spectator_delay or None,
        )

    def resumable_by(self, account_id: int) -> bool:
        """Whether the account has a seat here with no live connection (a login gives it back)."""
        seat = seating.account_seat(self.seats, account_id)
        return seat is not None and not self.seats[seat].held_live

    def free_seats(self) -> list[int]:
        return seating.free_seats(self.seats) if self.lifecycle is Lifecycle.WAITING else []

    def audience(self) -> list[tuple[int | None, Peer]]:
        return self.members.audience()

    # ---------------------------------------------------------------- waiting for players

    def waiting_seats(self, taking: dict[int, int] | None = None) -> list[int | None]:
        """The accounts seated while the table waits, as stored for a restart."""
        return self.members.waiting_ids(self.config.bots, taking)

    async def store_waiting_seats(self, taking: dict[int, int] | None = None) -> bool:
        """Store who sits here while no game has started (a table that `reopens` only); False if
        the store refused (logged)."""
        if not self.policy.reopens or self.lifecycle is not Lifecycle.WAITING:
            return True
        try:
            await self.records.store_waiting_seats(self.waiting_seats(taking))
        except StorageError as exc:
            self.log.error("seats_not_stored", error=str(exc))
            return False
        return True

    def _note_occupancy(self) -> None:
        self.members.note_occupancy(trio.current_time(), self.lifecycle is Lifecycle.WAITING)

    def unoccupied_for(self, now: float) -> float:
        """Seconds this lobby table has waited for players with nobody seated (0: someone is
        seated, its game has started, or it is not a lobby table). Read by the lobby's sweep."""
        if not self.policy.reopens or self.lifecycle is not Lifecycle.WAITING:
            return 0.0
        return self.members.unoccupied_for(now)

    async def _close_unoccupied(self, ttl: float) -> None:
        """Close this waiting table if it has still had nobody seated for `ttl` seconds: marked
        closed in the store first (so a restart does not reopen it), then the task ends and the
        lobby drops it from the listing and tells everyone `table_closed`."""
        now = trio.current_time()
        idle = self.unoccupied_for(now)
        if self.lifecycle is not Lifecycle.WAITING or idle < ttl:
            return  # someone sat down since the sweep looked
        try:
            await self.records.close_table()
        except StorageError as exc:
            # Left open (and listed) rather than closed here but reopened after a restart; the
            # next sweep tries again.
            self.log.error("waiting_table_not_closed", error=str(exc))
            return
        self.lifecycle = Lifecycle.CLOSED
        self.log.info("waiting_table_closed", unoccupied_s=round(idle, 1), ttl_s=ttl)

    # ---------------------------------------------------------------- the task

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Own the game until it is over and everyone has left (or the server stops)."""
        try:
            async with trio.open_nursery() as nursery:
                self.bots.nursery = nursery
                for seat in range(self.config.players):
                    if self.seats[seat].abandoned:
                        await self.seat_fallback(seat)
                    elif self.seats[seat].bot is None:
                        await self.bots.seat_planned(lambda: self.game, self.seats[seat], seat)
                self._note_occupancy()  # a table nobody sits at is unoccupied from its start
                task_status.started()
                await self._advance()
                async with self.receive_inbox:
                    while not self._done():
                        await self._next_step()
                    self.lifecycle = Lifecycle.CLOSED
                    self._answer_unserved()
                self.log.info("table_closed")
                # The built-in bots wait on their channels; the table's end is theirs.
                nursery.cancel_scope.cancel()
        finally:
            self.lifecycle = Lifecycle.CLOSED
            self.ended.set()

    async def _next_step(self) -> None:
        """Handle the next command, or the clock when a deadline comes first. Once a deadline has
        passed, a command already waiting is still handled before it (one per clock step), so no
        request waits behind a run of the server's own moves."""
        self._catch_up()
        if not self.health.available:
            await self._step_while_paused()
            return
        deadline = self._next_deadline()
        if trio.current_time() >= deadline:
            try:
                command = self.receive_inbox.receive_nowait()
            except trio.WouldBlock:
                await self._on_clock()
            else:
                await self._handle(command)
            await self._advance()
            return
        waiting: Command | None = None
        with trio.move_on_at(deadline):
            waiting = await self.receive_inbox.receive()
        # Handled outside the deadline's scope: a deadline passing while an action waits for its
        # commit must not cancel it half-way (committed but never counted, so the clock's
        # fallback would play the same move number again: "game N already has an action S").
        if waiting is not None:
            await self._handle(waiting)
        elif self.health.available:  # else the deadline passed in an outage: not the seat's
            await self._on_clock()
        await self._advance()

    async def _step_while_paused(self) -> None:
        """The store is down: the next command is handled (an action then waits for its commit,
        like every other), but no deadline passes; the step ends when the store is back."""
        waiting: Command | None = None
        back = self.health.back
        with trio.CancelScope() as wait:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_cancel_when_set, back, wait)
                waiting = await self.receive_inbox.receive()
                nursery.cancel_scope.cancel()
        if waiting is not None:
            await self._handle(waiting)
            await self._advance()

    def _catch_up(self) -> None:
        """Give every outage that ended since the last step back to the decisions it paused, and
        tell everyone the clocks as they now are (a fresh `turn`)."""
        periods = [p for p in self.health.periods if p[1] > self._caught_up_to]
        if not periods:
            return
        self._caught_up_to = periods[-1][1]
        for began, ended in periods:
            for state in self.seats:
                clocks.pause(state.clock, began, ended)
        self.log.info("clocks_resumed", paused_s=round(sum(e - b for b, e in periods), 3))
        self._turn_told = None
        self._send_turns()

    def _done(self) -> bool:
        """A finished game's table closes once no person is seated or watching; a table closed for
        want of players, at once."""
        if self.lifecycle is Lifecycle.CLOSED:
            return True
        return self.lifecycle is Lifecycle.FINISHED and not self.members.people_present()

    def _answer_unserved(self) -> None:
        """The inbox is closing: every request still queued gets its answer, so no request sent to
        a table that closed under it goes unanswered."""
        while True:
            try:
                command = self.receive_inbox.receive_nowait()
            except (trio.WouldBlock, trio.EndOfChannel):
                return
            owed = answer_unserved(command)
            if owed is not None:
                owed[0].deliver(owed[1])

    async def seat_fallback(self, seat: int) -> None:
        """The seat's player is gone for good: the fallback bot plays it, on the bots' clock, and
        the seat keeps its account (the results count for it)."""
        await self.bots.seat_fallback(lambda: self.game, self.seats[seat], seat)
        self._abandon_notice[seat] = ClockExpired(
            table=self.table_id,
            version=0,
            seat=seat,
            fallback=self.bots.fallback_name,
            reason="abandoned",
        )
        if self.lifecycle is Lifecycle.PLAYING:
            # Stored, so a restart does not hold the seat for its player again.
            try:
                await self.records.store_seats(game_seats(self.seats))
            except StorageError as exc:
                self.log.error("seats_not_stored", error=str(exc))

    # ---------------------------------------------------------------- commands

    async def _handle(self, command: Command) -> None:
        if isinstance(command, ActCommand):
            await self._act(command)
        elif isinstance(command, JoinCommand):
            await self.members.join(self, command)
        elif isinstance(command, SpectateCommand):
            self.members.spectate(self, command, self.max_spectators)
        elif isinstance(command, LeaveCommand):
            await self.members.leave(self, command)
        elif isinstance(command, ChatCommand):
            self.members.chat(command)
        elif isinstance(command, OperatorCloseCommand):
            await self._close_by_operator(command)
        else:
            await self._close_unoccupied(command.ttl)

    async def _close_by_operator(self, command: OperatorCloseCommand) -> None:
        """The operator's `close_table`: stored first (the game in play aborted, the table closed,
        so a restart resumes neither), then the task ends and the lobby tells everyone why. If
        the store refuses, the table plays on and the operator is told."""
        try:
            await self.records.abort()
        except StorageError as exc:
            self.log.error("table_not_closed", error=str(exc))
            command.peer.deliver(
                error_for(ErrorCode.INTERNAL, "the server could not save that", command.request_id)
            )
            return
        self.log.info("table_closed_by_operator", reason=command.reason, was=self.lifecycle.value)
        self.closed_reason = command.reason
        self.lifecycle = Lifecycle.CLOSED
        command.peer.deliver(Ok(id=command.request_id, note=f"table {self.table_id} closed"))

    # What the membership handlers (`server.table_seats`) need of the table.

    def welcome(self, peer: Peer, seat: int | None) -> None:
        """A connection just sat or began to watch: the table as it may see it, and who acts. A
        spectator of a delayed table is shown the position the others watching have reached (who
        acts now would tell it where the play is: it learns that as the held `turn`s come)."""
        delay = self.members.delay
        if seat is None and delay is not None:
            peer.deliver(delay.snapshot(lambda: self._snapshot(None)))
            if not delay.holding:
                self._tell_turn_to(peer)
            return
        peer.deliver(self._snapshot(seat))
        self._tell_turn_to(peer)

    async def forfeit(self, seat: int, reason: str) -> None:
        """The policy says the seat's player forfeits: the fallback plays on for its account."""
        if self.seats[seat].abandoned:
            return
        self.members.release(seat, "forfeited", f"you forfeited ({reason}); a bot plays it now")
        self.log.info("forfeit", seat=seat, reason=reason)
        self.forfeits[seat] = reason
        await self.seat_fallback(seat)

    async def _act(self, command: ActCommand) -> None:
        peer, rid = command.peer, command.request_id
        seat = self.members.seat_of(peer)
        if seat is None:
            peer.deliver(error_for(ErrorCode.NOT_SEATED, self.members.lost_reason(peer), rid))
            return
        game = self.game
        if self.lifecycle is not Lifecycle.PLAYING:
            peer.deliver(error_for(ErrorCode.NOT_YOUR_TURN, "the game is not in play", rid))
            return
        if seat not in game.to_act():
            peer.deliver(error_for(ErrorCode.NOT_YOUR_TURN, f"seat {seat} may not act now", rid))
            return
        since = self.seats[seat].clock.since_version
        if not since <= command.version <= game.version:
            peer.deliver(
                error_for(
                    ErrorCode.STALE_VERSION,
                    f"this decision is for version {max(since, 0)} to {game.version},"
                    f" not {command.version}",
                    rid,
                )
            )
            return
        action = command.action
        if action.seat != seat:  # the session's seat map is a cache: the seat is the table's word
            action = dataclasses.replace(action, seat=seat)
        await self._apply(
            action, seat, command.source, peer=peer, request_id=rid, since=command.received
        )

    # ---------------------------------------------------------------- applying and telling

    async def _apply(
        self,
        action: EngineAction,
        seat: int,
        source: str,
        *,
        peer: Peer | None,
        request_id: int | None = None,
        since: float | None = None,
    ) -> bool:
        """Apply, persist, answer `peer` (if any) `ok`, then tell everyone. False (and `peer` told
        why) if the engine refused it or it could not be stored: the game is as it was, and
        nobody else was told anything. `since`: when the `act` reached the server, for the
        act-to-delivered latency (None: the table's own move)."""
        assert self.game_id is not None
        candidate = self.game.copy()
        try:
            events = candidate.apply(action)
        except EngineError as exc:
            if peer is not None:
                peer.deliver(
                    error_for(ErrorCode.ILLEGAL_ACTION, exc.message, request_id, detail=exc.code)
                )
            return False
        # The actor's decision ends with this action: its bank after it is stored with it, so a
        # restart gives the seat back the bank it had (charged below, at the same `now`).
        now = trio.current_time()
        actor = self.seats[seat]
        try:
            await self.records.record_action(
                seat=seat,
                action=action_to_dict(action),
                source=source,
                bank_left_ms=clocks.bank_after(actor.clock, now) if self.config.bank_ms else None,
                after=candidate,
                events=events,
                results=self._results(candidate) if candidate.is_over else None,
            )
        except StorageError as exc:
            self.log.error("action_not_stored", seat=seat, error=str(exc))
            if peer is not None:
                peer.deliver(
                    error_for(
                        ErrorCode.INTERNAL,
                        "the server could not save this action, so it was not applied",
                        request_id,
                    )
                )
            return False
        self.game = candidate
        clocks.end(actor.clock, now)  # the decision is over, even if another begins at once
        actor.told_legal = None  # and its next one is told, whatever it offers
        self.log.debug("action_applied", seat=seat, source=source)
        if peer is not None:
            peer.deliver(Ok(id=request_id))
        audience = self.audience()
        notice = self._abandon_notice.pop(seat, None)
        if notice is not None:
            broadcast.tell_same(audience, dataclasses.replace(notice, version=self.game.version))
        if self._preface is not None:
            broadcast.tell_same(audience, self._preface)
            self._preface = None
        broadcast.tell_events(
            self.table_id,
            self.game.version,
            events,
            audience,
            deal=self.deal,
        )
        self._spectators_follow()
        if self.meter is not None:
            self.meter.applied(source, since)
        if self.game.is_over:
            self.log.info("game_over", scores=list(self.game.scores))
            self.lifecycle = Lifecycle.FINISHED
            self.game_over.set()
            self.changed()
        return True

    def _results(self, game: Game) -> list[ResultRow]:
        """Each seat's final score and place, as the engine's outcome says (the lowest score is
        first in Hearts)."""
        outcome = game.outcome
        assert outcome is not None
        return [
            (
                seat,
                state.account.id if state.account else None,
                outcome.score_of(seat),
                outcome.place_of(seat),
            )
            for seat, state in enumerate(self.seats)
        ]

    def _snapshot(self, seat: int | None) -> Snapshot:
        view = self.game.view(seat) if seat is not None else self.game.spectator_view()
        # The deal in play's commitment (its seed is kept until the deal is over), so a hand joined
        # or resumed midway can still be checked once the seed is revealed.
        digest = commitment(self.deal.seed) if self.deal.seed else None
        return Snapshot(
            table=self.table_id,
            version=self.game.version,
            seat=seat,
            view=view.to_dict(),
            commitment=digest,
        )

    # ---------------------------------------------------------------- dealing and turns

    async def _advance(self) -> None:
        """Start the game when seats are full, deal when a hand is due, and send `your_turn`s."""
        if self.lifecycle not in (Lifecycle.WAITING, Lifecycle.PLAYING):
            return
        if not all(s.account is not None for s in self.seats):
            return
        if self.lifecycle is Lifecycle.WAITING:
            await self._start_game()
        # Bounded: each pass deals one hand; dead deals re-deal at most a few times.
        for _ in range(16):
            if self.game.phase is not Phase.DEALING:
                break
            await self._deal()
        self._send_turns()

    async def _start_game(self) -> None:
        game_id = await self.records.start_game(
            self.config.game, self.game.ruleset.to_dict(), game_seats(self.seats)
        )
        self.lifecycle = Lifecycle.PLAYING
        self.log = self.log.bind(game=game_id)
        self.log.info("game_started", seats=[s.account.name for s in self.seats if s.account])
        self.changed()

    async def _deal(self) -> None:
        seed = self.policy.seed(self.records.deals)
        digest = commitment(seed)
        await self.records.record_deal(seed, digest)
        notice = DealCommitment(
            table=self.table_id,
            version=self.game.version,
            hand_number=self.game.hand_number + 1,
            commitment=digest,
        )
        if self.members.delay is not None:
            self.members.delay.hand_starts(self._snapshot(None))
        audience = self.audience()
        broadcast.tell_same(audience, notice)
        self.deal = DealInPlay(seed, notice.hand_number)
        events = self.game.deal(seed)
        broadcast.tell_events(
            self.table_id,
            self.game.version,
            events,
            audience,
            deal=self.deal,
        )
        self._spectators_follow()
        self.log.info("hand_dealt", hand=self.game.hand_number, commitment=digest[:12])

    def _spectators_follow(self) -> None:
        """After a step's events: a delayed table's spectators are given what the delay allows."""
        if self.members.delay is not None:
            self.members.delay.follow(self.game, lambda: self._snapshot(None))

    def _turn_ms(self, state: SeatState) -> int:
        return self.config.bot_turn_ms if state.is_bot else self.config.human_turn_ms

    def _send_turns(self) -> None:
        """Tell everyone `turn` (once a version) and each actor its `your_turn` when due."""
        if self.lifecycle is not Lifecycle.PLAYING:
            return
        now = trio.current_time()
        due = turns.begin_decisions(self.table_id, self.game, self.seats, now, self._turn_ms)
        told = (self.game.version, tuple(sorted(set(self.game.to_act()))))
        if told[1] and told != self._turn_told:
            turn = turns.turn_message(self.table_id, self.game, self.seats, now)
            if turn is not None:
                self._turn_told = told
                broadcast.tell_same(self.audience(), turn)
        for holder, your_turn in due:
            holder.deliver_shared(your_turn)

    def _tell_turn_to(self, peer: Peer) -> None:
        """After a snapshot: who must act, so a (re)joining connection shows the clocks at once."""
        if self.lifecycle is not Lifecycle.PLAYING:
            return
        turn = turns.turn_message(self.table_id, self.game, self.seats, trio.current_time())
        if turn is not None:
            peer.deliver(turn)

    # ---------------------------------------------------------------- clocks

    def _next_deadline(self) -> float:
        times = [s.clock.deadline for s in self.seats if s.clock.deadline is not None]
        grace = self.members.next_grace_end()
        return min([*times, *([] if grace is None else [grace])], default=math.inf)

    async def _on_clock(self) -> None:
        """A deadline passed: give up held seats whose grace ran out, play the fallback for a late
        seat (one at a time: the next deadline is computed afresh)."""
        now = trio.current_time()
        await self.members.expire_graces(self, now)
        for seat, state in enumerate(self.seats):
            if not clocks.expired(state.clock, now):
                continue
            if self.lifecycle is not Lifecycle.PLAYING or seat not in self.game.to_act():
                clocks.end(state.clock, now)
                continue
            action = await fallback_action(
                self.game,
                seat,
                self.bots.fallback,
                within=self.config.bot_turn_ms / 1000,
                think=self.think,
            )
            self.log.info("clock_expired", seat=seat, fallback=self.bots.fallback_name)
            # Told just before the action's events (and only if it is applied): they are the
            # fallback's, not the player's.
            self._preface = ClockExpired(
                table=self.table_id,
                version=self.game.version,
                seat=seat,
                fallback=self.bots.fallback_name,
                reason="clock",
            )
            try:
                applied = await self._apply(action, seat, "fallback", peer=None)
            finally:
                self._preface = None
            if not applied:
                clocks.end(state.clock, now)  # never loop on it
            elif self.lifecycle is Lifecycle.PLAYING:
                forfeit = self.policy.forfeit_on_fallback(seat)
                if forfeit is not None:
                    await self.forfeit(seat, forfeit)
            return

    def changed(self) -> None:
        self._note_occupancy()
        if self.on_change is not None:
            self.on_change(self)

    # ---------------------------------------------------------------- recovery

    def restore(self, stored: StoredGame) -> None:
        """Rebuild the game from its persisted deals and actions (crash recovery), before `run`.

        Raises `EngineError` (or `ValueError`/`KeyError`) if the record does not replay; the table
        is then not opened.
        """
        # The rules the game was started with, as stored (a preset may have changed meaning since,
        # and options added since take the value that was the rule before them).
        self.game = new_game(Ruleset.from_stored(stored.ruleset))
        self.bots.prepare_fallback(self.game)
        delay = self.members.delay
        found = recovery.replay(
            self.game, stored, observer=None if delay is None else _DelayRebuilt(self, delay)
        )
        self.records.game_id = found.game_id
        self.records.actions = found.actions
        self.records.deals = found.deals
        self.lifecycle = Lifecycle.FINISHED if self.game.is_over else Lifecycle.PLAYING
        self.log = self.log.bind(game=found.game_id)
        self.deal = DealInPlay(found.seed_in_play, found.hand_in_play)
        for seat, bank in found.banks.items():
            self.seats[seat].clock.bank_left_ms = bank


class _DelayRebuilt:
    """Rebuilds a delayed table's held segments as its game is replayed after a restart, so a
    spectator of a hand resumed midway is held behind as before (never shown the live position)."""

    def __init__(self, table: Table, delay: SpectatorDelay) -> None:
        self.table = table
        self.delay = delay

    def dealing(self, seed: bytes) -> None:
        table = self.table
        self.delay.hand_starts(table._snapshot(None))
        digest = commitment(seed)
        hand = table.game.hand_number + 1
        self.delay.deliver(
            DealCommitment(
                table=table.table_id,
                version=table.game.version,
                hand_number=hand,
                commitment=digest,
            )
        )
        table.deal = DealInPlay(seed, hand)

    def told(self, events: list[EngineEvent]) -> None:
        table = self.table
        audience: broadcast.Audience = [(None, self.delay)]
        broadcast.tell_events(table.table_id, table.game.version, events, audience, deal=table.deal)
        table._spectators_follow()


async def _cancel_when_set(event: trio.Event, scope: trio.CancelScope) -> None:
    await event.wait()
    scope.cancel()
