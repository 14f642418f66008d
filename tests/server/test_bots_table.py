"""Tables of built-in bots play whole games through the table task, persisting every hand."""

import trio

from protocol.messages import (
    CreateTable,
    GameOver,
    Guest,
    LoggedIn,
    Spectate,
    TableClosed,
    TableCreated,
    Welcome,
)
from protocol.types import Game
from server import queries
from server.app import Server
from tests.server.wire_client import WireClient


async def test_hearts_bots_game_spectated(server: Server) -> None:
    with trio.fail_after(60):
        client = await WireClient.connect(server.port)
        assert isinstance(await client.hello(), Welcome)
        assert isinstance(await client.request(Guest()), LoggedIn)
        created = await client.request(
            CreateTable(
                game=Game.HEARTS, preset="hearts", options={"target_score": 30}, bots=[0, 1, 2, 3]
            )
        )
        assert isinstance(created, TableCreated), created
        await client.request(Spectate(table=created.table))
        end = await client.expect(GameOver | TableClosed)  # type: ignore[arg-type]
        assert isinstance(end, GameOver), end
        assert end.table == created.table
        records = await server.store.get(lambda c: list(queries.hand_records(c)))
        assert records
        await client.aclose()
