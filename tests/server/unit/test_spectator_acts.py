"""Acts that cannot be a seat's answer stop at the session, before the table's inbox (issue 37 item 8).

32 spectators sending `act` as fast as they could each cost the table they watch a command in its
bounded inbox (the table alone answered `not_seated`), so they slowed its game. A session now refuses
an `act` for a table where its connection holds no seat (its seat map: the routing cache the tables'
`joined`, `table_created` and `seat_lost` keep) with the table's own code, `not_seated`, and acts that
answer no `your_turn` are limited per connection (`welcome.limits.act_burst`, `act_per_second`). The
table still decides for the seated: it checks every act that reaches it against the seat's holder.
Over memory streams, the whole server behind them; what reaches the table is counted at its door.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
import trio
import trio.testing

from protocol.messages import (
    Act,
    CreateTable,
    Error,
    Guest,
    Join,
    Joined,
    LoggedIn,
    Ok,
    Register,
    Registered,
    SeatLost,
    Spectate,
    TableCreated,
    YourTurn,
)
from protocol.types import Game
from server.app import Server, local_config, running_server
from server.config import Limits
from server.table_commands import ActCommand
from tests.server.unit.memory import MemoryClient, MemoryListener, memory_config
from tests.server.wire_client import WireClient

SPECTATORS = 32
ACTS_EACH = 40


def count_acts_at_the_tables(server: Server) -> Counter[str]:
    """Every `act` handed to a table's inbox from now on, counted by the connection that sent it."""
    reached: Counter[str] = Counter()
    lobby = server.lobby
    submit = lobby.submit

    async def counting(table: Any, command: Any) -> None:
        if isinstance(command, ActCommand):
            reached[command.peer.peer_id] += 1
        await submit(table, command)

    lobby.submit = counting  # type: ignore[method-assign]
    return reached


async def a_guest(listener: MemoryListener | int) -> WireClient:
    """A guest over a memory stream of `listener`, or over TCP to 127.0.0.1 at port `listener`."""
    if isinstance(listener, int):
        client = await WireClient.connect(listener)
    else:
        client = await MemoryClient.connect(listener)
    await client.hello()
    assert isinstance(await client.request(Guest()), LoggedIn)
    return client


@pytest.mark.parametrize("transport", ["memory", "tcp"])
async def test_spectators_acts_never_reach_the_table(transport: str) -> None:
    # Over memory streams, and over real TCP on 127.0.0.1 (port 0) to the same server in this
    # process (so its tables' door can be counted). Real time (a guest's token is hashed in a
    # worker thread); a clock no test lasts.
    limits = Limits(max_guests_per_address=SPECTATORS + 1)
    overrides: dict[str, Any] = {"human_clock": 3600.0, "limits": limits}
    if transport == "tcp":
        config = local_config(":memory:", **overrides)
        listeners = None
    else:
        config = memory_config(**overrides)
        listeners = [MemoryListener()]
    with trio.fail_after(60):
        async with running_server(config, listeners=listeners) as server:
            listener = server.port if listeners is None else listeners[0]
            player = await a_guest(listener)
            created = await player.request(
                CreateTable(game=Game.HEARTS, preset="hearts", bots=[1, 2, 3], sit=0)
            )
            assert isinstance(created, TableCreated) and created.seat == 0
            turn = await player.expect(YourTurn)
            table = server.lobby.tables[created.table]
            reached = count_acts_at_the_tables(server)

            watchers = [await a_guest(listener) for _ in range(SPECTATORS)]
            for watcher in watchers:
                joined = await watcher.request(Spectate(table=created.table))
                assert isinstance(joined, Joined) and joined.seat is None

            # Every spectator sends its acts back to back (the player's own turn, word for word),
            # then reads the answers.
            act = Act(table=created.table, version=turn.version, action=turn.legal[0])
            async with trio.open_nursery() as nursery:
                for watcher in watchers:
                    nursery.start_soon(flood, watcher, act, ACTS_EACH)
            codes = Counter(
                m.code for w in watchers for m in w.received if isinstance(m, Error) and m.id
            )
            assert codes["not_seated"] + codes["rate_limited"] == SPECTATORS * ACTS_EACH, codes
            assert sum(reached.values()) == 0, reached  # the table's inbox saw none of them
            assert codes["not_seated"] >= SPECTATORS * limits.act_burst, codes

            # The player's own act is its seat's: it reaches the table and is applied.
            version = table.game.version
            assert isinstance(await player.request(act), Ok)
            assert sum(reached.values()) == 1
            assert table.game.version > version
            for client in [player, *watchers]:
                await client.aclose()


async def flood(client: WireClient, act: Act, count: int) -> None:
    ids = [await client.send(act) for _ in range(count)]
    for rid in ids:
        reply = await client.reply_to(rid)
        assert isinstance(reply, Error), reply


async def test_a_seated_connections_acts_that_answer_no_turn_are_limited() -> None:
    limits = Limits()
    config = memory_config(human_clock=3600.0)
    listener = MemoryListener()
    with trio.fail_after(60):
        async with running_server(config, listeners=[listener]) as server:
            player = await a_guest(listener)
            created = await player.request(
                CreateTable(game=Game.HEARTS, preset="hearts", bots=[1, 2, 3], sit=0)
            )
            assert isinstance(created, TableCreated)
            turn = await player.expect(YourTurn)
            reached = count_acts_at_the_tables(server)
            # The first act answers the turn (free, and applied); every repeat of it answers none:
            # the table refuses them (a repeat is not_your_turn or stale_version), but only the
            # connection's act burst reaches it, the rest are rate_limited at the session.
            act = Act(table=created.table, version=turn.version, action=turn.legal[0])
            assert isinstance(await player.request(act), Ok)
            repeats = limits.act_burst * 3
            ids = [await player.send(act) for _ in range(repeats)]
            answers = [await player.reply_to(rid) for rid in ids]
            codes = Counter(a.code for a in answers if isinstance(a, Error))
            assert codes["rate_limited"] >= repeats - limits.act_burst - 1, codes
            assert sum(reached.values()) <= 1 + limits.act_burst + 1, reached
            limited = next(a for a in answers if isinstance(a, Error) and a.code == "rate_limited")
            assert limited.retry_ms is not None and limited.retry_ms > 0


async def test_a_seat_lost_turns_the_old_holders_acts_away_with_the_reason() -> None:
    # The session learns of a take-over from `seat_lost` and from then on answers the old holder's
    # acts itself, with the reason the table gives (docs/protocol.md, Accounts, connections and
    # seats); the new holder's acts reach the table.
    config = memory_config(human_clock=3600.0)
    listener = MemoryListener()
    with trio.fail_after(60):
        async with running_server(config, listeners=[listener]) as server:
            screen = await MemoryClient.connect(listener)
            await screen.hello()
            registered = await screen.request(Register(name="ada"))
            assert isinstance(registered, Registered)
            created = await screen.request(
                CreateTable(game=Game.HEARTS, preset="hearts", bots=[1, 2, 3], sit=0)
            )
            assert isinstance(created, TableCreated)
            turn = await screen.expect(YourTurn)
            laptop = await MemoryClient.connect(listener)
            await laptop.hello(token=registered.token)
            moved = await laptop.request(Join(table=created.table, takeover=True))
            assert isinstance(moved, Joined) and moved.seat == 0
            assert (await screen.expect(SeatLost)).reason == "taken_over"
            reached = count_acts_at_the_tables(server)
            act = Act(table=created.table, version=turn.version, action=turn.legal[0])
            refused = await screen.request(act)
            assert isinstance(refused, Error) and refused.code == "not_seated"
            assert "took it over" in refused.message
            assert not reached
            new_turn = await laptop.expect(YourTurn)
            again = Act(table=created.table, version=new_turn.version, action=new_turn.legal[0])
            assert isinstance(await laptop.request(again), Ok)
            assert sum(reached.values()) == 1
