"""A seat's clock: the time for each decision, the time bank, and the arithmetic between them.

Pure: every function takes `now` (a trio time, in seconds) from its caller and changes nothing but
the `SeatClock` it is given, so the table's clocks are tested without a clock at all.

A decision begins when its seat becomes one that must act (`begin`). It may take `turn_ms`; past
that it draws on the seat's bank, which lasts the whole game. When the decision ends (the seat
acted, or it no longer has to: `end`), whatever it took beyond `turn_ms` comes off the bank. The
deadline is the start plus the turn plus the bank left at the start.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass
class SeatClock:
    """One seat's clock. `started` and `deadline` are None while the seat has nothing to decide."""

    bank_left_ms: int = 0
    turn_ms: int = 0  # the time for the decision in progress (a bot's seat has a shorter one)
    started: float | None = None  # when the current decision began
    deadline: float | None = None  # by when it must be made (turn + bank), or the server acts
    # The game version at which the current decision began: an act decided on any version from
    # here on is for this decision (a simultaneous phase raises the version under a waiting seat).
    since_version: int = -1

    @property
    def deciding(self) -> bool:
        return self.started is not None


def begin(clock: SeatClock, now: float, version: int, turn_ms: int) -> None:
    """The seat must decide from `now` (at game `version`), with `turn_ms` before its bank is
    drawn on; nothing changes if it already is deciding."""
    if clock.started is not None:
        return
    clock.turn_ms = turn_ms
    clock.started = now
    clock.deadline = now + (clock.turn_ms + clock.bank_left_ms) / 1000
    clock.since_version = version


def pause(clock: SeatClock, began: float, ended: float) -> None:
    """The server could store nothing from `began` to `ended` (its database was away), so play was
    paused: a decision in progress takes none of that time. Its start and its deadline move on by
    the part of the pause it overlapped (a decision begun during the pause, by what was left)."""
    if clock.started is None:
        return
    lost = ended - max(began, clock.started)
    if lost <= 0:
        return
    clock.started += lost
    if clock.deadline is not None:
        clock.deadline += lost


def expire_now(clock: SeatClock, now: float) -> None:
    """Move the deadline to `now`: nobody will decide for this seat, the server acts at once."""
    clock.deadline = now


def bank_after(clock: SeatClock, now: float) -> int:
    """What the bank would be, in ms, if the decision in progress ended at `now`."""
    bank = clock.bank_left_ms
    if clock.started is not None:
        overrun_ms = math.ceil((now - clock.started - clock.turn_ms / 1000) * 1000)
        if overrun_ms > 0:
            bank = max(0, bank - overrun_ms)
    return bank


def end(clock: SeatClock, now: float) -> None:
    """The decision is over (made, or no longer asked for): charge the bank for its overrun."""
    if clock.started is not None:
        clock.bank_left_ms = bank_after(clock, now)
    clock.started = None
    clock.deadline = None
    clock.since_version = -1


def left_ms(clock: SeatClock, now: float) -> tuple[int, int]:
    """(time left for this decision, bank left after that), in ms, as `your_turn` and `turn` say.

    For a seat not deciding: its last turn's time and its bank.
    """
    turn_s = clock.turn_ms / 1000
    started = clock.started if clock.started is not None else now
    total_left = turn_s + clock.bank_left_ms / 1000
    if clock.deadline is not None:
        total_left = max(0.0, clock.deadline - now)
    turn_left = min(total_left, max(0.0, started + turn_s - now))
    return math.ceil(turn_left * 1000), max(0, math.ceil((total_left - turn_left) * 1000))


def expired(clock: SeatClock, now: float) -> bool:
    return clock.deadline is not None and now >= clock.deadline
