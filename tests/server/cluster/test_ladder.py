"""One ladder for the whole cluster: it runs in one server (the holder of its lock); a bot that
reached another server enters it, is seated by it and plays its match through the hop, and the
standings read the same from every server."""

from pathlib import Path
from typing import cast

import trio

from protocol.messages import LadderEnter, LadderStandings, MatchStarted, Ok, Standings
from protocol.types import ClientKind
from server.app import Server, local_config, running_server
from server.cluster.node import ClusterNode
from server.ladder.settings import LadderSettings
from tests.server.ladder.test_service import register_bot
from tests.server.wire_client import WireClient

SETTINGS = LadderSettings(hands=1, interval=0.05, seed=3, max_timeouts=2, cooldown=600)


def node_of(server: Server) -> ClusterNode:
    return cast(ClusterNode, server.lobby.cluster)


async def test_a_bot_on_another_server_plays_on_the_one_ladder(pg_url: str, tmp_path: Path) -> None:
    def config(name: str) -> object:
        return local_config(
            tmp_path / f"{name}.db",
            db_url=pg_url,
            cluster=True,
            ladder=True,
            ladder_settings=SETTINGS,
            bot_clock=0.05,
        )

    with trio.fail_after(60):
        async with running_server(config("a")) as first:  # type: ignore[arg-type]
            await node_of(first).ladder.found.wait()
            assert first.ladder is not None and node_of(first).ladder.here
            async with running_server(config("b")) as second:  # type: ignore[arg-type]
                await node_of(second).ladder.found.wait()
                assert second.ladder is None and not node_of(second).ladder.here
                for spec in ("random", "heuristic", "search,ms=5"):
                    await first.ladder.add_house_bot(spec)
                token = await register_bot(second, "faraway")
                bot = await WireClient.connect(second.port)
                await bot.hello(token=token, kind=ClientKind.BOT)
                assert isinstance(await bot.request(LadderEnter()), Ok)
                started = await bot.expect(MatchStarted)
                assert "faraway" in started.players
                assert started.table in first.lobby.tables
                await first.ladder.wait_rated(1)
                standings = await bot.request(LadderStandings())
                assert isinstance(standings, Standings)
                assert "faraway" in {line.name for line in standings.entries}
                await bot.aclose()
