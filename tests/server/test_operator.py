"""The operator's requests against a real server on 127.0.0.1 (port 0) with a real SQLite file:
operator_login, announce, list_sessions, kick, ban/unban (accounts and addresses, stored across a
restart), list_bans and close_table (docs/protocol.md, Operator)."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import TypeVar

import pytest
import trio

from protocol.messages import (
    Announce,
    Announcement,
    Ban,
    Bans,
    Bye,
    CloseTable,
    CreateTable,
    Error,
    Guest,
    HandDealt,
    Kick,
    ListBans,
    ListSessions,
    LoggedIn,
    Login,
    Ok,
    OperatorLogin,
    Register,
    Registered,
    Sessions,
    TableClosed,
    TableCreated,
    Unban,
    Welcome,
)
from protocol.types import Game
from server.app import Server, local_config, running_server
from server.operator import new_token
from server.storage import read_transaction, write_transaction
from tests.server.unit.memory import MemoryClient, MemoryListener, memory_config
from tests.server.wire_client import WireClient


def make_token(db: Path) -> str:
    """An operator token, as `spades-server admin token --db` makes one."""
    token, digest = new_token()
    with write_transaction(db) as tx:
        tx.add_operator_token(digest)
    return token


OPENED: list[WireClient] = []  # every test's clients, closed after it (the `closes` fixture)


@pytest.fixture(autouse=True)
async def closes() -> AsyncIterator[None]:
    yield
    while OPENED:
        await trio.aclose_forcefully(OPENED.pop().stream)


async def dial(port: int, source: str = "127.0.0.1") -> WireClient:
    client = WireClient(await trio.open_tcp_stream("127.0.0.1", port, local_address=source))
    OPENED.append(client)
    return client


async def connect(port: int, source: str = "127.0.0.1") -> WireClient:
    client = await dial(port, source)
    welcome = await client.hello()
    assert isinstance(welcome, Welcome)
    return client


async def operator(server: Server, token: str) -> WireClient:
    client = await connect(server.port)
    assert isinstance(await client.request(OperatorLogin(token=token)), Ok)
    return client


async def registered(port: int, name: str, source: str = "127.0.0.1") -> tuple[WireClient, str]:
    client = await connect(port, source)
    reply = await client.request(Register(name=name))
    assert isinstance(reply, Registered), reply
    return client, reply.token


M = TypeVar("M", Bye, Error)


async def closed_with(client: WireClient, kind: type[M]) -> M:
    """The message the server closed the connection with (events before it passed over)."""
    last = None
    for _ in range(1000):
        message = await client.receive()
        if message is None:
            break
        last = message
    # Hung up in turn, as a client does once the server has: else the server's end lingers (up
    # to a second, server/connection.py LINGER_TIME) for this end, and its shutdown waits for it.
    await client.aclose()
    assert isinstance(last, kind), last
    return last


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "server.db"


async def test_operator_requests_need_a_good_operator_login(db: Path) -> None:
    with trio.fail_after(20):
        async with running_server(local_config(db)) as server:
            make_token(db)
            client, token = await registered(server.port, "ann")
            refused = await client.request(Announce(text="hello all"))
            assert isinstance(refused, Error) and refused.code == "not_operator"
            # An account's token is not an operator's, nor is a made-up one.
            for wrong in (token, "op-" + "x" * 43):
                refused = await client.request(OperatorLogin(token=wrong))
                assert isinstance(refused, Error) and refused.code == "bad_token"
            refused = await client.request(ListSessions())
            assert isinstance(refused, Error) and refused.code == "not_operator"


async def test_an_announcement_reaches_every_connection(db: Path) -> None:
    with trio.fail_after(20):
        async with running_server(local_config(db)) as server:
            token = make_token(db)
            ann, _ = await registered(server.port, "ann")
            lurker = await connect(server.port)  # welcomed, not logged in
            op = await operator(server, token)
            ok = await op.request(Announce(text="restart at 22:00"))
            assert isinstance(ok, Ok) and ok.note == "told 3 connections"
            for client in (ann, lurker, op):
                told = await client.expect(Announcement)
                assert told.text == "restart at 22:00"


async def test_sessions_lists_who_is_connected(db: Path) -> None:
    with trio.fail_after(20):
        async with running_server(local_config(db)) as server:
            token = make_token(db)
            ann, _ = await registered(server.port, "ann")
            created = await ann.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
            )
            assert isinstance(created, TableCreated)
            op = await operator(server, token)
            listed = await op.request(ListSessions())
            assert isinstance(listed, Sessions)
            assert listed.total == 2
            by_account = {s.account: s for s in listed.sessions}
            assert by_account["ann"].tables == [created.table]
            assert by_account["ann"].address == "127.0.0.1"
            assert by_account["ann"].transport == "tcp"
            assert not by_account["ann"].operator
            assert by_account[None].operator


async def test_kick_closes_a_session_or_every_connection_of_an_account(db: Path) -> None:
    with trio.fail_after(20):
        async with running_server(local_config(db)) as server:
            op = await operator(server, make_token(db))
            ann, token = await registered(server.port, "ann")
            ann2 = await connect(server.port)
            assert isinstance(await ann2.request(Login(token=token)), LoggedIn)
            bob, _ = await registered(server.port, "bob")
            listed = await op.request(ListSessions())
            assert isinstance(listed, Sessions)
            bob_session = next(s.session for s in listed.sessions if s.account == "bob")

            ok = await op.request(Kick(target=bob_session, reason="be nice"))
            assert isinstance(ok, Ok) and ok.note == "kicked 1 connection(s)"
            bye = await closed_with(bob, Bye)
            assert bye.reason == "kicked by the operator: be nice"

            ok = await op.request(Kick(target="ANN"))  # names compare without case
            assert isinstance(ok, Ok) and ok.note == "kicked 2 connection(s)"
            for client in (ann, ann2):
                assert (await closed_with(client, Bye)).reason == "kicked by the operator"

            missing = await op.request(Kick(target="nobody"))
            assert isinstance(missing, Error) and missing.code == "no_such_session"
            # A kicked account may come back at once (a kick is not a ban).
            again = await connect(server.port)
            assert isinstance(await again.request(Login(token=token)), LoggedIn)


async def test_a_banned_account_is_closed_and_refused_until_unbanned(db: Path) -> None:
    with trio.fail_after(20):
        async with running_server(local_config(db)) as server:
            op = await operator(server, make_token(db))
            mallory, token = await registered(server.port, "mallory")
            ok = await op.request(Ban(account="Mallory", reason="cheating"))
            assert isinstance(ok, Ok), ok
            assert ok.note == "account Mallory banned; 1 connection(s) closed"
            closed = await closed_with(mallory, Error)
            assert closed.code == "banned" and closed.message.endswith(": cheating")

            # A login by token: refused, and the connection closes.
            again = await connect(server.port)
            refused = await again.request(Login(token=token))
            assert isinstance(refused, Error) and refused.code == "banned"
            assert await again.receive() is None
            await again.aclose()
            # The token in `hello`: welcomed without a user, refused, closed.
            hello_client = await dial(server.port)
            welcome = await hello_client.hello(token=token)
            assert isinstance(welcome, Welcome) and welcome.user is None
            assert (await closed_with(hello_client, Error)).code == "banned"

            listed = await op.request(ListBans())
            assert isinstance(listed, Bans) and listed.total == 1
            assert listed.bans[0].account == "Mallory" and listed.bans[0].reason == "cheating"

            ok = await op.request(Unban(account="mallory"))
            assert isinstance(ok, Ok) and ok.note == "account Mallory unbanned"
            ok = await op.request(Unban(account="mallory"))
            assert isinstance(ok, Ok) and ok.note == "account mallory was not banned"
            back = await connect(server.port)
            assert isinstance(await back.request(Login(token=token)), LoggedIn)


async def test_a_banned_address_is_refused_at_the_door_and_after_a_restart(db: Path) -> None:
    with trio.fail_after(30):
        async with running_server(local_config(db)) as server:
            op = await operator(server, make_token(db))
            eve, token = await registered(server.port, "eve", source="127.0.0.2")
            bad = await op.request(Ban(address="not-an-address"))
            assert isinstance(bad, Error) and bad.code == "invalid_field"
            ok = await op.request(Ban(address="127.0.0.2/31", reason="flooding"))
            assert isinstance(ok, Ok) and (ok.note or "").startswith("address 127.0.0.2/31 banned")
            assert (await closed_with(eve, Error)).code == "banned"
            # A new connection from the network: refused before its hello, then closed.
            door = await dial(server.port, "127.0.0.3")
            refused = await door.receive()
            assert isinstance(refused, Error) and refused.code == "banned"
            assert refused.message.endswith(": flooding")
            assert await door.receive() is None
            # Others (the operator's own address) are not touched.
            other = await connect(server.port)
            assert isinstance(await other.request(Guest()), LoggedIn)
        # Stored: a restarted server on the same database refuses it from its first connection.
        async with running_server(local_config(db)) as server:
            door = await dial(server.port, "127.0.0.2")
            refused = await door.receive()
            assert isinstance(refused, Error) and refused.code == "banned"
            op = await operator(server, (await _first_token(db)))
            assert isinstance(await op.request(Unban(address="127.0.0.3/31")), Ok)
            back = await connect(server.port, "127.0.0.2")
            assert isinstance(await back.request(Login(token=token)), LoggedIn)


async def _first_token(db: Path) -> str:
    return make_token(db)  # a second token works as well as the first


async def test_guest_and_register_from_a_banned_address_are_refused(db: Path) -> None:
    with trio.fail_after(20):
        async with running_server(local_config(db)) as server:
            op = await operator(server, make_token(db))
            inside = await connect(server.port, "127.0.0.4")
            assert isinstance(await op.request(Ban(address="127.0.0.4")), Ok)
            # The connection that was open is closed; requests it had in flight are not served.
            assert (await closed_with(inside, Error)).code == "banned"
            for request in (Guest(), Register(name="newcomer")):
                # A connection made before the ban reached this server (another server's ban,
                # read within seconds) is refused at its login.
                server.bans.networks.clear()
                client = await connect(server.port, "127.0.0.4")
                await op.request(ListBans())  # reads the bans again, as every 5 s
                refused = await client.request(request)
                assert isinstance(refused, Error) and refused.code == "banned", refused
                await client.aclose()  # as a client does once refused (the server lingers)


async def test_close_table_ends_the_game_and_tells_its_players_why(db: Path) -> None:
    with trio.fail_after(30):
        async with running_server(local_config(db)) as server:
            op = await operator(server, make_token(db))
            ann, _ = await registered(server.port, "ann")
            created = await ann.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
            )
            assert isinstance(created, TableCreated)
            await ann.expect(HandDealt)
            table = server.lobby.tables[created.table]
            game_id = table.records.game_id
            assert game_id is not None  # the game is in play
            ok = await op.request(CloseTable(table=created.table, reason="restarting"))
            assert isinstance(ok, Ok) and ok.note == f"table {created.table} closed"
            closed = await ann.expect(TableClosed)
            assert closed.table == created.table and closed.reason == "restarting"
            missing = await op.request(CloseTable(table=created.table))
            assert isinstance(missing, Error) and missing.code == "no_such_table"
        with read_transaction(db) as tx:
            assert tx.game_status(game_id) == "aborted"
        # Not resumed by a restart.
        async with running_server(local_config(db)) as server:
            assert created.table not in server.lobby.tables


async def test_wrong_operator_tokens_are_slowed_per_address(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Over memory streams on trio's autojump clock (each connection from an address of its own):
    the address's bucket refills in trio time, about ten seconds of it and none of real time."""
    listener = MemoryListener()
    async with running_server(memory_config(), listeners=[listener]) as server:
        with trio.fail_after(60):  # trio time (inside the server: its store opens in a thread)
            token, digest = new_token()
            await server.store.call(lambda tx: tx.add_operator_token(digest))
            guesser = await MemoryClient.connect(listener, "127.0.0.5")
            await guesser.hello()
            answers = []
            for _ in range(40):  # the address's burst of wrong tokens is 20
                answers.append(await guesser.request(OperatorLogin(token="op-" + "g" * 43)))
            codes = [a.code for a in answers if isinstance(a, Error)]
            assert codes[:20] == ["bad_token"] * 20
            assert "rate_limited" in codes[20:]
            limited = next(a for a in answers if isinstance(a, Error) and a.code == "rate_limited")
            assert (
                isinstance(limited, Error)
                and limited.retry_ms
                and "wrong tokens" in limited.message
            )
            # Another address, the operator's, is not held back.
            operator = await MemoryClient.connect(listener, "127.0.0.1")
            await operator.hello()
            assert isinstance(await operator.request(OperatorLogin(token=token)), Ok)
            for client in (guesser, operator):
                await client.aclose()
