"""The events' persistence: what an event keeps, as functions over a transaction (`server.storage.Tx`,
where the SQL is written once for both engines).

Kept (migration 11, server/storage/schema.py): each event with its settings, secret and seed, its
status and the round in progress; its entrants (registrations before the start, keyed `a<id>`; the
entrants formed at the start, keyed `e1`, `e2`, ...); each round's plan as it was made; each
round's tables with their games. Results are never kept apart: `board_results` reads them back
from the games' hand records (each hand's points per side), seats and actions (a seat its player
gave up is forfeited from the hand in which the server first acted for it for good), so the
standings rebuild from the stored boards bit for bit.

A knockout match tied after its boards plays extra boards one at a time, each at a table of its
own: such a table is stored as table number `EXTRA * k + table_no` (k = 1, 2, 3), and its board is
board `boards + k` of the match.
"""

from __future__ import annotations

import bisect
import itertools
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from server.events.plans import (
    Entrant,
    IndividualTable,
    Plan,
    Plans,
    plan_from_json,
    plan_to_json,
)
from server.events.scoring import BoardResult, StandingLine, standings
from server.events.settings import EventFormat, EventSettings
from server.storage import EventEntrantRow, EventRow, EventTableRow, Tx

#: Table numbers of a knockout's extra boards: `EXTRA * k + table_no` for the k-th extra board.
EXTRA = 1000


def event_id(number: int) -> str:
    return f"E{number}"


def event_number(event: str) -> int:
    """The row number of an event id `E<n>`; raises `ValueError` for anything else."""
    if not event.startswith("E") or not event[1:].isdigit():
        raise ValueError(f"{event!r} is not an event id")
    return int(event[1:])


def table_label(number: int, round_no: int, table_no: int) -> str:
    """`TableConfig.event` of a table: which event, round and table it is."""
    return f"E{number}/r{round_no}/t{table_no}"


def parse_label(label: str) -> tuple[int, int, int]:
    """(event number, round, table number) of a `table_label`; raises `ValueError`."""
    try:
        event, round_part, table_part = label.split("/")
        if not (round_part.startswith("r") and table_part.startswith("t")):
            raise ValueError(label)
        return event_number(event), int(round_part[1:]), int(table_part[1:])
    except ValueError:
        raise ValueError(f"{label!r} is not an event's table") from None


def table_id_for(number: int, round_no: int, table_no: int) -> str:
    """The server's table id of an event's table (fits `TableId`: letters, digits, `-`)."""
    return f"E{number}-r{round_no}-t{table_no}"


@dataclass
class StoredEvent:
    """An event as stored: its row, settings, entrants, plans and tables."""

    row: EventRow
    settings: EventSettings
    entrants: list[EventEntrantRow]
    plans: dict[int, list[Plan]] = field(default_factory=dict)
    round_status: dict[int, str] = field(default_factory=dict)
    tables: list[EventTableRow] = field(default_factory=list)
    names: dict[int, str] = field(default_factory=dict)  # account id -> name
    bots: set[int] = field(default_factory=set)  # the accounts that are bots

    @property
    def id(self) -> str:
        return event_id(self.row.id)

    @property
    def started(self) -> bool:
        return self.row.status != "registering"


def create(
    tx: Tx,
    *,
    name: str,
    host: int | None,
    settings: EventSettings,
    secret: bytes,
    seed: int,
    starts_at: float,
) -> int:
    return tx.insert_event(
        name=name,
        host=host,
        settings=settings.to_json(),
        secret=secret,
        seed=seed,
        starts_at=starts_at,
    )


def load(tx: Tx, number: int, *, brief: bool = False) -> StoredEvent | None:
    """An event with everything stored of it, or None for no such event; `brief`: what a listing
    shows (its row, settings and entrants, and the names only of the host and, before the start,
    of the registrants, whom the count of pairs needs). Raises `ValueError` if its stored
    settings or plans no longer read."""
    row = tx.event(number)
    if row is None:
        return None
    event = StoredEvent(
        row=row, settings=EventSettings.from_json(row.settings), entrants=tx.event_entrants(number)
    )
    ids = {m for e in event.entrants for m in e.members}
    if brief:
        ids = set() if event.started else ids
    else:
        for round_no, plan, status in tx.event_rounds(number):
            event.plans[round_no] = [plan_from_json(p) for p in plan]
            event.round_status[round_no] = status
        event.tables = tx.event_tables(number)
    if row.host is not None:
        ids.add(row.host)
    for account_id in sorted(ids):
        account = tx.account_by_id(account_id)
        if account is not None:
            event.names[account_id] = account.name
            if account.is_bot:
                event.bots.add(account_id)
    return event


def store_round(tx: Tx, number: int, round_no: int, plans: Sequence[Plan], status: str) -> None:
    tx.put_event_round(number, round_no, [plan_to_json(p) for p in plans], status)
    tx.set_event_status(number, "running", round_no)


def board_results(tx: Tx, event: StoredEvent) -> list[BoardResult]:
    """Every board finished so far, read from the games of the event's tables: each hand's
    points per side from its hand record, forfeits from the seats its players gave up (from the
    board on which each was given up: `given_up_from`)."""
    out: list[BoardResult] = []
    individual = event.settings.format is EventFormat.SWISS_INDIVIDUAL
    for table in event.tables:
        game_id = table.game_id
        if game_id is None:
            game_id = tx.latest_game_at(table.table_id)
        if game_id is None:
            continue
        seats = tx.game_seats(game_id) or []
        given_up = [i for i, s in enumerate(seats) if s.get("abandoned")]
        hands = list(tx.hand_records(game_id))
        since = given_up_from(tx, game_id, given_up, hands) if given_up else {}
        extra, table_no = divmod(table.table_no, EXTRA)
        first_board = 1 if extra == 0 else event.settings.boards + extra
        for index, record in enumerate(hands):
            delta = record.get("score", {}).get("delta", [0, 0])
            gone = frozenset(seat for seat, board in since.items() if index >= board)
            out.append(
                BoardResult(
                    round_no=table.round,
                    table_no=table_no,
                    board=first_board + index,
                    ns_points=int(delta[0]),
                    ew_points=int(delta[1]),
                    forfeit_ns=bool(gone & {0, 2}),
                    forfeit_ew=bool(gone & {1, 3}),
                    forfeit_seats=gone if individual else frozenset(),
                )
            )
    return out


def given_up_from(
    tx: Tx, game_id: int, seats: Sequence[int], hands: Sequence[Mapping[str, Any]]
) -> dict[int, int]:
    """For each seat of `seats` (given up by its player), the index of the first hand it did not
    play to the end: the hand of its player's last action if the server acted for the seat after
    it in that hand, else the next one (0 for a seat its player never acted at). Read from the
    stored actions (`source`: a player's own, or the server's) laid over the hands' records."""
    stored = tx.load_game(game_id)
    if stored is None:
        return dict.fromkeys(seats, 0)
    # Where each hand's actions end in the game's order of actions.
    ends = list(itertools.accumulate(len(h.get("actions", ())) for h in hands))
    if not ends or ends[-1] > len(stored.actions):
        return dict.fromkeys(seats, 0)  # records that do not line up: the whole table

    def hand_of(position: int) -> int:
        return bisect.bisect_right(ends, position)

    out = {}
    for seat in seats:
        mine = [p for p, a in enumerate(stored.actions) if a.seat == seat]
        played = [p for p in mine if stored.actions[p].source == "player"]
        if not played:
            out[seat] = 0
            continue
        last = played[-1]
        hand = hand_of(last)
        server_after = any(p > last and hand_of(p) == hand for p in mine)
        out[seat] = hand if server_after else hand + 1
    return out


def records(
    tx: Tx, event: StoredEvent, start: int = 0, budget: int | None = None
) -> tuple[list[dict[str, Any]], int, int | None]:
    """The event's boards' hand records (`spades-hand/1`) from the `start`th on, by round, table
    and board, each with the event's fields `event` (its table's label) and `board`: as many as
    fit `budget` bytes of JSON (all if None; at least one). Returns them, how many the event has
    in all, and the `start` of the next page (None: none). A table whose records are all before
    `start` is counted, not read."""
    tables = sorted(event.tables, key=lambda t: (t.round, t.table_no % EXTRA, t.table_no))
    members = {e.key: e.members for e in event.entrants}
    plans = {(round_no, plan.table_no): plan for round_no, ps in event.plans.items() for plan in ps}
    out: list[dict[str, Any]] = []
    total = 0
    used = 0
    full = False
    for table in tables:
        game_id = table.game_id
        if game_id is None:
            game_id = tx.latest_game_at(table.table_id)
        if game_id is None:
            continue
        count = tx.hand_count(game_id)[1]
        first = total
        total += count
        if full or total <= start:
            continue
        extra, table_no = divmod(table.table_no, EXTRA)
        first_board = 1 if extra == 0 else event.settings.boards + extra
        # Who sat where, by seat, as the ladder's records say it (`spades replay` names them).
        plan = plans.get((table.round, table_no))
        names = (
            None
            if plan is None
            else [event.names.get(account, "?") for _key, account in seats_of(plan, members)]
        )
        for index, record in enumerate(tx.hand_records(game_id)):
            if first + index < start or full:
                continue
            labelled = {
                **record,
                "event": table_label(event.row.id, table.round, table_no),
                "board": first_board + index,
            }
            if names is not None:
                labelled["names"] = names
            size = len(json.dumps(labelled))
            if budget is not None and out and used + size > budget:
                full = True
                continue
            out.append(labelled)
            used += size
    after = start + len(out)
    return out, total, (after if after < total else None)


def entrants(event: StoredEvent) -> list[Entrant]:
    """The event's entrants as pairing and scoring take them: seeded in order of registration
    (house entrants last)."""
    return [
        Entrant(e.key, e.members, seed, house=e.house is not None)
        for seed, e in enumerate(event.entrants, start=1)
    ]


def standing_lines(event: StoredEvent, results: Sequence[BoardResult]) -> list[StandingLine]:
    """The event's standings from its stored plans and boards (none before round 1 is paired)."""
    if not event.plans:
        return []
    return standings(
        event.settings.format,
        entrants(event),
        plans_of(event),
        results,
        boards=event.settings.boards,
    )


def names_of(event: StoredEvent, key: str) -> list[str]:
    """The account names of an entrant (`?` for an account gone)."""
    for entrant in event.entrants:
        if entrant.key == key:
            return [event.names.get(m, "?")[:32] for m in entrant.members][:2] or ["?"]
    return ["?"]


def plans_of(event: StoredEvent) -> Plans:
    return {r: list(p) for r, p in event.plans.items()}


def seats_of(plan: Plan, members: dict[str, tuple[int, ...]]) -> list[tuple[str, int]]:
    """(entrant key, account id) for each seat 0..3 of a table of `plan`."""
    if isinstance(plan, IndividualTable):
        return [(key, members[key][0]) for key in plan.seats]
    ns, ew = members[plan.north_south], members[plan.east_west]
    return [
        (plan.north_south, ns[0]),
        (plan.east_west, ew[0]),
        (plan.north_south, ns[-1]),
        (plan.east_west, ew[-1]),
    ]
