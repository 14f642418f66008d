"""Every message of the protocol but the game events and the ladder's, each declared once as a frozen
dataclass.

The declaration is the single source: the validator, the encoder and the docs' field tables are all
derived from these annotations (see ``protocol.schema``). Envelope fields come first: ``id`` on requests
and replies, ``seq`` on events (``protocol.envelope``). Game events mirror the engine's and live in
``protocol.game_events``, the ladder's messages in ``protocol.ladder_messages``, the events' in
``protocol.event_messages``; all are re-exported here so ``protocol.messages`` names every message
(the game events are made from the engine's classes, so no list of them is written here).
Add messages and optional fields freely; renaming or removing one, or making an optional field required,
is a new major protocol version (docs/protocol.md, Versioning).
"""

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Annotated, Any, Literal

from protocol.envelope import (
    MESSAGE_TYPES,
    PROTOCOL_VERSION,
    PROTOCOL_VERSION_TEXT,
    Event,
    GameEvent,
    Message,
    Reply,
    Request,
    Role,
    Sender,
    register,
)
from protocol.event_messages import (
    EventCancel,
    EventCreate,
    EventEnded,
    EventInfo,
    EventList,
    EventPlay,
    EventRecords,
    EventRegister,
    EventRoundPaired,
    Events,
    EventShow,
    EventWithdraw,
    HandRecords,
)
from protocol.game_events import (
    GAME_EVENT_TYPES,
    BidInfo,
    DealCommitment,
    DealSeed,
)
from protocol.ladder_messages import (
    Entrant,
    LadderEnter,
    LadderLeave,
    LadderMatches,
    LadderRecords,
    LadderShow,
    LadderStandings,
    MatchEnded,
    Matches,
    MatchRecords,
    MatchStarted,
    Standings,
)
from protocol.operator_messages import (
    Announce,
    Announcement,
    Ban,
    BanInfo,
    Bans,
    CloseTable,
    Kick,
    ListBans,
    ListSessions,
    OperatorLogin,
    SessionInfo,
    Sessions,
    Unban,
)
from protocol.review_messages import HandReview, Review
from protocol.schema import Doc, Length, Pattern, Range
from protocol.stats_messages import PlayerStats, Stats
from protocol.types import (
    Action,
    BotKind,
    ChatScope,
    ClientKind,
    Clock,
    Cursor,
    Digest,
    Game,
    GameVersion,
    Label,
    Millis,
    Name,
    Options,
    ProtocolVersion,
    Seat,
    ServerLimits,
    SpectatorDelay,
    TableId,
    TableInfo,
    TableStatus,
    Text,
    Token,
    View,
)

C, S, E = Sender.CLIENT, Sender.SERVER, Sender.EITHER
ClientName = Annotated[str, Length(1, 64)]
JoinCode = Annotated[str, Pattern(r"[A-Za-z0-9]{4,16}", "4..16 letters and digits")]
ErrorCodeText = Annotated[str, Pattern(r"[a-z][a-z0-9_]{0,39}", "a lowercase code")]

# ---- Handshake ----------------------------------------------------------------------------------


@register("hello", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Hello(Request):
    """The client's first message. A ``token`` logs in (or resumes) an account at once."""

    protocol: Annotated[ProtocolVersion, Doc("the protocol version the client speaks")]
    client: Annotated[ClientName, Doc("the client program's name and version")]
    kind: Annotated[ClientKind, Doc("a person or a bot")]
    token: Annotated[Token | None, Doc("an account token, to log in at once")] = None


@register("welcome", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class Welcome(Reply):
    """The server accepts the connection. ``user`` is set when ``hello.token`` logged in."""

    server: Annotated[ClientName, Doc("the server's name")]
    server_version: Annotated[Label, Doc("the server software's version")]
    protocol: Annotated[ProtocolVersion, Doc("the protocol version the server speaks")]
    session: Annotated[Label, Doc("this connection's session id (for logs and support)")]
    user: Annotated[Name | None, Doc("the logged-in account, if the token was good")] = None
    guests: Annotated[bool, Doc("whether this server allows guest play")] = False
    limits: Annotated[ServerLimits, Doc("sizes, rates and clocks the server enforces")]


# ---- Accounts -----------------------------------------------------------------------------------


@register("register", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Register(Request):
    """Create an account. The reply holds its token, shown this once: keep it."""

    name: Annotated[Name, Doc("the account name wanted")]


@register("registered", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class Registered(Reply):
    """The account exists and this session is logged in to it."""

    name: Annotated[Name, Doc("the account name")]
    token: Annotated[Token, Doc("the account's secret; the server never shows it again")]
    bot: Annotated[bool, Doc("whether it is a bot account (`hello.kind` was `bot`): for good")] = (
        False
    )
    clock: Annotated[
        Clock | None, Doc("the clock this account's seats play on (a bot's is shorter)")
    ] = None


@register("login", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Login(Request):
    """Log in to an account by its token."""

    token: Annotated[Token, Doc("the account token")]


@register("guest", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Guest(Request):
    """Play without an account, when ``welcome.guests`` is true."""

    name: Annotated[Name | None, Doc("a display name; the server picks one if nil")] = None


@register("logged_in", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class LoggedIn(Reply):
    """The answer to ``login`` and ``guest``. A new guest gets its resume token here, shown once."""

    name: Annotated[Name, Doc("the account (or guest) name")]
    guest: Annotated[bool, Doc("whether this is a guest session")] = False
    token: Annotated[
        Token | None,
        Doc(
            "only in the answer to `guest`: the guest's resume token, shown this once; "
            "`login` or `hello.token` with it resumes the guest and its seats"
        ),
    ] = None
    bot: Annotated[bool, Doc("whether it is a bot account")] = False
    clock: Annotated[
        Clock | None, Doc("the clock this account's seats play on (a bot's is shorter)")
    ] = None


# ---- Lobby --------------------------------------------------------------------------------------


@register("list_tables", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class ListTables(Request):
    """Ask for the tables, optionally filtered, a page at a time (see ``tables.next``). Private
    tables are listed, marked ``private``."""

    game: Annotated[Game | None, Doc("only tables of this game")] = None
    status: Annotated[TableStatus | None, Doc("only tables in this status")] = None
    open_seats: Annotated[bool, Doc("only tables with a free seat")] = False
    cursor: Annotated[
        Cursor | None,
        Doc("go on from here: the `next` of the page before (same filters); nil: from the start"),
    ] = None
    limit: Annotated[
        Annotated[int, Range(1, 200)] | None,
        Doc(
            "at most this many tables in the page (fewer when more would not fit one frame);"
            " nil: 100"
        ),
    ] = None


@register("tables", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class Tables(Reply):
    """One page of the tables matching a ``list_tables``, in the order they opened."""

    tables: Annotated[list[TableInfo], Doc("the tables")]
    next: Annotated[
        Cursor | None,
        Doc("more tables follow: ask again with this `cursor`; nil: this page is the last"),
    ] = None


@register("create_table", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTable(Request):
    """Open a table. ``sit`` seats the creator at once; ``bots`` fills seats with built-in bots, of
    the kind ``bot`` names."""

    game: Annotated[Game, Doc("the game")]
    preset: Annotated[Label, Doc("a ruleset preset's name (docs/rules.md)")]
    options: Annotated[Options, Doc("option overrides on top of the preset")] = field(
        default_factory=dict
    )
    seats: Annotated[
        Annotated[int, Range(2, 4)] | None, Doc("number of seats; nil for the preset's")
    ] = None
    bots: Annotated[Annotated[list[Seat], Length(0, 4)], Doc("seats played by built-in bots")] = (
        field(default_factory=list)
    )
    clock: Annotated[Clock | None, Doc("the clock; nil for the server's default")] = None
    private: Annotated[bool, Doc("whether joining needs a join code")] = False
    sit: Annotated[Seat | None, Doc("a seat for the creator to take at once")] = None
    bot: Annotated[
        BotKind | None,
        Doc("the kind of built-in bot in the `bots` seats; nil: the server's own (heuristic)"),
    ] = None
    # Left out unless set (nil is the default), so a request as before is the same bytes.
    no_watching: Annotated[
        bool | None, Doc("true: refuse spectators (`spectate` answers `no_watching`); nil: welcome")
    ] = None
    spectator_delay: Annotated[
        SpectatorDelay | None,
        Doc(
            "hold spectators this many tricks (0 to 13) behind the play, and show them a hand's"
            " deal only once the hand is over; nil or 0: live"
        ),
    ] = None


@register("table_created", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class TableCreated(Reply):
    """The table is open (and the creator seated, if ``sit`` was given: a ``snapshot`` follows)."""

    table: Annotated[TableId, Doc("the new table's id")]
    code: Annotated[JoinCode | None, Doc("the join code of a private table")] = None
    seat: Annotated[Seat | None, Doc("the creator's seat, when `sit` was given")] = None


@register("join", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Join(Request):
    """Take a seat at a table; a ``snapshot`` follows the reply."""

    table: Annotated[TableId, Doc("the table")]
    seat: Annotated[Seat | None, Doc("the seat wanted; nil for any free seat")] = None
    code: Annotated[JoinCode | None, Doc("the join code, for a private table")] = None
    takeover: Annotated[
        bool,
        Doc(
            "move this account's seat here from another of its live connections"
            " (which gets `seat_lost`)"
        ),
    ] = False


@register("spectate", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Spectate(Request):
    """Watch a table; a ``snapshot`` (with the spectator's view) follows the reply."""

    table: Annotated[TableId, Doc("the table")]
    code: Annotated[JoinCode | None, Doc("the join code, for a private table")] = None


@register("joined", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class Joined(Reply):
    """The answer to ``join`` and ``spectate``."""

    table: Annotated[TableId, Doc("the table")]
    seat: Annotated[Seat | None, Doc("the seat taken; nil when spectating")] = None


@register("leave", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Leave(Request):
    """Give up a seat, or stop watching. Answered with ``ok``."""

    table: Annotated[TableId, Doc("the table")]


@register("chat", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Chat(Request):
    """Say something in the lobby or at a table. Answered with ``ok``; everyone gets ``chat_message``."""

    scope: Annotated[ChatScope, Doc("lobby or table")]
    table: Annotated[TableId | None, Doc("the table, when the scope is table")] = None
    text: Annotated[Text, Doc("what to say")]

    def invariant(self) -> tuple[str, str] | None:
        """A table chat names its table."""
        if self.scope is ChatScope.TABLE and self.table is None:
            return ("table", "is required")
        return None


@register("chat_message", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class ChatMessage(Event):
    """Someone said something where this session listens."""

    scope: Annotated[ChatScope, Doc("lobby or table")]
    table: Annotated[TableId | None, Doc("the table, when the scope is table")] = None
    name: Annotated[Name, Doc("who said it")]
    text: Annotated[Text, Doc("what they said")]


@register("table_changed", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class TableChanged(Event):
    """A table opened or changed (a seat taken or freed, play started): sent to the lobby."""

    table: Annotated[TableInfo, Doc("the table as it is now")]


@register("table_closed", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class TableClosed(Event):
    """A table is gone."""

    table: Annotated[TableId, Doc("the table")]
    reason: Annotated[
        Annotated[str, Length(1, 200)] | None,
        Doc("why, when the operator closed it (`close_table`); nil otherwise"),
    ] = None


# ---- Game ---------------------------------------------------------------------------------------


@register("snapshot", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class Snapshot(GameEvent):
    """Everything this session may know about a table, on (re)joining or after falling behind."""

    seat: Annotated[Seat | None, Doc("the seat this view is for; nil for a spectator")] = None
    view: Annotated[View, Doc("the view (see Game views)")]
    commitment: Annotated[
        Digest | None,
        Doc("SHA-256 of the seed of the deal in play (as `hand_dealt` said); nil between deals"),
    ] = None


@register("your_turn", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class YourTurn(GameEvent):
    """It is this seat's turn. Answer with ``act`` carrying this ``version`` and one of ``legal``."""

    seat: Annotated[Seat, Doc("the seat to act")]
    legal: Annotated[
        Annotated[list[Action], Length(1, 1024)], Doc("every action the seat may take now")
    ]
    deadline_ms: Annotated[Millis, Doc("time left for this decision, from when it was sent")]
    bank_ms: Annotated[Millis, Doc("time bank left after that")] = 0


@register("turn", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class Turn(GameEvent):
    """Who must act now, and their clocks: sent to every seat and spectator each time the game reaches
    a version at which someone must act (after the events that led there, before ``your_turn``), and
    to a session that (re)joins, after its ``snapshot``. Carries no cards and no legal actions.

    ``deadline_ms[i]`` and ``bank_ms[i]`` are the clock of seat ``to_act[i]``, from when this was sent."""

    to_act: Annotated[Annotated[list[Seat], Length(1, 4)], Doc("the seats that must act now")]
    deadline_ms: Annotated[
        Annotated[list[Millis], Length(1, 4)],
        Doc("per seat of `to_act`: time left for its decision"),
    ]
    bank_ms: Annotated[
        Annotated[list[Millis], Length(1, 4)],
        Doc("per seat of `to_act`: time bank left after that"),
    ]

    def invariant(self) -> tuple[str, str] | None:
        """One clock per seat to act, each seat once."""
        if len(self.deadline_ms) != len(self.to_act):
            return ("deadline_ms", "must have one entry per seat of to_act")
        if len(self.bank_ms) != len(self.to_act):
            return ("bank_ms", "must have one entry per seat of to_act")
        if len(set(self.to_act)) != len(self.to_act):
            return ("to_act", "names a seat twice")
        return None


@register("clock_expired", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class ClockExpired(GameEvent):
    """A seat's time (bank included) ran out at ``version``, or it left the game: the server acted
    for it. Sent to every seat and spectator just before the events of that action, which are the
    fallback's, not the player's."""

    seat: Annotated[Seat, Doc("the seat the server acted for")]
    fallback: Annotated[Label, Doc("what chose the action: `NAME bot`, or `first legal action`")]
    reason: Annotated[
        Literal["clock", "abandoned"],
        Doc("`clock`: its time ran out; `abandoned`: its player left the game"),
    ] = "clock"


@register("seat_lost", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class SeatLost(Event):
    """This connection no longer holds its seat at a table, though it did not ask to leave; from
    now on its `act`s there are refused `not_seated`. It may still watch (`spectate`)."""

    table: Annotated[TableId, Doc("the table")]
    seat: Annotated[Seat, Doc("the seat it held")]
    reason: Annotated[
        Literal["taken_over", "match_over", "forfeited"],
        Doc(
            "`taken_over`: another connection of the account took the seat (`join` with"
            " `takeover`); `match_over`: the ladder's match at this table is over; `forfeited`:"
            " the ladder's fallback bot plays the seat for the rest of the match"
        ),
    ]


@register("seat_status", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class SeatStatus(Event):
    """A seated player's connection dropped, or the player came back. Sent to everyone else at the
    table (seats and spectators) when it happens; the player's own session gets its ``snapshot``
    instead. While a seat is dropped the server holds it for ``hold_ms`` (its player may come back
    and take it back); once that runs out, the fallback bot plays the seat for the rest of the game
    (everyone is told once, by a ``clock_expired`` with reason ``abandoned`` before its first move)."""

    table: Annotated[TableId, Doc("the table")]
    seat: Annotated[Seat, Doc("the seat")]
    connected: Annotated[bool, Doc("true: the player is back; false: its connection dropped")]
    hold_ms: Annotated[
        Millis | None,
        Doc(
            "while dropped: how long the seat is still held for its player, from when this was sent"
        ),
    ] = None


@register("act", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Act(Request):
    """Take an action. ``version`` is the one the ``your_turn`` said: any version since the seat's
    decision began is accepted (``stale_version`` otherwise), so a resent or late action is never
    applied twice. Answered with ``ok``; events follow."""

    table: Annotated[TableId, Doc("the table")]
    version: Annotated[GameVersion, Doc("the game version the action was decided on")]
    action: Annotated[Action, Doc("the action")]


# ---- General ------------------------------------------------------------------------------------


@register("ok", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class Ok(Reply):
    """The request was carried out. ``note`` may say how, for a person (e.g. a ladder leave that
    takes effect after the match in progress)."""

    note: Annotated[
        Annotated[str, Length(1, 200)] | None, Doc("a sentence for a person about what was done")
    ] = None


@register("error", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class Error(Reply):
    """A request was refused, or the connection is about to close (see Error codes).

    ``code`` is one of the documented codes; read an unknown one as a generic failure.
    """

    code: Annotated[ErrorCodeText, Doc("what went wrong (see Error codes)")]
    message: Annotated[Annotated[str, Length(0, 500)], Doc("a sentence for a person")]
    detail: Annotated[
        Annotated[str, Length(1, 200)] | None,
        Doc("a precision: the field at fault, the engine's rule code"),
    ] = None
    retry_ms: Annotated[
        Millis | None,
        Doc("`rate_limited`: how long to wait before the same request would be accepted"),
    ] = None


@register("ping", E)
@dataclass(frozen=True, slots=True, kw_only=True)
class Ping(Request):
    """Are you there? Either side may send it; the other answers ``pong`` with the same ``id``."""


@register("pong", E)
@dataclass(frozen=True, slots=True, kw_only=True)
class Pong(Reply):
    """The answer to ``ping``."""


@register("bye", E)
@dataclass(frozen=True, slots=True, kw_only=True)
class Bye(Message):
    """The sender is closing the connection; nothing follows it."""

    reason: Annotated[Annotated[str, Length(0, 200)] | None, Doc("why, for a person")] = None


@register("service_paused", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class ServicePaused(Event):
    """Play is paused on this server, or resumes (``paused`` false): it cannot store anything for
    now (its database is unreachable), and nothing is applied before it is stored. While paused,
    no ``act`` is answered (each waits, and is answered in order once play resumes), and no seat's
    clock runs: the time paused is given back to every decision in progress, and a fresh ``turn``
    follows the resumption at each table. Sent to every connection when the pause begins and when
    it ends, and just after ``welcome`` to one that arrives during a pause."""

    paused: Annotated[bool, Doc("true: play is paused; false: it resumes")]
    reason: Annotated[Text | None, Doc("why, for a person")] = None
    paused_ms: Annotated[Millis | None, Doc("on resuming: how long play was paused")] = None


__all__ = [
    "GAME_EVENT_TYPES",
    "MESSAGE_TYPES",
    "PROTOCOL_VERSION",
    "PROTOCOL_VERSION_TEXT",
    "Act",
    "Announce",
    "Announcement",
    "Ban",
    "BanInfo",
    "Bans",
    "BidInfo",
    "Bye",
    "Chat",
    "ChatMessage",
    "ClockExpired",
    "CloseTable",
    "CreateTable",
    "DealCommitment",
    "DealSeed",
    "Entrant",
    "Error",
    "Event",
    "EventCancel",
    "EventCreate",
    "EventEnded",
    "EventInfo",
    "EventList",
    "EventPlay",
    "EventRecords",
    "EventRegister",
    "EventRoundPaired",
    "EventShow",
    "EventWithdraw",
    "Events",
    "GameEvent",
    "Guest",
    "HandRecords",
    "HandReview",
    "Hello",
    "Join",
    "Joined",
    "Kick",
    "LadderEnter",
    "LadderLeave",
    "LadderMatches",
    "LadderRecords",
    "LadderShow",
    "LadderStandings",
    "Leave",
    "ListBans",
    "ListSessions",
    "ListTables",
    "LoggedIn",
    "Login",
    "MatchEnded",
    "MatchRecords",
    "MatchStarted",
    "Matches",
    "Message",
    "Ok",
    "OperatorLogin",
    "Ping",
    "PlayerStats",
    "Pong",
    "Register",
    "Registered",
    "Reply",
    "Request",
    "Review",
    "Role",
    "SeatLost",
    "SeatStatus",
    "Sender",
    "ServicePaused",
    "SessionInfo",
    "Sessions",
    "Snapshot",
    "Spectate",
    "Standings",
    "Stats",
    "TableChanged",
    "TableClosed",
    "TableCreated",
    "Tables",
    "Turn",
    "Unban",
    "Welcome",
    "YourTurn",
]


# The game events' message classes, by name (`CardPlayed`): protocol.game_events makes them from the
# engine's declarations at import, so this module names every one without a list of them.
globals().update({cls.__name__: cls for cls in GAME_EVENT_TYPES.values()})

if TYPE_CHECKING:
    # To a type checker each of them is any class (protocol.game_events).
    def __getattr__(name: str) -> Any: ...
