"""The policy of a planned table: one the server opens for named players on deals it planned, as
the ladder does for a rated match (`server.ladder.service`) and the events for a round's table
(`server.events.policy`, which sets it for an event's rules). Shared by both, so it lives here.

It is the server's table in every other respect (one task owns the game, write-ahead persistence,
per-seat views, clocks and the fallback); the policy changes five things:

- each deal's seed comes from the match's `BoardSet` (a twin table gets the same cards), so the
  commitment, the deal and the seed's reveal after the hand are the table's own;
- house seats are sample bots of a named spec, seated by the table like any built-in seat;
- its seats are the match's: only the entrant a seat is reserved for may take it;
- an entrant that disconnects or leaves mid-match, or whose clock runs out `max_timeouts` times,
  forfeits: the table tells it (`seat_lost`, `forfeited`) and seats the fallback bot, which finishes
  the game for the entrant's account (so the result is recorded against it); an event's tables
  hold a drop for the grace instead (`forfeit_drops=False`) and never forfeit on timeouts
  (`max_timeouts=None`);
- a twin table's spectators (an event round's, when it has several tables) are told through the
  `DealGate` of the tables dealt the same deals, which holds each deal back until every other of
  them has played it too (and the gate hears from here which deal is dealt).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable

from protocol.errors import ErrorCode
from server.accounts import Account
from server.deal_gate import DealGate
from server.peers import Peer
from server.seating import Refusal
from server.table_policy import HouseSeat


class PlannedTablePolicy:
    """The policy of one ladder match's table. Used by its table's task alone (and `gate`, shared
    with the twin table's policy, is only ever called from the server's one event loop)."""

    def __init__(
        self,
        *,
        deal_seed: Callable[[int], bytes] | None,
        house: dict[int, tuple[str, Account]],
        reserved: dict[int, int],
        max_timeouts: int | None,
        gate: DealGate | None = None,
        table: int = 0,
        forfeit_drops: bool = True,
        what: str = "a ladder match",
    ) -> None:
        self._what = what  # what the table is, for a refused join
        self._deal_seed = deal_seed
        self._gate = gate  # twins': where both tables are, and the spectators it holds back
        self._table = table  # this table's number at the gate
        self._house = house  # seat -> (bot spec, the house bot's account)
        self._reserved = reserved  # seat -> the entrant's account id
        self._max_timeouts = max_timeouts  # None: timeouts never forfeit
        # False: a dropped connection is held for the table's grace like any other; the seat goes
        # to the fallback only once the grace is over (an event's rule, server.events.policy).
        self._forfeit_drops = forfeit_drops
        self.timeouts: dict[int, int] = {}  # seat -> clock expiries so far

    @property
    def reopens(self) -> bool:
        return False  # a match is never reopened after a restart: the ladder voids it

    def seed(self, deal_number: int) -> bytes:
        if self._gate is not None:
            # Dealing deal `n` means every deal before it is over here: the twin's spectators may
            # now see those (the gate lets them through).
            self._gate.dealing(self._table, deal_number)
        if self._deal_seed is None:
            return secrets.token_bytes(32)
        return self._deal_seed(deal_number)

    def house_seat(self, seat: int) -> HouseSeat | None:
        found = self._house.get(seat)
        if found is None:
            return None
        spec, account = found
        return HouseSeat(spec=spec, name=f"house:{spec}", account=account)

    def join_refusal(self, account: Account, seat: int | None) -> Refusal | None:
        if seat is not None and self._reserved.get(seat) == account.id:
            return None
        # A ladder (or event) table is listed (anyone may watch) but its seats are the match's.
        return Refusal(ErrorCode.TABLE_FULL, f"this is {self._what}: its seats are taken")

    def forfeit_on_leave(self, seat: int, disconnected: bool) -> str | None:
        if seat in self._house or (disconnected and not self._forfeit_drops):
            return None
        return "disconnected" if disconnected else "left"

    def forfeit_on_fallback(self, seat: int) -> str | None:
        if seat in self._house or self._max_timeouts is None:
            return None
        self.timeouts[seat] = self.timeouts.get(seat, 0) + 1
        return "timeouts" if self.timeouts[seat] >= self._max_timeouts else None

    def watcher(self, peer: Peer) -> Peer:
        if self._gate is None:
            return peer  # a match played alone: its deals are dealt nowhere else
        return self._gate.watcher(self._table, peer)

    def watcher_gone(self, peer: Peer) -> None:
        if self._gate is not None:
            self._gate.gone(self._table, peer)
