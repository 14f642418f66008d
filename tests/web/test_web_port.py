"""The web port's HTTP side: the page's files, and every bound a hostile browser or script meets
(head size, time, methods, bodies, connections at once)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import fields

import trio

from engine.ruleset import Ruleset
from server.web import WebLimits, serve_web

HEADERS_END = b"\r\n\r\n"


async def http(port: int, request: bytes) -> tuple[int, dict[str, str], bytes]:
    """Send one raw request; read the whole answer until the server closes or it is complete."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        await stream.send_all(request)
        data = b""
        while True:
            head, sep, body = data.partition(HEADERS_END)
            if sep:
                headers = parse_headers(head)
                length = int(headers.get("content-length", "0"))
                if (
                    len(body) >= length
                    or head.startswith(b"HTTP/1.1 304")
                    or request[:4] == b"HEAD"
                ):
                    return int(head.split()[1]), headers, body[:length]
            chunk = await stream.receive_some(65536)
            if not chunk:
                head, _, body = data.partition(HEADERS_END)
                return int(head.split()[1]), parse_headers(head), body
            data += chunk


def parse_headers(head: bytes) -> dict[str, str]:
    lines = head.decode("latin-1").split("\r\n")[1:]
    return {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}


def get(path: str, extra: str = "") -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}\r\n".encode()


async def no_session(stream: trio.abc.Stream, peer: str) -> None:
    await stream.aclose()


@asynccontextmanager
async def web_port(limits: WebLimits) -> AsyncIterator[int]:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            lambda task_status: serve_web(
                no_session,
                host="127.0.0.1",
                port=0,
                tls=None,
                max_message_bytes=65536,
                session_nursery=nursery,
                limits=limits,
                task_status=task_status,
            )
        )
        yield port
        nursery.cancel_scope.cancel()


async def test_the_page_and_its_files_are_served(web_server) -> None:  # type: ignore[no-untyped-def]
    port = web_server.web_port
    with trio.fail_after(10):
        status, headers, body = await http(port, get("/"))
        assert status == 200 and headers["content-type"].startswith("text/html")
        assert b'<script type="module" src="js/app.js">' in body
        assert "default-src 'self'" in headers["content-security-policy"]
        assert headers["x-content-type-options"] == "nosniff"
        status, headers, body = await http(port, get("/js/app.js"))
        assert status == 200 and headers["content-type"].startswith("text/javascript")
        # Revalidation: the same ETag is answered 304, without a body.
        status, _, body = await http(
            port, get("/js/app.js", f"If-None-Match: {headers['etag']}\r\n")
        )
        assert status == 304 and body == b""
        status, headers, body = await http(port, b"HEAD / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert status == 200 and int(headers["content-length"]) > 0
        status, _, body = await http(port, get("/presets.json"))
        presets = {p["name"]: p for p in json.loads(body)["presets"]}
        assert presets["standard"]["game"] == "spades" and presets["hearts"]["players"] == 4
        assert presets["standard"]["options"]["target_score"] == 500
        # Which preset follows which rules source shows before anyone sits (issue 17, item 5).
        assert "source 002" in presets["hearts"]["description"]
        assert "not in the sources" in presets["hearts-house"]["description"]
        # And every option in words, from the engine's one table (issue 39 item 4).
        document = json.loads(body)
        assert document["option_order"] == [f.name for f in fields(Ruleset)]
        assert document["options"]["nil_value"]["label"] == "Nil is worth"
        assert document["options"]["blind_nil_value"]["when"] == {"blind_nil": [True]}


async def test_unknown_paths_and_traversal_are_not_found(web_server) -> None:  # type: ignore[no-untyped-def]
    port = web_server.web_port
    with trio.fail_after(10):
        for path in (
            "/nope",
            "/../server/app.py",
            "/js/../../pyproject.toml",
            "/static/index.html",
        ):
            status, _, _ = await http(port, get(path))
            assert status == 404, path


async def test_methods_bodies_and_bad_requests_are_refused(web_server) -> None:  # type: ignore[no-untyped-def]
    port = web_server.web_port
    with trio.fail_after(10):
        status, headers, _ = await http(
            port, b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"
        )
        assert status == 405 and headers["allow"] == "GET, HEAD"
        status, _, _ = await http(
            port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello"
        )
        assert status == 413
        status, _, _ = await http(
            port, b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        assert status == 413
        status, _, _ = await http(port, b"NOT HTTP AT ALL\r\n\r\n")
        assert status == 400
        status, _, _ = await http(port, get("/ws"))  # the WebSocket address, without an upgrade
        assert status == 426


async def test_a_huge_request_head_is_refused_before_it_is_kept(web_server) -> None:  # type: ignore[no-untyped-def]
    port = web_server.web_port
    with trio.fail_after(10):
        filler = "X-Filler: " + "a" * 20_000 + "\r\n"
        status, _, body = await http(port, get("/", filler))
        assert status == 431 and b"too large" in body


async def test_keep_alive_serves_several_requests_then_stops_at_the_bound() -> None:
    async with web_port(WebLimits(max_requests_per_connection=3)) as port:
        with trio.fail_after(10):
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            async with stream:
                await stream.send_all(get("/") + get("/app.css") + get("/icon.svg") + get("/"))
                data = b""
                while chunk := await stream.receive_some(65536):
                    data += chunk
            assert data.count(b"HTTP/1.1 200") == 3  # the fourth is never answered
            assert b"Connection: close" in data


async def test_a_slow_request_is_cut_off() -> None:
    async with web_port(WebLimits(request_timeout=0.3)) as port:
        with trio.fail_after(10):
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            async with stream:
                await stream.send_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never finished
                data = b""
                while chunk := await stream.receive_some(65536):
                    data += chunk
            assert data.startswith(b"HTTP/1.1 408")
            # A connection that says nothing at all is simply closed.
            stream = await trio.open_tcp_stream("127.0.0.1", port)
            async with stream:
                assert await stream.receive_some(100) == b""


async def test_connections_at_once_are_bounded_per_address() -> None:
    async with web_port(WebLimits(max_connections_per_address=2, request_timeout=5)) as port:
        with trio.fail_after(10):
            held = [await trio.open_tcp_stream("127.0.0.1", port) for _ in range(2)]
            status, headers, _ = await http(port, get("/"))
            assert status == 503 and headers["retry-after"] == "5"
            # Once they are gone (answered and closed by the server), the address is served again.
            for stream in held:
                await stream.send_all(get("/", "Connection: close\r\n"))
                while await stream.receive_some(65536):
                    pass
                await stream.aclose()
            status, _, _ = await http(port, get("/"))
            assert status == 200
