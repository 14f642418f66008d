"""Events (Swiss and knockout tournaments) in the terminal: the one-shot requests of `spades events`
and `spades event EVENT`, and how their answers are shown.

The views are pure functions of the server's replies (`event_list`, `event_info`, `event_round`,
`event_ended`) and of `now` and the width: they compute no standings, pairing or winner of their own
(the server's events core decides those, docs/events.md); they only lay them out. The knockout
bracket is drawn as text from the matches the server sent: a later round's matches place the earlier
ones, so each pair's line runs to the match it went on to.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from client.config import ServerAddress
from client.connection import all_record_pages, open_connection
from engine.seat_names import seat_label
from protocol import messages as m
from protocol.event_messages import (
    EventEntry,
    EventFormat,
    EventInfo,
    EventMatch,
    EventRound,
    EventRoundPaired,
    EventStanding,
    EventStatus,
    EventSummary,
    RoundStatus,
)

# ---------------------------------------------------------------- requests


async def list_events(
    address: ServerAddress, token: str | None, status: EventStatus | None = None
) -> list[EventSummary]:
    """The server's events, newest first (one status's, when given)."""
    async with open_connection(address, token=token) as conn:
        reply = await conn.expect(m.Events(status=status), m.EventList)
    return list(reply.events)


async def show_event(address: ServerAddress, token: str | None, event: str) -> EventInfo:
    """One event as it is now; `ServerError` `no_such_event` for an unknown id."""
    async with open_connection(address, token=token) as conn:
        return await conn.expect(m.EventShow(event=event), m.EventInfo)


async def create_event(
    address: ServerAddress, token: str | None, request: m.EventCreate, operator: str | None = None
) -> EventInfo:
    """Announce an event: as the operator (`operator`, an operator token, proven first with
    `operator_login`), or as the account of `token` where the server's `events_open` is set."""
    async with open_connection(address, token=token) as conn:
        if operator is not None:
            await conn.expect(m.OperatorLogin(token=operator), m.Ok)
        return await conn.expect(request, m.EventInfo)


async def event_request(
    address: ServerAddress,
    token: str | None,
    request: m.EventRegister | m.EventWithdraw | m.EventCancel,
    operator: str | None = None,
) -> tuple[str, str]:
    """Register, withdraw or cancel (the operator may cancel any event: `operator`); returns the
    account name and the server's note on it (`registered for E1 with bob (once bob names you
    too)`; "" from a server that says none)."""
    async with open_connection(address, token=token) as conn:
        assert conn.welcome is not None
        if operator is not None:
            await conn.expect(m.OperatorLogin(token=operator), m.Ok)
        ok = await conn.expect(request, m.Ok)
        return conn.welcome.user or "", ok.note or ""


#: Pages of an event's records asked for at most (a page holds several boards; a 64-pair Swiss of
#: 20 rounds of 10 boards has 6400): a bound on a server that never says `next` is none.
MAX_RECORD_PAGES = 10_000


async def event_records(
    address: ServerAddress, token: str | None, event: str
) -> list[dict[str, Any]]:
    """Every board of an event played so far as `spades-hand/1` records, by round, table and
    board, page by page (`event_records`); `ServerError` `no_such_event` for an unknown id."""
    async with open_connection(address, token=token) as conn:
        return await all_record_pages(
            conn,
            lambda start: m.EventRecords(event=event, start=start),
            m.HandRecords,
            most=MAX_RECORD_PAGES,
            what=f"{event}'s records",
        )


# ---------------------------------------------------------------- `spades events create`

FORMAT_WORDS = {
    EventFormat.SWISS_PAIRS: "Swiss pairs",
    EventFormat.SWISS_INDIVIDUAL: "Swiss individual",
    EventFormat.KNOCKOUT_PAIRS: "knockout pairs",
}
#: The listing's narrower words for the formats.
FORMAT_SHORT = {
    EventFormat.SWISS_PAIRS: "Swiss pairs",
    EventFormat.SWISS_INDIVIDUAL: "Swiss indiv.",
    EventFormat.KNOCKOUT_PAIRS: "knockout",
}
ENTRY_WORDS = {
    EventEntry.PEOPLE: "people only",
    EventEntry.BOTS: "bots only",
    EventEntry.BOTH: "people and bots",
}
RELATIVE = re.compile(r"^\+\s*(\d+)\s*([smh]?)$")
UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "": 60}
CLOCK_OF_DAY = re.compile(r"^(\d{1,2}):(\d{2})$")


def parse_start(text: str, now: float) -> float:
    """When an event starts, as `--start` takes it: `+90s`, `+10m` (a bare `+10`: minutes), `+2h`;
    `HH:MM` today (tomorrow once that time is past), or a date and time `YYYY-MM-DD HH:MM`
    (ISO 8601, local time unless it carries an offset). Unix seconds; raises ValueError with a
    sentence."""
    text = text.strip()
    found = RELATIVE.match(text)
    if found:
        return now + int(found.group(1)) * UNIT_SECONDS[found.group(2)]
    local = datetime.fromtimestamp(now).astimezone()
    clock = CLOCK_OF_DAY.match(text)
    if clock:
        hour, minute = int(clock.group(1)), int(clock.group(2))
        if hour > 23 or minute > 59:
            raise ValueError(f"--start {text!r} is not a time of day (00:00 to 23:59)")
        at = local.replace(hour=hour, minute=minute, second=0, microsecond=0)
        if at.timestamp() <= now:
            at += timedelta(days=1)
        return at.timestamp()
    try:
        when = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(
            f"--start {text!r} is not a start: write +10m (from now), 20:30 (today), or"
            " 2026-12-05 20:30"
        ) from None
    if when.tzinfo is None:
        when = when.astimezone()  # a naive time is the local time
    return when.timestamp()


def create_request(
    name: str,
    *,
    format: EventFormat,
    rounds: int | None,
    boards: int,
    starts_at: float,
    preset: str = "standard",
    options: dict[str, Any] | None = None,
    entry: EventEntry = EventEntry.BOTH,
    max_entrants: int | None = None,
    clock: int | None = None,
    bot_clock_ms: int | None = None,
    no_show_grace: float | None = None,
    round_gap: float | None = None,
    registration_opens: float | None = None,
) -> m.EventCreate:
    """The `event_create` request. `rounds` None for a knockout: 0, as many as its field needs
    (the server refuses any other number for one, `bad_event`). Raises ValueError with a
    sentence for what the client can judge (the rest: the server's `bad_event`)."""
    if not 1 <= boards <= 1000:
        raise ValueError("--boards is 1..1000 a round")
    knockout = format is EventFormat.KNOCKOUT_PAIRS
    if rounds is None:
        if not knockout:
            raise ValueError(f"--rounds is needed for {FORMAT_WORDS[format]}")
        rounds = 0
    if not (0 if knockout else 1) <= rounds <= 1000:
        raise ValueError("--rounds is 1..1000" + (" (or 0: as the field needs)" * knockout))
    if clock is not None and not 5 <= clock <= 3600:
        raise ValueError("--clock is 5..3600 seconds a decision")
    if no_show_grace is not None and no_show_grace < 0:
        raise ValueError("--no-show-grace is seconds, 0 or more")
    if round_gap is not None and round_gap < 0:
        raise ValueError("--round-gap is seconds, 0 or more")
    if max_entrants is not None and not 2 <= max_entrants <= 256:
        raise ValueError("--max-entrants is 2..256")
    if registration_opens is not None and registration_opens >= starts_at:
        raise ValueError("--registration-opens must be before --start (registration closes then)")
    return m.EventCreate(
        name=name,
        format=format,
        rounds=rounds,
        boards=boards,
        preset=preset,
        options=options or {},
        starts_at=starts_at,
        entry=entry,
        max_entrants=max_entrants,
        human_turn_ms=clock * 1000 if clock is not None else None,
        bot_turn_ms=bot_clock_ms,
        no_show_grace=no_show_grace,
        round_gap=round_gap,
        registration_opens=registration_opens,
    )


# ---------------------------------------------------------------- words


def when_text(starts_at: float, now: float) -> str:
    """`12-05 20:30` in local time, with how far off it is when within a day: `(in 12 min)`."""
    stamp = time.strftime("%m-%d %H:%M", time.localtime(starts_at))
    ahead = starts_at - now
    if 0 < ahead < 86_400:
        minutes = math.ceil(ahead / 60)
        off = f"in {minutes} min" if minutes < 120 else f"in {ahead / 3600:.0f} h"
        return f"{stamp} ({off})"
    return stamp


def round_text(summary: EventSummary) -> str:
    """`2/4` while it runs, `-/4` before the start."""
    return f"{summary.round or '-'}/{summary.rounds}"


def names_text(names: Sequence[str], house: bool = False) -> str:
    """An entrant's accounts, `ada & bob`, and `(house)` for the server's bots."""
    return " & ".join(names) + (" (house)" if house else "")


def percent_text(percent: float) -> str:
    return f"{percent:.1f}%"


# ---------------------------------------------------------------- `spades events`

#: From this width on, the listing also has the preset and the host.
LIST_WIDE = 100


def events_view(events: Sequence[EventSummary], width: int = 80) -> Table:
    """The events, newest first, in `width` columns with every id whole (long names wrap)."""
    # The box's one space between columns and no edges: eight columns fit 80 with room for a name.
    view = Table(
        title="Events",
        title_justify="left",
        box=box.SIMPLE_HEAD,
        padding=(0, 0),
        show_edge=False,
    )
    wide = width >= LIST_WIDE
    columns = ["event", "name", "format", "status", "starts", "entrants", "round", "boards"]
    columns += ["preset", "host"] if wide else []
    for column in columns:
        view.add_column(
            column,
            justify="right" if column in ("entrants", "round", "boards") else "left",
            no_wrap=column != "name",
            overflow="fold",
            min_width=10 if column == "name" else None,
        )
    for event in events:
        row = [
            event.event,
            event.name,
            FORMAT_SHORT[event.format],
            event.status.value,
            time.strftime("%m-%d %H:%M", time.localtime(event.starts_at)),
            str(event.entrants),
            round_text(event),
            str(event.boards),
        ]
        if wide:
            row += [event.preset, event.host or "—"]
        view.add_row(*row)
    return view


#: Printed under the listing on a line of its own (a caption wraps at the table's width).
LIST_FOOTER = "`spades event EVENT` shows one: its entrants, tables and standings"


# ---------------------------------------------------------------- `spades event EVENT`


def head_lines(info: EventInfo, now: float) -> list[str]:
    """Who, what and when: the event's name, format, rounds and boards, status and start."""
    s = info.summary
    boards = "board" if s.boards == 1 else "boards"
    rounds = "round" if s.rounds == 1 else "rounds"
    lines = [
        f"{s.event} · {s.name} · {FORMAT_WORDS[s.format]} · {s.rounds} {rounds} of"
        f" {s.boards} {boards} · {s.preset}"
    ]
    if s.status is EventStatus.REGISTERING and s.registration_opens and now < s.registration_opens:
        state = (
            f"registration opens {when_text(s.registration_opens, now)}:"
            f" starts {when_text(s.starts_at, now)}"
        )
    elif s.status is EventStatus.REGISTERING:
        state = f"registering: starts {when_text(s.starts_at, now)}"
    elif s.status is EventStatus.RUNNING:
        state = f"running: round {s.round} of {s.rounds}"
    else:
        state = f"{s.status.value} (started {when_text(s.starts_at, now)})"
    host = f" · host {s.host}" if s.host else ""
    lines.append(f"{state} · {s.entrants} entrants · {ENTRY_WORDS[s.entry]}{host}")
    return lines


def entrants_text(info: EventInfo) -> str:
    """`Entrants (3): ada & bob, cy & dee, eve (withdrawn)`, in order of registration."""
    if not info.entrants:
        return "Entrants: none yet"
    shown = [
        names_text(e.names, e.house) + (" (withdrawn)" if e.withdrawn else "")
        for e in info.entrants
    ]
    return f"Entrants ({len(info.entrants)}): " + ", ".join(shown)


def standings_view(
    standings: Sequence[EventStanding],
    title: str = "Standings",
    houses: frozenset[str] = frozenset(),
    mine: str | None = None,
) -> Table:
    """The standings: place, entrant (its accounts), matchpoint percentage, boards, margin and
    forfeited boards. `houses`: the keys of the server's bots; `mine`: an account whose line is
    marked `*`."""
    view = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
    for column in ("place", "entrant", "score", "boards", "margin", "forfeits"):
        view.add_column(
            column,
            justify="left" if column == "entrant" else "right",
            no_wrap=column != "entrant",
            overflow="fold",
        )
    for line in standings:
        yours = mine is not None and mine in line.names
        view.add_row(
            f"{line.place}{'*' if yours else ''}",
            names_text(line.names, line.key in houses),
            percent_text(line.percent),
            str(line.boards),
            f"{line.margin:+d}",
            str(line.forfeits),
        )
    return view


#: Under the standings, on a line of its own.
STANDINGS_FOOTER = (
    "score: the average matchpoint percentage a board · margin: its side's points minus the"
    " other side's, over its boards"
)


def round_view(played: EventRound) -> Table:
    """One round's tables: who sits North-South and East-West, and each board's points there."""
    view = Table(
        title=f"Round {played.round} ({played.status.value})",
        title_justify="left",
        box=box.SIMPLE_HEAD,
    )
    for column in ("table", "at", "North-South", "East-West", "boards (N-S:E-W)"):
        view.add_column(column, no_wrap=column in ("table", "at"), overflow="fold", justify="left")
    for table in played.tables:
        seats = [*table.seats, "?", "?", "?", "?"][:4]
        boards = " ".join(f"{b.board}) {b.ns}:{b.ew}" for b in table.boards) or "—"
        view.add_row(
            str(table.table_no),
            table.table or "—",
            f"{seats[0]} & {seats[2]}",
            f"{seats[1]} & {seats[3]}",
            boards,
        )
    return view


# ---- the knockout bracket, as text


def _bracket_order(matches: Sequence[EventMatch]) -> dict[int, list[EventMatch]]:
    """Each round's matches in the order the bracket draws them: the last round paired by table
    number, and each earlier round in the order its winners went on (so a pair's line runs
    straight into its next match); matches that fed nothing known after them, by table number."""
    by_round: dict[int, list[EventMatch]] = {}
    for match in matches:
        by_round.setdefault(match.round, []).append(match)
    if not by_round:
        return {}
    last = max(by_round)
    order = {last: sorted(by_round[last], key=lambda x: x.table_no)}
    for number in range(last - 1, 0, -1):
        earlier = sorted(by_round.get(number, []), key=lambda x: x.table_no)
        placed: list[EventMatch] = []
        for later in order.get(number + 1, []):
            for key in (later.a, later.b):
                feeder = next((x for x in earlier if key in (x.a, x.b) and x not in placed), None)
                if feeder is not None:
                    placed.append(feeder)
        order[number] = placed + [x for x in earlier if x not in placed]
    return order


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(0, width - 1)] + "…"


def bracket_lines(info: EventInfo, width: int = 80) -> list[str]:
    """A knockout's bracket drawn as text, a column a round and one for the winner: each pair with
    the boards it won in that match, joined by lines to the match its winner plays next; a slot
    not decided yet is `…`. Every line fits `width` columns (names are cut to fit)."""
    order = _bracket_order(info.matches)
    if 1 not in order or not order[1]:
        return ["The bracket is drawn once round 1 is paired."]
    label = {e.key: names_text(e.names) for e in info.entrants}
    first = order[1]
    # The field decides the bracket's rounds (a knockout's announced rounds are only its most).
    rounds = max(1, math.ceil(math.log2(2 * len(first))))
    columns = rounds + 1  # a column a round, then the winner
    cell = max(6, (width + 3) // columns - 3)
    slots_of: list[list[str]] = []
    winners: list[str | None] = []  # the winner of each match of the round before
    for number in range(1, rounds + 1):
        count = 2 ** (rounds - number + 1)  # pairs this round's column holds
        known = order.get(number, [])
        slots = ["…"] * count
        result: list[str | None] = [None] * (count // 2)
        for index in range(count // 2):
            if index < len(known):
                match = known[index]
                slots[2 * index] = f"{label.get(match.a, match.a)} {match.won_a}"
                slots[2 * index + 1] = f"{label.get(match.b, match.b)} {match.won_b}"
                result[index] = match.winner
            elif number > 1:  # not paired yet: the winners of the matches feeding it, if known
                for side in (0, 1):
                    came = winners[2 * index + side] if 2 * index + side < len(winners) else None
                    if came is not None:
                        slots[2 * index + side] = label.get(came, came)
            else:
                slots[2 * index] = slots[2 * index + 1] = "bye"
        slots_of.append(slots)
        winners = result
    champion = winners[0] if winners else None
    slots_of.append([label.get(champion, champion) if champion else "…"])
    height = 2 ** (rounds + 1) - 1
    grid = [[" "] * (columns * (cell + 3) - 3) for _ in range(height)]

    def put(row: int, col: int, text: str) -> None:
        for offset, char in enumerate(text):
            if 0 <= col + offset < len(grid[row]):
                grid[row][col + offset] = char

    for number, slots in enumerate(slots_of, start=1):
        x = (number - 1) * (cell + 3)
        for index, text in enumerate(slots):
            row = 2**number * index + 2 ** (number - 1) - 1
            shown = _cut(text, cell)
            if number > rounds:
                put(row, x, shown)
                continue
            # The name, then a line to the bracket's join (the other pair's comes up from below).
            put(row, x, f"{shown} ".ljust(cell + 1, "─") + ("┐" if index % 2 == 0 else "┘"))
            if index % 2:
                continue
            low = 2**number * (index + 1) + 2 ** (number - 1) - 1  # its opponent's row
            mid = (row + low) // 2
            for between in range(row + 1, low):
                put(between, x + cell + 1, "│")
            put(mid, x + cell + 1, "├─")
    heads = ["Final" if n == rounds else f"Round {n}" for n in range(1, rounds + 1)] + ["Winner"]
    header = "".join(_cut(h, cell).ljust(cell + 3) for h in heads).rstrip()
    return [header, *("".join(row).rstrip() for row in grid)]


def event_view(
    info: EventInfo,
    now: float,
    width: int = 80,
    *,
    round_no: int | None = None,
    mine: str | None = None,
) -> Group:
    """`spades event EVENT`: the head, the entrants, a knockout's bracket, the standings and one
    round's tables (`round_no`, else the round in progress or the last one)."""
    s = info.summary
    parts: list[RenderableType] = [Text(line) for line in head_lines(info, now)]
    parts.append(Text(entrants_text(info)))
    if s.format is EventFormat.KNOCKOUT_PAIRS and info.matches:
        parts.append(Text(""))
        parts.extend(Text(line) for line in bracket_lines(info, width))
    houses = frozenset(e.key for e in info.entrants if e.house)
    if info.standings:
        title = "Final standings" if s.status is EventStatus.FINISHED else "Standings"
        parts.append(standings_view(info.standings, title, houses, mine))
        parts.append(Text(STANDINGS_FOOTER))
    shown = _round_shown(info, round_no)
    if shown is not None:
        parts.append(round_view(shown))
    parts.append(Text(footer(info)))
    return Group(*parts)


def _round_shown(info: EventInfo, round_no: int | None) -> EventRound | None:
    if not info.rounds:
        return None
    if round_no is None:
        return max(info.rounds, key=lambda r: r.round)
    return next((r for r in info.rounds if r.round == round_no), None)


def footer(info: EventInfo) -> str:
    """What one can do with the event now."""
    e = info.summary.event
    status = info.summary.status
    if status is EventStatus.REGISTERING:
        partner = (
            " [--partner NAME]" if info.summary.format is not EventFormat.SWISS_INDIVIDUAL else ""
        )
        return (
            f"`spades event {e} --register{partner}` enters, `--withdraw` leaves;"
            f" `spades event {e} --play` plays its rounds (bots: `spades-bot run BOT --event {e}`)"
        )
    if status is EventStatus.RUNNING:
        return f"entrants play with `spades event {e} --play` · `--round N` shows another round"
    return f"`spades event {e} --round N` shows a round's tables"


# ---------------------------------------------------------------- notices while playing


def round_notice(notice: EventRoundPaired) -> str:
    """The `event_round` notice as one line: the round, the table, the seat and who sits where."""
    players = len(notice.names)
    seat = seat_label(notice.seat, players, None)
    partner = notice.names[(notice.seat + 2) % players] if players == 4 else ""
    with_partner = f" with {partner}" if partner else ""
    others = ", ".join(
        f"{seat_label(s, players, None)} {name}"
        for s, name in enumerate(notice.names)
        if s not in (notice.seat, (notice.seat + 2) % players)
    )
    boards = "board" if notice.boards == 1 else "boards"
    return (
        f"{notice.event} round {notice.round}: table {notice.table}, you sit {seat}{with_partner}"
        f" against {others}; {notice.boards} {boards}, opens in {math.ceil(notice.starts_in)} s"
    )


def checked_in_line(summary: EventSummary, now: float) -> str:
    """Where the event stands as one checks in: when it starts, or which round is under way."""
    head = f"{summary.event} {_cut(summary.name, 30)}"
    if summary.status is EventStatus.REGISTERING:
        return (
            f"{head} starts {when_text(summary.starts_at, now)} with {summary.entrants} entrants."
        )
    if summary.status is EventStatus.RUNNING:
        return f"{head}: round {summary.round} of {summary.rounds} is under way."
    return f"{head} is {summary.status.value}."


def standings_lines(
    standings: Sequence[EventStanding], mine: str | None = None, limit: int = 8
) -> list[str]:
    """Standings as short lines for the play screen: the top `limit`, and one's own line below
    them when it is further down. `mine` marks an account's line with `*`."""

    def line(s: EventStanding) -> str:
        mark = "*" if mine is not None and mine in s.names else " "
        return (
            f"{s.place:>3}{mark} {_cut(names_text(s.names), 30):<30} {percent_text(s.percent):>6}"
            f" {s.boards:>3} bds {s.margin:+6d}"
        )

    shown = list(standings[:limit])
    lines = [line(s) for s in shown]
    own = next((s for s in standings if mine is not None and mine in s.names), None)
    if own is not None and own not in shown:
        lines += ["  …", line(own)]
    return lines


def standings_panel(info: EventInfo, mine: str | None = None) -> list[str]:
    """The play screen's /standings, in the table's eleven lines: a head, then the top eight
    (and one's own line when further down)."""
    s = info.summary
    done = [r.round for r in info.rounds if r.status is RoundStatus.FINISHED]
    rounds = "round" if s.rounds == 1 else "rounds"
    after = f"after round {max(done)} of {s.rounds}" if done else f"of {s.rounds} {rounds}"
    head = f"{s.event} {_cut(s.name, 30)}: standings {after} (Enter closes)"
    if not info.standings:
        return [head, "No round has finished yet."]
    return [head, *standings_lines(info.standings, mine, limit=8)]


def ended_lines(ended: m.EventEnded, mine: str | None = None) -> list[str]:
    """What the terminal prints once an event is over: the final standings (the first 16)."""
    if ended.cancelled:
        return [f"Event {ended.event} was cancelled."]
    head = f"Event {ended.event} is over. Final standings (`spades event {ended.event}` for all):"
    return [head, *standings_lines(ended.standings, mine, limit=16)]
