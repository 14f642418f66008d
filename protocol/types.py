"""The named field types, enums and nested structures that messages are built from.

Notation is the engine's: cards like ``QS`` (from ``engine.cards``), seats ``0..n-1``, ruleset options
by name. The protocol checks types and ranges only; what an option or an action means is the engine's
to judge.
"""

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Annotated, Any, Final, Literal

from engine import actions as engine_actions
from engine.cards import card_text
from protocol.schema import Doc, Length, Named, OneOf, Pattern, Range

MAX_SAFE_INT: Final = 2**53 - 1  # the largest integer every language's msgpack reads exactly
MAX_SEATS: Final = 4
CARD_TEXTS: Final = frozenset(card_text(card) for card in range(54))
_CARD_OF: Final = {card_text(card): card for card in range(54)}  # notation -> the engine's card

RequestId = Annotated[int, Named("RequestId"), Range(0, 2**32 - 1)]
Seq = Annotated[int, Named("Seq"), Range(0, MAX_SAFE_INT)]
GameVersion = Annotated[int, Named("GameVersion"), Range(0, MAX_SAFE_INT)]
Seat = Annotated[int, Named("Seat"), Range(0, MAX_SEATS - 1)]
Card = Annotated[str, Named("Card"), OneOf(CARD_TEXTS)]
Cards = Annotated[list[Card], Length(0, 54)]
TableId = Annotated[
    str, Named("TableId"), Pattern(r"[A-Za-z0-9_-]{1,32}", "1..32 of A-Z a-z 0-9 _ -")
]
Name = Annotated[str, Named("Name"), Length(1, 32)]
Token = Annotated[str, Named("Token"), Length(1, 256)]
Text = Annotated[str, Named("Text"), Length(1, 500)]
Millis = Annotated[int, Named("Millis"), Range(0, 2**31 - 1)]
Count = Annotated[int, Range(0, 2**31 - 1)]
HandNumber = Annotated[int, Named("HandNumber"), Range(1, 2**31 - 1)]
Tricks = Annotated[int, Range(0, 18)]  # 3-handed and joker decks: up to 18
# How many tricks a table's spectators are held behind its play (0: live). A hand has at most 13
# tricks in every four-handed game; a larger delay would only ever mean "at the hand's end".
MAX_SPECTATOR_DELAY = 13
SpectatorDelay = Annotated[int, Range(0, MAX_SPECTATOR_DELAY)]
Digest = Annotated[str, Named("Digest"), Pattern(r"[0-9a-f]{64}", "64 lowercase hex digits")]
Seed = Annotated[
    str, Named("Seed"), Pattern(r"(?:[0-9a-f]{2}){1,64}", "2..128 lowercase hex digits")
]
ProtocolVersion = Annotated[
    str, Named("ProtocolVersion"), Pattern(r"[0-9]{1,4}\.[0-9]{1,4}", "MAJOR.MINOR, e.g. 1.0")
]
Label = Annotated[str, Length(1, 64)]
OptionValue = bool | int | Annotated[str, Length(0, 64)] | list[Annotated[str, Length(0, 64)]]
Options = Annotated[dict[str, OptionValue], Named("Options")]
View = Annotated[dict[str, Any], Named("View")]
HandRecord = Annotated[dict[str, Any], Named("HandRecord")]
Cursor = Annotated[
    str, Named("Cursor"), Pattern(r"[A-Za-z0-9_-]{1,32}", "1..32 of A-Z a-z 0-9 _ -")
]
EventId = Annotated[str, Named("EventId"), Pattern(r"E[1-9][0-9]{0,11}", "E and a number")]

# Named types listed in the docs' "Types" table, with what they stand for.
NAMED_TYPES: Final[dict[str, tuple[Any, str]]] = {
    "RequestId": (RequestId, "chosen by the requester; the reply carries it back"),
    "Seq": (Seq, "per-connection event counter: 1, 2, 3, ... with no gaps"),
    "GameVersion": (GameVersion, "the table's game version; every applied action raises it"),
    "Seat": (Seat, "a seat number, 0..n-1, in turn order"),
    "Card": (Card, "rank `23456789TJQKA` then suit `CDHS` (`QS`, `TD`), or `BJ`/`LJ` for jokers"),
    "TableId": (TableId, "a table's id, chosen by the server"),
    "Name": (Name, "an account or program name"),
    "Token": (Token, "an account's secret; the server checks its format"),
    "Text": (Text, "a chat line"),
    "Millis": (Millis, "a duration in milliseconds"),
    "Cursor": (Cursor, "where a paged listing goes on, as the server gave it (`tables.next`)"),
    "HandNumber": (HandNumber, "hands of a game count from 1"),
    "Digest": (Digest, "a SHA-256 digest in hex"),
    "Seed": (Seed, "a deal seed's bytes in hex"),
    "ProtocolVersion": (ProtocolVersion, "see Versioning"),
    "Options": (Options, "ruleset option name to value; the engine judges names and values"),
    "View": (View, "a game view, the engine's `to_dict()`; see Game views"),
    "HandRecord": (HandRecord, "a finished hand, a `spades-hand/1` object (hand-records.md)"),
    "EventId": (EventId, "an event's id, chosen by the server: `E1`, `E2`, ..."),
}


class ClientKind(StrEnum):
    """Who is at the other end of a connection."""

    HUMAN = "human"
    BOT = "bot"


class Game(StrEnum):
    """The games a table can play."""

    SPADES = "spades"
    HEARTS = "hearts"


class BotKind(StrEnum):
    """The built-in bots a table can seat (`create_table.bot`), weakest first. The search bots think
    for a fixed budget the server sets (about 50 ms and 200 ms a decision), never one a client names."""

    RANDOM = "random"
    HEURISTIC = "heuristic"
    SEARCH_FAST = "search_fast"
    SEARCH = "search"


class TableStatus(StrEnum):
    """Where a table is in its life."""

    WAITING = "waiting"
    PLAYING = "playing"
    FINISHED = "finished"


class MatchStatus(StrEnum):
    """How a finished ladder match stands."""

    RATED = "rated"
    VOID = "void"


class ChatScope(StrEnum):
    """Where a chat line goes: everyone in the lobby, or one table's players and spectators."""

    LOBBY = "lobby"
    TABLE = "table"


class ActionKind(StrEnum):
    """What a player can do (``Action.kind``): the engine's action kinds (``engine.actions``)."""

    BID = "bid"
    LOOK = "look"
    PLAY = "play"
    EXCHANGE = "exchange"
    PASS = "pass"
    CLAIM = "claim"
    DEFICIENT = "deficient"
    KEEP_DRAWN = "keep_drawn"
    DISCARD = "discard"


@dataclass(frozen=True, slots=True, kw_only=True)
class Action:
    """One action, the same shape in ``your_turn.legal`` and in ``act.action`` (the engine's wire shape).

    ``bid``: ``tricks`` (0 is nil) and ``blind``, variant flags when set. ``play``: ``card``.
    ``exchange``, ``pass``, ``discard``: ``cards``. ``keep_drawn``: ``keep``. ``look``, ``claim`` and
    ``deficient`` carry nothing more. ``your_turn.legal`` lists every legal action in full (a pass of
    3 cards from 13 is 286 entries); pick one and send it back.
    """

    kind: Annotated[ActionKind, Doc("what to do")]
    tricks: Annotated[Tricks | None, Doc("`bid`: tricks bid, 0 for nil")] = None
    blind: Annotated[bool | None, Doc("`bid`: a blind bid (nil means false)")] = None
    no_trumps: Annotated[bool | None, Doc('`bid`: "no spade trumps"')] = None
    moe: Annotated[Literal["", "little", "big"] | None, Doc("`bid`: a Moe bid")] = None
    bemo: Annotated[Literal["", "bemo", "big_bemo"] | None, Doc("`bid`: a bemo on top")] = None
    ten_for_200: Annotated[bool | None, Doc("`bid`: 10 for 200")] = None
    double_nil: Annotated[bool | None, Doc("`bid`: two-handed double nil")] = None
    card: Annotated[Card | None, Doc("`play`: the card")] = None
    cards: Annotated[Cards | None, Doc("`exchange`, `pass`, `discard`: the cards")] = None
    keep: Annotated[bool | None, Doc("`keep_drawn`: keep the drawn card (else the next)")] = None

    def invariant(self) -> tuple[str, str] | None:
        """The field a kind needs but lacks, as (field, reason)."""
        if self.kind is ActionKind.BID and self.tricks is None:
            return ("tricks", "is required")
        if self.kind is ActionKind.PLAY and self.card is None:
            return ("card", "is required")
        if self.kind is ActionKind.KEEP_DRAWN and self.keep is None:
            return ("keep", "is required")
        if self.kind in _GIVING and self.cards is None:
            return ("cards", "is required")
        return None

    def engine_action(self, seat: int) -> engine_actions.Action:
        """This action as the engine's, for ``seat`` (the sender's, which the server knows).

        Nothing is checked again: a decoded ``Action`` has passed its schema (and ``invariant``)
        once, at the edge, and what it means (a card held, a pass of the right size and of
        different cards) is the rules' to judge. Never raises for an ``Action`` that decoded."""
        kind = self.kind
        if kind is ActionKind.PLAY:
            assert self.card is not None
            return engine_actions.PlayCard(seat, _CARD_OF[self.card])
        if kind is ActionKind.BID:
            assert self.tricks is not None
            return engine_actions.Bid(
                seat,
                self.tricks,
                bool(self.blind),
                bool(self.no_trumps),
                self.moe or "",
                self.bemo or "",
                bool(self.ten_for_200),
                bool(self.double_nil),
            )
        if kind in _GIVING:
            assert self.cards is not None
            return _GIVING[kind](seat, tuple(_CARD_OF[card] for card in self.cards))
        if kind is ActionKind.KEEP_DRAWN:
            assert self.keep is not None
            return engine_actions.KeepDrawn(seat, self.keep)
        return _BARE[kind](seat)


# The engine's action classes of the kinds that carry cards, and of those that carry nothing.
_GIVING: Final[
    dict[
        ActionKind,
        type[engine_actions.ExchangeCards | engine_actions.PassCards | engine_actions.Discard],
    ]
] = {
    ActionKind.EXCHANGE: engine_actions.ExchangeCards,
    ActionKind.PASS: engine_actions.PassCards,
    ActionKind.DISCARD: engine_actions.Discard,
}
_BARE: Final[
    dict[
        ActionKind,
        type[engine_actions.LookAtHand | engine_actions.Claim | engine_actions.DeclareDeficient],
    ]
] = {
    ActionKind.LOOK: engine_actions.LookAtHand,
    ActionKind.CLAIM: engine_actions.Claim,
    ActionKind.DEFICIENT: engine_actions.DeclareDeficient,
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Clock:
    """A table's clock: a fixed time per turn, then a bank that drains once the turn time is used."""

    turn_ms: Annotated[Millis, Doc("time for each decision")]
    bank_ms: Annotated[Millis, Doc("extra time for the whole game, used after `turn_ms` runs out")]


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerLimits:
    """What a server enforces; a client that stays inside these is never refused for size or rate."""

    max_frame_size: Annotated[
        Annotated[int, Range(16, 2**32 - 1)], Doc("largest frame body, bytes")
    ]
    max_str_len: Annotated[Count, Doc("longest msgpack string, bytes")]
    max_array_len: Annotated[Count, Doc("most items in one msgpack array")]
    max_map_len: Annotated[Count, Doc("most entries in one msgpack map")]
    max_depth: Annotated[Annotated[int, Range(1, 1000)], Doc("deepest nesting of maps and arrays")]
    rate_per_second: Annotated[Count, Doc("sustained messages per second a client may send")]
    rate_burst: Annotated[Count, Doc("messages a client may send at once above the sustained rate")]
    handshake_timeout_ms: Annotated[Millis, Doc("time from connecting to sending `hello`")]
    idle_timeout_ms: Annotated[
        Millis, Doc("silence after which the server closes; send `ping` to stay")
    ]
    clock: Annotated[Clock, Doc("the default clock of a new table")]
    chat_max_chars: Annotated[
        Count | None, Doc("longest `chat` line, characters; nil: not announced")
    ] = None
    chat_burst: Annotated[
        Count | None, Doc("`chat` lines a client may send at once; nil: not announced")
    ] = None
    chat_per_second: Annotated[
        float | None, Doc("`chat` lines a second on average after a burst; nil: not announced")
    ] = None
    act_burst: Annotated[
        Count | None,
        Doc("`act`s answering no `your_turn` a client may send at once; nil: not announced"),
    ] = None
    act_per_second: Annotated[
        float | None,
        Doc(
            "`act`s answering no `your_turn` a second on average after a burst; nil: not announced"
        ),
    ] = None
    register_burst: Annotated[
        Count | None,
        Doc("accounts one network address may `register` at once; nil: not announced"),
    ] = None
    register_per_hour: Annotated[
        Count | None,
        Doc("accounts one network address may `register` an hour after that; nil: not announced"),
    ] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SeatInfo:
    """Who sits in one seat of a table."""

    seat: Annotated[Seat, Doc("the seat")]
    player: Annotated[Name | None, Doc("the player's name; nil for an empty seat")] = None
    bot: Annotated[bool, Doc("whether the seat is played by a bot")] = False
    connected: Annotated[bool, Doc("whether the player is connected now")] = False
    bot_kind: Annotated[
        BotKind | None,
        Doc(
            "the kind of built-in bot playing the seat (`create_table.bot`); nil for a person, a"
            " bot connected on its own, or a built-in bot of the operator's own choosing"
        ),
    ] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TableInfo:
    """A table as the lobby sees it. Its ``options`` are bounded (about 1 KiB): an option too long
    to list is left out and named in ``options_omitted``."""

    table: Annotated[TableId, Doc("the table's id")]
    game: Annotated[Game, Doc("the game")]
    preset: Annotated[Label, Doc("the ruleset preset's name")]
    options: Annotated[Options, Doc("option overrides on top of the preset")] = field(
        default_factory=dict
    )
    seats: Annotated[Annotated[list[SeatInfo], Length(2, MAX_SEATS)], Doc("every seat, in order")]
    clock: Annotated[Clock, Doc("the table's clock for people's seats")]
    bot_clock: Annotated[
        Clock | None, Doc("the clock of the seats of bot accounts (and built-in bots)")
    ] = None
    private: Annotated[bool, Doc("whether joining needs the join code")] = False
    status: Annotated[TableStatus, Doc("waiting for players, playing, or finished")]
    spectators: Annotated[Count, Doc("how many are watching")] = 0
    # Left out unless set, so a table as before is listed in the same bytes.
    no_watching: Annotated[
        bool | None,
        Doc("true: the table takes no spectators (`spectate` is refused); nil: it does"),
    ] = None
    spectator_delay: Annotated[
        Annotated[int, Range(1, MAX_SPECTATOR_DELAY)] | None,
        Doc(
            "spectators see the play this many tricks late, and each hand's deal once the hand is"
            " over; nil: live"
        ),
    ] = None
    options_omitted: Annotated[
        Annotated[list[Label], Length(1, 64)] | None,
        Doc(
            "options set at this table but too long for a listing, left out of `options` (their"
            " names; the table plays them all); nil: `options` has every one"
        ),
    ] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Standing:
    """One line of the ladder's standings."""

    rank: Annotated[Annotated[int, Range(1, 2**31 - 1)], Doc("1 for the top")]
    name: Annotated[Name, Doc("the bot's account name")]
    rating: Annotated[float, Doc("the displayed rating (conservative estimate)")]
    mu: Annotated[float, Doc("the rating model's mean")]
    sigma: Annotated[float, Doc("the rating model's uncertainty")]
    games: Annotated[Count, Doc("rated games played")]
    bot: Annotated[bool, Doc("whether it is a bot account (else a person's)")] = False
    # Its player statistics beside the rating (all its hands on the server, `stats` has the rest).
    hands: Annotated[Count, Doc("hands played on this server (its player statistics)")] = 0
    contracts: Annotated[Count, Doc("of those, hands it made an ordinary bid")] = 0
    contracts_made: Annotated[Count, Doc("of those, its side's contract made")] = 0
    bags: Annotated[Count, Doc("overtricks of its side's contracts made")] = 0
    nil_tried: Annotated[Count, Doc("nil and blind nil bids")] = 0
    nil_made: Annotated[Count, Doc("nil and blind nil bids made")] = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchResult:
    """How one seat did in a ladder match."""

    seat: Annotated[Seat, Doc("the entrant's seat at the match's table")]
    name: Annotated[Name, Doc("the entrant's account name")]
    place: Annotated[Annotated[int, Range(1, MAX_SEATS)], Doc("1 for the winner; equal places tie")]
    score: Annotated[int, Doc("the final game score of the seat's side")]
    rating_before: Annotated[float, Doc("rating before the match")]
    rating_after: Annotated[float, Doc("rating after the match")]


TeamNames = Annotated[list[Name], Length(2, 2)]
ForfeitReason = Annotated[str, Length(1, 16)]
TeamPoints = Annotated[list[int], Length(2, 2)]


@dataclass(frozen=True, slots=True, kw_only=True)
class LadderHalf:
    """The table of a ladder match (or one half of an older ladder's duplicate pair): the game
    played, and each team's points in it."""

    game: Annotated[Count | None, Doc("the game's id (`spades-server export --game`)")] = None
    table: Annotated[TableId | None, Doc("the table it was played at")] = None
    points: Annotated[TeamPoints, Doc("team 0's points, then team 1's")]


@dataclass(frozen=True, slots=True, kw_only=True)
class RatingMove:
    """One entrant's rating before and after a match (conservative estimates)."""

    name: Annotated[Name, Doc("the entrant")]
    before: Annotated[float, Doc("rating before the match")]
    after: Annotated[float, Doc("rating after the match")]


@dataclass(frozen=True, slots=True, kw_only=True)
class LadderMatch:
    """One finished ladder match, as `ladder_matches` and `entrant` list it.

    Team 0 sat at seats 0 and 2, team 1 at seats 1 and 3 (of the first half, for a duplicate pair of
    an older ladder, which had two tables one after the other). A `void` match was cut short (a table
    stopped, the server stopped) and is never rated: it has no points and no winner.
    """

    match: Annotated[Label, Doc("the match id")]
    status: Annotated[MatchStatus, Doc("`rated`, or `void` (not rated)")]
    time: Annotated[
        Annotated[int, Range(0, MAX_SAFE_INT)] | None, Doc("when it ended, Unix seconds")
    ] = None
    preset: Annotated[Label, Doc("the ruleset preset")]
    teams: Annotated[Annotated[list[TeamNames], Length(2, 2)], Doc("the two partnerships")]
    halves: Annotated[
        Annotated[list[LadderHalf], Length(0, 2)],
        Doc("the match's table (an older duplicate pair: its two halves, in order)"),
    ] = field(default_factory=list)
    points: Annotated[
        TeamPoints | None, Doc("each team's points (over both halves of a pair); nil when void")
    ] = None
    winner: Annotated[
        Annotated[int, Range(0, 1)] | None,
        Doc("the winning team (0 or 1); nil for a draw or a void match"),
    ] = None
    forfeits: Annotated[
        Annotated[list[Name], Length(0, 4)], Doc("who forfeited (their team lost)")
    ] = field(default_factory=list)
    ratings: Annotated[
        Annotated[list[RatingMove], Length(0, 4)], Doc("the ratings the match moved")
    ] = field(default_factory=list)
    forfeit_reasons: Annotated[
        dict[str, ForfeitReason],
        Doc(
            "why each of `forfeits` forfeited, by name: `disconnected`, `left` or `timeouts`"
            " (none for a match stored before the reasons were kept)"
        ),
    ] = field(default_factory=dict)
    bots: Annotated[
        Annotated[list[Name], Length(0, 4)], Doc("which of the players are bot accounts")
    ] = field(default_factory=list)
    twin: Annotated[
        Label | None,
        Doc("the match dealt the same deals at the same time at another table, if any"),
    ] = None


__all__ = [
    "CARD_TEXTS",
    "MAX_SAFE_INT",
    "MAX_SEATS",
    "MAX_SPECTATOR_DELAY",
    "NAMED_TYPES",
    "Action",
    "ActionKind",
    "BotKind",
    "Card",
    "Cards",
    "ChatScope",
    "ClientKind",
    "Clock",
    "Count",
    "Cursor",
    "Digest",
    "EventId",
    "Game",
    "GameVersion",
    "HandNumber",
    "Label",
    "LadderHalf",
    "LadderMatch",
    "MatchResult",
    "MatchStatus",
    "Millis",
    "Name",
    "OptionValue",
    "Options",
    "ProtocolVersion",
    "RatingMove",
    "RequestId",
    "Seat",
    "SeatInfo",
    "Seed",
    "Seq",
    "ServerLimits",
    "SpectatorDelay",
    "Standing",
    "TableId",
    "TableInfo",
    "TableStatus",
    "TeamNames",
    "TeamPoints",
    "Text",
    "Token",
    "Tricks",
    "View",
]
