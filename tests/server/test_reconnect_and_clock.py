"""Dropped connections keep their seat and resume from a snapshot; clocks play the fallback."""

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
import trio
import trio.testing

from protocol.messages import (
    Act,
    CardsGiven,
    ClockExpired,
    CreateTable,
    DealCommitment,
    Joined,
    Register,
    Registered,
    Snapshot,
    TableCreated,
    Turn,
    Welcome,
    YourTurn,
)
from protocol.types import ActionKind, Clock, Game
from server.app import Server, running_server
from tests.server.players import play_until_over, random_choice
from tests.server.unit.memory import MemoryClient, MemoryListener, memory_config
from tests.server.wire_client import WireClient


async def test_disconnect_mid_hand_then_reconnect_with_snapshot(server: Server) -> None:
    with trio.fail_after(60):
        client = await WireClient.connect(server.port)
        await client.hello()
        registered = await client.request(Register(name="roamer"))
        assert isinstance(registered, Registered)
        created = await client.request(
            CreateTable(
                game=Game.SPADES,
                preset="standard",
                options={"target_score": 100},
                bots=[1, 2, 3],
                sit=0,
            )
        )
        assert isinstance(created, TableCreated)
        table_id = created.table
        table = server.lobby.tables[table_id]
        choose = random_choice(11)
        # Play until our third card of the hand is due, then drop the connection.
        plays = 0
        while True:
            turn = await client.expect(YourTurn)
            if turn.legal[0].kind is ActionKind.PLAY:
                plays += 1
                if plays == 3:
                    break
            await client.send(Act(table=table_id, version=turn.version, action=choose(turn)))
        knew = table.game.view(0).to_dict()
        await client.aclose()
        # The seat is held (not abandoned) while the game waits on it.
        back = await WireClient.connect(server.port)
        welcome = await back.hello(token=registered.token)
        assert isinstance(welcome, Welcome) and welcome.user == "roamer"
        joined = await back.expect(Joined)
        assert joined.table == table_id and joined.seat == 0 and joined.id is None  # unasked
        snapshot = await back.expect(Snapshot)
        assert snapshot.seat == 0 and snapshot.view == knew
        assert snapshot.version == turn.version
        # The deal in play is the one committed to before it was dealt, so it can still be checked.
        committed = [m for m in client.received if isinstance(m, DealCommitment)]
        assert committed and snapshot.commitment == committed[-1].commitment
        # Then who must act, with the clock, and our pending decision.
        told = await back.receive()
        assert isinstance(told, Turn) and told.to_act == [0] and told.version == turn.version
        again = await back.receive()
        assert isinstance(again, YourTurn) and again.version == turn.version
        back.pending.appendleft(again)  # play_until_over answers it
        # The turn that was pending comes again, and the game completes.
        over = await play_until_over(back, table_id, choose)
        assert over.table == table_id
        game_id = table.game_id
        assert game_id is not None
        assert await server.store.call(lambda tx: tx.game_status(game_id)) == "finished"
        await back.aclose()


@dataclass(frozen=True)
class MemoryServer:
    server: Server
    listener: MemoryListener


@pytest.fixture
async def clocked_server() -> AsyncIterator[MemoryServer]:
    """The whole server over memory streams, its bots thinking in the event loop: on trio's
    autojump clock (the test asks for `autojump_clock`), a 30 s turn clock runs out at once."""
    listener = MemoryListener()
    async with running_server(memory_config(), listeners=[listener]) as server:
        yield MemoryServer(server, listener)


async def test_clock_expiry_plays_the_fallback_and_says_so(
    clocked_server: MemoryServer, autojump_clock: trio.abc.Clock
) -> None:
    server = clocked_server.server
    with trio.fail_after(3600):
        client = await MemoryClient.connect(clocked_server.listener)
        await client.hello()
        await client.request(Register(name="sleepy"))
        created = await client.request(
            CreateTable(game=Game.HEARTS, preset="hearts", bots=[1, 2, 3], sit=0)
        )
        assert isinstance(created, TableCreated)
        everyone = await client.expect(Turn)  # told to all before the seat's own your_turn
        assert everyone.to_act == [0, 1, 2, 3] and everyone.deadline_ms[0] == 30_000
        turn = await client.expect(YourTurn)
        assert turn.seat == 0 and turn.deadline_ms == 30_000
        started = trio.current_time()
        while True:  # bounded by fail_after; a loaded machine may also run out a bot's clock
            notice = await client.expect(ClockExpired)
            if notice.seat == 0:
                break
        assert notice.reason == "clock"
        assert "heuristic" in notice.fallback or "first legal action" in notice.fallback
        assert trio.current_time() - started >= 29.9
        # The fallback's pass for seat 0 is the very next message: nothing else comes between.
        given = await client.receive()
        assert isinstance(given, CardsGiven) and given.seat == 0, given
        game_id = server.lobby.tables[created.table].game_id
        assert game_id is not None
        stored = await server.store.call(lambda tx: tx.load_game(game_id))
        assert stored is not None
        assert next((a.seat, a.source) for a in stored.actions if a.seat == 0) == (0, "fallback")
        await client.aclose()


async def test_the_bank_drains_after_the_turn_time(
    clocked_server: MemoryServer, autojump_clock: trio.abc.Clock
) -> None:
    with trio.fail_after(3600):
        client = await MemoryClient.connect(clocked_server.listener)
        await client.hello()
        await client.request(Register(name="banker"))
        created = await client.request(
            CreateTable(
                game=Game.HEARTS,
                preset="hearts",
                bots=[1, 2, 3],
                sit=0,
                clock=Clock(turn_ms=1000, bank_ms=2000),
            )
        )
        assert isinstance(created, TableCreated)
        turn = await client.expect(YourTurn)
        assert (turn.deadline_ms, turn.bank_ms) == (1000, 2000)
        started = trio.current_time()
        while (await client.expect(ClockExpired)).seat != 0:
            pass
        assert trio.current_time() - started >= 2.999
        # The bank is spent: the next decision has only its turn time.
        while (turn := await client.expect(YourTurn)).seat != 0:
            pass
        assert (turn.deadline_ms, turn.bank_ms) == (1000, 0)
        await client.aclose()
