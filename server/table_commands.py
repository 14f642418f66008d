"""What a table is told and how it was opened: its configuration, per-seat state, the commands of
its inbox, and the refusal it answers with. Plain data; the behaviour is in `server.table`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from engine.ruleset import Ruleset
from protocol.errors import ErrorCode
from protocol.messages import ChatMessage, Error, Message, TableCreated
from server.accounts import Account
from server.seats import ActCommand, BuiltinBot, Occupant


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
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TableConfig:
        return cls(**{**data, "bots": tuple(data["bots"])})

    def ruleset(self) -> Ruleset:
        """The table's rules; raises `RulesetError` for options the engine refuses."""
        return Ruleset.from_preset(self.preset, **self.options)


@dataclass
class SeatState:
    """One seat: who holds it and how to reach them."""

    account: Account | None = None
    occupant: Occupant | None = None  # None while a remote player is disconnected
    bot: BuiltinBot | None = None
    dropped_at: float | None = None  # trio time the remote player disconnected
    abandoned: bool = False  # the grace period ran out: the fallback plays for this seat
    turn_deadline: float | None = None  # trio time by which the seat must act (turn + bank)
    turn_started: float | None = None  # trio time the seat's current decision began
    bank_left_ms: int | None = None  # what is left of the seat's bank (None: not drawn on yet)
    turn_version: int = -1  # game version of the last your_turn sent

    @property
    def is_bot(self) -> bool:
        return self.bot is not None or (self.account is not None and self.account.is_bot)


@dataclass(frozen=True)
class JoinCommand:
    """Seat `occupant` (an account's session) at `seat`, or any free seat; `reattach` resumes."""

    account: Account
    occupant: Occupant
    seat: int | None
    reply: Callable[[Message], None]
    request_id: int | None = None
    reattach: bool = False
    created: TableCreated | None = None  # the creator sits: answer with this, seat filled in


@dataclass(frozen=True)
class SpectateCommand:
    occupant: Occupant
    reply: Callable[[Message], None]
    request_id: int | None = None


@dataclass(frozen=True)
class LeaveCommand:
    occupant: Occupant
    reply: Callable[[Message], None] | None = None
    request_id: int | None = None
    disconnected: bool = False  # the connection dropped (hold the seat) rather than a `leave`


@dataclass(frozen=True)
class ChatCommand:
    message: ChatMessage


@dataclass(frozen=True)
class CloseUnoccupiedCommand:
    """The lobby's sweep found this waiting table with nobody seated for `ttl` seconds: close it,
    if that is still so when the table task gets here (someone may have sat down meanwhile)."""

    ttl: float


Command = (
    ActCommand | JoinCommand | SpectateCommand | LeaveCommand | ChatCommand | CloseUnoccupiedCommand
)


class TableError(Exception):
    """A join or spectate was refused; `code` is a protocol error code. Nothing changed."""

    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def error_for(
    code: ErrorCode, message: str, request_id: int | None, detail: str | None = None
) -> Error:
    return Error(id=request_id, code=code.value, message=message[:500], detail=detail)
