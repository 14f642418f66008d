"""Per-address and per-table limits (`server.quotas`): pure arithmetic on an explicit clock."""

from __future__ import annotations

import pytest

from server.config import Limits
from server.quotas import Bucket, Buckets, JoinCodeGuard, network_of


@pytest.mark.parametrize(
    ("host", "network"),
    [
        ("192.168.1.20", "192.168.1.20"),
        ("::ffff:192.168.1.20", "192.168.1.20"),  # an IPv4 client of a dual-stack listener
        ("2001:db8:1:2:aaaa:bbbb:cccc:dddd", "2001:db8:1:2::/64"),
        ("2001:db8:1:2::1", "2001:db8:1:2::/64"),  # the same host's other address: the same
        ("[2001:db8:1:3::1]", "2001:db8:1:3::/64"),
        ("fe80::1%eth0", "fe80::/64"),
        ("memory", "memory"),  # not an IP address (tests over memory streams): as it is
    ],
)
def test_an_ipv6_host_counts_as_its_64(host: str, network: str) -> None:
    assert network_of(host) == network


def test_a_bucket_gives_its_burst_then_its_rate() -> None:
    bucket = Bucket(rate=0.2, burst=5, tokens=5, stamp=100.0)
    assert [bucket.take(100.0) for _ in range(6)] == [True] * 5 + [False]
    assert bucket.retry_ms(100.0) == 5000
    assert bucket.retry_ms(102.5) == 2500
    assert bucket.take(105.0) and not bucket.take(105.0)
    assert bucket.full(1000.0)  # refilled, never above its burst
    assert bucket.tokens == 5


def test_a_bucket_ignores_a_clock_that_goes_back() -> None:
    bucket = Bucket(rate=1.0, burst=2, tokens=0, stamp=50.0)
    assert bucket.retry_ms(40.0) == 1000
    assert not bucket.take(40.0)


def test_buckets_cost_nothing_for_a_key_never_refused() -> None:
    buckets = Buckets(rate=1.0, burst=3)
    assert buckets.retry_ms("10.0.0.1", 0.0) == 0
    assert len(buckets) == 0  # asking made no bucket
    assert buckets.take("10.0.0.1", 0.0)
    assert len(buckets) == 1


def test_buckets_are_bounded_and_forget_full_ones_first() -> None:
    buckets = Buckets(rate=1.0, burst=1, max_keys=8)
    for number in range(8):
        assert buckets.take(f"10.0.0.{number}", float(number))
    # At t=7.5 the first seven have refilled (nothing to remember); the last has not.
    assert buckets.take("10.0.1.1", 7.5)
    assert len(buckets) <= 8
    assert buckets.retry_ms("10.0.0.7", 7.5) > 0  # still remembered: it was not full
    # Thousands of keys, none refilled: the map stays within its bound, the newest kept.
    for number in range(5000):
        buckets.take(f"10.1.{number // 256}.{number % 256}", 8.0)
        assert len(buckets) <= 8
    assert buckets.retry_ms("10.1.19.135", 8.0) > 0


def test_wrong_codes_are_slowed_per_address_and_per_table() -> None:
    guard = JoinCodeGuard(Limits())
    now = 0.0
    for _ in range(5):
        assert guard.retry_ms("t1", "10.0.0.1", now) == 0
        guard.wrong("t1", "10.0.0.1", now)
    assert guard.retry_ms("t1", "10.0.0.1", now) == 5000  # the address: one more every 5 s
    assert guard.retry_ms("t2", "10.0.0.1", now) == 5000  # at any table
    assert guard.retry_ms("t1", "10.0.0.2", now) == 0  # others may still try at this table
    # Twenty wrong codes at one table from many addresses close it to guessing for a second.
    for number in range(15):
        guard.wrong("t1", f"10.0.1.{number}", now)
    assert guard.retry_ms("t1", "10.0.0.3", now) == 1000
    assert guard.retry_ms("t3", "10.0.0.3", now) == 0
    guard.forget_table("t1")
    assert guard.retry_ms("t1", "10.0.0.3", now) == 0


def test_one_address_guessing_flat_out_never_locks_a_table() -> None:
    # An address tries a code whenever its own limit lets it, for an hour of virtual time;
    # meanwhile the table's limit always has room for a friend's code from elsewhere.
    guard = JoinCodeGuard(Limits())
    now = 0.0
    tried = 0
    for _ in range(100_000):  # bounded; ends at the hour
        if now > 3600:
            break
        wait = guard.retry_ms("t1", "10.6.6.6", now)
        if wait:
            now += wait / 1000
            continue
        guard.wrong("t1", "10.6.6.6", now)
        tried += 1
        assert guard.by_table.retry_ms("t1", now) == 0
    assert tried <= 5 + 3600 * 0.2 + 1  # its burst, then one every 5 s
