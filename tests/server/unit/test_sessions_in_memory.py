"""Sessions over memory streams (no sockets), the whole server behind them, on trio's autojump clock:
the identity model across connections of one account, and every wait inside a deadline."""

from __future__ import annotations

import trio
import trio.testing

from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Act,
    CreateTable,
    Error,
    Hello,
    Joined,
    LadderStandings,
    ListTables,
    Ok,
    Ping,
    Register,
    Registered,
    SeatLost,
    Snapshot,
    Standings,
    TableCreated,
    Tables,
    YourTurn,
)
from protocol.types import ClientKind, Game
from protocol.wire import encode
from server.app import running_server
from server.config import Limits
from tests.server.unit.memory import MemoryClient, MemoryListener, memory_config


async def test_a_second_connection_of_the_account_only_looks() -> None:
    # Real time, and a clock no test lasts: logging in hashes in a worker thread, and an autojump
    # clock would jump to ada's deadline meanwhile.
    listener = MemoryListener()
    config = memory_config(human_clock=3600.0)
    with trio.fail_after(30):
        async with running_server(config, listeners=[listener]) as server:
            screen = await MemoryClient.connect(listener)
            await screen.hello()
            registered = await screen.request(Register(name="ada"))
            assert isinstance(registered, Registered)
            created = await screen.request(
                CreateTable(game=Game.HEARTS, preset="hearts", bots=[1, 2, 3], sit=0)
            )
            assert isinstance(created, TableCreated) and created.seat == 0
            turn = await screen.expect(YourTurn)
            table = server.lobby.tables[created.table]
            holder = table.seats[0].holder

            # A second terminal of the same account: logs in, lists, asks for standings.
            terminal = await MemoryClient.connect(listener)
            welcome = await terminal.hello(token=registered.token)
            assert welcome.user == "ada"
            assert isinstance(await terminal.request(ListTables()), Tables)
            assert isinstance(await terminal.request(LadderStandings()), Standings)
            assert not [m for m in terminal.received if isinstance(m, Joined | Snapshot | YourTurn)]
            assert table.seats[0].holder is holder  # the seat did not move
            # Its act for the screen's turn is not the seat holder's: refused, nothing applied.
            version = table.game.version
            refused = await terminal.request(
                Act(table=created.table, version=turn.version, action=turn.legal[0])
            )
            assert isinstance(refused, Error) and refused.code == "not_seated"
            assert table.game.version == version
            await terminal.aclose()
            # The screen plays on, undisturbed.
            played = await screen.request(
                Act(table=created.table, version=turn.version, action=turn.legal[0])
            )
            assert isinstance(played, Ok), played
            assert not [m for m in screen.received if isinstance(m, SeatLost)]

            # The screen drops: the seat is held, and the next login of the account gets it back.
            await screen.aclose()
            await trio.testing.wait_all_tasks_blocked()
            assert table.seats[0].holder is None and table.seats[0].dropped_at is not None
            back = await MemoryClient.connect(listener)
            await back.hello(token=registered.token)
            resumed = await back.expect(Joined)
            assert resumed.table == created.table and resumed.seat == 0 and resumed.id is None
            assert (await back.expect(Snapshot)).seat == 0
            await back.aclose()


async def test_a_client_that_floods_and_never_reads_is_let_go_in_time(
    autojump_clock: trio.abc.Clock,
) -> None:
    # Lockstep streams: the server's writes wait until this client reads, which it never does.
    listener = MemoryListener(lockstep=True)
    limits = Limits(handshake_timeout=3.0, idle_timeout=4.0, outbox_size=8)
    async with running_server(memory_config(limits=limits), listeners=[listener]) as server:
        flooder = await listener.connect()
        pings = b"".join(encode(Ping(id=i)) for i in range(1, 200))
        with trio.move_on_after(1.0):  # trio time; the server stops reading long before
            await flooder.send_all(pings)
        # Let the handshake's deadline (3 s of trio time) pass: it bounds every wait, the wait for
        # room in the outbox and for the unread writes included, so the flooder is gone.
        await trio.sleep(limits.handshake_timeout)
        await trio.testing.wait_all_tasks_blocked()
        assert not server.sessions
        await flooder.aclose()


async def test_a_client_that_stops_reading_after_hello_is_let_go(
    autojump_clock: trio.abc.Clock,
) -> None:
    # Past the handshake the idle sweep does not help (the client keeps sending); the writer's
    # progress is checked by the same sweep: no progress for write_timeout, and it is dropped.
    listener = MemoryListener(lockstep=True)
    limits = Limits(idle_timeout=0, write_timeout=5.0, outbox_size=8)
    async with running_server(memory_config(limits=limits), listeners=[listener]) as server:
        stream = await listener.connect()
        hello = Hello(protocol=PROTOCOL_VERSION_TEXT, client="tests/1", kind=ClientKind.HUMAN)
        await stream.send_all(encode(hello))
        welcome_bytes = await stream.receive_some(65536)  # read the welcome, then never again
        assert welcome_bytes
        pings = b"".join(encode(Ping(id=i)) for i in range(2, 60))
        with trio.move_on_after(1.0):
            await stream.send_all(pings)
        await trio.sleep(limits.write_timeout + 2)  # trio time: the sweep runs once a second
        await trio.testing.wait_all_tasks_blocked()
        assert not server.sessions
        await stream.aclose()
