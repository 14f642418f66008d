"""Issue 38 item 2: while the store is down play pauses. Every connection is told
(`service_paused`), no seat's clock runs (a player is not timed out for the server's outage), and
play resumes by itself when the database is back, with a fresh `turn`."""

from pathlib import Path

import trio

from protocol.messages import (
    Act,
    ClockExpired,
    CreateTable,
    Ok,
    Register,
    Registered,
    ServicePaused,
    TableCreated,
    Turn,
    YourTurn,
)
from protocol.types import Game
from server.app import local_config, running_server
from tests.postgres import Cluster
from tests.server.wire_client import WireClient

CLOCK = 3.0  # seconds a person has for each decision (no bank)
OUTAGE = 5.0  # longer than the clock: without the pause the fallback would play for ada


async def test_an_outage_pauses_the_clocks_and_play_resumes(
    own_pg: Cluster, tmp_path: Path
) -> None:
    url = own_pg.fresh_database()
    config = local_config(tmp_path / "unused.db", db_url=url, human_clock=CLOCK, bot_clock=0.5)
    with trio.fail_after(60):
        async with running_server(config) as server:
            ada = await WireClient.connect(server.port)
            await ada.hello()
            assert isinstance(await ada.request(Register(name="ada")), Registered)
            created = await ada.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
            )
            assert isinstance(created, TableCreated)
            turn = await ada.expect(YourTurn)  # ada's bid: she holds it through the outage
            await trio.to_thread.run_sync(own_pg.stop_server)
            paused = await ada.expect(ServicePaused)  # the writer's probe finds it within 1 s
            assert paused.paused and paused.reason
            await trio.sleep(OUTAGE)  # the outage itself: longer than ada's clock
            await trio.to_thread.run_sync(own_pg.start_server)
            resumed = await ada.expect(ServicePaused)
            assert not resumed.paused and resumed.paused_ms is not None
            assert resumed.paused_ms >= OUTAGE * 1000
            again = await ada.expect(Turn)  # the clocks as they are now: ada's time given back
            assert again.version == turn.version and again.to_act == [0]
            assert again.deadline_ms[0] > 0
            rid = await ada.send(
                Act(table=created.table, version=turn.version, action=turn.legal[0])
            )
            assert isinstance(await ada.reply_to(rid), Ok)
            assert not [m for m in ada.received if isinstance(m, ClockExpired)]
            assert server.store.health.outages == 1
            await ada.aclose()
