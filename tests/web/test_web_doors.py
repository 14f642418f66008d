"""The web port's doors against a hostile LAN (issue 37, items 4-7): it answers only for its own
names (`Host`: DNS rebinding), its head limit counts bytes however they arrive, `HEAD` gets its
status line (the HTTP slots shared between addresses: test_web_slots.py)."""

from __future__ import annotations

from http.client import HTTPConnection
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from protocol.messages import Guest, LoggedIn, Welcome
from server.app import Server, local_config, running_server
from server.cli import app
from server.web import WebLimits
from server.web.names import HostNames, WebNameError, normalise_name
from tests.server.wire_client import WireClient
from tests.web.browser import served
from tests.web.test_web_port import HEADERS_END, http, parse_headers, web_port
from tests.web.ws_client import Rejected, WSClient

pytestmark = pytest.mark.timeout(60)


def request(host: str, path: str = "/", method: str = "GET", extra: str = "") -> bytes:
    return f"{method} {path} HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n".encode()


async def read_all(stream: trio.abc.Stream) -> bytes:
    """Everything the server sends until it closes (bounded by the caller's `fail_after`)."""
    data = b""
    while chunk := await stream.receive_some(65536):
        data += chunk
    return data


# ---- Host: only the server's own names ---------------------------------------------------------


async def test_a_dns_rebinding_page_gets_neither_the_page_nor_a_websocket(
    web_server: Server,
) -> None:
    """What a DNS-rebinding page sends (`Host` and `Origin` both its own name) is misdirected."""
    port = web_server.web_port or 0
    with trio.fail_after(10):
        for host in ("evil.example", f"evil.example:{port}"):
            status, headers, body = await http(port, request(host))
            assert status == 421, host
            assert headers["connection"] == "close"
            assert b"DNS rebinding" in body and b"--web-name" in body
        with pytest.raises(Rejected) as refused:
            await WSClient.connect(
                port, host=f"evil.example:{port}", origin=f"http://evil.example:{port}"
            )
        assert refused.value.status == 421 and b"DNS rebinding" in refused.value.body


async def test_a_rebinding_flood_leaves_the_players_own_clients_alone(web_server: Server) -> None:
    """The issue's sequel: 64 such WebSockets used to take every connection of the player's
    address (`server_full` for the terminal client) and 30 guests its guest quota. Now none
    becomes a session: the terminal client and a guest from the page are welcome after."""
    port = web_server.web_port or 0
    with trio.fail_after(30):
        for _ in range(64):
            with pytest.raises(Rejected) as refused:
                await WSClient.connect(
                    port, host=f"evil.example:{port}", origin=f"http://evil.example:{port}"
                )
            assert refused.value.status == 421
        assert not web_server.sessions
        terminal = await WireClient.connect(web_server.port)
        try:
            assert isinstance(await terminal.hello(), Welcome)
            assert isinstance(await terminal.request(Guest()), LoggedIn)
        finally:
            await terminal.aclose()


async def test_names_that_only_look_like_ours_are_misdirected(web_server: Server) -> None:
    port = web_server.web_port or 0
    with trio.fail_after(10):
        for host in (
            "127.0.0.1.evil.example",
            "localhost.evil.example",
            "evil.localhost",
            "127.1",  # not a dotted quad: a browser would have rewritten it, a name resolver not
            "[::1",
            "::1",  # an IPv6 literal must be in brackets
            "127.0.0.1:80:80",
            "127.0.0.1:port",
            "[evil.example]",
            "",
        ):
            status, _, body = await http(port, request(host))
            assert status in (400, 421), host
            assert body, host


async def test_a_target_in_absolute_form_must_name_the_server_too(web_server: Server) -> None:
    port = web_server.web_port or 0
    with trio.fail_after(10):
        for target, host, status in (
            ("http://evil.example/", "127.0.0.1", 421),
            ("http://127.0.0.1/", "evil.example", 421),
            (f"http://127.0.0.1:{port}/", "127.0.0.1", 200),
        ):
            raw = f"GET {target} HTTP/1.1\r\nHost: {host}\r\n\r\n".encode()
            assert (await http(port, raw))[0] == status, target


async def test_addresses_and_localhost_are_the_servers_own(web_server: Server) -> None:
    port = web_server.web_port or 0
    with trio.fail_after(10):
        for host in (
            "127.0.0.1",
            f"127.0.0.1:{port}",
            "192.168.1.20:7778",  # a LAN address: the browser asked for an address, not a name
            "[::1]",
            f"[::1]:{port}",
            "[fe80::1]:7778",
            "localhost",
            f"LocalHost:{port}",
            "localhost.",
        ):
            status, _, _ = await http(port, request(host))
            assert status == 200, host
        client = await WSClient.connect(
            port, host=f"localhost:{port}", origin=f"http://localhost:{port}"
        )
        async with client:
            assert isinstance(await client.hello(), Welcome)


async def test_a_name_the_operator_lists_is_served(tmp_path: Path) -> None:
    config = local_config(tmp_path / "s.db", web_port=0, web_names=("club.example",))
    async with running_server(config) as server:
        port = server.web_port or 0
        with trio.fail_after(10):
            for host in ("club.example", f"CLUB.example:{port}", "club.example."):
                status, _, _ = await http(port, request(host))
                assert status == 200, host
            status, _, _ = await http(port, request("www.club.example"))
            assert status == 421
            client = await WSClient.connect(
                port, host=f"club.example:{port}", origin=f"http://club.example:{port}"
            )
            async with client:
                assert isinstance(await client.hello(), Welcome)
            # The Origin check stays: the right Host, another site's page.
            with pytest.raises(Rejected) as refused:
                await WSClient.connect(
                    port, host=f"club.example:{port}", origin="http://evil.example"
                )
            assert refused.value.status == 403


def test_serve_answers_for_the_names_given_with_web_name(tmp_path: Path) -> None:
    with served(
        tmp_path / "s.db", "--web-name", "club.example", "--web-name", "Games.Example."
    ) as url:
        port = int(url.rsplit(":", 1)[1])
        for host, status in (
            ("club.example", 200),
            (f"games.example:{port}", 200),
            ("127.0.0.1", 200),
            ("evil.example", 421),
        ):
            connection = HTTPConnection("127.0.0.1", port, timeout=10)
            try:
                connection.request("GET", "/", headers={"Host": host})
                assert connection.getresponse().status == status, host
            finally:
                connection.close()


def test_names_are_compared_as_browsers_send_them() -> None:
    names = HostNames(["Club.Example.", "my_pc.lan", "bücher.example"], listening_on="Games.Lan")
    for host in (
        b"club.example",
        b"my_pc.lan:7778",
        b"xn--bcher-kva.example",
        b"games.lan",
        b"localhost:1",
        b"[::1]",
    ):
        assert names.refusal(host) is None, host
    for host in ("bücher.example".encode(), b"evil.example", b"club.example.evil.example"):
        assert names.refusal(host) is not None, host
    # An address or every interface as --host adds no name.
    assert HostNames(listening_on="0.0.0.0").names == HostNames(listening_on="::").names
    for bad in ("", "-x.example", "x..example", "a" * 64 + ".example", "bad name", "[::1]"):
        with pytest.raises(WebNameError):
            normalise_name(bad)


def test_serve_refuses_a_web_name_that_is_not_a_dns_name() -> None:
    for bad in ("http://club.example", "club.example:7778", "club example", "192.168.1.20"):
        result = CliRunner().invoke(app, ["serve", "--web-name", bad])
        assert result.exit_code == 2, bad
        assert "--web-name" in result.output, bad


async def test_an_http_1_0_request_without_host_is_refused() -> None:
    async with web_port(WebLimits()) as port:
        with trio.fail_after(10):
            status, _, body = await http(port, b"GET / HTTP/1.0\r\n\r\n")
            assert status == 400 and b"Host" in body


async def test_two_host_headers_are_refused_whichever_comes_first() -> None:
    async with web_port(WebLimits()) as port:
        with trio.fail_after(10):
            for first, second in (("127.0.0.1", "evil.example"), ("evil.example", "127.0.0.1")):
                raw = f"GET / HTTP/1.1\r\nHost: {first}\r\nHost: {second}\r\n\r\n".encode()
                status, _, body = await http(port, raw)
                assert status == 400 and b"multiple Host" in body  # h11's own check


# ---- the request head's limit, however the bytes arrive -----------------------------------------


def head_of(size: int, *, close: bool = True) -> bytes:
    """A GET whose head (request line, headers and the blank line) is exactly `size` bytes
    (asking the server to close after it, unless `close` is False)."""
    ending = "Connection: close\r\n" if close else ""
    bare = request("127.0.0.1", extra=f"{ending}X-Filler: \r\n")
    return request("127.0.0.1", extra=f"{ending}X-Filler: " + "a" * (size - len(bare)) + "\r\n")


async def send_in_pieces(port: int, data: bytes, piece: int) -> bytes:
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        for start in range(0, len(data), piece):
            await stream.send_all(data[start : start + piece])
        return await read_all(stream)


async def test_the_head_limit_counts_bytes_however_they_arrive() -> None:
    limits = WebLimits()
    async with web_port(limits) as port:
        with trio.fail_after(20):
            over = head_of(9 * 1024)
            for piece in (len(over), 1000, 4096):
                answer = await send_in_pieces(port, over + b"", piece)
                assert answer.startswith(b"HTTP/1.1 431"), piece
                assert b"request head too large" in answer
            for size, status in (
                (limits.max_request_bytes, b"200"),
                (limits.max_request_bytes + 1, b"431"),
                (16 * 1024 - 1, b"431"),
                (24 * 1024, b"431"),
            ):
                answer = await send_in_pieces(port, head_of(size), 64 * 1024)
                assert answer.startswith(b"HTTP/1.1 " + status), size


async def test_the_head_limit_is_per_request_on_a_kept_alive_connection() -> None:
    """Two heads of 5 KiB in one write are two requests within the limit, not one over it."""
    async with web_port(WebLimits()) as port:
        with trio.fail_after(10):
            closing = request("127.0.0.1", extra="Connection: close\r\n")
            answer = await send_in_pieces(
                port, head_of(5 * 1024, close=False) * 2 + closing, 64 * 1024
            )
            assert answer.count(b"HTTP/1.1 200") == 3


# ---- HEAD gets its status line ------------------------------------------------------------------


async def test_head_gets_the_status_line_of_every_refusal(web_server: Server) -> None:
    port = web_server.web_port or 0
    with trio.fail_after(10):
        for raw, status in (
            (request("127.0.0.1", "/ws", "HEAD"), b"426"),
            (request("127.0.0.1", "/", "HEAD", "Content-Length: 5\r\n") + b"hello", b"413"),
            (request("127.0.0.1", "/nope", "HEAD", "Connection: close\r\n"), b"404"),
            (request("evil.example", "/", "HEAD"), b"421"),
        ):
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            async with stream:
                await stream.send_all(raw)
                answer = await read_all(stream)
            head, sep, body = answer.partition(HEADERS_END)
            assert head.startswith(b"HTTP/1.1 " + status), raw
            assert sep and body == b"", raw  # a HEAD answer has no body
            assert int(parse_headers(head)["content-length"]) > 0
