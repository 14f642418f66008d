"""The server over TLS (`--tls-cert/--tls-key`): a welcome through an `SSLStream`, a peer that does
not speak TLS or stalls its handshake is dropped within the handshake timeout, and a certificate
or key that cannot be used is one error line and exit status 2 (no traceback, nothing listening)."""

from __future__ import annotations

import ssl
from dataclasses import replace
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from protocol.messages import PROTOCOL_VERSION_TEXT, Hello, Welcome
from protocol.types import ClientKind
from protocol.wire import encode
from server.app import local_config, running_server
from server.cli import app
from server.config import Limits
from server.failures import ExitCode
from server.tls import TLSConfigError, server_context
from tests.server.wire_client import WireClient
from tests.tls_certs import make_certificate


async def _hello_over(stream: trio.abc.Stream) -> object:
    return await WireClient(stream).hello()


async def test_a_tls_server_welcomes_a_tls_client_and_drops_a_plain_one(tmp_path: Path) -> None:
    cert, key = make_certificate(tmp_path)
    config = local_config(tmp_path / "tls.db", tls_cert=cert, tls_key=key)
    with trio.fail_after(30):
        async with running_server(config) as srv:
            context = ssl.create_default_context(cafile=str(cert))
            tcp = await trio.open_tcp_stream("127.0.0.1", srv.port)
            tls = trio.SSLStream(tcp, context, server_hostname="127.0.0.1")
            try:
                assert isinstance(await _hello_over(tls), Welcome)
            finally:
                await trio.aclose_forcefully(tls)
            # A client that speaks the protocol in the clear gets no answer it could read: the
            # connection is closed, and the server goes on.
            plain = await trio.open_tcp_stream("127.0.0.1", srv.port)
            try:
                await plain.send_all(
                    encode(
                        Hello(
                            id=1, protocol=PROTOCOL_VERSION_TEXT, client="t", kind=ClientKind.HUMAN
                        )
                    )
                )
                received = b""
                for _ in range(100):
                    try:
                        data = await plain.receive_some(65536)
                    except trio.BrokenResourceError:
                        break
                    if not data:
                        break
                    received += data
                assert b"welcome" not in received
            finally:
                await trio.aclose_forcefully(plain)


async def test_a_stalled_tls_handshake_is_cut_at_the_handshake_timeout(tmp_path: Path) -> None:
    cert, key = make_certificate(tmp_path)
    config = local_config(
        tmp_path / "tls.db",
        tls_cert=cert,
        tls_key=key,
        limits=replace(Limits(), handshake_timeout=0.5),
    )
    with trio.fail_after(30):
        async with running_server(config) as srv:
            silent = await trio.open_tcp_stream("127.0.0.1", srv.port)
            try:
                start = trio.current_time()
                with trio.fail_after(5):
                    # Never send a ClientHello: the server hangs up once the deadline passes.
                    while await silent.receive_some(65536):
                        pass
                assert trio.current_time() - start >= 0.4
            except trio.BrokenResourceError:
                pass
            finally:
                await trio.aclose_forcefully(silent)
            assert not srv.sessions


def test_an_unusable_certificate_is_one_error_line(tmp_path: Path) -> None:
    cert, key = make_certificate(tmp_path)
    junk = tmp_path / "junk.pem"
    junk.write_text("not a certificate\n")
    # Files that do not load exit 6 (docs/operations.md, "Exit codes"); a flag without its pair is a
    # usage error, 2.
    cases = [
        (["--tls-cert", str(tmp_path / "missing.pem"), "--tls-key", str(key)], ExitCode.TLS),
        (["--tls-cert", str(cert), "--tls-key", str(junk)], ExitCode.TLS),
        (["--tls-cert", str(key), "--tls-key", str(cert)], ExitCode.TLS),
        (["--tls-cert", str(cert)], ExitCode.USAGE),
    ]
    for flags, code in cases:
        result = CliRunner().invoke(
            app, ["serve", "--port", "0", "--db", str(tmp_path / "x.db"), *flags]
        )
        assert result.exit_code == code, (flags, result.output)
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), (flags, result.output)
        assert "Traceback" not in result.output and "tls" in lines[0].lower()
    assert not (tmp_path / "x.db").exists()


def test_the_context_refuses_a_key_that_is_not_the_certificates(tmp_path: Path) -> None:
    cert, _key = make_certificate(tmp_path, "one")
    _cert, other_key = make_certificate(tmp_path, "two")
    with pytest.raises(TLSConfigError, match="cannot use"):
        server_context(cert, other_key)
