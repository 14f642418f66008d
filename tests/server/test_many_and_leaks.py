"""Fifty tables at once; and no frame ever shows a card its recipient may not know."""

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from protocol.messages import (
    CreateTable,
    GameOver,
    Guest,
    ListTables,
    Spectate,
    TableClosed,
    TableCreated,
)
from protocol.types import Game
from server.app import Server, local_config, running_server
from server.config import Limits
from tests.server.players import play_until_over, random_choice
from tests.server.truth import check_no_leak, replay_truth
from tests.server.wire_client import WireClient


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    """One client opens all fifty tables, so its address may (16 by default)."""
    limits = Limits(max_tables_per_address=64)
    async with running_server(local_config(tmp_path / "server.db", limits=limits)) as srv:
        yield srv


async def test_fifty_tables_of_bots_finish_and_record_every_hand(server: Server) -> None:
    with trio.fail_after(110):
        client = await WireClient.connect(server.port)
        await client.hello()
        await client.request(Guest())
        await client.request(ListTables())  # watch the lobby: table_closed notices arrive
        tables = set()
        for index in range(50):
            game, preset, target = (
                (Game.SPADES, "standard", 100) if index % 2 else (Game.HEARTS, "hearts", 26)
            )
            created = await client.request(
                CreateTable(
                    game=game, preset=preset, options={"target_score": target}, bots=[0, 1, 2, 3]
                )
            )
            assert isinstance(created, TableCreated), created
            tables.add(created.table)
        closed: set[str] = set()
        while closed != tables:  # bounded by fail_after; each notice closes one table
            notice = await client.expect(TableClosed)
            closed.add(notice.table)
        finished = await server.store.call(lambda tx: tx.game_ids("finished"))
        assert len(finished) == 50
        assert await server.store.call(lambda tx: tx.game_ids("running")) == []
        counts = await server.store.call(lambda tx: [tx.hand_count(g) for g in finished])
        for deals, records in counts:
            assert deals == records > 0
        # Far fewer transactions than writes: group commit at work.
        assert server.store.batches < server.store.jobs
        await client.aclose()


async def test_no_frame_leaks_a_card(server: Server) -> None:
    with trio.fail_after(90):
        for game, preset, target in [
            (Game.HEARTS, "hearts", 40),
            (Game.SPADES, "standard", 150),
            (Game.HEARTS, "hearts", 40),
            (Game.SPADES, "standard", 150),
        ]:
            player = await WireClient.connect(server.port)
            await player.hello()
            await player.request(Guest())
            created = await player.request(
                CreateTable(
                    game=game,
                    preset=preset,
                    options={"target_score": target},
                    bots=[1, 2, 3],
                    sit=0,
                )
            )
            assert isinstance(created, TableCreated)
            table = created.table
            watcher = await WireClient.connect(server.port)
            await watcher.hello()
            await watcher.request(Guest())
            await watcher.request(Spectate(table=table))
            game_id = server.lobby.tables[table].game_id
            assert game_id is not None
            await play_until_over(player, table, random_choice(3))
            await player.aclose()
            await watcher.expect(GameOver)
            truth = await server.store.call(lambda tx: replay_truth(tx, game_id))  # noqa: B023
            assert check_no_leak(player.received, 0, truth, table) > 100
            assert check_no_leak(watcher.received, None, truth, table) > 100
            await watcher.aclose()
