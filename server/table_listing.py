"""A table as the lobby sees it: the facts its listing shows, and the upkeep of a table that waits for
players (who sits there, stored for a restart; how long nobody has; closing it when nobody came).

The lobby reads these between the table task's steps (the task alone changes the table), and none of
them touches the game, so they live beside the task rather than in it: `TableListing` is a mixin of
`server.table.Table`, which reads its fields through `_Listed` (this module imports nothing of the
table's, so there is no import cycle).
"""

from __future__ import annotations

from typing import Protocol

import structlog
import trio

from protocol.types import Clock, TableInfo, TableStatus
from server import seating
from server.peers import Peer
from server.seating import SeatState
from server.storage import StorageError
from server.table_commands import Lifecycle, TableConfig
from server.table_policy import TablePolicy
from server.table_records import GameRecorder
from server.table_seats import Membership


class _Listed(Protocol):
    """What the lobby's facts and the waiting table's upkeep read of Table (its fields, and the
    facts and queries of this mixin that the others call)."""

    config: TableConfig
    records: GameRecorder
    members: Membership
    policy: TablePolicy
    lifecycle: Lifecycle
    log: structlog.typing.FilteringBoundLogger

    @property
    def table_id(self) -> str: ...

    @property
    def status(self) -> TableStatus: ...

    @property
    def seats(self) -> list[SeatState]: ...

    @property
    def spectators(self) -> set[Peer]: ...

    def waiting_seats(self, taking: dict[int, int] | None = None) -> list[int | None]: ...

    def unoccupied_for(self, now: float) -> float: ...


class TableListing:
    """Mixin of Table: the facts the lobby lists, and the waiting table's seats, idle time and close."""

    # ---------------------------------------------------------------- facts for the lobby

    @property
    def table_id(self: _Listed) -> str:
        return self.config.table_id

    @property
    def game_id(self: _Listed) -> int | None:
        """The stored game's id, once the game has started."""
        return self.records.game_id

    @property
    def status(self: _Listed) -> TableStatus:
        if self.lifecycle is Lifecycle.WAITING:
            return TableStatus.WAITING
        if self.lifecycle is Lifecycle.PLAYING:
            return TableStatus.PLAYING
        return TableStatus.FINISHED

    @property
    def seats(self: _Listed) -> list[SeatState]:
        return self.members.seats

    @property
    def spectators(self: _Listed) -> set[Peer]:
        return self.members.spectators

    def info(self: _Listed) -> TableInfo:
        return TableInfo(
            table=self.table_id,
            game=self.config.game,  # type: ignore[arg-type]
            preset=self.config.preset,
            options=self.config.options,
            seats=self.members.seat_infos(),
            clock=Clock(turn_ms=self.config.human_turn_ms, bank_ms=self.config.bank_ms),
            bot_clock=Clock(turn_ms=self.config.bot_turn_ms, bank_ms=self.config.bank_ms),
            private=self.config.private,
            status=self.status,
            spectators=len(self.spectators),
        )

    def resumable_by(self: _Listed, account_id: int) -> bool:
        """Whether the account has a seat here with no live connection (a login gives it back)."""
        seat = seating.account_seat(self.seats, account_id)
        return seat is not None and not self.seats[seat].held_live

    def free_seats(self: _Listed) -> list[int]:
        return seating.free_seats(self.seats) if self.lifecycle is Lifecycle.WAITING else []

    def audience(self: _Listed) -> list[tuple[int | None, Peer]]:
        return self.members.audience()

    # ---------------------------------------------------------------- waiting for players

    def waiting_seats(self: _Listed, taking: dict[int, int] | None = None) -> list[int | None]:
        """The accounts seated while the table waits, as stored for a restart."""
        return self.members.waiting_ids(self.config.bots, taking)

    async def store_waiting_seats(self: _Listed, taking: dict[int, int] | None = None) -> bool:
        """Store who sits here while no game has started (a table that `reopens` only); False if
        the store refused (logged)."""
        if not self.policy.reopens or self.lifecycle is not Lifecycle.WAITING:
            return True
        try:
            await self.records.store_waiting_seats(self.waiting_seats(taking))
        except StorageError as exc:
            self.log.error("seats_not_stored", error=str(exc))
            return False
        return True

    def _note_occupancy(self: _Listed) -> None:
        self.members.note_occupancy(trio.current_time(), self.lifecycle is Lifecycle.WAITING)

    def unoccupied_for(self: _Listed, now: float) -> float:
        """Seconds this lobby table has waited for players with nobody seated (0: someone is
        seated, its game has started, or it is not a lobby table). Read by the lobby's sweep."""
        if not self.policy.reopens or self.lifecycle is not Lifecycle.WAITING:
            return 0.0
        return self.members.unoccupied_for(now)

    async def _close_unoccupied(self: _Listed, ttl: float) -> None:
        """Close this waiting table if it has still had nobody seated for `ttl` seconds: marked
        closed in the store first (so a restart does not reopen it), then the task ends and the
        lobby drops it from the listing and tells everyone `table_closed`."""
        now = trio.current_time()
        idle = self.unoccupied_for(now)
        if self.lifecycle is not Lifecycle.WAITING or idle < ttl:
            return  # someone sat down since the sweep looked
        try:
            await self.records.close_table()
        except StorageError as exc:
            # Left open (and listed) rather than closed here but reopened after a restart; the
            # next sweep tries again.
            self.log.error("waiting_table_not_closed", error=str(exc))
            return
        self.lifecycle = Lifecycle.CLOSED
        self.log.info("waiting_table_closed", unoccupied_s=round(idle, 1), ttl_s=ttl)
