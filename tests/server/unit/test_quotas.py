"""Per-address and per-table limits (`server.quotas`): pure arithmetic on an explicit clock."""

from __future__ import annotations

import pytest

from server.config import Limits
from server.quotas import Bucket, Buckets, JoinCodeGuard, TokenGuard, network_of


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


# ---------------------------------------------------------------- wrong tokens (issue 37, item 2)

GUARD_LIMITS = Limits(
    wrong_tokens_burst=4,
    wrong_tokens_per_second=1.0,
    account_wrong_tokens_burst=3,
    account_wrong_tokens_per_second=0.5,
    wrong_token_memory=600.0,
)


def guess(guard: TokenGuard, account: int, network: str | None, now: float) -> int:
    """One wrong token: 0 if it was checked (and found wrong), else the wait it was refused with."""
    admitted = guard.admit(account, network, now)
    if isinstance(admitted, int):
        return admitted
    guard.settle(admitted, now, wrong=True, known=True)
    return 0


def test_wrong_tokens_are_slowed_per_address() -> None:
    guard = TokenGuard(GUARD_LIMITS)
    # Four at once (each at another account, so only the address counts), then one a second.
    assert [guess(guard, account, "10.0.0.1", 0.0) for account in range(5)] == [0] * 4 + [1000]
    assert guess(guard, 9, "10.0.0.1", 0.5) == 500
    assert guess(guard, 9, "10.0.0.1", 1.0) == 0
    # Another address is untouched.
    assert guess(guard, 9, "10.0.0.2", 1.0) == 0


def test_right_tokens_cost_nothing() -> None:
    guard = TokenGuard(GUARD_LIMITS)
    for _ in range(100):
        admitted = guard.admit(1, "10.0.0.1", 0.0)
        assert not isinstance(admitted, int)
        guard.settle(admitted, 0.0, wrong=False, known=True)
    assert guess(guard, 1, "10.0.0.1", 0.0) == 0


def test_logins_in_flight_from_one_address_are_bounded_by_its_burst() -> None:
    """Tokens are taken on admission, so many connections of one address cannot all be checked
    at once before the first wrong answer counts."""
    guard = TokenGuard(GUARD_LIMITS)
    admitted = [guard.admit(account, "10.0.0.1", 0.0) for account in range(6)]
    assert [isinstance(a, int) for a in admitted] == [False] * 4 + [True] * 2


def test_guessers_at_an_account_are_slowed_but_its_owner_is_never_locked_out() -> None:
    guard = TokenGuard(GUARD_LIMITS)
    # Three addresses guess at account 7, each one a second (inside its own address's limit):
    # after its first guess an address is held to the account's bucket, which empties.
    waits = []
    for second in range(6):
        for address in ("10.0.0.1", "10.0.0.2", "10.0.0.3"):
            waits.append(guess(guard, 7, address, float(second)))
    assert waits[:3] == [0, 0, 0]  # each address's first guess
    assert any(wait > 0 for wait in waits[3:]), waits
    refused_for = guard.admit(7, "10.0.0.1", 5.0)
    assert isinstance(refused_for, int) and 0 < refused_for <= 2000  # slowed, not locked
    # The owner, from an address that never guessed wrong at it, is let through at once.
    owner = guard.admit(7, "192.168.5.5", 5.0)
    assert not isinstance(owner, int)
    guard.settle(owner, 5.0, wrong=False, known=True)
    # A guesser is remembered for `wrong_token_memory` seconds, then is a stranger again.
    assert guard.guessed.retry_ms("10.0.0.1|7", 6.0) > 0
    assert guard.guessed.retry_ms("10.0.0.1|7", 6.0 + 600.0) == 0


def test_made_up_account_ids_count_against_the_address_only() -> None:
    guard = TokenGuard(GUARD_LIMITS)
    for account in range(4):
        admitted = guard.admit(10_000 + account, "10.0.0.1", 0.0)
        assert not isinstance(admitted, int)
        guard.settle(admitted, 0.0, wrong=True, known=False)
    assert isinstance(guard.admit(1, "10.0.0.1", 0.0), int)  # the address's burst is spent
    assert guard.guessed.retry_ms("10.0.0.1|10000", 0.0) == 0  # nothing kept per made-up id
    assert guard.by_account.retry_ms("10000", 0.0) == 0


def test_a_cancelled_login_gives_everything_back() -> None:
    guard = TokenGuard(GUARD_LIMITS)
    for _ in range(10):
        admitted = guard.admit(1, "10.0.0.1", 0.0)
        assert not isinstance(admitted, int)
        guard.cancel(admitted, 0.0)
    assert guard.by_address.retry_ms("10.0.0.1", 0.0) == 0


def test_what_is_not_even_a_token_counts_against_the_address_alone() -> None:
    guard = TokenGuard(GUARD_LIMITS)
    for _ in range(4):
        admitted = guard.admit(None, "10.0.0.1", 0.0)
        assert not isinstance(admitted, int) and not admitted.took_account
        guard.settle(admitted, 0.0, wrong=True, known=False)
    assert guard.admit(None, "10.0.0.1", 0.0) == 1000
    assert len(guard.by_account) == 0 and len(guard.guessed) == 0


def test_the_clean_hashing_lane_takes_a_bounded_number_of_checks() -> None:
    """However many fresh addresses there are, the normal-priority lane takes at most its rate."""
    guard = TokenGuard(Limits(clean_hash_checks_per_second=2.0, clean_hash_checks_burst=3))
    assert [guard.take_clean_check(100.0) for _ in range(4)] == [True] * 3 + [False]
    assert not guard.take_clean_check(100.2)
    assert guard.take_clean_check(100.5)  # one more every half second
