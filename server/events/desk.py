"""The events' requests: announcing, listing, showing, registering, withdrawing, checking in,
cancelling, and an event's hand records, answered from the store (so they work for every event,
running or not, and on a server restarted since).

`EventDesk` judges who may do what and answers with the reply (or an `error` with its code and a
sentence: nothing changed); what touches an event in progress (a check-in that takes a seat at
once, a cancel that stops its rounds) it asks of the service that runs the events, through the
narrow `EventRunner`.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

import structlog

from protocol.errors import ErrorCode
from protocol.event_messages import (
    EVENT_LIST_LIMIT,
    EventBoard,
    EventCancel,
    EventCreate,
    EventEntrant,
    EventInfo,
    EventList,
    EventMatch,
    EventPlay,
    EventRecords,
    EventRegister,
    Events,
    EventShow,
    EventStanding,
    EventSummary,
    EventTable,
    EventWithdraw,
    HandRecords,
)
from protocol.event_messages import EventEntry as WireEntry
from protocol.event_messages import EventFormat as WireFormat
from protocol.event_messages import EventRound as WireRound
from protocol.event_messages import EventStatus as WireStatus
from protocol.event_messages import RoundStatus as WireRoundStatus
from protocol.messages import Error, Message, Ok
from protocol.wire import encode_body
from server.accounts import Account
from server.config import ServerConfig
from server.events import store as event_store
from server.events.scoring import StandingLine, knockout_matches
from server.events.settings import EntryKind, EventFormat, EventSettings
from server.events.store import StoredEvent
from server.peers import Peer
from server.ports import Client, EventRequest
from server.storage import EventEntrantRow

if TYPE_CHECKING:
    from server.storage import Store, Tx

log = structlog.get_logger("server.events")

#: Bytes of records in one `hand_records` page (well inside a 64 KiB frame).
RECORDS_PAGE_BYTES = 40_000
#: Bytes an `event_info` may take (a 64 KiB frame, with room to spare).
INFO_BUDGET = 60_000


class Refusal(Exception):
    """A request refused: `code` and a sentence (answered with `error`, nothing changed)."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class EventRunner(Protocol):
    """What the desk asks of the service that runs the events."""

    now: Callable[[], float]  # wall-clock Unix seconds

    def wake(self) -> None:
        """Look at the events' start times again (one was announced)."""
        ...

    def check_in(self, number: int, account: int, peer: Peer) -> str | None:
        """`peer` plays `account`'s seats in event `number`; the id of the table it is seated at
        now (a round in progress), if any."""
        ...

    def cancel(self, event: StoredEvent) -> None:
        """The event is cancelled (stored so): stop its rounds and tell its entrants."""
        ...


def wire_standing(event: StoredEvent, line: StandingLine) -> EventStanding:
    """A line of the standings as the protocol carries it."""
    return EventStanding(
        place=line.place,
        key=line.key,
        names=event_store.names_of(event, line.key),
        percent=line.percent,
        boards=line.boards,
        margin=line.margin,
        forfeits=line.forfeits,
    )


def fitted(info: EventInfo, budget: int = INFO_BUDGET) -> EventInfo:
    """`info` as it fits one frame: a big event's oldest rounds lose their boards first, then
    their tables (the standings, the matches and the latest rounds stay; `event_records` has
    every board)."""
    rounds = list(info.rounds)
    for keep_tables in (True, False):
        for index in range(len(rounds)):
            if len(encode_body(dataclasses.replace(info, rounds=rounds))) <= budget:
                return dataclasses.replace(info, rounds=rounds)
            old = rounds[index]
            tables = [dataclasses.replace(t, boards=[]) for t in old.tables] if keep_tables else []
            rounds[index] = dataclasses.replace(old, tables=tables)
    return dataclasses.replace(info, rounds=rounds)


#: Events one account (not the operator) may have announced and not over at once: on a server
#: whose `events_open` lets any account announce, one account cannot fill the events list or
#: the server's tables with events of its own.
MAX_OPEN_EVENTS_PER_HOST = 4


class EventDesk:
    """The answers to the events' requests."""

    def __init__(self, store: Store, config: ServerConfig, runner: EventRunner) -> None:
        self.store = store
        self.config = config
        self.runner = runner

    async def handle(
        self, client: Client, request: EventRequest, *, operator: bool = False
    ) -> Message:
        """The reply to an events request from `client` (the session delivers it); `operator`:
        the connection sent a good `operator_login` (it may announce and cancel any event)."""
        rid = request.id
        try:
            if isinstance(request, EventCreate):
                return await self._create(client, request, operator)
            if isinstance(request, Events):
                return await self._list(request)
            if isinstance(request, EventShow):
                return await self._show(request.event, rid)
            if isinstance(request, EventRecords):
                return await self._records(request)
            if isinstance(request, EventCancel):
                return await self._cancel(client, request, operator)
            account = client.account
            if account is None or account.is_guest:
                raise Refusal(
                    ErrorCode.NOT_AUTHENTICATED, "log in (not as a guest) to take part in events"
                )
            if isinstance(request, EventRegister):
                return await self._register(account, request)
            if isinstance(request, EventWithdraw):
                return await self._withdraw(account, request)
            return await self._check_in(client, account, request)
        except Refusal as refusal:
            return Error(id=rid, code=refusal.code.value, message=refusal.message)

    async def _event(self, event: str) -> StoredEvent:
        try:
            number = event_store.event_number(event)
        except ValueError:
            raise Refusal(ErrorCode.NO_SUCH_EVENT, f"no event is called {event!r}") from None
        found = await self.store.call(lambda tx: event_store.load(tx, number))
        if found is None:
            raise Refusal(ErrorCode.NO_SUCH_EVENT, f"no event is called {event!r}")
        return found

    async def _create(self, client: Client, request: EventCreate, operator: bool) -> Message:
        account = client.account
        if not operator:
            if account is None or account.is_guest:
                raise Refusal(ErrorCode.NOT_AUTHENTICATED, "log in to announce an event")
            if not self.config.events_open:
                raise Refusal(
                    ErrorCode.NOT_ALLOWED,
                    "only the operator may announce events on this server (events_open is off)",
                )
        if not operator and account is not None:
            host_id = account.id
            hosted = await self.store.call(lambda tx: tx.open_events_hosted(host_id))
            if hosted >= MAX_OPEN_EVENTS_PER_HOST:
                raise Refusal(
                    ErrorCode.NOT_ALLOWED,
                    f"you have {hosted} events announced and not over (the most an account may"
                    " have at once): cancel one or wait for one to end",
                )
        knockout = request.format is WireFormat.KNOCKOUT_PAIRS
        values: dict[str, object] = {
            "format": request.format.value,
            "rounds": 0 if knockout else request.rounds,
            "boards": request.boards,
            "options": dict(request.options),
        }
        for name in (
            "preset",
            "human_turn_ms",
            "bot_turn_ms",
            "no_show_grace",
            "round_gap",
            "max_entrants",
            "registration_opens",
        ):
            value = getattr(request, name)
            if value is not None:
                values[name] = value
        if request.entry is not None:
            values["entry"] = request.entry.value
        values["grace_s"] = float(self.config.reconnect_grace)
        try:
            settings = EventSettings.from_json(values)
        except (ValueError, TypeError) as exc:
            raise Refusal(ErrorCode.BAD_EVENT, str(exc)) from None
        if request.starts_at < self.runner.now() - 60:
            raise Refusal(ErrorCode.BAD_EVENT, "starts_at is in the past")
        if settings.registration_opens >= request.starts_at:
            raise Refusal(
                ErrorCode.BAD_EVENT,
                "registration_opens must be before starts_at (registration closes at the start)",
            )
        host = None if account is None or account.is_guest else account.id
        secret = secrets.token_bytes(32)
        seed = secrets.randbits(62)
        number = await self.store.call(
            lambda tx: event_store.create(
                tx,
                name=request.name,
                host=host,
                settings=settings,
                secret=secret,
                seed=seed,
                starts_at=request.starts_at,
            )
        )
        log.info("event_announced", event_id=event_store.event_id(number), host=host)
        self.runner.wake()
        return await self._show(event_store.event_id(number), request.id)

    async def _list(self, request: Events) -> Message:
        status = None if request.status is None else request.status.value
        rows = await self.store.call(
            lambda tx: [
                event_store.load(tx, row.id, brief=True)
                for row in tx.events(status, EVENT_LIST_LIMIT)
            ]
        )
        return EventList(
            id=request.id, events=[self._summary(event) for event in rows if event is not None]
        )

    def _summary(self, event: StoredEvent) -> EventSummary:
        row = event.row
        settings = event.settings
        live = [e for e in event.entrants if not e.withdrawn]
        count = len(live)
        if not event.started and settings.format is not EventFormat.SWISS_INDIVIDUAL:
            count = len(form_pairs(live, event.names))
        return EventSummary(
            event=event.id,
            name=row.name[:64],
            format=WireFormat(settings.format.value),
            status=WireStatus(row.status),
            starts_at=row.starts_at,
            entrants=count,
            rounds=settings.rounds_for(max(count, 2)),
            round=row.round,
            boards=settings.boards,
            preset=settings.preset[:64],
            host=None if row.host is None else event.names.get(row.host),
            entry=WireEntry(settings.entry.value),
            registration_opens=settings.registration_opens or None,
        )

    async def _show(self, event_name: str, rid: int | None) -> Message:
        event = await self._event(event_name)
        results = await self.store.call(lambda tx: event_store.board_results(tx, event))
        entrants = [
            EventEntrant(
                key=e.key,
                names=[event.names.get(m, "?")[:32] for m in e.members][:2],
                house=e.house is not None,
                withdrawn=e.withdrawn,
            )
            for e in event.entrants
        ]
        members = {e.key: e.members for e in event.entrants}
        tables_by = {(t.round, t.table_no): t for t in event.tables}
        rounds = []
        for round_no in sorted(event.plans):
            tables = []
            for plan in event.plans[round_no]:
                seats = event_store.seats_of(plan, members)
                stored = tables_by.get((round_no, plan.table_no))
                boards = sorted(
                    (r for r in results if r.round_no == round_no and r.table_no == plan.table_no),
                    key=lambda r: r.board,
                )
                tables.append(
                    EventTable(
                        table_no=plan.table_no,
                        table=None if stored is None else stored.table_id,
                        seats=[event.names.get(a, "?")[:32] for _k, a in seats],
                        entrants=[k for k, _a in seats],
                        boards=[
                            EventBoard(board=r.board, ns=r.ns_points, ew=r.ew_points)
                            for r in boards
                        ],
                    )
                )
            rounds.append(
                WireRound(
                    round=round_no,
                    status=WireRoundStatus(event.round_status.get(round_no, "paired")),
                    tables=tables,
                )
            )
        lines = event_store.standing_lines(event, results) if results else []
        matches = []
        if event.settings.format is EventFormat.KNOCKOUT_PAIRS and event.plans:
            for line in knockout_matches(
                event_store.entrants(event),
                event_store.plans_of(event),
                results,
                event.settings.boards,
            ):
                matches.append(
                    EventMatch(
                        round=line.round_no,
                        table_no=line.table_no,
                        a=line.a,
                        b=line.b,
                        won_a=line.boards_won_a,
                        won_b=line.boards_won_b,
                        winner=line.winner,
                    )
                )
        return fitted(
            EventInfo(
                id=rid,
                summary=self._summary(event),
                entrants=entrants,
                rounds=rounds,
                standings=[wire_standing(event, line) for line in lines],
                matches=matches,
            )
        )

    async def _records(self, request: EventRecords) -> Message:
        event = await self._event(request.event)
        page, total, after = await self.store.call(
            lambda tx: event_store.records(tx, event, request.start, RECORDS_PAGE_BYTES)
        )
        return HandRecords(id=request.id, event=event.id, records=page, total=total, next=after)

    async def _register(self, account: Account, request: EventRegister) -> Message:
        event = await self._event(request.event)
        settings = event.settings
        if event.started:
            raise Refusal(ErrorCode.EVENT_CLOSED, f"{event.id} has started: registration is closed")
        opens = settings.registration_opens
        if self.runner.now() < opens:
            when = datetime.fromtimestamp(opens, UTC).strftime("%Y-%m-%d %H:%M UTC")
            raise Refusal(ErrorCode.EVENT_CLOSED, f"registration for {event.id} opens at {when}")
        if settings.entry is EntryKind.PEOPLE and account.is_bot:
            raise Refusal(ErrorCode.NOT_ALLOWED, f"{event.id} is for people: bots may not enter")
        if settings.entry is EntryKind.BOTS and not account.is_bot:
            raise Refusal(ErrorCode.NOT_ALLOWED, f"{event.id} is for bots: people may not enter")
        key = f"a{account.id}"
        mine = next((e for e in event.entrants if e.key == key), None)
        if mine is not None and not mine.withdrawn:
            raise Refusal(ErrorCode.ALREADY_REGISTERED, f"you are registered for {event.id}")
        partner = request.partner
        individual = settings.format is EventFormat.SWISS_INDIVIDUAL
        if partner is not None and not individual:
            if partner.casefold() == account.name.casefold():
                raise Refusal(ErrorCode.INVALID_FIELD, "name someone else as your partner")
            named = partner
            row = await self.store.call(lambda tx: tx.account_by_name(named))
            if row is None or row.is_guest:
                raise Refusal(ErrorCode.NO_SUCH_ACCOUNT, f"no account is named {partner!r}")
            partner = row.name
            # Taken only by a pair both of whose accounts named each other: the server's own
            # partnering of registrants still alone is for the start, and may yet change.
            live = [e for e in event.entrants if not e.withdrawn]
            if row.id in mutual_partners(live, event.names):
                raise Refusal(
                    ErrorCode.ALREADY_REGISTERED,
                    f"{partner} is already in a pair of {event.id}",
                )
        row_ = EventEntrantRow(
            key=key,
            members=(account.id,),
            partner=None if individual else partner,
            house=None,
            registered_at=self.runner.now(),
            withdrawn=False,
            forfeits=0,
        )
        live = [e for e in event.entrants if not e.withdrawn and e.key != key]
        names = {**event.names, account.id: account.name}
        after = len(live) + 1 if individual else len(form_pairs([*live, row_], names))
        if after > settings.max_entrants:
            raise Refusal(
                ErrorCode.EVENT_FULL,
                f"{event.id} has {settings.max_entrants} entrants: it is full",
            )

        def write(tx: Tx) -> None:
            if mine is not None:  # withdrawn before, and back: registered afresh
                tx.remove_event_entrant(event.row.id, key)
            tx.add_event_entrant(event.row.id, row_)

        await self.store.call(write)
        log.info("event_registered", event_id=event.id, account=account.name, partner=partner)
        note = f"registered for {event.id}"
        if partner is not None:
            note += f" with {partner} (once {partner} names you too)"
        return Ok(id=request.id, note=note)

    async def _withdraw(self, account: Account, request: EventWithdraw) -> Message:
        event = await self._event(request.event)
        if event.row.status in ("finished", "cancelled"):
            raise Refusal(ErrorCode.EVENT_CLOSED, f"{event.id} is over")
        mine = next(
            (e for e in event.entrants if account.id in e.members and not e.withdrawn), None
        )
        if mine is None:
            raise Refusal(ErrorCode.NOT_REGISTERED, f"you are not an entrant of {event.id}")
        await self.store.call(
            lambda tx: tx.update_event_entrant(
                event.row.id, mine.key, withdrawn=True, forfeits=mine.forfeits
            )
        )
        log.info("event_withdrawn", event_id=event.id, account=account.name)
        if event.started:
            return Ok(id=request.id, note="withdrawn: your remaining rounds are forfeited")
        return Ok(id=request.id, note=f"withdrawn from {event.id}")

    async def _check_in(self, client: Client, account: Account, request: EventPlay) -> Message:
        event = await self._event(request.event)
        if event.row.status in ("finished", "cancelled"):
            raise Refusal(ErrorCode.EVENT_CLOSED, f"{event.id} is over")
        if not any(account.id in e.members and not e.withdrawn for e in event.entrants):
            raise Refusal(ErrorCode.NOT_REGISTERED, f"you are not an entrant of {event.id}")
        table = self.runner.check_in(event.row.id, account.id, client.peer)
        if table is not None:
            return Ok(id=request.id, note=f"checked in: you play table {table} now")
        return Ok(id=request.id, note=f"checked in: you are seated when {event.id}'s round opens")

    async def _cancel(self, client: Client, request: EventCancel, operator: bool) -> Message:
        event = await self._event(request.event)
        account = client.account
        if not operator and (account is None or account.id != event.row.host):
            raise Refusal(
                ErrorCode.NOT_ALLOWED, "only the event's host or the operator may cancel it"
            )
        if event.row.status in ("finished", "cancelled"):
            raise Refusal(ErrorCode.EVENT_CLOSED, f"{event.id} is over")
        await self.store.call(lambda tx: tx.set_event_status(event.row.id, "cancelled"))
        self.runner.cancel(event)
        log.info("event_cancelled", event_id=event.id)
        return Ok(id=request.id, note=f"{event.id} is cancelled")


def mutual_partners(rows: list[EventEntrantRow], names: dict[int, str]) -> set[int]:
    """The accounts of `rows` in a pair both of whose accounts named each other."""
    named = {names.get(r.members[0], "").casefold(): r for r in rows}
    out: set[int] = set()
    for row in rows:
        wanted = named.get((row.partner or "").casefold())
        me = names.get(row.members[0], "").casefold()
        if wanted is not None and wanted.key != row.key and (wanted.partner or "").casefold() == me:
            out.update((row.members[0], wanted.members[0]))
    return out


def form_pairs(
    rows: list[EventEntrantRow], names: dict[int, str]
) -> list[tuple[tuple[int, ...], float]]:
    """Pairs from registrations, in order of registration: two accounts that named each other
    are a pair (at the later one's time); the others are partnered in the order they came."""
    by_name = {names.get(r.members[0], "").casefold(): r for r in rows}
    paired: set[str] = set()
    pairs: list[tuple[tuple[int, ...], float]] = []
    singles: list[EventEntrantRow] = []
    for row in rows:
        if row.key in paired:
            continue
        wanted = by_name.get((row.partner or "").casefold())
        me = names.get(row.members[0], "").casefold()
        if (
            wanted is not None
            and wanted.key not in paired
            and wanted.key != row.key
            and (wanted.partner or "").casefold() == me
        ):
            paired.update((row.key, wanted.key))
            first, second = sorted((row, wanted), key=lambda r: r.registered_at)
            pairs.append(((first.members[0], second.members[0]), second.registered_at))
        else:
            singles.append(row)
    # Those without a partner: two by two, in order; a last one alone is partnered with a house
    # bot at the start (`EventService._start`).
    for i in range(0, len(singles) - 1, 2):
        a, b = singles[i], singles[i + 1]
        pairs.append(((a.members[0], b.members[0]), b.registered_at))
    if len(singles) % 2:
        last = singles[-1]
        pairs.append(((last.members[0],), last.registered_at))
    pairs.sort(key=lambda p: p[1])
    return pairs
