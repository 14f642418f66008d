"""The link over TLS (`serve --tls-cert/--tls-key` in a cluster), on real TCP on 127.0.0.1 without
PostgreSQL: the listener presents the certificate, the dialer checks the chain against the same
file; a plain-TCP dialer and a dialer trusting another certificate get nowhere."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Any

import structlog
import trio

from protocol.messages import (
    CreateTable,
    Guest,
    Joined,
    Register,
    Snapshot,
    Spectate,
    TableCreated,
)
from protocol.types import Game
from server.app import local_config, running_server
from server.cluster import membership
from server.cluster.link import Links
from server.cluster.link_protocol import Gone, LinkConnection, Role
from server.tls import link_client_context, server_context
from tests.server.cluster.heard import Heard
from tests.server.wire_client import WireClient
from tests.tls_certs import make_certificate

SECRET = b"t" * 32


async def test_a_tls_link_carries_messages_and_refuses_plain_and_untrusted_dialers(
    tmp_path: Path,
) -> None:
    cert, key = make_certificate(tmp_path)
    other, _ = make_certificate(tmp_path, "other")
    addresses: dict[str, str] = {}

    async def address_of(worker: str) -> str | None:
        return addresses.get(worker)

    async def is_member(worker: str) -> bool:
        return True

    def links(worker: str, heard: Heard, **tls: object) -> Links:
        return Links(
            worker,
            lambda: SECRET,
            handle=heard.handle,
            on_lost=heard.on_lost,
            address_of=address_of,
            is_member=is_member,
            **tls,  # type: ignore[arg-type]
        )

    with trio.fail_after(30), structlog.testing.capture_logs() as logs:
        async with trio.open_nursery() as nursery:
            heard_b = Heard()
            b = links("b", heard_b, tls_server=server_context(cert, key))
            port = await nursery.start(b.serve, "127.0.0.1", 0, nursery)
            addresses["b"] = f"127.0.0.1:{port}"

            heard_a = Heard()
            a = links("a", heard_a, tls_client=link_client_context(cert))
            a.start(nursery)
            a.send("b", Gone("s1"))
            await heard_b.until(lambda: heard_b.messages == [("a", Gone("s1"))])

            for worker, tls in (
                ("plain", {}),
                ("untrusting", {"tls_client": link_client_context(other)}),
            ):
                heard = Heard()
                dialer = links(worker, heard, **tls)
                dialer.start(nursery)
                dialer.send("b", Gone("s2"))
                await heard.until(lambda heard=heard: heard.lost == ["b"])
            # Neither got a byte of the link protocol through: b obeyed a's message alone.
            assert heard_b.messages == [("a", Gone("s1"))]
            nursery.cancel_scope.cancel()
    lost = {e["peer"] for e in logs if e["event"] == "link_lost"}
    assert lost == {"b"}  # the dialers that could not set up TLS gave up on b


async def test_two_tls_servers_of_a_cluster_link_over_tls(pg_url: str, tmp_path: Path) -> None:
    """`serve --cluster --tls-cert --tls-key` twice, in this process on real TCP: a table of one
    is watched from the other (the link is TLS, the dialer checking the chain against the same
    certificate), and the link port speaks nothing but TLS."""
    cert, key = make_certificate(tmp_path)

    def config(name: str) -> Any:
        return local_config(
            tmp_path / f"{name}.db", db_url=pg_url, cluster=True, tls_cert=cert, tls_key=key
        )

    async def client(port: int) -> WireClient:
        context = ssl.create_default_context(cafile=str(cert))
        tcp = await trio.open_tcp_stream("127.0.0.1", port)
        wire = WireClient(trio.SSLStream(tcp, context, server_hostname="127.0.0.1"))
        await wire.hello()
        return wire

    with trio.fail_after(60), structlog.testing.capture_logs() as logs:
        async with running_server(config("a")) as first, running_server(config("b")) as second:
            owner = await client(first.port)
            await owner.request(Register(name="owner"))
            created = await owner.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
            )
            assert isinstance(created, TableCreated)
            watcher = await client(second.port)
            await watcher.request(Guest())
            joined = await watcher.request(Spectate(table=created.table))
            assert isinstance(joined, Joined), joined
            await watcher.expect(Snapshot)
            # The link listens for TLS only: a hello in the clear is refused, nothing obeyed.
            node = second.lobby.cluster
            assert node is not None
            (me,) = [
                w
                for w in await node.run_statement(membership.workers)  # type: ignore[attr-defined]
                if w.id == node.worker  # type: ignore[attr-defined]
            ]
            host, _, port = me.link.rpartition(":")
            plain = await trio.open_tcp_stream(host, int(port))
            dialer = LinkConnection(Role.DIALER, "stranger", b"s" * 32, expect="x")
            await plain.send_all(dialer.hello())
            with trio.move_on_after(10):
                while await plain.receive_some():  # bounded: the server closes it
                    pass
            await plain.aclose()
            for wire in (owner, watcher):
                await wire.aclose()
    refused = [e for e in logs if e["event"] == "link_refused" and e.get("claimed") is None]
    assert refused and "connection failed" in refused[0]["reason"], refused
