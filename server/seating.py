"""Who holds each seat, and the rules for taking one: pure decisions the table task carries out.

The identity model (docs/protocol.md, "Accounts, connections and seats"): an account may hold several
connections at once (a player's screen, a query from another terminal, a bot runner). A seat belongs
to ONE connection of its account, its *holder*. A connection that only looks (standings, tables,
history) never touches a seat. Another connection of the same account gets the seat only when its
holder is gone (dropped and within its grace, or held for it after a restart), or when it asks to take
it over (`join` with `takeover`), and then the old holder is told why it lost it. Every `act` is
checked against the seat's holder, so a connection that no longer holds a seat cannot play it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum

from protocol.errors import ErrorCode
from server.accounts import Account
from server.clocks import SeatClock
from server.peers import Peer
from server.seats import BuiltinBot


@dataclass
class SeatState:
    """One seat: whose it is, which connection holds it, and its clock."""

    account: Account | None = None
    holder: Peer | None = None  # the connection that plays it now (None: dropped, or empty)
    bot: BuiltinBot | None = None  # set when the server plays the seat in-process
    bot_kind: str | None = None  # the `BotKind` of a built-in bot the table was opened with
    dropped_at: float | None = None  # trio time the holder's connection dropped
    abandoned: bool = False  # its player is gone for good: the fallback bot plays it
    clock: SeatClock = field(default_factory=SeatClock)
    told_legal: tuple[object, ...] | None = None  # the choices of the last `your_turn` sent

    @property
    def is_bot(self) -> bool:
        return self.bot is not None or (self.account is not None and self.account.is_bot)

    @property
    def held_live(self) -> bool:
        """Whether a connected holder plays the seat now."""
        return self.holder is not None and self.holder.connected


class How(Enum):
    """How a join seats its connection."""

    NEW = "new"  # a free seat
    SAME = "same"  # this connection already holds it: a resync (joined and a fresh snapshot)
    RETURNED = "returned"  # the account's seat had no live holder: given back
    TAKEN_OVER = "taken_over"  # moved from another live connection of the account, which is told


@dataclass(frozen=True)
class Seated:
    seat: int
    how: How
    previous: Peer | None = None  # the connection that held it before (taken over)


@dataclass(frozen=True)
class Refusal:
    code: ErrorCode
    message: str


@dataclass(frozen=True)
class NothingToResume:
    """A resume found no seat to give back here (the account has none, or it is held live)."""


JoinOutcome = Seated | Refusal | NothingToResume


def seat_of(seats: list[SeatState], peer: Peer) -> int | None:
    """The seat `peer` holds at this table, if any."""
    for index, state in enumerate(seats):
        if state.holder is peer:
            return index
    return None


def account_seat(seats: list[SeatState], account_id: int) -> int | None:
    """The seat this account plays here (not one it abandoned), if any."""
    for index, state in enumerate(seats):
        if state.account is not None and state.account.id == account_id and not state.abandoned:
            return index
    return None


def free_seats(seats: list[SeatState]) -> list[int]:
    return [i for i, s in enumerate(seats) if s.account is None and s.bot is None]


def decide_join(
    seats: list[SeatState],
    *,
    peer: Peer,
    account: Account,
    wanted: int | None,
    takeover: bool,
    reattach: bool,
    open_for_players: bool,
    refuse_new: Callable[[int | None], Refusal | None] = lambda wanted: None,
) -> JoinOutcome:
    """Where (and whether) `peer` sits; the state is not changed here.

    Precedence (docs/protocol.md, `join`): this connection's own seat (a resync); the account's seat
    (given back if nobody holds it live, taken over when asked, else `seat_held`); then a new seat:
    the table's own rule first (`refuse_new`: a ladder table's seats are its match's), then
    `table_full` when no seat is free (or the game has begun), then `seat_taken` when the seat
    asked for is not one of the free ones.
    """
    mine = seat_of(seats, peer)
    if mine is not None:
        return Seated(mine, How.SAME)
    held = account_seat(seats, account.id)
    if held is not None:
        state = seats[held]
        if not state.held_live:
            return Seated(held, How.RETURNED)
        if reattach:
            return NothingToResume()
        if takeover:
            return Seated(held, How.TAKEN_OVER, previous=state.holder)
        return Refusal(
            ErrorCode.SEAT_HELD,
            f"another connection of your account holds seat {held} at this table;"
            " join with takeover to move it here",
        )
    if reattach:
        return NothingToResume()
    refused = refuse_new(wanted)
    if refused is not None:
        return refused
    free = free_seats(seats) if open_for_players else []
    if not free:
        why = "the game has started" if not open_for_players else "every seat is taken"
        return Refusal(ErrorCode.TABLE_FULL, f"this table has no free seat: {why}")
    if wanted is not None and wanted not in free:
        taken = "there is no such seat" if not 0 <= wanted < len(seats) else "it is taken"
        return Refusal(ErrorCode.SEAT_TAKEN, f"not seat {wanted}: {taken}; free: {free}")
    return Seated(wanted if wanted is not None else free[0], How.NEW)


def waiting_seats(
    seats: list[SeatState], bots: tuple[int, ...], taking: dict[int, int] | None = None
) -> list[int | None]:
    """The accounts seated while a table waits for players, as stored for a restart: one entry per
    seat, None where it is free or a built-in bot's (those are seated again from the config);
    `taking` adds seats about to be taken (seat -> account id)."""
    out: list[int | None] = []
    for i, state in enumerate(seats):
        if taking is not None and i in taking:
            out.append(taking[i])
        elif i in bots or state.account is None:
            out.append(None)
        else:
            out.append(state.account.id)
    return out


def occupied(seats: list[SeatState], now: float, grace_s: float) -> bool:
    """Whether a player sits here: connected, or dropped and still within the grace. Built-in bots
    do not count: they come with the table and would wait at it forever."""
    for state in seats:
        if state.account is None or state.bot is not None:
            continue
        if state.holder is not None:
            return True
        if state.dropped_at is not None and now < state.dropped_at + grace_s:
            return True
    return False
