"""An action whose commit outlasts its seat's deadline is still the seat's own: the table waits for
the commit and counts it, and the clock's fallback never plays the same move number again."""

import time
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.messages import Act, CreateTable, Error, Register, Registered, TableCreated, YourTurn
from protocol.types import Game
from server.app import local_config, running_server
from server.storage import Durability, Tx
from tests.server.wire_client import WireClient

TURN = 0.6  # seconds a person has for each decision here
COMMIT = 1.2  # how long the slowed commit of the person's action takes (past its deadline)


async def test_a_commit_that_outlasts_the_deadline_is_counted_not_replayed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = local_config(tmp_path / "s.db", durability=Durability.full, human_clock=TURN)
    with trio.fail_after(60):
        async with running_server(config) as server:
            client = await WireClient.connect(server.port)
            await client.hello()
            assert isinstance(await client.request(Register(name="slowdisk")), Registered)
            created = await client.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
            )
            assert isinstance(created, TableCreated)
            turn = await client.expect(YourTurn)
            while turn.seat != 0:
                turn = await client.expect(YourTurn)
            table = server.lobby.tables[created.table]
            version = table.game.version
            real_insert = Tx.insert_action

            def slow_insert(self: Tx, *args: Any, **kwargs: Any) -> None:
                if kwargs.get("source") == "player":
                    time.sleep(COMMIT)  # a slow disk: in the writer's worker thread (`full`)
                real_insert(self, *args, **kwargs)

            monkeypatch.setattr(Tx, "insert_action", slow_insert)
            answer = await client.request(
                Act(table=created.table, version=turn.version, action=turn.legal[0])
            )
            monkeypatch.undo()
            assert not isinstance(answer, Error), answer
            assert table.game.version >= version + 1
            assert created.table in server.lobby.tables  # the table did not crash
            game_id = table.game_id
            assert game_id is not None
            stored = await server.store.call(lambda tx: tx.load_game(game_id))
            assert stored is not None
            # The seat's move is the player's, stored once; the fallback did not play it again.
            mine = [a for a in stored.actions if a.seat == 0]
            assert [a.source for a in mine][:1] == ["player"]
            assert [a.seq for a in stored.actions] == list(range(len(stored.actions)))
            await client.aclose()
