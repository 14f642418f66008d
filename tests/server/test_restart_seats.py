"""A seat its player gave up before a restart stays the fallback's after it (not held again for the
player): the seat's abandonment is stored with the game. A real server on 127.0.0.1, twice on one file."""

from __future__ import annotations

from pathlib import Path

import trio

from protocol.messages import (
    CreateTable,
    Joined,
    Leave,
    Ok,
    Register,
    Registered,
    Snapshot,
    TableCreated,
    YourTurn,
)
from protocol.types import Game
from server.app import local_config, running_server
from tests.server.wire_client import WireClient


async def test_a_seat_given_up_before_a_restart_stays_the_fallbacks(tmp_path: Path) -> None:
    db = tmp_path / "restart.db"
    with trio.fail_after(60):
        async with running_server(local_config(db)) as server:
            client = await WireClient.connect(server.port)
            await client.hello()
            registered = await client.request(Register(name="quitter"))
            assert isinstance(registered, Registered)
            created = await client.request(
                CreateTable(
                    game=Game.HEARTS,
                    preset="hearts",
                    options={"target_score": 1000},
                    bots=[1, 2, 3],
                    sit=0,
                )
            )
            assert isinstance(created, TableCreated)
            await client.expect(YourTurn)
            assert isinstance(await client.request(Leave(table=created.table)), Ok)
            await client.aclose()
        async with running_server(local_config(db)) as server:
            table = server.lobby.tables[created.table]
            assert table.seats[0].abandoned and table.seats[0].bot is not None
            assert table.seats[0].account is not None
            assert table.seats[0].account.name == "quitter"
            back = await WireClient.connect(server.port)
            await back.hello(token=registered.token)
            await back.request(Register(name="not-a-resume"))  # any request: a resume came first
            assert not [m for m in back.received if isinstance(m, Joined | Snapshot)]
            await back.aclose()
