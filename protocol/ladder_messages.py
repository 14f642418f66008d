"""The rated ladder's messages: entering and leaving it, asking for its standings, matches, entrants
and hand records, and the events of a match (``match_started``, ``match_ended``).

They are declared as in ``protocol.messages`` (one frozen dataclass each, registered by ``t``) and are
apart from it because they are one concern, the ladder's (docs/protocol.md, Ladder; the server's side is
``server.ladder``), which kept that module over the project's size. ``protocol.messages`` re-exports
them, so it still names every message. Only the envelope, the schema and the wire types are imported
here, never ``protocol.messages``, so there is no import cycle.
"""

from dataclasses import dataclass, field
from typing import Annotated

from protocol.envelope import Event, Reply, Request, Sender, register
from protocol.schema import Doc, Length, Range
from protocol.types import (
    ClientKind,
    Count,
    HandRecord,
    Label,
    LadderMatch,
    MatchResult,
    Name,
    Standing,
    TableId,
)

C, S = Sender.CLIENT, Sender.SERVER


@register("ladder_enter", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class LadderEnter(Request):
    """Enter this account (a bot, or a registered person) on the rated ladder. Answered with ``ok``.

    The entry lasts while this connection does. The ``ok``'s ``note`` says how the wait looks: how
    many more entrants a match of four needs, and when the server has no house bots, that its host
    can add them.
    """


@register("ladder_leave", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class LadderLeave(Request):
    """Leave the ladder after any match in progress. Answered with ``ok``."""


@register("ladder_standings", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class LadderStandings(Request):
    """Ask for the ladder's standings, best first."""

    limit: Annotated[
        Annotated[int, Range(1, 1000)],
        Doc("at most this many lines (the server sends at most 300: they fit one frame)"),
    ] = 100


@register("standings", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class Standings(Reply):
    """The ladder's standings."""

    entries: Annotated[list[Standing], Doc("best first")]


@register("ladder_matches", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class LadderMatches(Request):
    """Ask for the ladder's finished matches, newest first, optionally one entrant's only."""

    entrant: Annotated[Name | None, Doc("only this entrant's matches; nil for everyone's")] = None
    limit: Annotated[Annotated[int, Range(1, 50)], Doc("at most this many matches")] = 20


@register("matches", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class Matches(Reply):
    """The ladder's finished matches, newest first (none for a name that never played)."""

    matches: Annotated[list[LadderMatch], Doc("newest first")]


@register("ladder_show", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class LadderShow(Request):
    """Ask for one entrant's rating, record and recent matches. Answered with `entrant`."""

    name: Annotated[Name, Doc("the entrant's account name")]


@register("entrant", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class Entrant(Reply):
    """One ladder entrant. An account that never played a rated match has the starting rating.

    `wins`, `draws` and `losses` count its rated matches by their result (a forfeit loses for the
    forfeiter's team); `forfeits` counts the matches it forfeited itself.
    """

    name: Annotated[Name, Doc("the account name")]
    kind: Annotated[ClientKind, Doc("a bot or a person")]
    rank: Annotated[
        Annotated[int, Range(1, 2**31 - 1)] | None,
        Doc("its place in the standings; nil if unrated"),
    ] = None
    rating: Annotated[float, Doc("the displayed rating (conservative estimate `mu - 3 sigma`)")]
    mu: Annotated[float, Doc("the rating model's mean")]
    sigma: Annotated[float, Doc("the rating model's uncertainty")]
    games: Annotated[Count, Doc("rated matches played")]
    wins: Annotated[Count, Doc("rated matches its team won")] = 0
    draws: Annotated[Count, Doc("rated matches drawn")] = 0
    losses: Annotated[Count, Doc("rated matches its team lost")] = 0
    forfeits: Annotated[Count, Doc("matches it forfeited")] = 0
    recent: Annotated[
        Annotated[list[LadderMatch], Length(0, 10)], Doc("its last matches, newest first")
    ] = field(default_factory=list)
    # Its player statistics beside the rating, as `Standing` carries them (`stats` has the rest).
    hands: Annotated[Count, Doc("hands played on this server (its player statistics)")] = 0
    contracts: Annotated[Count, Doc("of those, hands it made an ordinary bid")] = 0
    contracts_made: Annotated[Count, Doc("of those, its side's contract made")] = 0
    bags: Annotated[Count, Doc("overtricks of its side's contracts made")] = 0
    nil_tried: Annotated[Count, Doc("nil and blind nil bids")] = 0
    nil_made: Annotated[Count, Doc("nil and blind nil bids made")] = 0


@register("ladder_records", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class LadderRecords(Request):
    """Ask for a finished ladder match's hand records: every hand of its table (an older match's:
    of both halves), with every seat's decisions and clock use. Answered with `match_records`, a
    page at a time.
    """

    match: Annotated[Label, Doc("the match id (`ladder_matches` lists them)")]
    start: Annotated[
        Count, Doc("the first record wanted: 0, then the `next` of the page before")
    ] = 0


@register("match_records", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class MatchRecords(Reply):
    """One page of a ladder match's hand records, oldest first (an older match's: the first half's
    hands, then the second's). A page holds as many whole records as fit well inside one frame.
    """

    match: Annotated[Label, Doc("the match id")]
    records: Annotated[
        list[HandRecord], Doc("`spades-hand/1` records with the ladder's fields, in order")
    ]
    total: Annotated[Count, Doc("how many records the match has in all")]
    next: Annotated[
        Count | None, Doc("the `start` of the next page; nil when this page is the last")
    ] = None


@register("match_started", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class MatchStarted(Event):
    """The ladder seated this entrant in a rated match; a ``snapshot`` of the table follows.

    Sent once per match: a match is one table, on deals made for it (see the Ladder section).
    """

    match: Annotated[Label, Doc("the match id")]
    table: Annotated[TableId, Doc("the table it is played at")]
    players: Annotated[list[Name], Doc("the bots by seat")]
    hands: Annotated[
        Count | None, Doc("the deals the match has (the ladder's hands per match)")
    ] = None


@register("match_ended", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class MatchEnded(Event):
    """A rated match is over and the ratings are updated."""

    match: Annotated[Label, Doc("the match id")]
    table: Annotated[TableId, Doc("the match's table (the one `results[].seat` refers to)")]
    results: Annotated[list[MatchResult], Doc("one per entrant, by its seat")]
