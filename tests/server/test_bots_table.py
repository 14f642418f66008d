"""Tables of built-in bots play whole games through the table task, persisting every hand."""

import hashlib

import trio

from protocol.messages import (
    CreateTable,
    DealCommitment,
    DealSeed,
    GameOver,
    Guest,
    HandDealt,
    LoggedIn,
    Spectate,
    TableClosed,
    TableCreated,
    Welcome,
)
from protocol.types import Game
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
        end = await client.expect(GameOver | TableClosed)
        assert isinstance(end, GameOver), end
        assert end.table == created.table
        records = await server.store.call(lambda tx: list(tx.hand_records()))
        assert records
        # Fair deals: each commitment came before its deal, each seed after its hand, and the
        # seed hashes to the commitment.
        commitments: dict[int, str] = {}
        revealed = 0
        for message in client.received:
            if isinstance(message, DealCommitment):
                commitments[message.hand_number] = message.commitment
            elif isinstance(message, HandDealt) and message.hand_number in commitments:
                assert commitments[message.hand_number] == message.commitment
            elif isinstance(message, DealSeed) and message.hand_number in commitments:
                digest = hashlib.sha256(bytes.fromhex(message.seed)).hexdigest()
                assert digest == commitments[message.hand_number]
                revealed += 1
        # (We began watching after the first deal's commitment had gone out.)
        assert revealed == len(commitments) >= len(records) - 1 > 0
        await client.aclose()
