"""/readyz and the store's metrics across a real PostgreSQL outage (server/health.py): 503 while
the database cannot be reached, 200 again once it is back, the outage counted and timed."""

from pathlib import Path

import trio

from protocol.messages import Guest, LoggedIn
from server.app import local_config, running_server
from tests.postgres import Cluster
from tests.server.test_health_metrics import http, samples, value
from tests.server.wire_client import WireClient


async def test_readyz_is_503_while_postgresql_is_stopped(own_pg: Cluster, tmp_path: Path) -> None:
    url = own_pg.fresh_database()
    config = local_config(tmp_path / "unused.db", db_url=url, metrics_port=0)
    with trio.fail_after(90):
        async with running_server(config) as server:
            port = server.metrics_port
            assert port is not None
            assert (await http(port, "/readyz"))[0] == 200
            down, back = trio.Event(), trio.Event()
            server.store.health.watch(lambda up: back.set() if up else down.set())
            await trio.to_thread.run_sync(own_pg.stop_server)
            client = await WireClient.connect(server.port)
            await client.hello()
            async with trio.open_nursery() as nursery:
                # A guest is an account written to the store: the writer finds PostgreSQL gone.
                answered: list[object] = []

                async def log_in() -> None:
                    answered.append(await client.request(Guest(name="waiting")))

                nursery.start_soon(log_in)
                await down.wait()
                status, _, body = await http(port, "/readyz")
                assert (status, body) == (503, b"not ready: the database cannot be reached\n")
                assert (await http(port, "/healthz"))[0] == 200  # alive all the same
                seen = samples((await http(port, "/metrics"))[2].decode())
                assert value(seen, "spades_store_reachable") == 0
                assert value(seen, "spades_ready") == 0
                assert value(seen, "spades_store_outages_total") == 1
                await trio.to_thread.run_sync(own_pg.start_server)
                await back.wait()
            assert isinstance(answered[0], LoggedIn)  # stored once it was back, then answered
            assert (await http(port, "/readyz"))[0] == 200
            seen = samples((await http(port, "/metrics"))[2].decode())
            assert value(seen, "spades_store_reachable") == 1
            assert value(seen, "spades_store_unavailable_seconds_total") > 0
            await client.aclose()
