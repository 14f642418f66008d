"""Logins cannot be made to cost the server hashes (issue 37, item 2): a token of an account that
does not exist is refused before any hashing, wrong tokens past the limits are refused before the
database is asked, new tokens are stored with a cheap hash and old (PBKDF2) ones still log in, on
the hashing thread."""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from server import accounts
from server.accounts import AccountError
from server.config import Limits
from server.hashing import Hashers
from server.quotas import TokenGuard
from server.storage import Store, Tx, open_store


class HashCount:
    """How many PBKDF2 and HMAC computations ran (any thread) while installed."""

    def __init__(self) -> None:
        self.pbkdf2 = 0
        self.hmac = 0


@pytest.fixture
def hashes(monkeypatch: pytest.MonkeyPatch) -> Iterator[HashCount]:
    count = HashCount()
    real_pbkdf2: Callable[..., bytes] = hashlib.pbkdf2_hmac
    real_new: Callable[..., Any] = hmac.new

    def pbkdf2(*args: Any, **kwargs: Any) -> bytes:
        count.pbkdf2 += 1
        return real_pbkdf2(*args, **kwargs)

    def new(*args: Any, **kwargs: Any) -> Any:
        count.hmac += 1
        return real_new(*args, **kwargs)

    monkeypatch.setattr(hashlib, "pbkdf2_hmac", pbkdf2)
    monkeypatch.setattr(hmac, "new", new)
    yield count


async def legacy_account(store: Store, name: str) -> str:
    """An account stored as servers before this change stored it (PBKDF2, no scheme byte);
    returns its token."""
    secret = secrets.token_urlsafe(24)
    salt = secrets.token_bytes(16)
    digest = accounts.legacy_digest(secret, salt)
    assert len(digest) == 32

    def write(tx: Tx) -> int:
        return tx.insert_account(name, salt, digest, is_bot=False, is_guest=False)

    return f"{await store.call(write)}.{secret}"


async def test_a_token_of_no_account_is_refused_before_any_hashing(
    tmp_path: Path, hashes: HashCount
) -> None:
    with trio.fail_after(10):
        async with open_store(tmp_path / "s.db") as store:
            bot = await accounts.builtin_bot(store, "bot:random")  # an account with no token
            before = (hashes.pbkdf2, hashes.hmac)
            for token in [
                "99999.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                f"{bot.id}.AAAAAAAAAAAAAAAAAAAA",
            ]:
                with pytest.raises(AccountError) as info:
                    await accounts.login(store, token)
                assert info.value.code == "bad_token"
            assert (hashes.pbkdf2, hashes.hmac) == before


async def test_new_tokens_are_stored_with_the_cheap_hash_and_old_ones_log_in_and_are_upgraded(
    tmp_path: Path, hashes: HashCount
) -> None:
    with trio.fail_after(20):
        async with open_store(tmp_path / "s.db") as store:
            account, token = await accounts.register(store, "newer")
            row = await store.call(lambda tx: tx.account_by_id(account.id))
            assert row is not None and row.token_hash is not None and row.token_salt is not None
            assert row.token_hash[0] == accounts.HASH_HMAC and len(row.token_hash) == 33
            assert not accounts.is_legacy(row.token_hash)
            assert hashes.pbkdf2 == 0  # registering no longer stretches
            assert await accounts.login(store, token) == account
            assert hashes.pbkdf2 == 0
            old = await legacy_account(store, "older")
            hashes.pbkdf2 = 0  # (making it took one)
            hashers = Hashers.make()
            hasher = hashers.suspect  # (no guard: no address is known to be in good standing)
            try:
                logged = await accounts.login(store, old, hashers=hashers, network="10.0.0.1")
                assert logged.name == "older"
                assert hashes.pbkdf2 == 1 and hasher.jobs_done == 1  # on the hashing thread
                # Proved once, the token is stored with the cheap hash: no PBKDF2 again.
                old_id = int(old.partition(".")[0])
                row = await store.call(lambda tx: tx.account_by_id(old_id))
                assert row is not None and row.token_hash is not None
                assert not accounts.is_legacy(row.token_hash)
                assert (await accounts.login(store, old, hashers=hashers)).name == "older"
                assert hashes.pbkdf2 == 1 and hasher.jobs_done == 1
                # A wrong token for an old hash is checked on the thread and changes nothing.
                stale = await legacy_account(store, "stale")
                with pytest.raises(AccountError):
                    wrong = stale[:-4] + ("AAAA" if not stale.endswith("AAAA") else "BBBB")
                    await accounts.login(store, wrong, hashers=hashers, network="10.0.0.1")
                stale_id = int(stale.partition(".")[0])
                row = await store.call(lambda tx: tx.account_by_id(stale_id))
                assert row is not None and row.token_hash is not None
                assert accounts.is_legacy(row.token_hash)
            finally:
                hashers.close()


async def test_wrong_tokens_past_the_limit_are_refused_before_the_database(
    tmp_path: Path, hashes: HashCount
) -> None:
    limits = Limits(wrong_tokens_burst=3, wrong_tokens_per_second=0.5)
    guard = TokenGuard(limits)
    hashers = Hashers.make()
    with trio.fail_after(20):
        async with open_store(tmp_path / "s.db") as store:
            old = await legacy_account(store, "target")
            hashes.pbkdf2 = 0  # (making it took one)
            account_id = old.partition(".")[0]
            codes = []
            for _ in range(5):
                try:
                    await accounts.login(
                        store,
                        f"{account_id}.{'A' * 32}",
                        guard=guard,
                        hashers=hashers,
                        network="10.0.0.9",
                    )
                except AccountError as exc:
                    codes.append((exc.code, exc.retry_ms))
            hashers.close()
            assert [code for code, _ms in codes] == ["bad_token"] * 3 + ["rate_limited"] * 2
            assert all(ms is not None and 0 < ms <= 2000 for _code, ms in codes[3:]), codes
            assert hashes.pbkdf2 == 3  # the refused ones cost no hash
            # The owner, from another address, logs in at once.
            owner = await accounts.login(store, old, guard=guard, network="10.0.0.10")
            assert owner.name == "target"


async def test_an_address_in_good_standing_is_checked_on_the_clean_lane(tmp_path: Path) -> None:
    """The owner's first login with an old token, from an address with no wrong token behind it,
    is checked at normal priority; a guesser's on the lowest."""
    guard = TokenGuard(Limits())
    hashers = Hashers.make()
    try:
        with trio.fail_after(20):
            async with open_store(tmp_path / "s.db") as store:
                owner = await legacy_account(store, "owner")
                target = await legacy_account(store, "target")
                logged = await accounts.login(
                    store, owner, guard=guard, hashers=hashers, network="10.0.0.1"
                )
                assert logged.name == "owner"
                assert (hashers.clean.jobs_done, hashers.suspect.jobs_done) == (1, 0)
                wrong = f"{target.partition('.')[0]}.{'A' * 32}"
                for _ in range(3):
                    with pytest.raises(AccountError):
                        await accounts.login(
                            store, wrong, guard=guard, hashers=hashers, network="10.0.0.2"
                        )
                # The guesser's first try was in good standing; the rest were not.
                assert (hashers.clean.jobs_done, hashers.suspect.jobs_done) == (2, 2)
                # Its own right token, too, now waits on the lowest priority (for 10 minutes).
                await accounts.login(
                    store, target, guard=guard, hashers=hashers, network="10.0.0.2"
                )
                assert hashers.suspect.jobs_done == 3
    finally:
        hashers.close()


async def test_fresh_addresses_cannot_keep_the_clean_lane_busy(tmp_path: Path) -> None:
    """Each fresh address is in good standing, but the clean lane takes only its rate of checks
    (`Limits.clean_hash_checks_*`); the rest wait on the lowest priority like a guesser's."""
    guard = TokenGuard(Limits(clean_hash_checks_per_second=0.001, clean_hash_checks_burst=2))
    hashers = Hashers.make()
    try:
        with trio.fail_after(20):
            async with open_store(tmp_path / "s.db") as store:
                target = await legacy_account(store, "target")
                wrong = f"{target.partition('.')[0]}.{'A' * 32}"
                for i in range(5):
                    with pytest.raises(AccountError):
                        await accounts.login(
                            store, wrong, guard=guard, hashers=hashers, network=f"10.1.0.{i}"
                        )
                assert (hashers.clean.jobs_done, hashers.suspect.jobs_done) == (2, 3)
    finally:
        hashers.close()
