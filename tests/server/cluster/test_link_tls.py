"""The link over TLS (`serve --tls-cert/--tls-key` in a cluster), on real TCP on 127.0.0.1 without
PostgreSQL: the listener presents the certificate, the dialer checks the chain against the same
file; a plain-TCP dialer and a dialer trusting another certificate get nowhere."""

from __future__ import annotations

from pathlib import Path

import structlog
import trio

from server.cluster.link import Links
from server.cluster.link_protocol import Gone
from server.tls import link_client_context, server_context
from tests.server.cluster.heard import Heard
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
