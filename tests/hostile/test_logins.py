"""Logins and registration cannot be used to spend the server's CPU or squat names (issue 37, items 2
and 3). Real `spades-server serve` processes on 127.0.0.1, clients from other loopback addresses."""

from __future__ import annotations

import secrets
import sqlite3
from pathlib import Path

import trio

from protocol.messages import (
    Error,
    LoggedIn,
    Login,
    OperatorLogin,
    Register,
    Registered,
    Welcome,
)
from server import accounts
from server.storage import Tx, open_store
from tests.hostile.peer import Peer, round_trip, welcomed
from tests.hostile.proc import ServerProcess

ATTACKER = "127.0.0.2"
OWNER = "127.0.0.3"
FLOODERS = 64
FLOOD_S = 3.0


def wrong_secret_of(token: str) -> str:
    account_id, _dot, secret = token.partition(".")
    return f"{account_id}.{'A' * len(secret) if not secret.startswith('A') else 'B' * len(secret)}"


async def test_wrong_tokens_are_slowed_per_address_and_the_owner_still_logs_in(
    tmp_path: Path,
) -> None:
    with ServerProcess(tmp_path / "s.db", "--no-ladder") as server, trio.fail_after(60):
        async with await welcomed(server.port, source=OWNER) as owner:
            token = await owner.register("victim")
        wrong = wrong_secret_of(token)
        async with (
            await welcomed(server.port, source=ATTACKER) as attacker,
            await Peer.connect(server.port, source=ATTACKER) as second,
        ):
            # A few wrong guesses are answered `bad_token` (each checked), then the next is
            # refused `rate_limited` before any hashing, with the wait; nobody is hung up on.
            codes = []
            for _ in range(25):
                reply = await attacker.request(Login(token=wrong))
                assert isinstance(reply, Error), reply
                codes.append(reply.code)
                if reply.code == "rate_limited":
                    assert reply.retry_ms is not None and 0 < reply.retry_ms <= 2000, reply
                    break
            assert set(codes[:-1]) == {"bad_token"} and codes[-1] == "rate_limited", codes
            assert len(codes) <= 21, codes  # the account's limit (10) or the address's (20)
            # `hello.token` from the same address is held back the same way: welcomed, then
            # refused `rate_limited`.
            welcome = await second.hello(token=wrong)
            assert welcome.user is None
            refusal = await second.expect(Error)
            assert refusal.code == "rate_limited" and refusal.retry_ms, refusal
            # The refused connection is not read again until its wait is over (then answered).
            start = trio.current_time()
            assert await round_trip(attacker) == []
            assert trio.current_time() - start >= 0.3
        # The owner, from another address, is not locked out by the guesses at their account.
        async with await welcomed(server.port, source=OWNER) as back:
            assert isinstance(await back.request(Login(token=token)), LoggedIn)
        async with await Peer.connect(server.port, source=OWNER) as hello_back:
            assert (await hello_back.hello(token=token)).user == "victim"


async def test_made_up_account_ids_are_refused_and_counted_per_address(tmp_path: Path) -> None:
    with ServerProcess(tmp_path / "s.db", "--no-ladder") as server, trio.fail_after(60):
        async with await welcomed(server.port, source=ATTACKER) as attacker:
            replies = [
                await attacker.request(Login(token=f"{900_000 + i}.{'A' * 32}")) for i in range(21)
            ]
            codes = [reply.code if isinstance(reply, Error) else reply.TYPE for reply in replies]
            assert codes == ["bad_token"] * 20 + ["rate_limited"], codes
            assert isinstance(replies[-1], Error) and replies[-1].retry_ms, replies[-1]
            assert 0 < replies[-1].retry_ms <= 1000
        async with await welcomed(server.port, source=OWNER) as neighbour:
            reply = await neighbour.request(Login(token=f"{900_000}.{'A' * 32}"))
            assert isinstance(reply, Error) and reply.code == "bad_token", reply


async def test_strings_that_are_not_tokens_count_as_wrong_tokens(tmp_path: Path) -> None:
    """Garbage in place of a token is refused `bad_token` without a lookup, but counted like any
    wrong token: answered at once without end, it would be a flood's fuel."""
    with ServerProcess(tmp_path / "s.db", "--no-ladder") as server, trio.fail_after(60):
        async with await welcomed(server.port, source=ATTACKER) as attacker:
            replies = [await attacker.request(Login(token="x" * 40)) for _ in range(21)]
            codes = [reply.code if isinstance(reply, Error) else reply.TYPE for reply in replies]
            assert codes == ["bad_token"] * 20 + ["rate_limited"], codes


async def test_wrong_operator_tokens_count_as_wrong_tokens(tmp_path: Path) -> None:
    """`operator_login` with tokens the server does not know: 20 `bad_token` from one address,
    then `rate_limited` (each costs a database read and a log line: answered at once without end,
    a flood of them cut a bot table to 0.29 of its rate); another address is not affected."""
    with ServerProcess(tmp_path / "s.db", "--no-ladder") as server, trio.fail_after(60):
        async with await welcomed(server.port, source=ATTACKER) as attacker:
            replies = [
                await attacker.request(OperatorLogin(token="op-" + "A" * 43)) for _ in range(21)
            ]
            codes = [reply.code if isinstance(reply, Error) else reply.TYPE for reply in replies]
            assert codes == ["bad_token"] * 20 + ["rate_limited"], codes
            assert isinstance(replies[-1], Error) and replies[-1].retry_ms, replies[-1]
        async with await welcomed(server.port, source=OWNER) as other:
            reply = await other.request(OperatorLogin(token="op-" + "A" * 43))
            assert isinstance(reply, Error) and reply.code == "bad_token", reply


async def make_legacy_account(db: Path, name: str) -> str:
    """An account as servers stored them before this change (PBKDF2, 20,000 rounds); its token.
    (Written before the server starts: one server per database file.)"""
    async with open_store(db) as store:
        secret = secrets.token_urlsafe(24)
        salt = secrets.token_bytes(16)
        digest = accounts.legacy_digest(secret, salt)

        def write(tx: Tx) -> int:
            return tx.insert_account(name, salt, digest, is_bot=False, is_guest=False)

        return f"{await store.call(write)}.{secret}"


async def flood(
    port: int,
    token: str,
    until: float,
    tally: dict[str, int],
    limited: trio.Event | None = None,
) -> None:
    """One connection sending `login` with `token` as fast as it is answered, until `until`;
    `limited` is set at the first `rate_limited` answer (the address's burst is spent)."""
    async with await welcomed(port, source=ATTACKER) as peer:
        while trio.current_time() < until:  # bounded by the clock
            reply = await peer.request(Login(token=token))
            key = reply.code if isinstance(reply, Error) else reply.TYPE
            tally[key] = tally.get(key, 0) + 1
            if key == "rate_limited" and limited is not None:
                limited.set()
            peer.received.clear()


async def test_a_login_flood_costs_few_hashes_and_another_address_logs_in_meanwhile(
    tmp_path: Path,
) -> None:
    """64 connections of one address send wrong tokens for an account with the old slow hash as
    fast as they are answered; only the first few are hashed (counted as `bad_token`: each of those
    cost a hash), and a right token of the same kind from another address logs in quickly."""
    db = tmp_path / "s.db"
    victim = await make_legacy_account(db, "old-timer")
    owner = await make_legacy_account(db, "owner")
    with ServerProcess(db, "--no-ladder") as server, trio.fail_after(90):
        tally: dict[str, int] = {}
        waits: list[float] = []
        async with trio.open_nursery() as nursery:
            until = trio.current_time() + FLOOD_S
            limited = trio.Event()
            for _ in range(FLOODERS):
                nursery.start_soon(
                    flood, server.port, wrong_secret_of(victim), until, tally, limited
                )
            await limited.wait()  # the flood is under way: the address's burst is spent
            for _ in range(5):
                async with await welcomed(server.port, source=OWNER) as peer:
                    start = trio.current_time()
                    assert isinstance(await peer.request(Login(token=owner)), LoggedIn)
                    waits.append(trio.current_time() - start)
        # The address's burst (20) and one a second after it, at most: never one per request.
        assert tally.get("bad_token", 0) <= 20 + FLOOD_S + 2, tally
        assert tally.get("rate_limited", 0) > 100, tally
        assert max(waits) < 0.5, waits  # (the bench measures it properly: bench/login_flood.py)
        assert server.alive()


async def test_one_address_cannot_register_without_end(tmp_path: Path) -> None:
    args = ("--no-ladder", "--max-registrations-per-address", "3")
    with ServerProcess(tmp_path / "s.db", *args) as server, trio.fail_after(60):
        replies = []
        for i in range(4):
            async with await welcomed(server.port, source=ATTACKER) as peer:
                assert peer.welcome.limits.register_burst == 3
                assert peer.welcome.limits.register_per_hour == 3
                replies.append(await peer.request(Register(name=f"squat{i}")))
                if i == 3:  # refused: the connection is not read again for a while (5 s at most)
                    start = trio.current_time()
                    assert await round_trip(peer) == []
                    assert 1.0 <= trio.current_time() - start < 10.0
        assert all(isinstance(reply, Registered) for reply in replies[:3]), replies
        refused = replies[3]
        assert isinstance(refused, Error) and refused.code == "rate_limited", refused
        # Three an hour: the next in 20 minutes at most.
        assert refused.retry_ms is not None and 0 < refused.retry_ms <= 1_200_000, refused
        async with await welcomed(server.port, source=OWNER) as other:
            assert isinstance(await other.request(Register(name="neighbour")), Registered)
        # A bad name costs the address nothing (refused before the count).
        async with await welcomed(server.port, source=OWNER) as other:
            reply = await other.request(Register(name="-bad"))
            assert isinstance(reply, Error) and reply.code == "bad_name", reply
    names = [
        row[0] for row in sqlite3.connect(tmp_path / "s.db").execute("SELECT name FROM accounts")
    ]
    assert "squat3" not in names and "neighbour" in names


async def test_the_default_registration_limit_is_announced(shared_server: ServerProcess) -> None:
    with trio.fail_after(20):
        async with await Peer.connect(shared_server.port) as peer:
            welcome = await peer.hello()
            assert isinstance(welcome, Welcome)
            assert (welcome.limits.register_burst, welcome.limits.register_per_hour) == (20, 20)
