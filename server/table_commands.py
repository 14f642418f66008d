"""What a table is told and how it was opened: its configuration, the commands of its inbox, and the
refusal it answers with. Plain data; the behaviour is in `server.table`.

Every command names the connection it comes from (`peer`): the table alone decides what that
connection may do (which seat it holds, whether its `act` is for that seat), and answers it there.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, StrEnum
from typing import Any

import trio

from engine.actions import Action as EngineAction
from engine.ruleset import Ruleset
from protocol.errors import ErrorCode
from protocol.messages import ChatMessage, Error, Ok, TableCreated
from server.accounts import Account
from server.peers import Peer


class Lifecycle(Enum):
    """Where a table is in its life; it only moves forward."""

    WAITING = "waiting"  # seats are being filled; no game stored yet
    PLAYING = "playing"  # the game is stored and in play
    FINISHED = "finished"  # the game is over; open while someone is still seated or watching
    CLOSED = "closed"  # the task is ending: nothing more is accepted


@dataclass(frozen=True)
class TableConfig:
    """How a table was opened; persisted as JSON so a restart can open it again."""

    table_id: str
    game: str
    preset: str
    options: dict[str, Any]
    players: int
    bots: tuple[int, ...]
    human_turn_ms: int
    bot_turn_ms: int
    bank_ms: int = 0  # a time bank per seat for the whole game, drained once a turn's time is up
    private: bool = False
    code: str | None = None
    grace_s: float = 120.0
    builtin_bot: str = "heuristic"  # the sample bot (bots.registry name) in built-in seats
    fallback_bot: str = "heuristic"  # plays for a seat whose clock runs out
    bot_kind: str | None = None  # the `BotKind` `builtin_bot` is (None: an operator's own spec)
    no_watching: bool = False  # spectators refused
    spectator_delay: int = 0  # spectators held this many tricks behind (server.spectator_delay)
    # An event's table: "E1/r2/t3" (event, round, table number). After a restart the lobby asks
    # the events service for its policy (its deals, reserved seats and house bots).
    event: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "table_id": self.table_id,
            "game": self.game,
            "preset": self.preset,
            "options": self.options,
            "players": self.players,
            "bots": list(self.bots),
            "human_turn_ms": self.human_turn_ms,
            "bot_turn_ms": self.bot_turn_ms,
            "bank_ms": self.bank_ms,
            "private": self.private,
            "code": self.code,
            "grace_s": self.grace_s,
            "builtin_bot": self.builtin_bot,
            "fallback_bot": self.fallback_bot,
            "bot_kind": self.bot_kind,
            "no_watching": self.no_watching,
            "spectator_delay": self.spectator_delay,
            **({"event": self.event} if self.event is not None else {}),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TableConfig:
        return cls(**{**data, "bots": tuple(data["bots"])})

    def ruleset(self) -> Ruleset:
        """The table's rules; raises `RulesetError` for options the engine refuses."""
        return Ruleset.from_preset(self.preset, **self.options)


@dataclass(frozen=True, kw_only=True)
class ActCommand:
    """An `act` from `peer`, for the seat that peer holds (the table finds which)."""

    peer: Peer
    version: int
    # The engine's action: a player's, made from its `act` once the protocol had checked it
    # (`protocol.types.Action.engine_action`), for the seat its session holds; the table judges
    # the seat again (and the rules the rest).
    action: EngineAction
    request_id: int | None = None
    source: str = "player"  # "player" or "bot" (a built-in seat), as the store records it
    # When it reached the server (trio time): the start of its act-to-delivered latency.
    received: float = field(default_factory=trio.current_time)


@dataclass(frozen=True, kw_only=True)
class JoinCommand:
    """Seat `peer` (a connection of `account`) at `seat`, or any free seat.

    `takeover`: the account's seat here may be moved from another of its live connections (which
    is told why it lost it). `reattach`: only give back a seat the account holds here with no live
    connection (a login resumes so); anything else is left as it is and nothing is answered.
    """

    peer: Peer
    account: Account
    seat: int | None = None
    request_id: int | None = None
    takeover: bool = False
    reattach: bool = False
    created: TableCreated | None = None  # the creator sits: answer with this, seat filled in


@dataclass(frozen=True, kw_only=True)
class SpectateCommand:
    peer: Peer
    request_id: int | None = None


class LeaveReason(StrEnum):
    """Why a connection goes from a table."""

    REQUESTED = "requested"  # it sent `leave`: answered `ok`
    DISCONNECTED = "disconnected"  # it dropped: its seat is held for the grace
    RELEASED = "match_over"  # the ladder takes the seat back after its match: told `seat_lost`


@dataclass(frozen=True, kw_only=True)
class LeaveCommand:
    peer: Peer
    request_id: int | None = None
    reason: LeaveReason = LeaveReason.REQUESTED


@dataclass(frozen=True, kw_only=True)
class ChatCommand:
    """A table chat line from `peer`: answered `ok`, then told to everyone at the table."""

    peer: Peer
    message: ChatMessage
    request_id: int | None = None


@dataclass(frozen=True)
class CloseUnoccupiedCommand:
    """The lobby's sweep found this waiting table with nobody seated for `ttl` seconds: close it,
    if that is still so when the table task gets here (someone may have sat down meanwhile)."""

    ttl: float


@dataclass(frozen=True, kw_only=True)
class OperatorCloseCommand:
    """The operator closes the table (`close_table`): a game in play ends unfinished (stored as
    aborted), the table is marked closed, `peer` is answered `ok`, and everyone at the table and
    in the lobby gets `table_closed` with `reason`."""

    peer: Peer
    reason: str
    request_id: int | None = None


Command = (
    ActCommand
    | JoinCommand
    | SpectateCommand
    | LeaveCommand
    | ChatCommand
    | CloseUnoccupiedCommand
    | OperatorCloseCommand
)


class TableError(Exception):
    """A request was refused before it reached a table; `code` is a protocol error code, `detail`
    its machine-readable precision (the option at fault, for `bad_options`), `retry_ms` how long
    to wait (for `rate_limited`). The message and detail are cut to what `error` may carry."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        detail: str | None = None,
        *,
        retry_ms: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message[:500]
        self.detail = detail[:200] if detail else None
        self.retry_ms = retry_ms


def error_for(
    code: ErrorCode, message: str, request_id: int | None, detail: str | None = None
) -> Error:
    return Error(id=request_id, code=code.value, message=message[:500], detail=detail)


def answer_unserved(command: Command) -> tuple[Peer, Error | Ok] | None:
    """The answer owed to a request still queued when its table closed (so none goes unanswered):
    a `leave` or a chat line is as good as done, anything else finds no table. A resume, a
    disconnect and the ladder's own commands are answered to nobody."""
    if isinstance(command, CloseUnoccupiedCommand):
        return None
    if isinstance(command, LeaveCommand):
        if command.reason is not LeaveReason.REQUESTED:
            return None
        return command.peer, Ok(id=command.request_id)
    if isinstance(command, ChatCommand | OperatorCloseCommand):
        return command.peer, Ok(id=command.request_id)
    if isinstance(command, JoinCommand) and command.reattach:
        return None
    return command.peer, error_for(
        ErrorCode.NO_SUCH_TABLE, "the table has closed", command.request_id
    )
