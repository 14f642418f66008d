"""The events service: announcing, registering, checking in, and running each event's rounds on
real tables.

One trio task (`EventService.run`) owns the events of a server. It loads the events not over yet,
and runs each one that has started (or whose start time comes) in a task of its own: at the start it
closes registration, forms the entrants (pairs that named each other, then the rest partnered in
order of registration), fills the field with house bots, and plays round after round:

1. pair the round (`server.events.pairing`) and store the plan, so a restart plays the same one;
2. tell each checked-in entrant `event_round`, and open the round's tables `round_gap` later, each
   dealt the round's boards (`server.events.policy`); every seat is held for its entrant for the
   event's `no_show_grace`, then its fallback bot plays it (a forfeit);
3. seat each checked-in entrant (`joined` and `snapshot` follow, as the ladder's `match_started`
   does) and wait for every table; a knockout match still level plays extra boards;
4. read the round's results back from the stored games, withdraw a Swiss entrant that forfeited
   twice, and go on; after the last round, `event_ended` to every checked-in entrant.

Killed and restarted, the lobby resumes the unfinished games of an event's tables with the policy
asked of this service (`table_policy`), and the event's task goes on at its stored round with its
stored plan: the same tables, the same boards, the same results.

Requests (`handle`) are answered by `server.events.desk` from the store, so they work for every
event, running or not; what they change of an event in progress (a check-in, a cancel) they ask of
this service.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Protocol

import structlog
import trio

from protocol.errors import ErrorCode
from protocol.event_messages import (
    ENDED_STANDINGS,
    EventEnded,
    EventRoundPaired,
)
from protocol.messages import Message
from server.accounts import Account
from server.config import ServerConfig
from server.deal_gate import DealGate
from server.events import store as event_store
from server.events.desk import EventDesk, form_pairs, wire_standing
from server.events.pairing import bracket, fill_field, pair_individual, pair_swiss
from server.events.plans import Entrant, Plan
from server.events.policy import event_policy
from server.events.scoring import (
    BoardResult,
    StandingLine,
    at_fault,
    needs_extra_board,
)
from server.events.settings import MAX_EXTRA_BOARDS, EventFormat
from server.events.store import EXTRA, StoredEvent
from server.ladder.store import HOUSE_PREFIX
from server.peers import Peer
from server.ports import Client, EventRequest, TableHost
from server.storage import EventEntrantRow, StorageError
from server.table import Table
from server.table_commands import JoinCommand, LeaveCommand, LeaveReason, TableConfig, TableError
from server.table_policy import TablePolicy
from server.table_records import game_seats
from server.table_tasks import closed_table_ok, first_of

if TYPE_CHECKING:
    from server.storage import Store, Tx

log = structlog.get_logger("server.events")

#: A Swiss entrant that forfeits this many rounds is withdrawn.
FORFEITS_TO_WITHDRAW = 2
#: Bytes of records in one `hand_records` page (well inside a 64 KiB frame).
RECORDS_PAGE_BYTES = 40_000
#: Seconds between looks at the start times of registering events.
START_POLL = 1.0
#: Seconds before an event whose task failed (or a store that was away) is tried again.
RETRY_AFTER = 30.0


class EventTables(TableHost, Protocol):
    """What the events service may do with the lobby: the ladder's `TableHost`, and find an open
    table by id (one the lobby resumed after a restart)."""

    def local(self, table_id: str) -> Table | None: ...

    async def bot_account(self, name: str) -> Account: ...


@dataclass
class Running:
    """What the task of a running event holds in memory (the rest is in the store)."""

    number: int
    cancelled: trio.CancelScope | None = None
    # (round, stored table number) -> the open table
    tables: dict[tuple[int, int], Table] = field(default_factory=dict)
    # the table and seat each account plays in the round in progress
    seats: dict[int, tuple[Table, int]] = field(default_factory=dict)
    # account -> its `event_round` of the round in progress, and when its table opens (trio
    # time): told again to a connection that checks in during the round
    notices: dict[int, tuple[EventRoundPaired, float]] = field(default_factory=dict)
    told: set[int] = field(default_factory=set)  # the accounts told it (by any connection)
    # table id -> {seat: the hold its entrant was given when the table opened}: a seat still
    # held so when its game ends was never taken (a no-show)
    holds: dict[str, dict[int, float]] = field(default_factory=dict)


class EventService:
    """The events of one server. Run `run()` in a nursery; sessions call `handle()`."""

    def __init__(
        self,
        store: Store,
        tables: EventTables,
        config: ServerConfig,
        *,
        now: Callable[[], float] = time.time,
        is_stopping: Callable[[], bool] = lambda: False,
    ) -> None:
        self.store = store
        self.tables = tables
        self.config = config
        self.now = now  # wall-clock Unix seconds (an event's `starts_at` is one)
        self._is_stopping = is_stopping
        self.checked_in: dict[tuple[int, int], Peer] = {}  # (event, account) -> its connection
        self.running: dict[int, Running] = {}
        self._gates: dict[tuple[int, int], DealGate] = {}
        self._nursery: trio.Nursery | None = None
        self._wake = trio.Event()
        self.ended: dict[int, trio.Event] = {}  # event number -> set when it is over (tests)
        self._failed: dict[int, float] = {}  # event number -> when its task last failed
        self.desk = EventDesk(store, config, self)  # the requests, answered from the store

    # ---------------------------------------------------------------- life

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Go on with the running events, then start each registering one at its time. A store
        that is away (an outage) or an event that failed is tried again a little later."""
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            task_status.started()
            # Bounded by the server's life: each pass waits for a wake-up or the poll.
            while True:
                soonest = START_POLL
                try:
                    soonest = await self._look()
                except StorageError as exc:
                    log.warning("events_not_read", error=str(exc))
                    soonest = RETRY_AFTER
                with trio.move_on_after(max(soonest, 0.01)):
                    await self._wake.wait()
                self._wake = trio.Event()

    async def _look(self) -> float:
        """Launch every running event without a task (at start, or after it failed a while ago)
        and every registering one whose start has come; returns the seconds to the next start."""
        rows = await self.store.call(
            lambda tx: [
                (r.id, r.status, r.starts_at)
                for status in ("running", "registering")
                for r in tx.events(status, 10_000)
            ]
        )
        now = self.now()
        clock = trio.current_time()
        soonest = START_POLL
        for number, status, starts_at in rows:
            if clock < self._failed.get(number, -math.inf) + RETRY_AFTER:
                continue
            if status == "running" or starts_at <= now:
                self._launch(number)
            else:
                soonest = min(soonest, starts_at - now)
        return soonest

    def _launch(self, number: int) -> None:
        if number in self.running or self._nursery is None:
            return
        self.running[number] = Running(number)
        self.ended.setdefault(number, trio.Event())
        self._nursery.start_soon(self._run_event, number)

    def wake(self) -> None:
        self._wake.set()

    def connection_closed(self, peer: Peer) -> None:
        """The connection ended: its check-ins go (its seats are held for the tables' grace)."""
        for key, held in list(self.checked_in.items()):
            if held is peer:
                del self.checked_in[key]

    async def wait_ended(self, event: str) -> None:
        """Until the event is over (for tests and tools)."""
        number = event_store.event_number(event)
        await self.ended.setdefault(number, trio.Event()).wait()

    # ---------------------------------------------------------------- an event's task

    async def _run_event(self, number: int) -> None:
        running = self.running[number]
        try:
            with trio.CancelScope() as scope:
                running.cancelled = scope
                await self._play_event(running)
        except (StorageError, ValueError, KeyError, TableError) as exc:
            # One event that cannot go on must not stop the others; it is tried again later.
            log.error("event_failed", event_id=event_store.event_id(number), error=str(exc))
            self._failed[number] = trio.current_time()
            self.running.pop(number, None)
            return
        self.running.pop(number, None)
        self.ended.setdefault(number, trio.Event()).set()

    async def _load(self, number: int) -> StoredEvent:
        event = await self.store.call(lambda tx: event_store.load(tx, number))
        if event is None:
            raise ValueError(f"event {number} is gone")
        return event

    async def _play_event(self, running: Running) -> None:
        number = running.number
        event = await self._load(number)
        if event.row.status == "registering":
            await self._start(event)
            event = await self._load(number)
        if event.row.status != "running":
            return
        log.info("event_running", event_id=event.id, round=event.row.round)
        settings = event.settings
        entrants = event_store.entrants(event)
        last = settings.rounds_for(len(entrants))
        for round_no in range(max(event.row.round, 1), last + 1):
            if event.round_status.get(round_no) != "finished":
                await self._play_round(running, event, round_no)
            event = await self._load(number)
        results = await self.store.call(lambda tx: event_store.board_results(tx, event))
        lines = event_store.standing_lines(event, results)
        await self.store.call(lambda tx: tx.set_event_status(number, "finished"))
        log.info("event_finished", event_id=event.id, winner=lines[0].key if lines else None)
        self.tell_ended(event, lines, cancelled=False)

    async def _start(self, event: StoredEvent) -> None:
        """Close registration: form the entrants, fill the field with house bots, store them."""
        settings = event.settings
        rows = [e for e in event.entrants if not e.withdrawn]
        if settings.format is EventFormat.SWISS_INDIVIDUAL:
            groups = [(r.members, r.registered_at) for r in rows]
        else:
            groups = form_pairs(rows, event.names)
        formed: list[EventEntrantRow] = []
        for index, (members, registered_at) in enumerate(groups, start=1):
            formed.append(
                EventEntrantRow(
                    key=f"e{index}",
                    members=members,
                    partner=None,
                    house=None,
                    registered_at=registered_at,
                    withdrawn=False,
                    forfeits=0,
                )
            )
        if not formed:
            await self.store.call(lambda tx: tx.set_event_status(event.row.id, "cancelled"))
            log.info("event_cancelled", event_id=event.id, why="nobody registered")
            return
        spec = self.config.fallback_bot
        house_number = 0
        for index, row in enumerate(formed):
            if len(row.members) == 1 and settings.format is not EventFormat.SWISS_INDIVIDUAL:
                # A registrant left without a partner plays with a house bot.
                house_number += 1
                name = f"{HOUSE_PREFIX}{spec}-{house_number}"[:32]
                bot = await self.tables.bot_account(name)
                formed[index] = dataclasses.replace(row, members=(row.members[0], bot.id))
        plain = [Entrant(e.key, e.members, seed) for seed, e in enumerate(formed, start=1)]
        missing = fill_field(plain, settings.format)
        size = 1 if settings.format is EventFormat.SWISS_INDIVIDUAL else 2
        for index in range(len(formed) + 1, len(formed) + missing + 1):
            bots: list[int] = []
            for _ in range(size):
                house_number += 1
                name = f"{HOUSE_PREFIX}{spec}-{house_number}"[:32]
                bots.append((await self.tables.bot_account(name)).id)
            formed.append(
                EventEntrantRow(
                    key=f"e{index}",
                    members=tuple(bots),
                    partner=None,
                    house=spec,
                    registered_at=event.row.starts_at + index,  # after every registered one
                    withdrawn=False,
                    forfeits=0,
                )
            )

        def write(tx: Tx) -> None:
            tx.remove_event_entrants(event.row.id)
            for row in formed:
                tx.add_event_entrant(event.row.id, row)
            tx.set_event_status(event.row.id, "running", 0)

        await self.store.call(write)
        log.info("event_started", event_id=event.id, entrants=len(formed), house=missing)

    def _pair(self, event: StoredEvent, round_no: int, results: list[BoardResult]) -> list[Plan]:
        settings = event.settings
        entrants = event_store.entrants(event)
        plans = event_store.plans_of(event)
        if settings.format is EventFormat.KNOCKOUT_PAIRS:
            return list(bracket(entrants, results, round_no, plans=plans, boards=settings.boards))
        if settings.format is EventFormat.SWISS_INDIVIDUAL:
            return list(pair_individual(entrants, results, round_no, event.row.seed, plans=plans))
        return list(pair_swiss(entrants, results, round_no, event.row.seed, plans=plans))

    async def _play_round(self, running: Running, event: StoredEvent, round_no: int) -> None:
        number = event.row.id
        settings = event.settings
        if round_no not in event.plans:
            results = await self.store.call(lambda tx: event_store.board_results(tx, event))
            plans = self._pair(event, round_no, results)

            def write(tx: Tx) -> None:
                event_store.store_round(tx, number, round_no, plans, "paired")
                for plan in plans:
                    tx.put_event_table(
                        number,
                        round_no,
                        plan.table_no,
                        event_store.table_id_for(number, round_no, plan.table_no),
                        None,
                    )

            await self.store.call(write)
            event = await self._load(number)
            log.info("round_paired", event_id=event.id, round=round_no, tables=len(plans))
        plans = event.plans[round_no]
        members = {e.key: e.members for e in event.entrants}
        waiting = event.round_status.get(round_no) == "paired"
        gap = settings.round_gap if waiting else 0.0
        opens_at = trio.current_time() + gap
        running.notices = {}
        running.told = set()
        for plan in plans:
            table_id = event_store.table_id_for(number, round_no, plan.table_no)
            seats = event_store.seats_of(plan, members)
            names = [event.names.get(account, "?")[:32] for _key, account in seats]
            for seat, (_key, account) in enumerate(seats):
                running.notices[account] = (
                    EventRoundPaired(
                        event=event.id,
                        round=round_no,
                        table=table_id,
                        seat=seat,
                        names=names,
                        boards=settings.boards,
                        starts_in=gap,
                    ),
                    opens_at,
                )
                peer = self.checked_in.get((number, account))
                if peer is not None and peer.connected:
                    peer.deliver(running.notices[account][0])
                    running.told.add(account)
        if waiting:
            await trio.sleep(gap)
            await self.store.call(
                lambda tx: event_store.store_round(tx, number, round_no, plans, "playing")
            )
        gate = self._gate(number, round_no, len(plans))
        running.seats = {}
        async with trio.open_nursery() as nursery:
            for plan in plans:
                nursery.start_soon(
                    partial(self._play_table, running, event, round_no, plan, extra=0, gate=gate)
                )
        if settings.format is EventFormat.KNOCKOUT_PAIRS:
            await self._extra_boards(running, event, round_no, plans)
        results = await self.store.call(lambda tx: event_store.board_results(tx, event))
        forfeited = _forfeiters(event, round_no, results)

        def finish(tx: Tx) -> None:
            event_store.store_round(tx, number, round_no, plans, "finished")
            for row in event.entrants:
                if row.key not in forfeited:
                    continue
                count = row.forfeits + 1
                withdraw = row.withdrawn or (
                    settings.format is not EventFormat.KNOCKOUT_PAIRS
                    and count >= FORFEITS_TO_WITHDRAW
                )
                tx.update_event_entrant(number, row.key, withdrawn=withdraw, forfeits=count)

        await self.store.call(finish)
        self._gates.pop((number, round_no), None)
        running.notices = {}
        log.info("round_finished", event_id=event.id, round=round_no, forfeits=sorted(forfeited))

    async def _extra_boards(
        self, running: Running, event: StoredEvent, round_no: int, plans: list[Plan]
    ) -> None:
        """A knockout match level after its boards plays extra boards, one at a time."""
        boards = event.settings.boards
        for extra in range(1, MAX_EXTRA_BOARDS + 1):
            now_event = await self._load(event.row.id)
            results = await self.store.call(
                lambda tx: event_store.board_results(tx, now_event)  # noqa: B023 (awaited at once)
            )
            level = [
                plan
                for plan in plans
                if needs_extra_board(
                    [r for r in results if r.round_no == round_no and r.table_no == plan.table_no],
                    boards,
                )
            ]
            if not level:
                return
            async with trio.open_nursery() as nursery:
                for plan in level:
                    nursery.start_soon(
                        partial(
                            self._play_table,
                            running,
                            now_event,
                            round_no,
                            plan,
                            extra=extra,
                            gate=None,
                        )
                    )

    def _gate(self, number: int, round_no: int, tables: int) -> DealGate | None:
        """The round's duplicate gate (spectators see a deal once every table has played it)."""
        if tables < 2:
            return None
        found = self._gates.get((number, round_no))
        if found is None:
            found = self._gates[(number, round_no)] = DealGate(tables)
        return found

    async def _play_table(
        self,
        running: Running,
        event: StoredEvent,
        round_no: int,
        plan: Plan,
        *,
        extra: int,
        gate: DealGate | None,
    ) -> None:
        """Open (or find, after a restart) one table of the round, seat the checked-in entrants,
        and wait for its game to end. Never raises what a table or the store raise: the round's
        other tables go on."""
        number = event.row.id
        stored_no = EXTRA * extra + plan.table_no
        table_id = event_store.table_id_for(number, round_no, stored_no)
        members = {e.key: e.members for e in event.entrants}
        seats = event_store.seats_of(plan, members)
        try:
            table = self.tables.local(table_id)
            if table is None:
                status = await self.store.call(lambda tx: _game_status(tx, table_id))
                if status is not None:
                    return  # played before a restart (or cut short): its boards are stored
                table = await self._open_table(
                    running, event, round_no, plan, extra=extra, gate=gate
                )
            running.tables[(round_no, stored_no)] = table
            for seat, (_key, account) in enumerate(seats):
                running.seats[account] = (table, seat)
                await self._seat(number, account, table, seat)
            await first_of(table.game_over, table.ended)
            for _key, account in seats:
                peer = self.checked_in.get((number, account))
                if peer is not None:
                    with closed_table_ok():
                        await self.tables.submit(
                            table, LeaveCommand(peer=peer, reason=LeaveReason.RELEASED)
                        )
                running.seats.pop(account, None)
            game_id = table.game_id
            no_shows = _never_taken(table, running.holds.pop(table_id, {}))
            if no_shows:
                log.info("event_no_show", table=table_id, seats=no_shows)
            given_up = game_seats(
                [
                    dataclasses.replace(state, abandoned=True) if seat in no_shows else state
                    for seat, state in enumerate(table.seats)
                ]
            )

            def write(tx: Tx) -> None:
                if no_shows and game_id is not None:
                    # Its entrant never came: the fallback played the seat from the first card,
                    # which the event counts as a forfeit (read back from the game's seats).
                    tx.update_game_seats(game_id, given_up)
                tx.put_event_table(number, round_no, stored_no, table_id, game_id)

            await self.store.call(write)
        except (TableError, StorageError) as exc:
            log.error("event_table_failed", table=table_id, error=str(exc))
        finally:
            if gate is not None:
                gate.finished(plan.table_no - 1)

    async def _seat(self, number: int, account: int, table: Table, seat: int) -> None:
        peer = self.checked_in.get((number, account))
        if peer is None or not peer.connected:
            return
        state = table.seats[seat]
        if state.account is None or state.account.id != account or state.abandoned:
            return
        with closed_table_ok():
            await self.tables.submit(
                table, JoinCommand(peer=peer, account=state.account, seat=seat)
            )

    def _config(self, event: StoredEvent, round_no: int, stored_no: int, extra: int) -> TableConfig:
        settings = event.settings
        options = settings.table_options()
        if extra:
            options = {**options, "max_hands": 1}
        members = {e.key: e.members for e in event.entrants}
        plan = _plan_of(event, round_no, stored_no % EXTRA)
        seats = event_store.seats_of(plan, members)
        house = _house_seats(event, seats)
        return TableConfig(
            table_id=event_store.table_id_for(event.row.id, round_no, stored_no),
            game=settings.ruleset().game,
            preset=settings.preset,
            options=options,
            players=4,
            bots=tuple(sorted(house)),
            human_turn_ms=settings.human_turn_ms,
            bot_turn_ms=settings.bot_turn_ms,
            grace_s=settings.grace_s,
            builtin_bot=self.config.fallback_bot,
            fallback_bot=self.config.fallback_bot,
            event=event_store.table_label(event.row.id, round_no, stored_no),
        )

    def _policy(
        self, event: StoredEvent, round_no: int, stored_no: int, gate: DealGate | None
    ) -> TablePolicy:
        extra, table_no = divmod(stored_no, EXTRA)
        plan = _plan_of(event, round_no, table_no)
        members = {e.key: e.members for e in event.entrants}
        seats = event_store.seats_of(plan, members)
        house = _house_seats(event, seats)
        reserved = {s: a for s, (_key, a) in enumerate(seats) if s not in house}
        return event_policy(
            event.settings,
            event.row.secret,
            round_no,
            house=house,
            reserved=reserved,
            gate=gate,
            index=table_no - 1,
            first_deal=0 if extra == 0 else event.settings.boards + extra - 1,
        )

    async def _open_table(
        self,
        running: Running,
        event: StoredEvent,
        round_no: int,
        plan: Plan,
        *,
        extra: int,
        gate: DealGate | None,
    ) -> Table:
        """A new table for one table of the round: every seat held for its entrant for the
        event's `no_show_grace` (a withdrawn entrant's given to the fallback at once)."""
        stored_no = EXTRA * extra + plan.table_no
        config = self._config(event, round_no, stored_no, extra)
        policy = self._policy(event, round_no, stored_no, gate)
        if self.tables.free_table_slots() <= 0:
            raise TableError(ErrorCode.SERVER_FULL, "the server has no room for an event's table")
        table = self.tables.new_table(config, policy)
        members = {e.key: e.members for e in event.entrants}
        withdrawn = {e.key for e in event.entrants if e.withdrawn}
        settings = event.settings
        now = trio.current_time()
        holds = running.holds.setdefault(config.table_id, {})
        for seat, (key, account) in enumerate(event_store.seats_of(plan, members)):
            if seat in config.bots:
                continue
            state = table.seats[seat]
            name = event.names.get(account, "?")
            state.account = Account(account, name, account in event.bots, False)
            if key in withdrawn:
                state.abandoned = True  # its remaining rounds are forfeited
            else:
                # Held as for a dropped player, until `no_show_grace` from now.
                state.dropped_at = holds[seat] = now + settings.no_show_grace - settings.grace_s
        await self.tables.adopt(table)
        await self.store.call(
            lambda tx: tx.put_event_table(
                event.row.id, round_no, stored_no, config.table_id, table.game_id
            )
        )
        return table

    async def table_policy(self, config: TableConfig) -> TablePolicy | None:
        """The policy of an event's table the lobby resumes after a restart (None: the event
        or its round is gone: the table plays on as a lobby table)."""
        if config.event is None:
            return None
        try:
            number, round_no, stored_no = event_store.parse_label(config.event)
            event = await self._load(number)
            plans = event.plans.get(round_no, [])
            gate = None
            if stored_no < EXTRA:
                gate = self._gate(number, round_no, len(plans))
                if gate is not None:
                    # Tables of the round already over let the others' spectators see it all.
                    done = await self.store.call(
                        lambda tx: [
                            p.table_no
                            for p in plans
                            if _game_status(
                                tx, event_store.table_id_for(number, round_no, p.table_no)
                            )
                            == "finished"
                        ]
                    )
                    for table_no in done:
                        gate.finished(table_no - 1)
            return self._policy(event, round_no, stored_no, gate)
        except (ValueError, KeyError, StorageError) as exc:
            log.error("event_table_not_resumed", table=config.table_id, error=str(exc))
            return None

    def check_in(self, number: int, account: int, peer: Peer) -> str | None:
        """`peer` plays `account`'s seats in event `number` from now on; if a round is in
        progress its seat is taken at once: returns that table's id."""
        self.checked_in[(number, account)] = peer
        running = self.running.get(number)
        if running is None:
            return None
        if account not in running.notices:
            return None
        at = running.seats.get(account)
        if self._nursery is not None:
            self._nursery.start_soon(self._late_check_in, number, account, peer)
        return None if at is None else at[0].table_id

    async def _late_check_in(self, number: int, account: int, peer: Peer) -> None:
        """A connection checked in while its round is paired or played: it is told its table as
        the others were (after the `ok`, which its session sends first; not again to an account
        told it already, on a connection now gone), and seated if the table is open."""
        running = self.running.get(number)
        if running is None or account not in running.notices:
            return
        if account not in running.told:  # a connection back after a drop was told already
            notice, opens_at = running.notices[account]
            left = max(0.0, opens_at - trio.current_time())
            peer.deliver(dataclasses.replace(notice, starts_in=round(left, 3)))
            running.told.add(account)
        at = running.seats.get(account)
        if at is not None:
            await self._seat(number, account, at[0], at[1])

    def cancel(self, event: StoredEvent) -> None:
        """The event is cancelled (stored so already): its rounds stop here (a table in play
        finishes its game, which no longer counts), and its checked-in entrants are told."""
        running = self.running.get(event.row.id)
        if running is not None and running.cancelled is not None:
            running.cancelled.cancel()
        self.tell_ended(event, [], cancelled=True)

    async def handle(
        self, client: Client, request: EventRequest, *, operator: bool = False
    ) -> Message:
        """The reply to an events request (`server.events.desk`)."""
        return await self.desk.handle(client, request, operator=operator)

    def tell_ended(self, event: StoredEvent, lines: list[StandingLine], *, cancelled: bool) -> None:
        message = EventEnded(
            event=event.id,
            standings=[wire_standing(event, line) for line in lines[:ENDED_STANDINGS]],
            cancelled=cancelled,
        )
        number = event.row.id
        for (held_event, _account), peer in list(self.checked_in.items()):
            if held_event == number and peer.connected:
                peer.deliver(message)
        for key in [k for k in self.checked_in if k[0] == number]:
            del self.checked_in[key]


# ---------------------------------------------------------------- helpers


def _house_seats(
    event: StoredEvent, seats: list[tuple[str, int]]
) -> dict[int, tuple[str, Account]]:
    """The seats the server's house bots play (their accounts are `house:SPEC-N`), with the bot
    spec and account of each."""
    out = {}
    for seat, (_key, account) in enumerate(seats):
        name = event.names.get(account, "")
        if name.startswith(HOUSE_PREFIX):
            spec = name[len(HOUSE_PREFIX) :].rsplit("-", 1)[0]
            out[seat] = (spec, Account(account, name, True, False))
    return out


def _never_taken(table: Table, holds: dict[int, float]) -> list[int]:
    """The seats still under the hold they were opened with: their entrant never sat down."""
    return [
        seat
        for seat, held in holds.items()
        if table.seats[seat].dropped_at == held and not table.seats[seat].abandoned
    ]


def _plan_of(event: StoredEvent, round_no: int, table_no: int) -> Plan:
    for plan in event.plans.get(round_no, []):
        if plan.table_no == table_no:
            return plan
    raise KeyError(f"{event.id} has no table {table_no} in round {round_no}")


def _game_status(tx: Tx, table_id: str) -> str | None:
    game_id = tx.latest_game_at(table_id)
    return None if game_id is None else tx.game_status(game_id)


def _forfeiters(event: StoredEvent, round_no: int, results: list[BoardResult]) -> set[str]:
    """The entrants that forfeited (some board of) round `round_no` (who is at fault is the
    scoring's rule, `at_fault`)."""
    out: set[str] = set()
    plans = {p.table_no: p for p in event.plans.get(round_no, [])}
    for result in results:
        plan = plans.get(result.table_no)
        if result.round_no == round_no and plan is not None:
            out |= at_fault(plan, result)
    return out


__all__ = ["EventRequest", "EventService", "EventTables"]
