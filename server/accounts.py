"""Accounts: register a name for a token shown once, log in by token, guests, bot flag.

A token reads `<account id>.<secret>`; only a salted hash of the secret is stored. The id prefix
lets login find the row without a secret-dependent lookup, and `hmac.compare_digest` compares the
hashes in constant time. Account ids are small public integers (the order of registration), so a
login for an id that does not exist is refused at once, before any hashing: hashing anyway, to make
a missing account cost as much as a wrong secret, would hide nothing an id does not already tell,
and would let anyone spend the server's CPU with made-up ids.

The secret has 192 random bits, so it cannot be guessed and needs no password-style stretching: a
stolen database is not a token list as long as the hash is one-way. New tokens are stored as
HMAC-SHA256 of the secret keyed by a per-account salt (`HASH_HMAC`, microseconds). Tokens made
before that were stored with PBKDF2 (`LEGACY_ITERATIONS` rounds, about 5 ms of CPU each); they
still log in, checked on the hashing threads (`server.hashing`) so that however many arrive they
never cost the tables a core, and the first login that proves one stores it again with the cheap
hash (so each is paid once).
A stored hash says its own scheme: 32 bytes is the old PBKDF2, a leading `HASH_HMAC` byte the new.

Wrong tokens are slowed per address and per account (`server.quotas.TokenGuard`): past the limits
a login is refused `rate_limited` before the database or any hash is asked.

A guest gets a token too (its resume token, made and stored the same way): with it the guest logs
in again after a dropped connection and gets its seat back, exactly as an account does. Guests
made before resume tokens existed have none stored and cannot log in.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import trio

from server.hashing import Hasher, Hashers, HashQueueFull
from server.quotas import Admission, TokenGuard
from server.storage import AccountRow, Store, Tx

NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{1,23}$")
# A token as this server makes them: an account id (ASCII digits, at most 18: it fits SQLite's
# integer) and the secret (`secrets.token_urlsafe`'s alphabet). Anything else is refused before
# the database is asked: a superscript digit passes `str.isdigit()`, and a trailing NUL would pass
# the hash, since HMAC pads a short key with zero bytes.
TOKEN_RE = re.compile(r"[0-9]{1,18}\.[A-Za-z0-9_-]{16,64}")
# The old stored hash: PBKDF2-HMAC-SHA256 with this many rounds, 32 bytes, no scheme byte.
LEGACY_ITERATIONS = 20_000
LEGACY_DIGEST_BYTES = 32
# The scheme byte of the hash stored now: HMAC-SHA256(key=salt, message=secret) after it.
HASH_HMAC = 1


class AccountError(Exception):
    """A registration or login was refused; `code` says why. No account was created or changed."""

    def __init__(self, code: str, message: str, retry_ms: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_ms = retry_ms  # for `rate_limited`: how long until a retry may be accepted


@dataclass(frozen=True)
class Account:
    """Who a connection acts for. Guests and built-in bots have `id` like any other account."""

    id: int
    name: str
    is_bot: bool
    is_guest: bool


def legacy_digest(secret: str, salt: bytes) -> bytes:
    """The old stored hash (PBKDF2): slow, so checked on a hashing thread (`server.hashing`)."""
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, LEGACY_ITERATIONS)


def token_digest(secret: str, salt: bytes) -> bytes:
    """The hash stored now: its scheme byte, then HMAC-SHA256 of the secret keyed by the salt."""
    mac = hmac.new(salt, secret.encode(), hashlib.sha256).digest()
    return bytes([HASH_HMAC]) + mac


def is_legacy(stored: bytes) -> bool:
    """Whether a stored hash is the old PBKDF2 one (no scheme byte: exactly 32 bytes)."""
    return len(stored) == LEGACY_DIGEST_BYTES


def check_name(name: str) -> str:
    """Return the name if acceptable, else raise `AccountError('bad_name', ...)`."""
    if not NAME_RE.match(name):
        raise AccountError(
            "bad_name",
            "a name is 2-24 characters: letters, digits, '_', '.', '-' (not starting with . or -)",
        )
    return name


async def register(store: Store, name: str, *, is_bot: bool = False) -> tuple[Account, str]:
    """Create an account; returns it and its token, which is never stored and never shown again.

    Raises `AccountError` with code `bad_name` or `name_taken`; nothing is written then.
    """
    check_name(name)
    secret, salt, digest = _new_secret()

    def write(tx: Tx) -> int:
        return tx.insert_account(name, salt, digest, is_bot=is_bot, is_guest=False)

    try:
        account_id = await store.call(write)
    except ValueError as exc:
        raise AccountError("name_taken", f"the name {name!r} is taken") from exc
    return Account(account_id, name, is_bot, False), f"{account_id}.{secret}"


def _new_secret() -> tuple[str, bytes, bytes]:
    """A fresh secret with its salt and salted hash: the secret goes to the client once (as part
    of its token), only the salt and hash are stored. Cheap: no thread needed."""
    secret = secrets.token_urlsafe(24)
    salt = secrets.token_bytes(16)
    return secret, salt, token_digest(secret, salt)


async def login(
    store: Store,
    token: str,
    *,
    guard: TokenGuard | None = None,
    hashers: Hashers | None = None,
    network: str | None = None,
) -> Account:
    """The account a token belongs to; raises `AccountError('bad_token', ...)` otherwise, or
    `AccountError('rate_limited', ..., retry_ms)` when `guard` holds this address or account back
    (`server.quotas.TokenGuard`; then nothing was looked up or hashed). `network` is the address
    the login came from (`server.quotas.network_of`); old hashes are checked on a thread of
    `hashers` (`clean` for an address in good standing, else `suspect`) in that address's turn.
    Nothing is changed but a guest's last-seen time, and an old hash proved right is stored
    again as the new kind."""
    bad = AccountError("bad_token", "the token is not valid on this server")
    account_id_text, _dot, secret = token.partition(".")
    # Not a token's form: no account to look up, but a wrong token all the same, counted against
    # the address (cheap to refuse, but a refusal answered at once is a flood's fuel).
    account_id = int(account_id_text) if TOKEN_RE.fullmatch(token) is not None else None
    admission: Admission | None = None
    if guard is not None:
        now = trio.current_time()
        admitted = guard.admit(account_id, network, now)
        if isinstance(admitted, int):
            raise AccountError(
                "rate_limited",
                "too many wrong tokens from this address or for this account; wait and retry",
                retry_ms=admitted,
            )
        admission = admitted

    def settle(*, wrong: bool, known: bool) -> None:
        if guard is not None and admission is not None:
            guard.settle(admission, trio.current_time(), wrong=wrong, known=known)

    if account_id is None:
        settle(wrong=True, known=False)
        raise bad
    known_id = account_id
    row = await store.call(lambda tx: tx.account_by_id(known_id))
    if row is None or row.token_salt is None or row.token_hash is None:
        # Refused before any hashing: ids are public (see the module's docstring).
        settle(wrong=True, known=False)
        raise bad
    salt, stored = row.token_salt, row.token_hash
    if is_legacy(stored):
        try:
            clean = (
                admission is not None
                and admission.clean
                and guard is not None
                and guard.take_clean_check(trio.current_time())
            )
            lane = None if hashers is None else hashers.clean if clean else hashers.suspect
            digest = await _slow(lane, network, partial(legacy_digest, secret, salt))
        except HashQueueFull as exc:
            if guard is not None and admission is not None:
                guard.cancel(admission, trio.current_time())
            raise AccountError(
                "rate_limited", "too many logins from this address at once; retry", exc.retry_ms
            ) from None
    else:
        digest = token_digest(secret, salt)
    if not hmac.compare_digest(digest, stored):
        settle(wrong=True, known=True)
        raise bad
    settle(wrong=False, known=True)
    if is_legacy(stored):
        # The token is proved: store it with the cheap hash from now on, so this account's old
        # slow hash is paid for once (a concurrent login's upgrade wins; both hashes are sound).
        new_salt = secrets.token_bytes(16)
        new_digest = token_digest(secret, new_salt)
        await store.call(lambda tx: tx.upgrade_token_hash(row.id, stored, new_salt, new_digest))
    if row.is_guest:
        # An unused guest expires some time after its last login (`expire_guests`).
        seen = [row.id]
        await store.call(lambda tx: tx.guest_seen(seen))
    return Account(row.id, row.name, row.is_bot, row.is_guest)


async def _slow(hasher: Hasher | None, network: str | None, fn: Callable[[], bytes]) -> bytes:
    """`fn()` on `hasher`'s thread in `network`'s turn, or (no hasher) in a trio worker thread."""
    if hasher is None:
        return await trio.to_thread.run_sync(fn)
    return await hasher.run(network if network is not None else "", fn)


async def guest(store: Store, wanted: str | None = None) -> tuple[Account, str]:
    """A fresh guest account, name `guest-<random>` (or `<wanted>~<random>`), and its resume
    token: shown once, like a registered account's, and `login` takes it back (so a guest whose
    connection drops can come back to its seat)."""
    secret, salt, digest = _new_secret()
    for _attempt in range(8):  # bounded: a collision of 40 random bits is vanishingly rare
        name = (
            f"guest-{secrets.token_hex(5)}"
            if wanted is None
            else f"{wanted}~{secrets.token_hex(2)}"
        )

        def write(tx: Tx, name: str = name) -> int:
            return tx.insert_account(name, salt, digest, is_bot=False, is_guest=True)

        try:
            account_id = await store.call(write)
        except ValueError:
            continue
        return Account(account_id, name, False, True), f"{account_id}.{secret}"
    raise AccountError("name_taken", "could not find a free guest name; try again")


async def expire_guests(store: Store, ttl: float, in_use: set[int]) -> int:
    """Delete the guest accounts nobody has used for `ttl` seconds: not logged in since, and not
    connected or seated now (`in_use`: the accounts of live connections and of seats, which count
    as seen now), with no game results (a guest who finished a game stays, as its games' records
    name it). Returns how many went. A deleted guest's resume token no longer logs in."""
    cutoff = time.time() - ttl
    ids = sorted(in_use)
    return await store.call(lambda tx: tx.expire_guests(cutoff, ids))


def cannot_return(row: AccountRow) -> bool:
    """Whether a seat held for this account after a restart would wait for nobody: a guest made
    before resume tokens has no token to log in with. (Every other guest, like every account,
    can come back.)"""
    return row.is_guest and row.token_hash is None


async def builtin_bot(store: Store, name: str) -> Account:
    """The account of a built-in bot (`name` like `bot:heuristic`), created on first use."""
    row = await store.call(lambda tx: tx.account_by_name(name))
    if row is None:

        def write(tx: Tx) -> int:
            existing = tx.account_by_name(name)
            if existing is not None:
                return existing.id
            return tx.insert_account(name, None, None, is_bot=True, is_guest=False)

        return Account(await store.call(write), name, True, False)
    return Account(row.id, row.name, row.is_bot, row.is_guest)
