"""Accounts: register a name for a token shown once, log in by token, guests, bot flag.

A token reads `<account id>.<secret>`; only a salted hash of the secret is stored. The id prefix
lets login find the row without a secret-dependent lookup, and `hmac.compare_digest` compares the
hashes in constant time. The secret has 192 random bits, so no password-style stretching is
needed; a modest PBKDF2 count only keeps a stolen database from being a token list.

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
from dataclasses import dataclass

import trio

from server.storage import AccountRow, Store, Tx

NAME_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{1,23}$")
# A token as this server makes them: an account id (ASCII digits, at most 18: it fits SQLite's
# integer) and the secret (`secrets.token_urlsafe`'s alphabet). Anything else is refused before
# the database is asked: a superscript digit passes `str.isdigit()`, and a trailing NUL would pass
# the hash, since HMAC pads a short key with zero bytes.
TOKEN_RE = re.compile(r"[0-9]{1,18}\.[A-Za-z0-9_-]{16,64}")
HASH_ITERATIONS = 20_000


class AccountError(Exception):
    """A registration or login was refused; `code` says why. No account was created or changed."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True)
class Account:
    """Who a connection acts for. Guests and built-in bots have `id` like any other account."""

    id: int
    name: str
    is_bot: bool
    is_guest: bool


def _hash(secret: str, salt: bytes) -> bytes:
    return hashlib.pbkdf2_hmac("sha256", secret.encode(), salt, HASH_ITERATIONS)


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
    secret, salt, digest = await _new_secret()

    def write(tx: Tx) -> int:
        return tx.insert_account(name, salt, digest, is_bot=is_bot, is_guest=False)

    try:
        account_id = await store.call(write)
    except ValueError as exc:
        raise AccountError("name_taken", f"the name {name!r} is taken") from exc
    return Account(account_id, name, is_bot, False), f"{account_id}.{secret}"


async def _new_secret() -> tuple[str, bytes, bytes]:
    """A fresh secret with its salt and salted hash: the secret goes to the client once (as part
    of its token), only the salt and hash are stored. Hashed in a thread: PBKDF2 takes a while."""
    secret = secrets.token_urlsafe(24)
    salt = secrets.token_bytes(16)
    digest = await trio.to_thread.run_sync(_hash, secret, salt)
    return secret, salt, digest


async def login(store: Store, token: str) -> Account:
    """The account a token belongs to; raises `AccountError('bad_token', ...)` otherwise."""
    bad = AccountError("bad_token", "the token is not valid on this server")
    if TOKEN_RE.fullmatch(token) is None:
        raise bad
    account_id_text, _dot, secret = token.partition(".")
    row = await store.call(lambda tx: tx.account_by_id(int(account_id_text)))
    if row is None or row.token_salt is None or row.token_hash is None:
        # Hash anyway so a wrong id and a wrong secret take about the same time.
        await trio.to_thread.run_sync(_hash, secret, b"0" * 16)
        raise bad
    digest = await trio.to_thread.run_sync(_hash, secret, row.token_salt)
    if not hmac.compare_digest(digest, row.token_hash):
        raise bad
    if row.is_guest:
        # An unused guest expires some time after its last login (`expire_guests`).
        seen = [row.id]
        await store.call(lambda tx: tx.guest_seen(seen))
    return Account(row.id, row.name, row.is_bot, row.is_guest)


async def guest(store: Store, wanted: str | None = None) -> tuple[Account, str]:
    """A fresh guest account, name `guest-<random>` (or `<wanted>~<random>`), and its resume
    token: shown once, like a registered account's, and `login` takes it back (so a guest whose
    connection drops can come back to its seat)."""
    secret, salt, digest = await _new_secret()
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
