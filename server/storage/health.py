"""`StoreHealth`: whether the database can be reached now, and for how long it could not.

The writer (`server.storage.writer.Store`) is the one that finds out: a batch that cannot be
committed because the database is unreachable (`StoreUnavailable`) marks the store down, the
first batch committed after marks it up again. What depends on it reads it here: the tables stop
their clocks while it is down and move them on by the time it was down (`paused_total`), and the
server tells every connection when it goes down and comes back (`watch`).

Times are trio's clock (`trio.current_time()`), as the tables' clocks are.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import structlog
import trio

log = structlog.get_logger("server.storage")

#: Outages remembered (a table catches up with those it has not seen at its next step).
KEPT = 16


class StoreHealth:
    """Up or down, with the time spent down (finished outages only) and who wants to know."""

    def __init__(self) -> None:
        self.available = True
        self.down_since: float | None = None  # trio time the current outage began
        self.paused_total = 0.0  # seconds of the outages that are over
        # The outages that are over, (began, ended) in trio time, the latest `KEPT` of them.
        self.periods: list[tuple[float, float]] = []
        self.outages = 0
        self.reason = ""
        self.back = trio.Event()  # set when the store comes back (a fresh one at each outage)
        self.last_ok = -math.inf  # trio time of the last commit or probe that reached it
        self.back.set()
        self._watchers: list[Callable[[bool], None]] = []

    def watch(self, watcher: Callable[[bool], None]) -> None:
        """`watcher(available)` is called (in the trio thread, without blocking) at each change."""
        self._watchers.append(watcher)

    def paused_until(self, now: float) -> float:
        """Seconds the store has been down, the outage in progress included, up to `now`."""
        current = 0.0 if self.down_since is None else max(0.0, now - self.down_since)
        return self.paused_total + current

    def down(self, reason: str) -> None:
        """It cannot be reached: down since the last time it could be (a quiet server finds out
        at its next probe, up to a second later, and that second is the outage's too)."""
        if not self.available:
            return
        now = trio.current_time()
        self.available = False
        self.down_since = now if self.last_ok == -math.inf else max(self.last_ok, now - 2.0)
        self.outages += 1
        self.reason = reason
        self.back = trio.Event()
        log.error("store_unavailable", error=reason)
        self._tell(False)

    def up(self) -> None:
        self.last_ok = trio.current_time()
        if self.available:
            return
        assert self.down_since is not None
        now = trio.current_time()
        lasted = now - self.down_since
        self.paused_total += lasted
        self.periods = [*self.periods[-(KEPT - 1) :], (self.down_since, now)]
        self.down_since = None
        self.available = True
        self.back.set()
        log.warning("store_back", down_s=round(lasted, 3))
        self._tell(True)

    def _tell(self, available: bool) -> None:
        for watcher in list(self._watchers):
            watcher(available)
