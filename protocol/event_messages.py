"""The events' messages (issue 43): announcing an event, listing and showing events, registering,
withdrawing, checking in to play, cancelling, an event's hand records, and the notices of a round
(``event_round``) and of the end (``event_ended``).

They are declared as in ``protocol.messages`` (one frozen dataclass each, registered by ``t``) and are
apart from it because they are one concern, the events' (docs/protocol.md, Events; the server's side
is ``server.events``, the rules in docs/events.md). ``protocol.messages`` re-exports them, so it still
names every message. Only the envelope, the schema and the wire types are imported here, never
``protocol.messages``, so there is no import cycle.
"""

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated

from protocol.envelope import Event, Reply, Request, Sender, register
from protocol.schema import Doc, Length, Range
from protocol.types import (
    Count,
    EventId,
    HandRecord,
    Label,
    Millis,
    Name,
    Options,
    Seat,
    TableId,
)

C, S = Sender.CLIENT, Sender.SERVER

#: The most lines of standings an `event_ended` carries (the rest: `event_show`).
ENDED_STANDINGS = 16
#: The most events an `event_list` carries (the newest first).
EVENT_LIST_LIMIT = 100

EntrantKey = Annotated[str, Length(1, 64)]
RoundNumber = Annotated[int, Range(1, 1000)]
TableNumber = Annotated[int, Range(1, 10_000)]
BoardNumber = Annotated[int, Range(1, 1000)]
Seconds = float  # seconds; the server checks the range of those a client sends


class EventFormat(StrEnum):
    """How an event is played (docs/events.md, Formats). ``server.events.settings.EventFormat`` has
    the same values (a test keeps them equal)."""

    SWISS_PAIRS = "swiss_pairs"
    SWISS_INDIVIDUAL = "swiss_individual"
    KNOCKOUT_PAIRS = "knockout_pairs"


class EventEntry(StrEnum):
    """Who may register for an event: people's accounts, bot accounts, or both."""

    PEOPLE = "people"
    BOTS = "bots"
    BOTH = "both"


class EventStatus(StrEnum):
    """Where an event is in its life."""

    REGISTERING = "registering"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class RoundStatus(StrEnum):
    """Where a round is: paired (its tables not open yet), playing, or finished."""

    PAIRED = "paired"
    PLAYING = "playing"
    FINISHED = "finished"


# ---- Structures ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class EventSummary:
    """One event as `event_list` lists it and `event_info` heads it."""

    event: Annotated[EventId, Doc("the event's id")]
    name: Annotated[Label, Doc("the event's name, as its host announced it")]
    format: Annotated[EventFormat, Doc("how it is played (docs/events.md)")]
    status: Annotated[EventStatus, Doc("where it is in its life")]
    starts_at: Annotated[float, Doc("when registration closes and round 1 is paired, Unix seconds")]
    entrants: Annotated[Count, Doc("entrants registered (not withdrawn), house bots included")]
    rounds: Annotated[RoundNumber, Doc("rounds announced (a knockout: its bracket's rounds)")]
    round: Annotated[Count, Doc("the round in progress (the last one once over); 0 before start")]
    boards: Annotated[BoardNumber, Doc("boards (deals) a round")]
    preset: Annotated[Label, Doc("the ruleset preset")]
    host: Annotated[Name | None, Doc("the account that announced it")] = None
    entry: Annotated[EventEntry, Doc("who may register")] = EventEntry.BOTH
    registration_opens: Annotated[
        float | None,
        Doc("when registration opens, Unix seconds; nil: open since it was announced"),
    ] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EventEntrant:
    """One entrant: a pair of accounts, or one account in an individual event."""

    key: Annotated[EntrantKey, Doc("the entrant's key in the event (standings and tables use it)")]
    names: Annotated[Annotated[list[Name], Length(1, 2)], Doc("its accounts (a pair: both)")]
    house: Annotated[bool, Doc("the server's bots, filling an odd field (shown `(house)`)")] = False
    withdrawn: Annotated[bool, Doc("it withdrew (or was withdrawn after two forfeits)")] = False


@dataclass(frozen=True, slots=True, kw_only=True)
class EventBoard:
    """One board's result at one table: each side's points on that deal."""

    board: Annotated[BoardNumber, Doc("the board's number in its round, from 1")]
    ns: Annotated[int, Doc("North-South's points (seats 0 and 2)")]
    ew: Annotated[int, Doc("East-West's points (seats 1 and 3)")]


@dataclass(frozen=True, slots=True, kw_only=True)
class EventTable:
    """One table of a round: who sits where and the boards played there so far."""

    table_no: Annotated[TableNumber, Doc("its number in the round, from 1")]
    table: Annotated[
        TableId | None, Doc("the server's table; nil before the round's tables open")
    ] = None
    seats: Annotated[Annotated[list[Name], Length(4, 4)], Doc("the players by seat 0..3")]
    entrants: Annotated[
        Annotated[list[EntrantKey], Length(0, 4)],
        Doc("the entrant of each seat 0..3 (a pair holds two seats)"),
    ] = field(default_factory=list)
    boards: Annotated[list[EventBoard], Doc("the boards finished at this table, in order")] = field(
        default_factory=list
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class EventRound:
    """One round: its status and its tables (the pairing is shown once it is made)."""

    round: Annotated[RoundNumber, Doc("the round's number, from 1")]
    status: Annotated[RoundStatus, Doc("paired, playing or finished")]
    tables: Annotated[list[EventTable], Doc("its tables, by number")]


@dataclass(frozen=True, slots=True, kw_only=True)
class EventStanding:
    """One line of an event's standings (docs/events.md, Scoring)."""

    place: Annotated[Annotated[int, Range(1, 2**31 - 1)], Doc("1 for the top")]
    key: Annotated[EntrantKey, Doc("the entrant's key")]
    names: Annotated[Annotated[list[Name], Length(1, 2)], Doc("its accounts")]
    percent: Annotated[float, Doc("average matchpoint percentage over its boards (0 to 100)")]
    boards: Annotated[Count, Doc("boards it played (forfeited ones included)")]
    margin: Annotated[int, Doc("total margin over its boards, its side's points minus the other's")]
    forfeits: Annotated[Count, Doc("boards it forfeited")]


@dataclass(frozen=True, slots=True, kw_only=True)
class EventMatch:
    """One knockout match: a table of a round, the two pairs and the boards each won."""

    round: Annotated[RoundNumber, Doc("the bracket's round, from 1")]
    table_no: Annotated[TableNumber, Doc("the match's table in that round")]
    a: Annotated[EntrantKey, Doc("the higher-seeded pair (sat North-South)")]
    b: Annotated[EntrantKey, Doc("the other pair (sat East-West)")]
    won_a: Annotated[Count, Doc("boards `a` won")]
    won_b: Annotated[Count, Doc("boards `b` won")]
    winner: Annotated[EntrantKey | None, Doc("the pair that goes on; nil while it is played")] = (
        None
    )


# ---- Requests and replies -----------------------------------------------------------------------


@register("event_create", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class EventCreate(Request):
    """Announce an event. Answered with `event_info`. Allowed to the operator (a connection that
    sent a good `operator_login`), and to any registered account on a server whose `events_open`
    setting is true (`not_allowed` otherwise); settings that do not fit together, or a start more
    than a minute past, are refused `bad_event` with a sentence."""

    name: Annotated[Label, Doc("the event's name")]
    format: Annotated[EventFormat, Doc("how it is played")]
    rounds: Annotated[
        Annotated[int, Range(0, 1000)],
        Doc("Swiss rounds; a knockout: 0 (its rounds follow from its field)"),
    ]
    boards: Annotated[BoardNumber, Doc("boards (deals) a round; a knockout match's length")]
    preset: Annotated[Label | None, Doc("a Spades preset (docs/rules.md); nil: `standard`")] = None
    options: Annotated[Options, Doc("option overrides on top of the preset")] = field(
        default_factory=dict
    )
    starts_at: Annotated[float, Doc("when registration closes and round 1 starts, Unix seconds")]
    entry: Annotated[EventEntry | None, Doc("who may register; nil: both")] = None
    max_entrants: Annotated[
        Annotated[int, Range(2, 256)] | None, Doc("the most entrants; nil: 64")
    ] = None
    human_turn_ms: Annotated[Millis | None, Doc("people's time a decision; nil: the server's")] = (
        None
    )
    bot_turn_ms: Annotated[Millis | None, Doc("bots' time a decision; nil: the server's")] = None
    no_show_grace: Annotated[
        Seconds | None,
        Doc("seconds an entrant has to be seated once its round opens; nil: 120"),
    ] = None
    round_gap: Annotated[
        Seconds | None,
        Doc("seconds between a round's pairing (`event_round`) and its tables opening; nil: 10"),
    ] = None
    registration_opens: Annotated[
        float | None,
        Doc("when registration opens, Unix seconds (before `starts_at`); nil: at once"),
    ] = None


@register("events", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Events(Request):
    """Ask for the events, newest first (at most 100). Answered with `event_list`."""

    status: Annotated[EventStatus | None, Doc("only events in this status; nil: all")] = None


@register("event_list", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class EventList(Reply):
    """The events, newest first."""

    events: Annotated[list[EventSummary], Doc("newest first")]


@register("event_show", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class EventShow(Request):
    """Ask for one event: entrants, rounds, standings (and a knockout's matches). Answered with
    `event_info`."""

    event: Annotated[EventId, Doc("the event")]


@register("event_info", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class EventInfo(Reply):
    """One event as it is now: the answer to `event_show` and `event_create`. It fits one frame:
    a very big event's oldest rounds are sent without their boards, or without their tables
    (`event_records` has every board)."""

    summary: Annotated[EventSummary, Doc("the event")]
    entrants: Annotated[list[EventEntrant], Doc("in order of registration")] = field(
        default_factory=list
    )
    rounds: Annotated[list[EventRound], Doc("the rounds paired so far, in order")] = field(
        default_factory=list
    )
    standings: Annotated[list[EventStanding], Doc("best first; empty before round 1 ends")] = field(
        default_factory=list
    )
    matches: Annotated[list[EventMatch], Doc("a knockout's matches, by round; empty else")] = field(
        default_factory=list
    )


@register("event_register", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class EventRegister(Request):
    """Register this account for an event before it starts. Answered with `ok`.

    In a pairs event, two accounts that each name the other as `partner` form a pair; an account
    without one (or whose partner never named it) is partnered by the server at the start.
    """

    event: Annotated[EventId, Doc("the event")]
    partner: Annotated[Name | None, Doc("pairs events: the partner's account name")] = None


@register("event_withdraw", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class EventWithdraw(Request):
    """Withdraw this account from an event. Answered with `ok`. Before the start it leaves the
    field; after it, its remaining rounds are forfeited."""

    event: Annotated[EventId, Doc("the event")]


@register("event_play", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class EventPlay(Request):
    """Check in: this connection plays this account's seats in the event while it lasts (each round
    announced by `event_round`, then `joined` and `snapshot`). Answered with `ok`; if its round is
    paired or in progress already, its `event_round` follows the `ok` at once (`starts_in` what is
    left of the wait, 0 once the table is open; unless the account was told it already, on a
    connection since gone) and, the table open, its seat."""

    event: Annotated[EventId, Doc("the event")]


@register("event_cancel", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class EventCancel(Request):
    """Cancel an event (its host or the operator). Answered with `ok`; no further round is paired,
    a table in play finishes its game (which no longer counts), and the checked-in entrants get
    `event_ended` with `cancelled`."""

    event: Annotated[EventId, Doc("the event")]


@register("event_records", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class EventRecords(Request):
    """Ask for an event's hand records: every board played so far, by round, table and board.
    Answered with `hand_records`, a page at a time."""

    event: Annotated[EventId, Doc("the event")]
    start: Annotated[
        Count, Doc("the first record wanted: 0, then the `next` of the page before")
    ] = 0


@register("hand_records", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class HandRecords(Reply):
    """One page of an event's hand records, by round, then table, then board. A page holds as many
    whole records as fit well inside one frame."""

    event: Annotated[EventId, Doc("the event")]
    records: Annotated[list[HandRecord], Doc("`spades-hand/1` records with the event's fields")]
    total: Annotated[Count, Doc("how many records the event has so far")]
    next: Annotated[
        Count | None, Doc("the `start` of the next page; nil when this page is the last")
    ] = None


# ---- Notices ------------------------------------------------------------------------------------


@register("event_round", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class EventRoundPaired(Event):
    """A round of an event is paired: this entrant plays at `table`, `seat`. Sent to each checked-in
    entrant `starts_in` seconds before the table opens; the seat then follows as `joined` and the
    table's `snapshot`."""

    event: Annotated[EventId, Doc("the event")]
    round: Annotated[RoundNumber, Doc("the round")]
    table: Annotated[TableId, Doc("the table it plays at")]
    seat: Annotated[Seat, Doc("its seat there")]
    names: Annotated[Annotated[list[Name], Length(4, 4)], Doc("the players by seat 0..3")]
    boards: Annotated[BoardNumber, Doc("the boards the round has")]
    starts_in: Annotated[Seconds, Doc("seconds until the table opens")]


@register("event_ended", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class EventEnded(Event):
    """An event is over (or was cancelled): its final standings, the first 16 lines (`event_show`
    has them all)."""

    event: Annotated[EventId, Doc("the event")]
    standings: Annotated[
        Annotated[list[EventStanding], Length(0, ENDED_STANDINGS)], Doc("best first")
    ]
    cancelled: Annotated[bool, Doc("true: the host or the operator cancelled it")] = False
