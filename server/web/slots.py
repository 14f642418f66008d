"""The web port's HTTP connections at once ("slots"), shared between addresses.

A connection holds a slot from its accept until it is answered and closed or becomes a WebSocket
session (which counts in the server's own connection limits instead). Slow clients hold slots
cheaply: a connection that sends its request head a byte at a time, or keeps alive and says
nothing, costs its sender a socket. So that a few addresses cannot take every slot (the page and
every WebSocket then refused 503 for everyone):

- an address (an IPv6 address: its /64, as `server.quotas.network_of` groups them) holds at most
  `per_address` slots; more are refused 503 with `Retry-After`;
- when every slot is taken, a newcomer still gets one if some address holds more than the
  newcomer would then hold (or holds any, when the newcomer holds none: every address may have
  one connection, so many addresses with one each lock nobody out): the oldest connection of the
  address holding the most that is waiting on its peer (for its TLS handshake, for a request
  head, idle between requests, or for it to read an answer) is closed to make room. A connection
  is never cut while the server itself is busy with it. So with N addresses sharing the port,
  each keeps about `total / N` slots however many it opens, and a slow address only ever slows
  itself.

A slot is taken and given back synchronously (no await between the check and the count), so the
counts are exact however many connections arrive at once.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from contextlib import contextmanager

import trio

from server.quotas import network_of

__all__ = ["HttpSlots", "Refusal", "Slot"]


class Refusal(enum.Enum):
    """Why no slot was given."""

    ADDRESS_FULL = "address_full"  # the address holds its share already
    PORT_FULL = "port_full"  # every slot is taken and none may be taken back


class Slot:
    """One connection's slot. `waiting()` marks the stretches when it may be taken back."""

    __slots__ = ("_wait", "evicted", "network", "number")

    def __init__(self, network: str, number: int) -> None:
        self.network = network
        self.number = number  # the order slots were taken in: the oldest goes first
        self.evicted = False  # taken back for a newcomer: the connection is to close at once
        self._wait: trio.CancelScope | None = None

    @property
    def is_waiting(self) -> bool:
        return self._wait is not None

    @contextmanager
    def waiting(self, timeout: float) -> Iterator[trio.CancelScope]:
        """A wait for the peer of at most `timeout` seconds, during which the slot may be taken
        back (the scope is cancelled then, and `evicted` set). `done_waiting()` ends the
        stretch early (a request head has arrived: it will be answered)."""
        outer = self._wait  # an answer sent while waiting for a head (an error): put it back
        with trio.move_on_after(timeout) as scope:
            self._wait = scope
            try:
                yield scope
            finally:
                self._wait = outer

    def done_waiting(self) -> None:
        self._wait = None

    def evict(self) -> None:
        self.evicted = True
        if self._wait is not None:
            self._wait.cancel()


class HttpSlots:
    """`total` slots, at most `per_address` for one address (or IPv6 /64)."""

    def __init__(self, total: int, per_address: int) -> None:
        if total < 1 or per_address < 1:
            raise ValueError("the web port needs at least one slot, and one per address")
        self.total = total
        self.per_address = per_address
        self.open = 0
        self._held: dict[str, list[Slot]] = {}  # network -> its slots, oldest first
        self._taken = 0

    def held_by(self, host: str) -> int:
        return len(self._held.get(network_of(host), ()))

    def take(self, host: str) -> Slot | Refusal:
        """A slot for a connection from `host` (an IP address as the socket gives it), making
        room as the module says when every slot is taken; or why not."""
        network = network_of(host)
        mine = self._held.get(network, [])
        if len(mine) >= self.per_address:
            return Refusal.ADDRESS_FULL
        if self.open >= self.total and not self._make_room(len(mine)):
            return Refusal.PORT_FULL
        self._taken += 1
        slot = Slot(network, self._taken)
        self._held.setdefault(network, mine).append(slot)
        self.open += 1
        return slot

    def release(self, slot: Slot) -> None:
        """Give `slot` back (again is harmless: an evicted slot is given back when taken)."""
        mine = self._held.get(slot.network)
        if mine is None or slot not in mine:
            return
        mine.remove(slot)
        if not mine:
            del self._held[slot.network]
        self.open -= 1

    def _make_room(self, newcomer_holds: int) -> bool:
        """Take back the oldest waiting slot of the address holding the most, of those that
        would still hold at least as many as the newcomer (more than `newcomer_holds + 1`), or
        of any when the newcomer holds none; False if there is none."""
        # An address with no connection may take one from anybody's spare: a first connection
        # is the one that matters (a browser loads the page over one kept-alive connection).
        floor = newcomer_holds + 1 if newcomer_holds else 0
        victim: Slot | None = None
        best: tuple[int, int] | None = None
        for slots in self._held.values():
            if len(slots) <= floor:
                continue
            oldest = next((slot for slot in slots if slot.is_waiting), None)
            if oldest is None:
                continue
            rank = (-len(slots), oldest.number)
            if best is None or rank < best:
                victim, best = oldest, rank
        if victim is None:
            return False
        victim.evict()
        self.release(victim)
        return True
