"""/readyz and /metrics of cluster servers (server/health.py): the lease, and the link's peers and
queued messages, on two servers of one PostgreSQL in this process (real TCP, ports 0)."""

import contextlib
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import psycopg
import trio

from protocol.messages import CreateTable, Join, Joined, Snapshot, TableCreated
from protocol.types import Game
from server.app import Server, local_config, running_server
from server.config import ServerConfig
from tests.server.cluster.test_link_attacks import pack
from tests.server.cluster.test_one_lobby import registered
from tests.server.test_health_metrics import http, promtool_check, samples, value


def link_address(url: str, worker: str) -> tuple[str, int]:
    """Where server `worker`'s link listens, as it registered it."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT link FROM cluster_workers WHERE id = %s", (worker,)).fetchone()
    assert row is not None
    host, _, port = str(row[0]).rpartition(":")
    return host, int(port)


@asynccontextmanager
async def two_servers(pg_url: str, tmp_path: Path) -> AsyncIterator[tuple[Server, Server]]:
    def config(name: str) -> ServerConfig:
        return local_config(tmp_path / f"{name}.db", db_url=pg_url, cluster=True, metrics_port=0)

    async with running_server(config("a")) as first, running_server(config("b")) as second:
        yield first, second


async def test_the_link_and_the_lease_show_in_the_metrics(pg_url: str, tmp_path: Path) -> None:
    with trio.fail_after(60):
        async with two_servers(pg_url, tmp_path) as (first, second):
            assert first.metrics_port is not None and second.metrics_port is not None
            ada, _ = await registered(first.port, "ada")
            bea, _ = await registered(second.port, "bea")
            created = await ada.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[2, 3], sit=0)
            )
            assert isinstance(created, TableCreated)
            # bea's join hops over the link to the table's server, and the snapshot comes back.
            joined = await bea.request(Join(table=created.table))
            assert isinstance(joined, Joined)
            await bea.expect(Snapshot)
            for server in (first, second):
                assert server.metrics_port is not None
                status, _, body = await http(server.metrics_port, "/metrics")
                assert status == 200
                seen = samples(body.decode())
                assert value(seen, "spades_link_peers") == 1
                assert value(seen, "spades_link_queued_max") >= 0
                assert value(seen, "spades_link_sent_total") >= 1
                assert value(seen, "spades_link_refused_total") == 0
                assert value(seen, "spades_cluster_lease_held") == 1
                assert value(seen, "spades_ready") == 1
                assert server.node is not None and server.node.worker not in body.decode()
                promtool_check(body)
            assert value(seen, "spades_tables", state="playing") == 0  # the table is first's
            # A forged link (no proof of the cluster's secret) is refused, and counted.
            assert first.node is not None
            raw = await trio.open_tcp_stream(*link_address(pg_url, first.node.worker))
            await raw.send_all(pack({"hello": "evil"}))
            with contextlib.suppress(trio.BrokenResourceError):  # a reset is a hang-up too
                while await raw.receive_some(1024):  # until the server hangs up (fail_after)
                    pass
            await raw.aclose()
            seen = samples((await http(first.metrics_port, "/metrics"))[2].decode())
            assert value(seen, "spades_link_refused_total") == 1
            # Without its lease a server is not ready (it stops soon after: membership). Asked
            # with no wait between, so the lease's renewal task cannot set it back meanwhile.
            assert first.node is not None
            first.node.lease_renewed_at = None
            reason = first.health.unready_reason()
            assert reason == "this server does not hold its cluster lease"
            await ada.aclose()
            await bea.aclose()
