"""The client over TLS: a `tls://HOST:PORT` address dials the server through trio's `SSLStream`,
checking its certificate (against `--ca`, remembered by `spades connect`); an untrusted certificate
or a server that does not speak TLS is one sentence, not a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from client.config import ClientConfig, ConfigError, ServerAddress
from client.connection import ConnectionLost, open_connection
from protocol.messages import Ping, Pong
from server.app import local_config, running_server
from tests.tls_certs import make_certificate


def test_a_tls_address_parses_and_is_remembered_with_its_ca(tmp_path: Path) -> None:
    address = ServerAddress.parse("tls://cards.lan:7000")
    assert address == ServerAddress("cards.lan", 7000, tls=True)
    assert address.key == "cards.lan:7000"  # the token is filed under the same key either way
    assert address.text == "tls://cards.lan:7000"
    assert ServerAddress.parse("TLS://[::1]").text == "tls://[::1]:7777"
    with pytest.raises(ConfigError, match="tls://"):
        ServerAddress.parse("https://cards.lan:7000")
    config = ClientConfig(tmp_path / "config")
    config.set_current_server(ServerAddress("cards.lan", 7000, tls=True, ca="ca.pem"))
    again = config.current_server()
    assert again is not None and again.tls and again.ca == str(Path("ca.pem").resolve())
    config.set_current_server(ServerAddress("cards.lan", 7000))
    assert config.current_server() == ServerAddress("cards.lan", 7000)


async def test_the_client_talks_to_a_tls_server_only_when_it_trusts_it(tmp_path: Path) -> None:
    cert, key = make_certificate(tmp_path)
    config = local_config(tmp_path / "tls.db", tls_cert=cert, tls_key=key)
    with trio.fail_after(30):
        async with running_server(config) as srv:
            trusted = ServerAddress("127.0.0.1", srv.port, tls=True, ca=str(cert))
            async with open_connection(trusted) as conn:
                assert conn.welcome is not None
                assert isinstance(await conn.request(Ping()), Pong)
            # A self-signed certificate is not in the system's store.
            with pytest.raises(ConnectionLost, match=r"TLS with tls://127\.0\.0\.1"):
                async with open_connection(ServerAddress("127.0.0.1", srv.port, tls=True)):
                    pass  # pragma: no cover
            with pytest.raises(ConnectionLost, match="CA file"):
                async with open_connection(trusted_with(trusted, tmp_path / "nope.pem")):
                    pass  # pragma: no cover
            # In clear to a TLS server: no welcome, a sentence.
            with pytest.raises(ConnectionLost):
                async with open_connection(ServerAddress("127.0.0.1", srv.port), connect_timeout=5):
                    pass  # pragma: no cover


async def test_a_tls_address_to_a_plain_server_fails_in_one_sentence(tmp_path: Path) -> None:
    with trio.fail_after(30):
        async with running_server(local_config(tmp_path / "plain.db")) as srv:
            with pytest.raises(ConnectionLost, match="TLS with"):
                async with open_connection(
                    ServerAddress("127.0.0.1", srv.port, tls=True), connect_timeout=5
                ):
                    pass  # pragma: no cover


def trusted_with(address: ServerAddress, ca: Path) -> ServerAddress:
    return ServerAddress(address.host, address.port, tls=True, ca=str(ca))
