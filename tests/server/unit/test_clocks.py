"""The seat clock's arithmetic (server.clocks): pure, so no clock is needed at all."""

from server import clocks
from server.clocks import SeatClock


def test_a_decision_within_its_turn_leaves_the_bank_alone() -> None:
    clock = SeatClock(bank_left_ms=10_000)
    clocks.begin(clock, 100.0, version=7, turn_ms=5_000)
    assert clock.deadline == 115.0 and clock.since_version == 7
    assert clocks.left_ms(clock, 101.0) == (4_000, 10_000)
    clocks.end(clock, 104.0)
    assert clock.bank_left_ms == 10_000 and clock.deadline is None and clock.since_version == -1


def test_the_overrun_comes_off_the_bank_and_never_below_zero() -> None:
    clock = SeatClock(bank_left_ms=3_000)
    clocks.begin(clock, 0.0, version=1, turn_ms=2_000)
    assert clocks.left_ms(clock, 3.0) == (0, 2_000)  # turn spent, one second of bank used
    assert clocks.bank_after(clock, 3.0) == 2_000
    clocks.end(clock, 3.0)
    assert clock.bank_left_ms == 2_000
    clocks.begin(clock, 10.0, version=5, turn_ms=2_000)
    clocks.end(clock, 20.0)  # far past turn and bank
    assert clock.bank_left_ms == 0


def test_begin_is_idempotent_while_deciding_and_expiry_is_at_the_deadline() -> None:
    clock = SeatClock()
    clocks.begin(clock, 5.0, version=2, turn_ms=1_000)
    clocks.begin(clock, 5.5, version=3, turn_ms=9_000)  # a later version of the same decision
    assert clock.started == 5.0 and clock.since_version == 2 and clock.turn_ms == 1_000
    assert not clocks.expired(clock, 5.999)
    assert clocks.expired(clock, 6.0)
    clocks.expire_now(clock, 5.2)
    assert clocks.expired(clock, 5.2)
