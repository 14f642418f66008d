"""Sessions never trust the client: handshake, framing, auth, limits, private tables, slow peers."""

import dataclasses
import struct
from pathlib import Path

import msgpack
import pytest
import trio
import trio.testing

from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Act,
    Chat,
    ChatMessage,
    CreateTable,
    Error,
    GameOver,
    Guest,
    Hello,
    Join,
    Joined,
    ListTables,
    LoggedIn,
    Login,
    Ok,
    Ping,
    Pong,
    Register,
    Registered,
    Spectate,
    TableCreated,
    Tables,
    Welcome,
    YourTurn,
)
from protocol.types import ChatScope, ClientKind, Game
from protocol.wire import encode
from server.app import Server, local_config, running_server
from server.config import Limits
from server.connection import Outbox
from tests.server.unit.memory import MemoryClient, MemoryListener, memory_config
from tests.server.wire_client import WireClient


async def closed_after_error(client: WireClient) -> Error:
    message = await client.receive()
    assert isinstance(message, Error), message
    assert await client.receive() is None  # and then the server hangs up
    await client.aclose()
    return message


async def test_requests_before_hello_are_refused_and_the_handshake_goes_on(
    server: Server,
) -> None:
    with trio.fail_after(10):
        client = await WireClient.connect(server.port)
        early = await client.request(ListTables())
        assert isinstance(early, Error) and early.code == "unexpected_message"
        assert isinstance(await client.request(Ping()), Pong)  # a ping is always answered
        assert isinstance(await client.hello(), Welcome)
        await client.aclose()


async def test_pipelined_requests_wait_for_the_outbox_instead_of_overflowing_it(
    server: Server,
) -> None:
    with trio.fail_after(20):
        client = await WireClient.connect(server.port)
        await client.hello()
        # 400 pings in one write, then read: more replies than the outbox holds (256).
        body = b"".join(encode(Ping(id=i)) for i in range(1, 401))
        await client.send_raw(body)
        replies = [await client.receive() for _ in range(400)]
        assert all(isinstance(r, Pong | Error) for r in replies)
        assert any(isinstance(r, Error) and r.code == "rate_limited" for r in replies)
        await client.aclose()


async def test_malformed_messages_count_against_the_rate(server: Server) -> None:
    with trio.fail_after(20):
        client = await WireClient.connect(server.port)
        await client.hello()
        body = b"".join(
            struct.pack(">I", len(b := msgpack.packb({"t": "nope", "id": i}))) + b
            for i in range(1, 201)
        )
        await client.send_raw(body)
        codes = [getattr(await client.receive(), "code", None) for _ in range(200)]
        assert "unknown_type" in codes and "rate_limited" in codes
        await client.aclose()


async def test_protocol_version_mismatch_closes(server: Server) -> None:
    with trio.fail_after(10):
        client = await WireClient.connect(server.port)
        await client.send(Hello(protocol="9.0", client="old", kind=ClientKind.HUMAN))
        assert (await closed_after_error(client)).code == "version_mismatch"


@pytest.mark.parametrize(
    ("data", "code"),
    [
        (struct.pack(">I", 0), "bad_frame"),
        (struct.pack(">I", 10_000_000), "frame_too_large"),
        (struct.pack(">I", 3) + b"\xc1\xc1\xc1", "bad_msgpack"),
    ],
)
async def test_broken_framing_is_answered_then_closed(
    server: Server, data: bytes, code: str
) -> None:
    with trio.fail_after(10):
        client = await WireClient.connect(server.port)
        await client.hello()
        await client.send_raw(data)
        assert (await closed_after_error(client)).code == code


async def test_bad_messages_are_answered_and_the_session_goes_on(server: Server) -> None:
    with trio.fail_after(10):
        client = await WireClient.connect(server.port)
        await client.hello()
        # A map with an unknown type, then a request with a bad field: answered, not fatal.
        body = msgpack.packb({"t": "zzz", "id": 7})
        await client.send_raw(struct.pack(">I", len(body)) + body)
        unknown = await client.receive()
        assert isinstance(unknown, Error) and unknown.code == "unknown_type" and unknown.id == 7
        needs_login = await client.request(
            CreateTable(game=Game.SPADES, preset="standard", bots=[0, 1, 2, 3])
        )
        assert isinstance(needs_login, Error) and needs_login.code == "not_authenticated"
        second_hello = await client.request(
            Hello(protocol=PROTOCOL_VERSION_TEXT, client="x", kind=ClientKind.HUMAN)
        )
        assert isinstance(second_hello, Error) and second_hello.code == "unexpected_message"
        assert isinstance(await client.request(Ping()), Pong)
        await client.aclose()


async def test_accounts_over_the_wire(server: Server) -> None:
    with trio.fail_after(10):
        client = await WireClient.connect(server.port)
        await client.hello()
        registered = await client.request(Register(name="carol"))
        assert isinstance(registered, Registered)
        again = await client.request(Register(name="dave"))
        assert isinstance(again, Error) and again.code == "already_authenticated"
        other = await WireClient.connect(server.port)
        await other.hello()
        taken = await other.request(Register(name="Carol"))
        assert isinstance(taken, Error) and taken.code == "name_taken"
        bad = await other.request(Login(token="1.not-the-token"))
        assert isinstance(bad, Error) and bad.code == "bad_token"
        good = await other.request(Login(token=registered.token))
        assert isinstance(good, LoggedIn) and good.name == "carol"
        bot = await WireClient.connect(server.port)
        await bot.hello(kind=ClientKind.BOT)
        await bot.request(Register(name="robot"))
        for c in (client, other, bot):
            await c.aclose()
        account = await server.store.call(lambda tx: tx.account_by_name("robot"))
        assert account is not None and account.is_bot


async def test_guests_can_be_disabled(tmp_path: Path) -> None:
    with trio.fail_after(10):
        async with running_server(local_config(tmp_path / "s.db", allow_guests=False)) as srv:
            client = await WireClient.connect(srv.port)
            welcome = await client.hello()
            assert welcome.guests is False
            refused = await client.request(Guest())
            assert isinstance(refused, Error) and refused.code == "guests_disabled"
            await client.aclose()


async def test_chat_is_length_and_rate_limited(server: Server) -> None:
    with trio.fail_after(10):
        a = await WireClient.connect(server.port)
        await a.hello()
        await a.request(Guest(name="talker"))
        b = await WireClient.connect(server.port)
        await b.hello()
        await b.request(Guest(name="listener"))
        too_long = await a.request(Chat(scope=ChatScope.LOBBY, text="x" * 400))
        assert isinstance(too_long, Error) and too_long.code == "invalid_field"
        replies = [await a.request(Chat(scope=ChatScope.LOBBY, text=f"hi {i}")) for i in range(8)]
        assert [type(r) for r in replies[:5]] == [Ok] * 5
        assert isinstance(replies[-1], Error) and replies[-1].code == "rate_limited"
        heard = await b.expect(ChatMessage)
        assert heard.text == "hi 0" and heard.name.startswith("talker")
        # A table that does not exist is `no_such_table` (docs/protocol.md, "Which refusal wins").
        not_there = await a.request(Chat(scope=ChatScope.TABLE, table="nope", text="hello"))
        assert isinstance(not_there, Error) and not_there.code == "no_such_table"
        await a.aclose()
        await b.aclose()


async def test_private_tables_need_their_code(server: Server) -> None:
    with trio.fail_after(10):
        owner = await WireClient.connect(server.port)
        await owner.hello()
        await owner.request(Guest())
        created = await owner.request(
            CreateTable(game=Game.SPADES, preset="standard", private=True, sit=0)
        )
        assert isinstance(created, TableCreated) and created.code
        guest = await WireClient.connect(server.port)
        await guest.hello()
        await guest.request(Guest())
        listing = await guest.request(ListTables())
        assert isinstance(listing, Tables)
        assert [t.private for t in listing.tables if t.table == created.table] == [True]
        for request in (Join(table=created.table), Spectate(table=created.table)):
            refused = await guest.request(request)
            assert isinstance(refused, Error) and refused.code == "private_table"
        wrong = await guest.request(Join(table=created.table, code="WRONG1"))
        assert isinstance(wrong, Error) and wrong.code == "private_table"
        taken = await guest.request(Join(table=created.table, seat=0, code=created.code))
        assert isinstance(taken, Error) and taken.code == "seat_taken"
        joined = await guest.request(Join(table=created.table, code=created.code))
        assert isinstance(joined, Joined) and joined.seat == 1
        missing = await guest.request(Join(table="nosuchtable"))
        assert isinstance(missing, Error) and missing.code in ("no_such_table", "already_seated")
        await owner.aclose()
        await guest.aclose()


async def test_silent_client_times_out(autojump_clock: trio.abc.Clock) -> None:
    # Over a memory stream on trio's autojump clock: the handshake's deadline passes in no time.
    # The fail_after starts once the server runs: opened before, the clock would jump to it while
    # the store opens in a worker thread (tests/server/unit/memory.py).
    listener = MemoryListener()
    async with running_server(memory_config(), listeners=[listener]):
        with trio.fail_after(60):
            client = await MemoryClient.connect(listener)
            assert (await closed_after_error(client)).code == "timeout"


async def test_a_stalled_reader_is_dropped_not_waited_for() -> None:
    # A lockstep stream blocks every send until the peer reads: the peer never reads.
    server_side, _client_side = trio.testing.lockstep_stream_pair()
    connection = Outbox(server_side, outbox_size=4)
    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(connection.run_writer)
            await trio.testing.wait_all_tasks_blocked()
            sent = [connection.send({"t": "ping", "id": i}) for i in range(10)]
            # The sender never waited; the connection gave up once its outbox was full.
            assert False in sent
            assert connection.close_reason == "slow_consumer"
            nursery.cancel_scope.cancel()


async def test_sigterm_style_stop_says_bye(tmp_path: Path) -> None:
    with trio.fail_after(10):
        async with running_server(local_config(tmp_path / "s.db")) as srv:
            client = await WireClient.connect(srv.port)
            await client.hello()
            srv.request_stop()
            from protocol.messages import Bye

            bye = await client.expect(Bye)
            assert bye.reason
            assert await client.receive() is None
            await client.aclose()
            encode(Ping())  # the codec is still usable after the server stops


async def test_tables_per_account_and_spectators_are_bounded(tmp_path: Path) -> None:
    limits = Limits(max_tables_per_account=2, max_spectators=1)
    with trio.fail_after(20):
        async with running_server(local_config(tmp_path / "s.db", limits=limits)) as srv:
            owner = await WireClient.connect(srv.port)
            await owner.hello()
            await owner.request(Guest())
            opened = [
                await owner.request(CreateTable(game=Game.SPADES, preset="standard"))
                for _ in range(3)
            ]
            assert [type(reply) for reply in opened[:2]] == [TableCreated, TableCreated]
            assert isinstance(opened[2], Error) and opened[2].code == "rate_limited"
            first = opened[0]
            assert isinstance(first, TableCreated)
            watchers = []
            for _ in range(2):
                watcher = await WireClient.connect(srv.port)
                await watcher.hello()
                await watcher.request(Guest())
                watchers.append(watcher)
            assert isinstance(await watchers[0].request(Spectate(table=first.table)), Joined)
            full = await watchers[1].request(Spectate(table=first.table))
            assert isinstance(full, Error) and full.code == "table_full"
            for client in (owner, *watchers):
                await client.aclose()


async def test_stalled_spectator_is_dropped_and_the_game_goes_on() -> None:
    # Over memory streams: the stalled spectator's is a lockstep pair, so every frame the server
    # writes to it waits until it reads, which it stops doing (a full socket buffer, without one).
    # Real time (a guest's token is hashed in a worker thread) and a clock no test lasts; one hand
    # of four built-in bots is hundreds of frames, far more than the outbox of 8.
    listener, stalling = MemoryListener(), MemoryListener(lockstep=True)
    config = memory_config(limits=Limits(outbox_size=8), human_clock=3600.0)
    with trio.fail_after(60):
        async with running_server(config, listeners=[listener, stalling]):
            stalled = await MemoryClient.connect(stalling)
            await stalled.hello()
            await stalled.request(Guest())
            owner = await MemoryClient.connect(listener)
            await owner.hello()
            await owner.request(Guest())
            created = await owner.request(
                CreateTable(
                    game=Game.HEARTS,
                    preset="hearts",
                    options={"max_hands": 1},
                    bots=[0, 1, 2, 3],
                )
            )
            assert isinstance(created, TableCreated)
            await owner.request(Spectate(table=created.table))
            await stalled.send(Spectate(table=created.table))
            # The stalled spectator reads nothing from here on; the owner watches the game end.
            await owner.expect(GameOver)
            await owner.aclose()
            # Reading at last, the stalled spectator finds its connection closed before the end.
            while (message := await stalled.receive()) is not None:
                assert not isinstance(message, GameOver)
            await stalled.aclose()


async def test_hello_with_a_bad_token_is_welcomed_without_a_user(server: Server) -> None:
    with trio.fail_after(10):
        client = await WireClient.connect(server.port)
        welcome = await client.hello(token="42.nope")
        assert welcome.user is None
        refused = await client.expect(Error)
        assert refused.code == "bad_token"
        assert isinstance(await client.request(Guest()), LoggedIn)
        await client.aclose()


async def test_a_handler_bug_is_answered_internal_and_contained(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    from server import requests

    async def broken(who: requests.Requester, request: ListTables) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setitem(requests.HANDLERS, ListTables, broken)
    with trio.fail_after(10):
        client = await WireClient.connect(server.port)
        await client.hello()
        await client.request(Guest())
        failed = await client.request(ListTables())
        assert isinstance(failed, Error) and failed.code == "internal"
        assert isinstance(await client.request(Ping()), Pong)
        await client.aclose()


async def test_one_address_cannot_take_every_connection(tmp_path: Path) -> None:
    limits = Limits(max_connections=8, max_connections_per_address=4)
    with trio.fail_after(20):
        async with running_server(local_config(tmp_path / "s.db", limits=limits)) as srv:
            hogs = [await WireClient.connect(srv.port) for _ in range(4)]
            for hog in hogs:
                await hog.hello()
            refused = await WireClient.connect(srv.port)
            assert (await closed_after_error(refused)).code == "server_full"
            # From another loopback address (127.0.0.2, to 127.0.0.1: never leaving the machine).
            sock = trio.socket.socket()
            await sock.bind(("127.0.0.2", 0))
            await sock.connect(("127.0.0.1", srv.port))
            other = WireClient(trio.SocketStream(sock))
            assert isinstance(await other.hello(), Welcome)
            for client in (*hogs, other):
                await client.aclose()


async def test_acts_answering_your_turn_are_not_charged_to_the_rate_but_stale_ones_are(
    tmp_path: Path,
) -> None:
    # Five messages in all, never refilled: hello, guest and create_table leave two.
    limits = Limits(max_messages_per_second=0.001, max_message_burst=5)
    config = local_config(tmp_path / "s.db", limits=limits)
    with trio.fail_after(60):
        async with running_server(config) as srv:
            client = await WireClient.connect(srv.port)
            await client.hello()
            assert isinstance(await client.request(Guest()), LoggedIn)
            created = await client.request(
                CreateTable(game=Game.SPADES, preset="standard", sit=0, bots=[1, 2, 3])
            )
            assert isinstance(created, TableCreated) and created.table is not None
            table = created.table
            answered: list[Act] = []
            # A whole hand: a bid and 13 cards, all answered at once, far beyond the bucket.
            while len(answered) < 14:  # bounded by fail_after
                message = await client.receive()
                assert message is not None
                assert not isinstance(message, Error), message
                if isinstance(message, YourTurn) and message.table == table:
                    act = Act(table=table, version=message.version, action=message.legal[0])
                    await client.send(act)
                    answered.append(act)
            # The same act again (stale, or a repeat of one answered) is charged: the two
            # tokens left go, then `rate_limited`.
            for _ in range(4):
                await client.send(dataclasses.replace(answered[0], id=None))
            codes: list[str] = []
            while "rate_limited" not in codes and len(codes) < 4:  # bounded by fail_after
                message = await client.receive()
                if isinstance(message, Error):
                    codes.append(message.code)
            assert "rate_limited" in codes, codes
            assert set(codes) <= {"stale_version", "not_your_turn", "rate_limited"}, codes
            await client.aclose()
