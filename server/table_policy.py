"""What differs between kinds of table, as a policy object the table is given (not a subclass).

A lobby table (`LobbyPolicy`) deals fresh seeds from `secrets`, seats anyone at a free seat, holds a
dropped player's seat for the grace and is reopened after a restart while it waits for players. The
ladder's and the events' tables (`server.planned_table.PlannedTablePolicy`) plan their deals,
reserve their seats for their entrants, seat house bots and turn a drop or too many timeouts into a
forfeit (as each sets it).

The table calls these hooks from its own task, one at a time, so a policy's state needs no lock; the
table does what the answer says (a policy never touches the table). A policy may tell a spectator
through a peer of its own (`watcher`): the ladder's twin tables hold back what a spectator may not
see yet (`server.deal_gate`).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Protocol

from server.accounts import Account
from server.peers import Peer
from server.seating import Refusal


@dataclass(frozen=True)
class HouseSeat:
    """A seat the policy fills with a sample bot of its own (not the table's built-in bot)."""

    spec: str  # a bots.registry spec, e.g. "search,ms=50"
    name: str  # how the seat's bot is named in logs
    account: Account  # the account the seat's results count for


class TablePolicy(Protocol):
    """The hooks by which one kind of table differs from another."""

    @property
    def reopens(self) -> bool:
        """Whether the table is stored with its seats and reopened after a restart while it waits
        for players (and closed when nobody sits at it for the waiting-table TTL)."""
        ...

    def seed(self, deal_number: int) -> bytes:
        """The seed of deal `deal_number` (from 0), before anything of it is stored or told."""
        ...

    def house_seat(self, seat: int) -> HouseSeat | None:
        """The policy's own bot for `seat`, if it fills that seat itself."""
        ...

    def join_refusal(self, account: Account, seat: int | None) -> Refusal | None:
        """Why `account` may not take a new seat here (None: the usual rules apply)."""
        ...

    def forfeit_on_leave(self, seat: int, disconnected: bool) -> str | None:
        """The seat's player left (or dropped) mid-game: a forfeit reason, or None for the usual
        (a drop holds the seat for the grace; a `leave` hands it to the fallback)."""
        ...

    def forfeit_on_fallback(self, seat: int) -> str | None:
        """The server just acted for `seat` because its clock ran out: a forfeit reason, or None."""
        ...

    def watcher(self, peer: Peer) -> Peer:
        """The peer a new spectator is told through: `peer` itself, or one that holds back what
        the spectator may not see yet and passes it on later. It stands for `peer` among the
        table's spectators (equal to it), and the same one is returned while `peer` watches."""
        ...

    def watcher_gone(self, peer: Peer) -> None:
        """`peer` no longer watches (it left, dropped or sat down): drop what was held for it."""
        ...


class LobbyPolicy:
    """A table opened in the lobby: fresh seeds, free seats, reopened after a restart."""

    def __init__(self, *, reopens: bool = True) -> None:
        self._reopens = reopens

    @property
    def reopens(self) -> bool:
        return self._reopens

    def seed(self, deal_number: int) -> bytes:
        return secrets.token_bytes(32)

    def house_seat(self, seat: int) -> HouseSeat | None:
        return None

    def join_refusal(self, account: Account, seat: int | None) -> Refusal | None:
        return None

    def forfeit_on_leave(self, seat: int, disconnected: bool) -> str | None:
        return None

    def forfeit_on_fallback(self, seat: int) -> str | None:
        return None

    def watcher(self, peer: Peer) -> Peer:
        return peer

    def watcher_gone(self, peer: Peer) -> None:
        return None
