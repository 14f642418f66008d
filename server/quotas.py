"""Limits per network address and per table: token buckets on an explicit clock (pure: no trio).

A client's address is cheap to keep but not to change, while accounts (guests above all) and
connections are cheap to make; so what one client could take from everyone else (tables, guest
accounts, guesses at join codes) is counted per address too. Addresses are grouped as a network
would hand them out (`network_of`): an IPv6 host commonly holds a whole /64, so its /64 counts as
one address.

Every bucket holds `burst` tokens and refills at `rate` a second. A map of buckets forgets a key
whose bucket is full again (it remembers nothing then) and never holds more than `max_keys`, so
many addresses cost bounded memory.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass

from server.config import Limits

MAX_KEYS = 65_536  # buckets one map keeps; past it, full ones go, then the oldest


def network_of(host: str) -> str:
    """The address a peer counts as: an IPv4 address itself (an IPv4-mapped IPv6 one too), an
    IPv6 address's /64 network; anything that is not an IP address (a test's memory stream) as
    it is."""
    try:
        address = ipaddress.ip_address(host.strip("[]").split("%", 1)[0])
    except ValueError:
        return host
    if isinstance(address, ipaddress.IPv6Address):
        if address.ipv4_mapped is not None:
            return str(address.ipv4_mapped)
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return str(address)


@dataclass
class Bucket:
    """`burst` tokens at most, refilled at `rate` a second from `stamp` (seconds, any clock)."""

    rate: float
    burst: float
    tokens: float
    stamp: float

    def refill(self, now: float) -> None:
        if now > self.stamp:
            self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = max(self.stamp, now)

    def retry_ms(self, now: float) -> int:
        """0 when a token is there now; else how long until one is, in ms, rounded up."""
        self.refill(now)
        missing = 1.0 - self.tokens
        if missing <= 0:
            return 0
        if self.rate <= 0:
            return 2**31 - 1  # never: the most a Millis says
        return max(1, math.ceil(missing / self.rate * 1000))

    def take(self, now: float) -> bool:
        """Take a token if there is one."""
        self.refill(now)
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False

    def full(self, now: float) -> bool:
        self.refill(now)
        return self.tokens >= self.burst


class Buckets:
    """A bucket per key (an address, a table), each full when first asked about."""

    def __init__(self, rate: float, burst: int, max_keys: int = MAX_KEYS) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.max_keys = max_keys
        self._buckets: dict[str, Bucket] = {}

    def __len__(self) -> int:
        return len(self._buckets)

    def _bucket(self, key: str, now: float) -> Bucket:
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self.max_keys:
                self._prune(now)
            bucket = self._buckets[key] = Bucket(self.rate, self.burst, self.burst, now)
        return bucket

    def _prune(self, now: float) -> None:
        """Forget the keys whose buckets are full (nothing is lost), then, if that is not enough,
        the oldest, down to three quarters of `max_keys` (so pruning is rare)."""
        for key in [k for k, bucket in self._buckets.items() if bucket.full(now)]:
            del self._buckets[key]
        excess = len(self._buckets) - self.max_keys * 3 // 4
        for key in list(self._buckets)[: max(0, excess)]:
            del self._buckets[key]

    def retry_ms(self, key: str, now: float) -> int:
        """0 when `key` may go ahead now; else how long until it may, in ms."""
        bucket = self._buckets.get(key)
        return 0 if bucket is None else bucket.retry_ms(now)

    def take(self, key: str, now: float) -> bool:
        """Take one of `key`'s tokens; False (nothing taken) when it has none left."""
        return self._bucket(key, now).take(now)

    def full(self, key: str, now: float) -> bool:
        """Whether `key` has every token of its burst (nothing taken lately, or all refilled)."""
        bucket = self._buckets.get(key)
        return bucket is None or bucket.full(now)

    def give_back(self, key: str, now: float) -> None:
        """Return a token taken for something that turned out not to count (never above `burst`)."""
        bucket = self._buckets.get(key)
        if bucket is not None:
            bucket.refill(now)
            bucket.tokens = min(bucket.burst, bucket.tokens + 1)

    def forget(self, key: str) -> None:
        self._buckets.pop(key, None)


@dataclass(frozen=True)
class AddressQuotas:
    """What one address may do however many connections and accounts it has, server-wide."""

    guests: Buckets  # guest accounts made (`max_guests_per_address` at once, as many an hour)
    # Accounts registered (`max_registrations_per_address` at once, as many an hour): a name is
    # one request away and stays for good, so an address may not squat them without end.
    registrations: Buckets
    lobby_chat: Buckets  # lobby chat lines (everyone logged in hears them)

    @classmethod
    def from_limits(cls, limits: Limits) -> AddressQuotas:
        return cls(
            guests=Buckets(limits.max_guests_per_address / 3600.0, limits.max_guests_per_address),
            registrations=Buckets(
                limits.max_registrations_per_address / 3600.0,
                limits.max_registrations_per_address,
            ),
            lobby_chat=Buckets(
                limits.address_lobby_chat_per_second, limits.address_lobby_chat_burst
            ),
        )


class JoinCodeGuard:
    """Wrong join codes, counted per table and per address (`Limits.wrong_codes_*`).

    The table's limit is the looser (more at once, faster refill), so one address alone can
    never use it up and lock the table's friends out: that takes several addresses guessing at
    full speed, and then only slows them too."""

    def __init__(self, limits: Limits) -> None:
        self.by_address = Buckets(limits.wrong_codes_per_second, limits.wrong_codes_burst)
        self.by_table = Buckets(limits.table_wrong_codes_per_second, limits.table_wrong_codes_burst)

    def retry_ms(self, table_id: str, network: str | None, now: float) -> int:
        """0 when a code may be tried at `table_id` from `network` now; else how long to wait."""
        wait = self.by_table.retry_ms(table_id, now)
        if network is not None:
            wait = max(wait, self.by_address.retry_ms(network, now))
        return wait

    def wrong(self, table_id: str, network: str | None, now: float) -> None:
        """A wrong code was tried: it counts against the table and the address."""
        self.by_table.take(table_id, now)
        if network is not None:
            self.by_address.take(network, now)

    def forget_table(self, table_id: str) -> None:
        self.by_table.forget(table_id)


@dataclass(frozen=True)
class Admission:
    """What `TokenGuard.admit` took for one login, so `TokenGuard.settle` can give it back."""

    network: str | None
    account: str
    took_account: bool
    # The address was in good standing when admitted: no wrong token from it lately and no other
    # login of it in flight (`TokenGuard.admit`); its check may go to the clean hashing lane.
    clean: bool = False


class TokenGuard:
    """Wrong tokens (`login`, `hello.token`), counted per address and per account
    (`Limits.wrong_tokens_*`), so that guessing costs the guesser time, never the server a hash.

    A login is admitted only with a token in its address's bucket, and the token is taken at once
    (given back when the token is right), so however many connections an address has, it has at
    most `wrong_tokens_burst` logins in flight. The account's bucket slows guesses aimed at one
    account from many addresses; but it holds back only the addresses that have themselves guessed
    wrong at that account lately (within `wrong_token_memory` seconds). Anyone else, the account's
    owner above all, is admitted whatever the others did, so guessing at someone's account never
    locks them out: at worst it slows the guessers (and an owner who shares their address).
    """

    def __init__(self, limits: Limits) -> None:
        self.by_address = Buckets(limits.wrong_tokens_per_second, limits.wrong_tokens_burst)
        self.by_account = Buckets(
            limits.account_wrong_tokens_per_second, limits.account_wrong_tokens_burst
        )
        # One token per (address, account) pair, refilled after `wrong_token_memory` seconds:
        # empty means that address guessed wrong at that account lately.
        memory = max(limits.wrong_token_memory, 1e-3)
        self.guessed = Buckets(1.0 / memory, 1)
        # The same per address, whatever the account: empty means a wrong token lately.
        self.address_guessed = Buckets(1.0 / memory, 1)
        # Checks the clean hashing lane (normal priority) may take, from all addresses together:
        # fresh addresses are cheap on some networks (127.0.0.0/8, a /64's neighbours counted
        # apart), so good standing alone must not let them keep a normal-priority core busy.
        self.clean_checks = Bucket(
            limits.clean_hash_checks_per_second,
            limits.clean_hash_checks_burst,
            limits.clean_hash_checks_burst,
            0.0,
        )

    def take_clean_check(self, now: float) -> bool:
        """Whether a slow check of an address in good standing may go to the clean lane now (a
        token taken); False: it goes to the suspect lane like everyone else's."""
        return self.clean_checks.take(now)

    def clean(self, network: str | None, now: float) -> bool:
        """An address in good standing: known, no wrong token from it within `wrong_token_memory`
        seconds, and no login of it in flight (its bucket is full)."""
        return (
            network is not None
            and self.address_guessed.retry_ms(network, now) == 0
            and self.by_address.full(network, now)
        )

    def admit(self, account_id: int | None, network: str | None, now: float) -> Admission | int:
        """An `Admission` (tokens taken) when a login may be checked now, else the ms to wait
        (nothing taken). `network` None (no address known) is held to the account's limit;
        `account_id` None (a token that names no account: not even a token's form) to the
        address's alone."""
        clean = self.clean(network, now)
        if account_id is None:
            wait = self.by_address.retry_ms(network, now) if network is not None else 0
            if wait:
                return wait
            if network is not None:
                self.by_address.take(network, now)
            return Admission(network, "", took_account=False, clean=clean)
        account = str(account_id)
        pair = f"{network}|{account}"
        wait = self.by_address.retry_ms(network, now) if network is not None else 0
        stranger = network is not None and self.guessed.retry_ms(pair, now) == 0
        if not stranger:
            wait = max(wait, self.by_account.retry_ms(account, now))
        if wait:
            return wait
        if network is not None:
            self.by_address.take(network, now)
        took_account = self.by_account.take(account, now)
        return Admission(network, account, took_account, clean=clean)

    def settle(self, admission: Admission, now: float, *, wrong: bool, known: bool) -> None:
        """The login was checked: a right token gives back what `admit` took; a wrong one keeps
        it, and marks the address as a guesser at a `known` account. A token for an account that
        does not exist gives the account's token back (no bucket is kept for made-up ids)."""
        if not wrong and admission.network is not None:
            self.by_address.give_back(admission.network, now)
        if admission.took_account and (not wrong or not known):
            self.by_account.give_back(admission.account, now)
        if wrong and admission.network is not None:
            self.address_guessed.take(admission.network, now)
        if wrong and known and admission.account and admission.network is not None:
            self.guessed.take(f"{admission.network}|{admission.account}", now)

    def cancel(self, admission: Admission, now: float) -> None:
        """The login was not checked after all (the hashing queue was full): give back all."""
        if admission.network is not None:
            self.by_address.give_back(admission.network, now)
        if admission.took_account:
            self.by_account.give_back(admission.account, now)
