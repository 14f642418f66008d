"""Who is at one table: its seats (whose, held by which connection), its spectators, and why a
connection lost its seat. Owned by the table task, which alone calls these methods.

The rules of taking a seat are `server.seating`'s (pure); this object keeps the state they are
applied to and does the bookkeeping that goes with each change, so the table task only decides when.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Final, Literal, Protocol

import structlog
import trio

from protocol.errors import ErrorCode
from protocol.messages import Joined, Ok, SeatLost, SeatStatus
from protocol.types import BotKind, SeatInfo
from server import broadcast, seating
from server.accounts import Account
from server.peers import Peer
from server.seating import How, NothingToResume, Refusal, SeatState
from server.spectator_delay import SpectatorDelay
from server.table_commands import (
    ChatCommand,
    JoinCommand,
    LeaveCommand,
    LeaveReason,
    Lifecycle,
    SpectateCommand,
    error_for,
)
from server.table_policy import TablePolicy

LostReason = Literal["taken_over", "match_over", "forfeited"]
# Why a connection lost its seat, as its later `act`s are told: by the table, and by the session
# that learned it from `seat_lost` (it then answers them itself: `lost_seat_sentence`).
LOST_WHY: Final[dict[str, str]] = {
    "taken_over": "another connection of your account took it over",
    "match_over": "the match is over",
    "forfeited": "you forfeited; a bot plays it now",
}


def lost_seat_sentence(seat: int, why: str) -> str:
    """The refusal's sentence for an `act` from a connection that lost `seat` for `why`."""
    return f"you no longer hold seat {seat} here: {why}"


LOST_REASONS_KEPT = 64  # why connections lost their seats, remembered for their late `act`s


class MembershipHost(Protocol):
    """What the membership handlers need of their table (the table task calls them)."""

    @property
    def lifecycle(self) -> Lifecycle: ...

    @property
    def policy(self) -> TablePolicy: ...

    @property
    def log(self) -> structlog.typing.FilteringBoundLogger: ...

    def welcome(self, peer: Peer, seat: int | None) -> None:
        """Send a connection that just sat or began to watch its snapshot and who acts."""
        ...

    def changed(self) -> None:
        """Seats or spectators changed: the lobby's listing is out of date."""
        ...

    async def store_waiting_seats(self, taking: dict[int, int] | None = None) -> bool:
        """Store who sits while the table waits for players; False if the store refused."""
        ...

    async def seat_fallback(self, seat: int) -> None:
        """The seat's player is gone for good: the fallback bot plays it from now on."""
        ...

    async def forfeit(self, seat: int, reason: str) -> None:
        """The seat's player forfeits (the policy said so): told, and the fallback plays on."""
        ...


class Membership:
    """The seats and spectators of one table, and the handlers of the commands that change them."""

    def __init__(self, table_id: str, players: int, bank_ms: int, grace_s: float) -> None:
        self.table_id = table_id
        self.bank_ms = bank_ms
        self.grace_s = grace_s
        self.seats = [self._empty() for _ in range(players)]
        self.spectators: set[Peer] = set()
        # A table whose spectators are held behind the play tells them all through this one peer.
        self.delay: SpectatorDelay | None = None
        self.no_watching = False  # `spectate` refused
        self._lost: dict[str, str] = {}  # peer id -> why it no longer holds its seat here
        # Trio time since which nobody has been seated while the table waits for players (None:
        # someone is, or the game has started); the lobby's sweep closes it once that lasts the TTL.
        self.unoccupied_since: float | None = None

    def _empty(self) -> SeatState:
        state = SeatState()
        state.clock.bank_left_ms = self.bank_ms
        return state

    # ---------------------------------------------------------------- reading

    def audience(self) -> list[tuple[int | None, Peer]]:
        """Who hears the table: holders by seat, then spectators."""
        out: list[tuple[int | None, Peer]] = [
            (i, s.holder) for i, s in enumerate(self.seats) if s.holder is not None
        ]
        if self.delay is not None:
            # Always there, watched or not: a spectator who comes later starts where it stands.
            out.append((None, self.delay))
        else:
            out.extend((None, spectator) for spectator in self.spectators)
        return out

    def seat_of(self, peer: Peer) -> int | None:
        return seating.seat_of(self.seats, peer)

    def lost_reason(self, peer: Peer) -> str:
        """Why `peer` holds no seat here, for the refusal of its `act`."""
        return self._lost.get(peer.peer_id, "you hold no seat at this table")

    def seat_infos(self) -> list[SeatInfo]:
        return [
            SeatInfo(
                seat=i,
                player=s.account.name if s.account else None,
                bot=s.is_bot,
                connected=s.bot is not None or s.held_live,
                bot_kind=BotKind(s.bot_kind) if s.bot is not None and s.bot_kind else None,
            )
            for i, s in enumerate(self.seats)
        ]

    def people_present(self) -> bool:
        """Whether a person (not a built-in bot) is seated and connected, or watching."""
        seated = any(s.holder is not None and s.bot is None for s in self.seats)
        return seated or bool(self.spectators)

    def expired_graces(self, now: float) -> list[int]:
        """Seats held for a dropped player whose grace has run out."""
        return [
            i
            for i, s in enumerate(self.seats)
            if s.dropped_at is not None
            and s.holder is None
            and not s.abandoned
            and now >= s.dropped_at + self.grace_s
        ]

    def next_grace_end(self) -> float | None:
        ends = [
            s.dropped_at + self.grace_s
            for s in self.seats
            if s.dropped_at is not None and s.holder is None and not s.abandoned
        ]
        return min(ends, default=None)

    # ---------------------------------------------------------------- changing

    def sit(self, seat: int, account: Account, peer: Peer) -> None:
        """`peer` holds `seat` for `account` from now on (a new seat, a return or a take-over)."""
        state = self.seats[seat]
        state.account = account
        state.holder = peer
        state.dropped_at = None
        state.told_legal = None  # the (re)joining connection needs its your_turn
        self._lost.pop(peer.peer_id, None)
        self.spectators.discard(peer)

    def release(self, seat: int, reason: LostReason, why: str) -> None:
        """Take `seat` from its holder, who did not ask: it is told (`seat_lost`), and its later
        `act`s here are refused with why. A built-in bot's seat is not released."""
        state = self.seats[seat]
        holder = state.holder
        if holder is None or state.bot is not None:
            return
        holder.deliver(SeatLost(table=self.table_id, seat=seat, reason=reason))
        self._lost[holder.peer_id] = lost_seat_sentence(seat, why)
        if len(self._lost) > LOST_REASONS_KEPT:
            del self._lost[next(iter(self._lost))]
        state.holder = None

    def free(self, seat: int) -> None:
        """The seat is nobody's again (before the game starts)."""
        self.seats[seat] = self._empty()

    def drop(self, seat: int, now: float) -> None:
        """The holder's connection dropped: the seat is held for the account for the grace."""
        state = self.seats[seat]
        state.holder = None
        state.dropped_at = now

    # ---------------------------------------------------------------- waiting for players

    def waiting_ids(
        self, bots: tuple[int, ...], taking: dict[int, int] | None = None
    ) -> list[int | None]:
        return seating.waiting_seats(self.seats, bots, taking)

    def note_occupancy(self, now: float, waiting: bool) -> None:
        """Start (or stop) the unoccupied clock as seats change; only a waiting table keeps one."""
        if not waiting or seating.occupied(self.seats, now, self.grace_s):
            self.unoccupied_since = None
        elif self.unoccupied_since is None:
            self.unoccupied_since = now

    def unoccupied_for(self, now: float) -> float:
        """Seconds with nobody seated (0 while someone is, a grace not yet seen to end included)."""
        if self.unoccupied_since is None or seating.occupied(self.seats, now, self.grace_s):
            return 0.0
        return now - self.unoccupied_since

    # ---------------------------------------------------------------- the commands

    def spectate(self, host: MembershipHost, command: SpectateCommand, room: int) -> None:
        peer, rid = command.peer, command.request_id
        if self.seat_of(peer) is not None:
            peer.deliver(error_for(ErrorCode.ALREADY_SEATED, "you are seated at this table", rid))
            return
        if self.no_watching:
            peer.deliver(
                error_for(
                    ErrorCode.NO_WATCHING, "this table takes no spectators (no_watching)", rid
                )
            )
            return
        if peer not in self.spectators and len(self.spectators) >= room:
            peer.deliver(
                error_for(ErrorCode.TABLE_FULL, "this table has no room for another spectator", rid)
            )
            return
        # Told through the policy's watcher (a ladder twin table holds back deals still to be
        # played at its twin); the reply itself goes straight to the connection.
        watcher = host.policy.watcher(peer)
        self.spectators.add(watcher)
        peer.deliver(Joined(id=rid, table=self.table_id, seat=None))
        host.welcome(watcher, None)
        host.changed()

    async def join(self, host: MembershipHost, command: JoinCommand) -> None:
        peer, rid = command.peer, command.request_id
        outcome = seating.decide_join(
            self.seats,
            peer=peer,
            account=command.account,
            wanted=command.seat,
            takeover=command.takeover,
            reattach=command.reattach,
            open_for_players=host.lifecycle is Lifecycle.WAITING,
            refuse_new=lambda wanted: host.policy.join_refusal(command.account, wanted),
        )
        if isinstance(outcome, NothingToResume):
            return
        if isinstance(outcome, Refusal):
            peer.deliver(error_for(outcome.code, outcome.message, rid))
            return
        seat = outcome.seat
        if outcome.how is How.NEW and not await host.store_waiting_seats(
            {seat: command.account.id}
        ):
            peer.deliver(
                error_for(
                    ErrorCode.INTERNAL,
                    "the server could not save your seat, so you were not seated",
                    rid,
                )
            )
            return
        if outcome.how is How.TAKEN_OVER:
            self.release(seat, "taken_over", LOST_WHY["taken_over"])
        returning = outcome.how is How.RETURNED and self.seats[seat].dropped_at is not None
        if peer in self.spectators:
            host.policy.watcher_gone(peer)
        self.sit(seat, command.account, peer)
        if command.created is not None:
            peer.deliver(dataclasses.replace(command.created, seat=seat))
        else:
            peer.deliver(Joined(id=rid, table=self.table_id, seat=seat))
        host.welcome(peer, seat)
        host.log.info("seat_taken", seat=seat, account=command.account.name, how=outcome.how.value)
        if returning:  # the others were told it dropped: tell them it is back
            back = SeatStatus(table=self.table_id, seat=seat, connected=True)
            broadcast.tell_same([(s, p) for s, p in self.audience() if p is not peer], back)
        host.changed()

    async def leave(self, host: MembershipHost, command: LeaveCommand) -> None:
        peer = command.peer
        watching = peer in self.spectators
        self.spectators.discard(peer)
        if watching:
            host.policy.watcher_gone(peer)
        seat = self.seat_of(peer)
        if seat is not None:
            await self._vacate(host, seat, command.reason)
        if command.reason is LeaveReason.REQUESTED:
            if seat is None and not watching:
                peer.deliver(
                    error_for(ErrorCode.NOT_SEATED, "you are not at this table", command.request_id)
                )
                return
            peer.deliver(Ok(id=command.request_id))
        host.changed()

    async def _vacate(self, host: MembershipHost, seat: int, reason: LeaveReason) -> None:
        """The holder of `seat` goes: how the seat carries on depends on when and why."""
        lifecycle = host.lifecycle
        if reason is LeaveReason.RELEASED:
            self.release(seat, "match_over", LOST_WHY["match_over"])
            return
        dropped = reason is LeaveReason.DISCONNECTED
        forfeit = None
        if lifecycle is Lifecycle.PLAYING:
            forfeit = host.policy.forfeit_on_leave(seat, dropped)
        self.seats[seat].holder = None
        if forfeit is not None:
            await host.forfeit(seat, forfeit)
        elif dropped:
            if lifecycle is not Lifecycle.FINISHED:
                self.drop(seat, trio.current_time())
                host.log.info("seat_dropped", seat=seat, grace_s=self.grace_s)
                hold_ms = min(2**31 - 1, math.ceil(self.grace_s * 1000))
                broadcast.tell_same(
                    self.audience(),
                    SeatStatus(table=self.table_id, seat=seat, connected=False, hold_ms=hold_ms),
                )
        elif lifecycle is Lifecycle.WAITING:
            self.free(seat)  # before the game starts a seat is simply freed
            host.log.info("seat_freed", seat=seat)
            await host.store_waiting_seats()
        elif lifecycle is Lifecycle.PLAYING:
            host.log.info("seat_abandoned", seat=seat)
            await host.seat_fallback(seat)

    async def expire_graces(self, host: MembershipHost, now: float) -> None:
        """Give up the seats held for dropped players whose grace has run out: free again before
        the game, the fallback bot's for the rest of it."""
        for seat in self.expired_graces(now):
            host.log.info("seat_grace_expired", seat=seat)
            self.seats[seat].dropped_at = None
            if host.lifecycle is Lifecycle.WAITING:
                self.free(seat)
                await host.store_waiting_seats()
            elif host.lifecycle is Lifecycle.PLAYING:
                await host.seat_fallback(seat)
            host.changed()

    def chat(self, command: ChatCommand) -> None:
        """A table chat line: `ok` to its sender, then the line to everyone at the table (only a
        connection that sits or watches here may speak here)."""
        peer = command.peer
        if self.seat_of(peer) is None and peer not in self.spectators:
            peer.deliver(
                error_for(ErrorCode.NOT_SEATED, "you are not at this table", command.request_id)
            )
            return
        peer.deliver(Ok(id=command.request_id))
        broadcast.tell_same(self.audience(), command.message)
