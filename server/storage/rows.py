"""The rows a transaction returns: plain frozen values, the same whatever engine stored them.

JSON columns come back decoded (the engine's own JSON shapes); times are Unix seconds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple


def stamp() -> float:
    """A row's time stamp: Unix seconds to the millisecond, the same in both engines."""
    return round(time.time(), 3)


def storable(number: int) -> bool:
    """Whether a 64-bit column holds this integer (both engines' ids are 64-bit): no row has an
    id it cannot, so a larger one is looked up as nothing rather than sent to the database."""
    return -(2**63) <= number < 2**63


#: (seat, account id or None, score, place): one seat's line of a finished game.
ResultRow = tuple[int, int | None, int, int]


@dataclass(frozen=True)
class AccountRow:
    id: int
    name: str
    token_salt: bytes | None
    token_hash: bytes | None
    is_bot: bool
    is_guest: bool


@dataclass(frozen=True)
class StoredAction:
    seq: int
    seat: int
    action: Any
    source: str
    bank_left_ms: int | None = None  # the actor's time bank left after it (None: no bank)
    at: float | None = None  # when it was written (Unix seconds, to the ms): a decision's time


@dataclass(frozen=True)
class StoredHand:
    hand_no: int
    seed: str
    commitment: str
    first_seq: int


@dataclass(frozen=True)
class StoredGame:
    """A game as persisted: enough to rebuild it by replaying its actions."""

    id: int
    table_id: str
    table_config: Any
    game: str
    ruleset: Any
    seats: Any
    hands: list[StoredHand]
    actions: list[StoredAction]
    created_at: float | None = None  # when the game began (its first decision's clock starts)


@dataclass(frozen=True)
class WaitingTable:
    """A table that was open with no game yet: reopened on start with its seated accounts."""

    id: str
    config: Any
    seats: list[int | None]  # account id per seat (None: free)
    creator: int | None


class StoredRating(NamedTuple):
    """One account's stored rating under one game key."""

    mu: float
    sigma: float
    games: int


@dataclass(frozen=True)
class RatedAccount:
    """An account with a rating under a game key, and its name (the standings' raw lines)."""

    account_id: int
    name: str
    rating: StoredRating
    is_bot: bool = False  # a bot account (else a person's)


@dataclass(frozen=True)
class MatchRow:
    """One ladder match as stored (`ladder_matches`), its JSON columns decoded.

    `halves` is what was stored: a list of halves for a rated match (see `server.ladder.store`),
    `{"void": reason}` for a void one, None while it runs.
    """

    seq: int
    status: str  # running, rated or void
    preset: str
    options: dict[str, Any]
    hands: int
    teams: list[list[int]]  # two teams of two account ids
    points: list[int] | None
    forfeits: list[int]
    halves: Any
    changes: dict[str, Any]
    rated_seq: int | None
    created_at: float
    finished_at: float | None
    #: Why each forfeiter forfeited, by account id (`timeouts`, `disconnected`, `left`); empty for
    #: a match stored before the reasons were kept.
    forfeit_reasons: dict[int, str] = field(default_factory=dict)


class BanRow(NamedTuple):
    """A ban the operator made: `kind` is `account` or `address`; `target` the account's name or
    the network (CIDR)."""

    kind: str
    target: str
    reason: str | None


class HouseEntrant(NamedTuple):
    """A built-in bot the host entered on the ladder for good."""

    account_id: int
    name: str
    spec: str


@dataclass(frozen=True)
class EventRow:
    """One event (`events`): `settings` as stored (`server.events.settings.EventSettings`'s JSON)."""

    id: int
    name: str
    host: int | None
    settings: dict[str, Any]
    secret: bytes
    seed: int
    status: str
    starts_at: float
    round: int
    created_at: float
    finished_at: float | None


@dataclass(frozen=True)
class EventEntrantRow:
    """One entrant of an event (`event_entrants`): a registered account before the start, an
    entrant formed at the start after it. `house` is the bot spec of a house entrant."""

    key: str
    members: tuple[int, ...]
    partner: str | None
    house: str | None
    registered_at: float
    withdrawn: bool
    forfeits: int


@dataclass(frozen=True)
class EventTableRow:
    """One table of an event's round (`event_tables`); `game_id` once its game began."""

    round: int
    table_no: int
    table_id: str
    game_id: int | None
