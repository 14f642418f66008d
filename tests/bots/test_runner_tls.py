"""The SDK runner (`spades-bot run --tls --ca PATH`) plays a whole game on a TLS server, and gives
up at once, in one sentence, on a certificate it does not trust."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import trio

from bots.registry import make_bot
from bots.sdk.runner import BotRunner, RunnerConfig, RunnerError
from client.config import ServerAddress
from client.connection import open_connection
from protocol.messages import CreateTable, Register, Registered, TableCreated
from protocol.types import ClientKind, Game
from server.app import local_config, running_server
from tests.tls_certs import make_certificate


async def test_the_runner_plays_a_game_over_tls(tmp_path: Path) -> None:
    cert, key = make_certificate(tmp_path)
    config = local_config(tmp_path / "tls.db", tls_cert=cert, tls_key=key)
    with trio.fail_after(90):
        async with running_server(config) as srv:
            address = ServerAddress("127.0.0.1", srv.port, tls=True, ca=str(cert))
            async with open_connection(address, kind=ClientKind.BOT) as conn:
                registered = await conn.expect(Register(name="tlsbot"), Registered)
                created = await conn.expect(
                    CreateTable(
                        game=Game.HEARTS,
                        preset="hearts",
                        options={"target_score": 30},
                        bots=[1, 2, 3],
                    ),
                    TableCreated,
                )
            base = RunnerConfig(
                host="127.0.0.1",
                port=srv.port,
                token=registered.token,
                table=created.table,
                tls=True,
                max_reconnects=2,
            )
            with pytest.raises(RunnerError, match="not trusted"):
                await BotRunner(make_bot("random", seed=1), base).run()
            trusted = dataclasses.replace(base, ca=str(cert))
            stats = await BotRunner(make_bot("heuristic", seed=1), trusted).run()
    assert len(stats.games) == 1 and stats.games[0]["winners"]
    assert stats.fallbacks == 0
