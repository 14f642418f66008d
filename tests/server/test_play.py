"""Whole games through the protocol: four clients, and bots with one client; refused actions."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from protocol.messages import (
    Act,
    CreateTable,
    Error,
    GameOver,
    Guest,
    Join,
    Joined,
    Leave,
    LoggedIn,
    Ok,
    Register,
    Registered,
    Snapshot,
    Spectate,
    TableCreated,
    YourTurn,
)
from protocol.types import Action, ActionKind, Game
from server.app import Server, local_config, running_server
from server.config import Limits
from server.storage import Tx
from tests.server.players import heuristic_choice, play_until_over, random_choice
from tests.server.wire_client import WireClient


async def seated_client(server: Server, table: str | None, name: str) -> tuple[WireClient, str]:
    client = await WireClient.connect(server.port)
    await client.hello()
    registered = await client.request(Register(name=name))
    assert isinstance(registered, Registered)
    if table is not None:
        joined = await client.request(Join(table=table))
        assert isinstance(joined, Joined), joined
    return client, registered.token


@pytest.fixture
async def fast_play_server(tmp_path: Path) -> AsyncIterator[Server]:
    """A server whose per-connection rate allows play at machine speed.

    These clients answer every `your_turn` at once, so a whole game to 500 can take a couple of
    seconds: over 250 requests from one connection. Acts answering `your_turn` are not charged to
    the rate (tests/server/test_sessions.py); a late one that turns out stale is, and the rate limit
    has its own tests (tests/hostile/test_abuse.py): here it would only make the outcome depend on
    how fast the machine is.
    """
    limits = Limits(max_messages_per_second=10_000.0, max_message_burst=10_000)
    async with running_server(local_config(tmp_path / "server.db", limits=limits)) as srv:
        yield srv


async def test_four_clients_play_a_whole_game_to_500(fast_play_server: Server) -> None:
    server = fast_play_server
    with trio.fail_after(100):
        first = await WireClient.connect(server.port)
        await first.hello()
        await first.request(Register(name="north"))
        created = await first.request(CreateTable(game=Game.SPADES, preset="standard", sit=0))
        assert isinstance(created, TableCreated) and created.seat == 0, created
        table = created.table
        clients = [first]
        for name in ["east", "south", "west"]:
            client, _token = await seated_client(server, table, name)
            clients.append(client)
        overs: list[GameOver] = []

        async def play(seat: int, client: WireClient) -> None:
            overs.append(
                await play_until_over(client, table, heuristic_choice(server, table, seat, seat))
            )

        async with trio.open_nursery() as nursery:
            for seat, client in enumerate(clients):
                nursery.start_soon(play, seat, client)
        assert len(overs) == 4 and len({(o.version, tuple(o.winners)) for o in overs}) == 1
        assert max(overs[0].scores) >= 500 or min(overs[0].scores) <= -200
        game_id = server.lobby.tables[table].game_id
        assert game_id is not None
        assert await server.store.call(lambda tx: tx.game_status(game_id)) == "finished"
        records = await server.store.call(lambda tx: list(tx.hand_records(game_id)))
        assert len(records) == server.lobby.tables[table].game.hand_number
        for client in clients:
            await client.aclose()


async def test_three_builtin_bots_and_one_client(server: Server) -> None:
    with trio.fail_after(60):
        client = await WireClient.connect(server.port)
        await client.hello()
        assert isinstance(await client.request(Guest(name="solo")), LoggedIn)
        created = await client.request(
            CreateTable(
                game=Game.HEARTS,
                preset="hearts",
                options={"target_score": 40},
                bots=[1, 2, 3],
                sit=0,
            )
        )
        assert isinstance(created, TableCreated) and created.seat == 0
        snapshot = await client.expect(Snapshot)
        assert snapshot.seat == 0 and snapshot.view["seat"] == 0
        over = await play_until_over(client, created.table, random_choice(7))
        assert over.table == created.table
        await client.aclose()


async def test_refused_actions_leave_the_game_unchanged(server: Server) -> None:
    with trio.fail_after(30):
        a, _ = await seated_client(server, None, "alpha")
        created = await a.request(
            CreateTable(game=Game.HEARTS, preset="hearts", options={"target_score": 40}, sit=0)
        )
        assert isinstance(created, TableCreated)
        table_id = created.table
        b, _ = await seated_client(server, table_id, "bravo")
        c, _ = await seated_client(server, table_id, "charlie")
        d, _ = await seated_client(server, table_id, "delta")
        # Hearts starts with a simultaneous pass: everyone gets your_turn.
        turn_a = await a.expect(YourTurn)
        turn_b = await b.expect(YourTurn)
        table = server.lobby.tables[table_id]
        version = table.game.version

        async def refused(client: WireClient, act: Act) -> Error:
            before = table.game.version
            reply = await client.request(act)
            assert isinstance(reply, Error), reply
            assert table.game.version == before
            return reply

        good = turn_a.legal[0]
        # A stale version.
        stale = await refused(a, Act(table=table_id, version=version - 1, action=good))
        assert stale.code == "stale_version"
        # An action for another seat: the seat comes from the connection, so a's cards in b's
        # name are b passing cards b does not hold.
        other = await refused(b, Act(table=table_id, version=version, action=good))
        assert other.code == "illegal_action"
        # Not seated at this table at all.
        outsider, _ = await seated_client(server, None, "echo")
        not_seated = await refused(outsider, Act(table=table_id, version=version, action=good))
        assert not_seated.code == "not_seated"
        # A card that is not in the hand / the wrong kind of action now.
        wrong = await refused(
            a, Act(table=table_id, version=version, action=Action(kind=ActionKind.PLAY, card="2C"))
        )
        assert wrong.code == "illegal_action" and wrong.detail
        # Now a good one, then the same again (a duplicate): stale.
        ok = await a.request(Act(table=table_id, version=version, action=good))
        assert not isinstance(ok, Error), ok
        assert table.game.version == version + 1
        # A repeat of a decision already made: a has no decision open, and that refusal comes
        # before any version check (docs/protocol.md, "Which refusal wins").
        dup = await a.request(Act(table=table_id, version=version, action=good))
        assert isinstance(dup, Error) and dup.code == "not_your_turn"
        # Out of turn: a has passed; it may not act again in this phase.
        out_of_turn = await refused(
            a, Act(table=table_id, version=version + 1, action=turn_a.legal[1])
        )
        assert out_of_turn.code == "not_your_turn"
        assert turn_b.seat == 1
        # b's decision began at `version`; a's pass raised the version without changing b's
        # choices, so b's pass decided on `version` is for the same decision and is applied.
        passed = await b.request(Act(table=table_id, version=version, action=turn_b.legal[0]))
        assert isinstance(passed, Ok), passed
        assert table.game.version == version + 2
        for client in (a, b, c, d, outsider):
            await client.aclose()


async def test_a_player_who_leaves_mid_game_is_played_by_the_fallback(server: Server) -> None:
    with trio.fail_after(60):
        quitter, _ = await seated_client(server, None, "quitter")
        created = await quitter.request(
            CreateTable(
                game=Game.HEARTS,
                preset="hearts",
                options={"target_score": 30},
                bots=[1, 2, 3],
                sit=0,
            )
        )
        assert isinstance(created, TableCreated)
        await quitter.expect(YourTurn)
        watcher, _ = await seated_client(server, None, "watcher")
        await watcher.request(Spectate(table=created.table))
        left = await quitter.request(Leave(table=created.table))
        assert not isinstance(left, Error), left
        over = await watcher.expect(GameOver)
        assert over.table == created.table
        for client in (quitter, watcher):
            await client.aclose()


async def test_an_action_that_cannot_be_stored_is_refused_and_not_applied(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    with trio.fail_after(30):
        client, _ = await seated_client(server, None, "careful")
        created = await client.request(
            CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
        )
        assert isinstance(created, TableCreated)
        turn = await client.expect(YourTurn)
        while turn.seat != 0:
            turn = await client.expect(YourTurn)
        table = server.lobby.tables[created.table]
        version = table.game.version

        def failing_insert(*args: object, **kwargs: object) -> None:
            raise sqlite3.OperationalError("disk I/O error")

        monkeypatch.setattr(Tx, "insert_action", failing_insert)
        seen = len(client.received)
        refused = await client.request(
            Act(table=created.table, version=turn.version, action=turn.legal[0])
        )
        assert isinstance(refused, Error) and refused.code == "internal", refused
        assert table.game.version == version
        # Nothing about the action was told to anyone.
        assert [m for m in client.received[seen:] if hasattr(m, "version")] == []
        monkeypatch.undo()
        accepted = await client.request(
            Act(table=created.table, version=turn.version, action=turn.legal[0])
        )
        assert not isinstance(accepted, Error), accepted
        assert table.game.version == version + 1
        await client.aclose()
