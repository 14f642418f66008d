"""One table: the only owner of its game. Applies actions one at a time, persists, then tells.

Everything that touches a table's seats or game goes through its bounded inbox and is handled by
its task, in order: `act`, join, leave, spectate, reattach. For each applied action the table

1. asks the engine to apply it (an `IllegalAction` is answered to that seat alone, state unchanged);
2. persists it, with the hand record and the result when it ends a hand or the game, in one
   transaction (`await store.call`, which returns once committed): nothing is told before it is
   on disk, so a crash can never take back what a player has seen;
3. turns each engine event into per-recipient messages with `event.for_seat(seat)` (spectators get
   `for_seat(None)`), so nobody receives a card they may not know;
4. sends `turn` (who must act, and their clocks) to everyone, then `your_turn` (legal actions and
   a deadline) to every seat that must act. A fallback's action is preceded by `clock_expired`.

Each hand's seed comes from `secrets`; its SHA-256 commitment is persisted and sent before the deal,
the seed itself after the hand (in `hand_scored`, and `deal_seed`).
"""

from __future__ import annotations

import dataclasses
import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

import structlog
import trio

from engine.actions import Action as EngineAction
from engine.actions import action_from_dict, action_to_dict
from engine.deal import commitment
from engine.errors import EngineError
from engine.events import Event as EngineEvent
from engine.game import Game, Phase, new_game
from engine.records import hand_to_record
from protocol.errors import ErrorCode
from protocol.messages import (
    ClockExpired,
    DealCommitment,
    DealSeed,
    Error,
    HandDealt,
    Joined,
    Message,
    Ok,
    Snapshot,
    Turn,
    YourTurn,
)
from protocol.types import Clock, SeatInfo, TableInfo, TableStatus
from protocol.wire import game_event
from server.seats import (
    ActCommand,
    BuiltinBot,
    Decider,
    Occupant,
    fallback_action,
    make_decider,
    wire_legal,
)
from server.storage import StorageError, StoredGame, Tx
from server.table_commands import (
    ChatCommand,
    CloseUnoccupiedCommand,
    Command,
    JoinCommand,
    LeaveCommand,
    SeatState,
    SpectateCommand,
    TableConfig,
    TableError,
    error_for,
)

if TYPE_CHECKING:
    from server.storage import Store

log = structlog.get_logger("server.table")

PassDirection = Literal["left", "right", "across", "none"]
PASS_DIRECTIONS: tuple[str, ...] = ("left", "right", "across", "none")


@dataclass
class Table:
    """The state a table task owns. Create with `Table(...)`, run with `await table.run()`."""

    config: TableConfig
    store: Store
    bot_account: Callable[[str], Any]  # async name -> Account for built-in bots
    inbox_size: int = 64
    max_spectators: int = 64
    game: Game = field(init=False)
    game_id: int | None = None
    seats: list[SeatState] = field(init=False)
    spectators: set[Any] = field(default_factory=set)
    actions_persisted: int = 0
    deals_persisted: int = 0
    current_seed: bytes = b""  # the seed of the deal in play, revealed when it is over
    current_hand: int = 0
    on_change: Callable[[Table], None] | None = None
    finished: bool = False
    # Reopened after a restart while it waits for players (a lobby table; not the ladder's): its
    # seated accounts are stored on every change until the game starts (`tables.seats`).
    reopens: bool = False
    # Trio time since which nobody has been seated while the table waits for players (None: someone
    # is, or the game has started); the lobby's sweep closes it once that lasts `waiting_table_ttl`.
    unoccupied_since: float | None = None
    closed: bool = False  # closed with no game (nobody came): the task ends, the store says closed
    _turn_told: tuple[int, tuple[int, ...]] | None = None  # the (version, to_act) last told
    _preface: Message | None = None  # told before the next applied action's events (clock_expired)
    _nursery: trio.Nursery | None = None

    def __post_init__(self) -> None:
        self.game = new_game(self.config.ruleset())
        self.seats = [SeatState() for _ in range(self.config.players)]
        self.send_inbox, self.receive_inbox = trio.open_memory_channel[Command](self.inbox_size)
        self.log = log.bind(table=self.config.table_id)
        used, decide = make_decider(
            self.config.fallback_bot, secrets.randbits(64), self.game.ruleset
        )
        # A fallback that cannot load is the engine's first legal action, and we say so.
        self.fallback: Decider | None = decide if used == self.config.fallback_bot else None
        self.fallback_name = f"{used} bot" if self.fallback is not None else "first legal action"

    # ---------------------------------------------------------------- lobby-facing facts

    @property
    def table_id(self) -> str:
        return self.config.table_id

    @property
    def status(self) -> TableStatus:
        if self.finished or self.game.is_over:
            return TableStatus.FINISHED
        return TableStatus.PLAYING if self.game_id is not None else TableStatus.WAITING

    def info(self) -> TableInfo:
        seats = [
            SeatInfo(
                seat=i,
                player=s.account.name if s.account else None,
                bot=s.is_bot,
                connected=s.bot is not None or s.occupant is not None,
            )
            for i, s in enumerate(self.seats)
        ]
        return TableInfo(
            table=self.table_id,
            game=self.config.game,  # type: ignore[arg-type]
            preset=self.config.preset,
            options=self.config.options,
            seats=seats,
            clock=Clock(turn_ms=self.config.human_turn_ms, bank_ms=self.config.bank_ms),
            private=self.config.private,
            status=self.status,
            spectators=len(self.spectators),
        )

    def holds_seat(self, account_id: int) -> int | None:
        for i, s in enumerate(self.seats):
            if s.account is not None and s.account.id == account_id and not s.abandoned:
                return i
        return None

    def free_seats(self) -> list[int]:
        return [i for i, s in enumerate(self.seats) if s.account is None and s.bot is None]

    # ---------------------------------------------------------------- the task

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Own the game until it is over and everyone has left (or the server stops)."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            for seat in self.config.bots:
                if self.seats[seat].bot is None:
                    await self._seat_builtin(seat)
            self._note_occupancy()  # a table nobody sits at is unoccupied from its start
            task_status.started()
            await self._advance()
            async with self.receive_inbox:
                while not self._done():
                    deadline = self._next_deadline()
                    command: Command | None = None
                    with trio.move_on_at(deadline):
                        command = await self.receive_inbox.receive()
                    # Handled outside the deadline's scope: a deadline passing while an action
                    # waits for its commit must not cancel it half-way (committed but never
                    # counted, so the fallback would play the same move number again).
                    if command is not None:
                        await self._handle(command)
                    else:
                        await self._on_clock()
                    await self._advance()
            self.log.info("table_closed")
            # The built-in bots wait on their channels; the table's end is theirs.
            nursery.cancel_scope.cancel()

    def _done(self) -> bool:
        """A finished game's table closes once no person is seated or watching; a table closed
        for want of players, at once."""
        if self.closed:
            return True
        if not self.finished:
            return False
        people = [s for s in self.seats if s.occupant is not None and s.bot is None]
        return not people and not self.spectators

    async def _seat_builtin(self, seat: int) -> None:
        used, decide = make_decider(
            self.config.builtin_bot, secrets.randbits(64), self.game.ruleset
        )
        name = f"bot:{used}"
        account = await self.bot_account(name)
        bot = BuiltinBot(
            seat=seat,
            name=name,
            inbox=self.send_inbox.clone(),
            decide=decide,
            view_of=lambda: (self.game.view(seat), self.game.legal_actions(seat)),
            version_of=lambda: self.game.version,
        )
        state = self.seats[seat]
        state.bot = bot
        state.occupant = bot
        if state.account is None:
            state.account = account
        assert self._nursery is not None
        self._nursery.start_soon(bot.run)

    # ---------------------------------------------------------------- commands

    async def _handle(self, command: Command) -> None:
        if isinstance(command, ActCommand):
            await self._act(command)
        elif isinstance(command, JoinCommand):
            await self._join(command)
        elif isinstance(command, SpectateCommand):
            if len(self.spectators) >= self.max_spectators:
                command.reply(
                    error_for(
                        ErrorCode.TABLE_FULL,
                        "this table has no room for another spectator",
                        command.request_id,
                    )
                )
                return
            self.spectators.add(command.occupant)
            command.reply(Joined(id=command.request_id, table=self.table_id, seat=None))
            command.occupant.deliver(self._snapshot(None))
            self._tell_turn_to(command.occupant)
            self._changed()
        elif isinstance(command, LeaveCommand):
            await self._leave(command)
        elif isinstance(command, CloseUnoccupiedCommand):
            await self._close_unoccupied(command.ttl)
        else:
            self._tell_same(command.message)

    async def _join(self, command: JoinCommand) -> None:
        held = self.holds_seat(command.account.id)
        if held is not None:
            seat = held  # the same account comes back (reconnect, or a second connection)
        elif command.reattach:
            return
        else:
            free = self.free_seats()
            if self.game_id is not None or not free:
                command.reply(
                    error_for(
                        ErrorCode.TABLE_FULL, "this table has no free seat", command.request_id
                    )
                )
                return
            if command.seat is not None and command.seat not in free:
                command.reply(
                    error_for(
                        ErrorCode.SEAT_TAKEN,
                        f"seat {command.seat} is taken",
                        command.request_id,
                    )
                )
                return
            seat = command.seat if command.seat is not None else free[0]
            if not await self._store_waiting_seats({seat: command.account.id}):
                command.reply(
                    error_for(
                        ErrorCode.INTERNAL,
                        "the server could not save your seat, so you were not seated",
                        command.request_id,
                    )
                )
                return
        state = self.seats[seat]
        state.account = command.account
        state.occupant = command.occupant
        state.dropped_at = None
        state.turn_version = -1  # resend your_turn to the returning seat
        self.spectators.discard(command.occupant)
        if command.created is not None:
            command.reply(dataclasses.replace(command.created, seat=seat))
        else:
            command.reply(Joined(id=command.request_id, table=self.table_id, seat=seat))
        command.occupant.deliver(self._snapshot(seat))
        self._tell_turn_to(command.occupant)
        self.log.info("seat_taken", seat=seat, account=command.account.name)
        self._changed()

    async def _leave(self, command: LeaveCommand) -> None:
        if command.occupant in self.spectators:
            self.spectators.discard(command.occupant)
        for i, state in enumerate(self.seats):
            if state.occupant is not command.occupant:
                continue
            state.occupant = None
            if command.disconnected:
                state.dropped_at = trio.current_time()
                self.log.info("seat_dropped", seat=i, grace_s=self.config.grace_s)
            elif self.game_id is None:
                state.account = None  # before the game starts a seat is simply freed
                self.log.info("seat_freed", seat=i)
                await self._store_waiting_seats()
            else:
                state.abandoned = True  # mid-game, the fallback plays the seat from now on
                self.log.info("seat_abandoned", seat=i)
        if command.reply is not None:
            command.reply(Ok(id=command.request_id))
        self._changed()

    async def _act(self, command: ActCommand) -> None:
        reply = command.reply or self._log_refusal
        rid = command.request_id
        game = self.game
        if self.game_id is None or game.is_over:
            reply(error_for(ErrorCode.NOT_YOUR_TURN, "the game is not in play", rid))
            return
        if command.version != game.version and command.source == "bot":
            # A built-in seat checks its version before it sends, but another command queued
            # ahead of it (a simultaneous phase's other seats) may still overtake it. Its decision
            # is simply superseded: it has the new version's your_turn already.
            self.log.debug("bot_action_superseded", seat=command.seat, version=command.version)
            return
        if command.version != game.version:
            reply(
                error_for(
                    ErrorCode.STALE_VERSION,
                    f"the game is at version {game.version}, not {command.version}",
                    rid,
                )
            )
            return
        if command.seat not in game.to_act():
            reply(error_for(ErrorCode.NOT_YOUR_TURN, f"seat {command.seat} may not act now", rid))
            return
        try:
            action = action_from_dict(command.action, seat=command.seat)
        except EngineError as exc:
            reply(error_for(ErrorCode.ILLEGAL_ACTION, exc.message, rid, detail=exc.code))
            return
        if await self._apply(action, command.seat, command.source, reject=reply, request_id=rid):
            reply(Ok(id=rid))

    def waiting_seats(self, taking: dict[int, int] | None = None) -> list[int | None]:
        """The accounts seated while the table waits for players, as stored for a restart: one
        entry per seat, None where it is free or a built-in bot's (those are seated again from the
        config); `taking` adds seats about to be taken (seat -> account id)."""
        out: list[int | None] = []
        for i, state in enumerate(self.seats):
            if taking is not None and i in taking:
                out.append(taking[i])
            elif i in self.config.bots or state.account is None:
                out.append(None)
            else:
                out.append(state.account.id)
        return out

    async def _store_waiting_seats(self, taking: dict[int, int] | None = None) -> bool:
        """Store who sits here while no game has started (a table that `reopens` only); False if
        the store refused (logged)."""
        if not self.reopens or self.game_id is not None:
            return True
        seats = self.waiting_seats(taking)
        try:
            await self.store.call(lambda tx: tx.update_table_seats(self.table_id, seats))
        except StorageError as exc:
            self.log.error("seats_not_stored", error=str(exc))
            return False
        return True

    def _log_refusal(self, message: Message) -> None:
        """Where a built-in bot's refused action is reported: the log (it has no socket)."""
        if isinstance(message, Error):
            self.log.info("bot_action_refused", code=message.code, message=message.message)

    # ---------------------------------------------------------------- applying and telling

    async def _apply(
        self,
        action: EngineAction,
        seat: int,
        source: str,
        *,
        reject: Callable[[Message], None],
        request_id: int | None = None,
    ) -> bool:
        """Apply, persist, broadcast (`self._preface` first, if set, to everyone). False (and
        `reject` told) if the engine refused it or it could not be stored; either way the game is
        exactly as it was and nobody was told."""
        assert self.game_id is not None
        # Applied to a copy first: the table's game changes only once the action is on disk.
        candidate = self.game.copy()
        try:
            events = candidate.apply(action)
        except EngineError as exc:
            reject(error_for(ErrorCode.ILLEGAL_ACTION, exc.message, request_id, detail=exc.code))
            return False
        seq = self.actions_persisted
        game_id = self.game_id
        record_rows = self._finished_hand_records(candidate, events)
        outcome = self._results(candidate) if candidate.is_over else None
        wire = action_to_dict(action)
        # The actor's decision ends with this action: its bank after that is stored with it, so
        # a restart gives the seat back the bank it had (charged below, at the same `now`).
        now = trio.current_time()
        actor = self.seats[seat]
        bank_left = self._bank_after(actor, now) if self.config.bank_ms > 0 else None

        def persist(tx: Tx) -> None:
            tx.insert_action(
                game_id, seq, seat=seat, action=wire, source=source, bank_left_ms=bank_left
            )
            for hand_no, record in record_rows:
                tx.insert_hand_record(game_id, hand_no, record)
            if outcome is not None:
                tx.finish_game(game_id, "finished", outcome)
                tx.close_table(self.table_id)

        try:
            await self.store.call(persist)
        except StorageError as exc:
            self.log.error("action_not_stored", game=game_id, seat=seat, error=str(exc))
            reject(
                error_for(
                    ErrorCode.INTERNAL,
                    "the server could not save this action, so it was not applied",
                    request_id,
                )
            )
            return False
        self.game = candidate
        self.actions_persisted += 1
        # The actor's decision is over (even if it must decide again at once): charge its bank.
        self._charge_bank(actor, now)
        self.log.debug("action_applied", game=game_id, seat=seat, seq=seq, source=source)
        if self._preface is not None:
            self._tell_same(self._preface)
            self._preface = None
        self._broadcast(events)
        if self.game.is_over:
            self.log.info("game_over", game=game_id, scores=list(self.game.scores))
            self.finished = True
            self._changed()
        return True

    def _finished_hand_records(
        self, game: Game, events: list[EngineEvent]
    ) -> list[tuple[int, Any]]:
        rows = []
        if any(e.kind == "hand_scored" for e in events):
            history = game.histories[-1]
            assert self.game_id is not None
            record = hand_to_record(history, game.ruleset, game_id=str(self.game_id))
            rows.append((history.hand_number, record))
        return rows

    def _results(self, game: Game) -> list[tuple[int, int | None, int, int]]:
        scores = game.scores
        sides = game.ruleset.sides
        rows = []
        for seat, state in enumerate(self.seats):
            side = next(i for i, members in enumerate(sides) if seat in members)
            place = 1 + sum(1 for other in scores if other > scores[side])
            account = state.account.id if state.account else None
            rows.append((seat, account, scores[side], place))
        return rows

    def audience(self) -> list[tuple[int | None, Occupant]]:
        out: list[tuple[int | None, Occupant]] = [
            (i, s.occupant) for i, s in enumerate(self.seats) if s.occupant is not None
        ]
        out.extend((None, spectator) for spectator in self.spectators)
        return out

    def _tell_all(self, build: Callable[[int | None], Message | None]) -> None:
        for seat, occupant in self.audience():
            message = build(seat)
            if message is not None:
                occupant.deliver(message)

    def _tell_same(self, message: Message) -> None:
        for _seat, occupant in self.audience():
            occupant.deliver(message)

    def _broadcast(self, events: list[EngineEvent]) -> None:
        version = self.game.version
        for event in events:
            direction = self._pass_direction() if event.kind == "hand_dealt" else None
            # One message per distinct view of the event (most events read the same for every
            # seat): recipients who may see the same thing get the same object, which the sessions
            # encode once between them (`server.session.event_frames`).
            built: list[tuple[dict[str, Any], Message]] = []

            def build(
                seat: int | None,
                event: EngineEvent = event,
                direction: PassDirection | None = direction,
                built: list[tuple[dict[str, Any], Message]] = built,
            ) -> Message | None:
                shown = event.for_seat(seat)
                if shown is None:
                    return None
                for seen, message in built:
                    if seen == shown:
                        return message
                message = game_event(self.table_id, version, shown)
                if direction is not None and isinstance(message, HandDealt):
                    message = dataclasses.replace(message, pass_direction=direction)
                built.append((shown, message))
                return message

            self._tell_all(build)
            # The seed is revealed once its deal is over: scored, or declared dead.
            if event.kind in ("hand_scored", "deal_declared_dead") and self.current_seed:
                self._tell_same(
                    DealSeed(
                        table=self.table_id,
                        version=version,
                        hand_number=self.current_hand,
                        seed=self.current_seed.hex(),
                    )
                )
                self.current_seed = b""

    def _pass_direction(self) -> PassDirection | None:
        """Hearts: where the hand in play passes, as the engine's game says (it chose it on the deal)."""
        direction = getattr(self.game, "pass_direction", None)
        if self.config.game != "hearts" or direction not in PASS_DIRECTIONS:
            return None
        return cast("PassDirection", direction)

    def _snapshot(self, seat: int | None) -> Snapshot:
        view = self.game.view(seat) if seat is not None else self.game.spectator_view()
        # The deal in play's commitment (its seed is kept until the deal is over), so a hand joined
        # or resumed midway can still be checked once the seed is revealed.
        digest = commitment(self.current_seed) if self.current_seed else None
        return Snapshot(
            table=self.table_id,
            version=self.game.version,
            seat=seat,
            view=view.to_dict(),
            commitment=digest,
        )

    # ---------------------------------------------------------------- dealing, turns, clocks

    def _ready(self) -> bool:
        return all(s.account is not None for s in self.seats)

    async def _advance(self) -> None:
        """Start the game when seats are full, deal when a hand is due, and send `your_turn`s."""
        if self.game.is_over or not self._ready():
            return
        if self.game_id is None:
            await self._start_game()
        # Bounded: each pass deals one hand; dead deals re-deal at most a few times.
        for _ in range(16):
            if self.game.phase is not Phase.DEALING:
                break
            await self._deal()
        self._send_turns()

    async def _start_game(self) -> None:
        seats = [
            {"account": s.account.id if s.account else None, "bot": s.bot.name if s.bot else None}
            for s in self.seats
        ]
        ruleset = self.game.ruleset.to_dict()

        def persist(tx: Tx) -> int:
            return tx.insert_game(self.table_id, self.config.game, ruleset, seats)

        self.game_id = await self.store.call(persist)
        self.log = self.log.bind(game=self.game_id)
        self.log.info("game_started", seats=[s.account.name for s in self.seats if s.account])
        self._changed()

    def next_seed(self) -> bytes:
        """The seed of the next deal: 32 bytes from `secrets` (a subclass may plan its deals, as
        the ladder's duplicate matches do). Called once per deal, before anything is stored."""
        return secrets.token_bytes(32)

    async def _deal(self) -> None:
        assert self.game_id is not None
        seed = self.next_seed()
        digest = commitment(seed)
        game_id, deal_no, first_seq = self.game_id, self.deals_persisted, self.actions_persisted

        def persist(tx: Tx) -> None:
            tx.insert_hand(
                game_id,
                hand_no=deal_no,
                seed=seed.hex(),
                commitment=digest,
                first_seq=first_seq,
            )

        await self.store.call(persist)
        self.deals_persisted += 1
        notice = DealCommitment(
            table=self.table_id,
            version=self.game.version,
            hand_number=self.game.hand_number + 1,
            commitment=digest,
        )
        self._tell_same(notice)
        self.current_seed, self.current_hand = seed, notice.hand_number
        self._broadcast(self.game.deal(seed))
        self.log.info("hand_dealt", hand=self.game.hand_number, commitment=digest[:12])

    def _turn_ms(self, state: SeatState) -> int:
        return self.config.bot_turn_ms if state.is_bot else self.config.human_turn_ms

    def _send_turns(self) -> None:
        if self.game_id is None or self.game.is_over:
            return
        now = trio.current_time()
        acting = set(self.game.to_act())
        yours: list[tuple[Occupant, YourTurn]] = []
        for seat, state in enumerate(self.seats):
            turn_s = self._turn_ms(state) / 1000
            if seat not in acting:
                self._charge_bank(state, now)
                state.turn_version = -1
                continue
            bank_s = self._bank_left_ms(state) / 1000
            if state.abandoned:
                state.turn_deadline = now  # nobody will come back: the fallback plays at once
            elif state.turn_deadline is None:
                state.turn_started = now
                state.turn_deadline = now + turn_s + bank_s
            if state.turn_version == self.game.version or state.occupant is None:
                continue
            state.turn_version = self.game.version
            deadline_ms, bank_ms = self._clock_ms(state, now)
            your_turn = YourTurn(
                table=self.table_id,
                version=self.game.version,
                seat=seat,
                legal=wire_legal(self.game.legal_actions(seat)),
                deadline_ms=deadline_ms,
                bank_ms=bank_ms,
            )
            yours.append((state.occupant, your_turn))
        # Everyone hears who must act (once per version), before the actors get their `your_turn`.
        told = (self.game.version, tuple(sorted(acting)))
        if acting and told != self._turn_told:
            turn = self._turn_message(now)
            if turn is not None:
                self._turn_told = told
                self._tell_same(turn)
        for occupant, your_turn in yours:
            occupant.deliver(your_turn)

    def _clock_ms(self, state: SeatState, now: float) -> tuple[int, int]:
        """A seat's clock as (time left for this decision, bank left after that), in ms."""
        turn_s = self._turn_ms(state) / 1000
        started = state.turn_started if state.turn_started is not None else now
        total_left = turn_s + self._bank_left_ms(state) / 1000
        if state.turn_deadline is not None:
            total_left = max(0.0, state.turn_deadline - now)
        turn_left = min(total_left, max(0.0, started + turn_s - now))
        return math.ceil(turn_left * 1000), max(0, math.ceil((total_left - turn_left) * 1000))

    def _turn_message(self, now: float) -> Turn | None:
        """Who must act now and their clocks (nothing else: no cards, no legal actions)."""
        if self.game_id is None or self.game.is_over:
            return None
        acting = sorted(set(self.game.to_act()))
        if not acting:
            return None
        clocks = [self._clock_ms(self.seats[seat], now) for seat in acting]
        return Turn(
            table=self.table_id,
            version=self.game.version,
            to_act=acting,
            deadline_ms=[deadline for deadline, _ in clocks],
            bank_ms=[bank for _, bank in clocks],
        )

    def _tell_turn_to(self, occupant: Occupant) -> None:
        """After a snapshot: who must act, so a (re)joining session can show the clocks at once."""
        turn = self._turn_message(trio.current_time())
        if turn is not None:
            occupant.deliver(turn)

    def _bank_left_ms(self, state: SeatState) -> int:
        if state.bank_left_ms is None:
            state.bank_left_ms = self.config.bank_ms
        return state.bank_left_ms

    def _bank_after(self, state: SeatState, now: float) -> int:
        """What the seat's bank would be if its decision ended at `now`."""
        bank = self._bank_left_ms(state)
        if state.turn_started is not None:
            overrun_ms = math.ceil((now - state.turn_started - self._turn_ms(state) / 1000) * 1000)
            if overrun_ms > 0:
                bank = max(0, bank - overrun_ms)
        return bank

    def _charge_bank(self, state: SeatState, now: float) -> None:
        """The seat's decision is over: what it took beyond the turn's time comes off its bank."""
        if state.turn_started is not None:
            state.bank_left_ms = self._bank_after(state, now)
        state.turn_started = None
        state.turn_deadline = None

    def _next_deadline(self) -> float:
        times = [s.turn_deadline for s in self.seats if s.turn_deadline is not None]
        grace = [
            s.dropped_at + self.config.grace_s
            for s in self.seats
            if s.dropped_at is not None and not s.abandoned
        ]
        return min([*times, *grace], default=math.inf)

    async def _on_clock(self) -> None:
        """A deadline passed: give up held seats whose grace ran out, play the fallback for the late."""
        now = trio.current_time()
        for seat, state in enumerate(self.seats):
            if (
                state.dropped_at is not None
                and not state.abandoned
                and now >= state.dropped_at + self.config.grace_s
            ):
                self.log.info("seat_grace_expired", seat=seat)
                if self.game_id is None:
                    # Before the game starts an empty seat is simply free again.
                    self.seats[seat] = SeatState()
                    await self._store_waiting_seats()
                else:
                    state.abandoned = True
                self._changed()
        for seat, state in enumerate(self.seats):
            if state.turn_deadline is None or now < state.turn_deadline:
                continue
            if self.game.is_over or seat not in self.game.to_act():
                state.turn_deadline = None
                continue
            within = self.config.bot_turn_ms / 1000
            action = await fallback_action(self.game, seat, self.fallback, within=within)
            self.log.info("clock_expired", seat=seat, fallback=self.fallback_name)
            # Told just before the action's events (and only if it is applied): they are the fallback's.
            notice = ClockExpired(
                table=self.table_id,
                version=self.game.version,
                seat=seat,
                fallback=self.fallback_name,
                reason="abandoned" if state.abandoned else "clock",
            )
            # (Passed beside `_apply`, not through it: subclasses override `_apply`'s signature.)
            self._preface = notice
            try:
                applied = await self._apply(action, seat, "fallback", reject=self._log_refusal)
            finally:
                self._preface = None
            if not applied:
                self._charge_bank(state, now)  # never loop on it
            return  # one at a time: the next deadline is computed afresh

    def _changed(self) -> None:
        self._note_occupancy()
        if self.on_change is not None:
            self.on_change(self)

    # ---------------------------------------------------------------- closing for want of players

    def _occupied(self, now: float) -> bool:
        """Whether a player sits here: connected, or dropped and still within the grace. Built-in
        bots do not count: they come with the table and would wait at it forever."""
        for state in self.seats:
            if state.account is None or state.bot is not None:
                continue
            if state.occupant is not None:
                return True
            if state.dropped_at is not None and now < state.dropped_at + self.config.grace_s:
                return True
        return False

    def _note_occupancy(self) -> None:
        """Start (or stop) the unoccupied clock as seats change; only a waiting table keeps one."""
        now = trio.current_time()
        if self.game_id is not None or self._occupied(now):
            self.unoccupied_since = None
        elif self.unoccupied_since is None:
            self.unoccupied_since = now

    def unoccupied_for(self, now: float) -> float:
        """Seconds this lobby table has waited for players with nobody seated (0: someone is
        seated, its game has started, or it is not a lobby table). Read by the lobby's sweep."""
        if not self.reopens or self.game_id is not None or self.unoccupied_since is None:
            return 0.0
        if self._occupied(now):  # a grace not yet seen to end by the task still counts
            return 0.0
        return now - self.unoccupied_since

    async def _close_unoccupied(self, ttl: float) -> None:
        """Close this waiting table if it has still had nobody seated for `ttl` seconds: marked
        closed in the store first (so a restart does not reopen it), then the task ends and the
        lobby drops it from the listing and tells everyone `table_closed`."""
        now = trio.current_time()
        idle = self.unoccupied_for(now)
        if self.closed or idle < ttl:
            return  # someone sat down since the sweep looked
        try:
            await self.store.call(lambda tx: tx.close_table(self.table_id))
        except StorageError as exc:
            # Left open (and listed) rather than closed here but reopened after a restart; the
            # next sweep tries again.
            self.log.error("waiting_table_not_closed", error=str(exc))
            return
        self.closed = True
        self.log.info("waiting_table_closed", unoccupied_s=round(idle, 1), ttl_s=ttl)

    # ---------------------------------------------------------------- recovery

    def replay(self, stored: StoredGame) -> None:
        """Rebuild the game from its persisted deals and actions (crash recovery).

        Raises `EngineError` if the record does not replay (the table is then not opened).
        """
        self.game_id = stored.id
        self.log = self.log.bind(game=stored.id)
        deals = sorted(stored.hands, key=lambda h: h.hand_no)
        dealt = 0
        for action in stored.actions:
            while dealt < len(deals) and deals[dealt].first_seq <= action.seq:
                self.game.deal(bytes.fromhex(deals[dealt].seed))
                dealt += 1
            self.game.apply(action_from_dict(action.action))
        while dealt < len(deals):
            self.game.deal(bytes.fromhex(deals[dealt].seed))
            dealt += 1
        if deals and self.game.phase not in (Phase.DEALING, Phase.GAME_OVER):
            # A deal still in play: its seed is revealed when it ends, as if nothing had happened.
            self.current_seed = bytes.fromhex(deals[-1].seed)
            self.current_hand = self.game.hand_number
        self.actions_persisted = len(stored.actions)
        self.deals_persisted = len(stored.hands)
        # Each seat's time bank as it was after its last action (stored when the table has one).
        for action in stored.actions:
            if action.bank_left_ms is not None and 0 <= action.seat < len(self.seats):
                self.seats[action.seat].bank_left_ms = action.bank_left_ms


# The table's vocabulary lives in `server.table_commands`; it is re-exported here because callers
# (the lobby, sessions, the ladder) think of it as the table's.
__all__ = [
    "ChatCommand",
    "CloseUnoccupiedCommand",
    "Command",
    "JoinCommand",
    "LeaveCommand",
    "SeatState",
    "SpectateCommand",
    "Table",
    "TableConfig",
    "TableError",
    "error_for",
]
