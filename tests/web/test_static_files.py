"""The page's files compressed and revalidated (issue 39, item 6): gzip for a browser that takes
it (`Content-Encoding`, `Vary: Accept-Encoding`), computed once at start; an `ETag` per form and
`If-None-Match` answered 304."""

from __future__ import annotations

import gzip

import pytest
import trio

from server.app import Server
from server.web.static_files import accepts_gzip, etag_matches, load_site
from tests.web.test_web_port import get, http

pytestmark = pytest.mark.timeout(60)


async def test_a_browser_that_takes_gzip_gets_the_files_compressed(web_server: Server) -> None:
    port = web_server.web_port or 0
    with trio.fail_after(10):
        status, plain_headers, plain = await http(port, get("/js/app.js"))
        assert status == 200 and "content-encoding" not in plain_headers
        assert plain_headers["vary"] == "Accept-Encoding"
        status, headers, packed = await http(
            port, get("/js/app.js", "Accept-Encoding: gzip, deflate, br, zstd\r\n")
        )
        assert status == 200
        assert headers["content-encoding"] == "gzip" and headers["vary"] == "Accept-Encoding"
        assert int(headers["content-length"]) == len(packed) < len(plain) // 2
        assert gzip.decompress(packed) == plain
        assert headers["content-type"] == plain_headers["content-type"]
        # Each form has its own validator: a cache never takes one for the other.
        assert headers["etag"] != plain_headers["etag"]
        # HEAD says the same, without the body.
        raw = b"HEAD /js/app.js HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept-Encoding: gzip\r\n\r\n"
        status, head_headers, body = await http(port, raw)
        assert status == 200 and body == b""
        assert head_headers["content-length"] == headers["content-length"]
        assert head_headers["content-encoding"] == "gzip"


async def test_each_form_is_revalidated_by_its_own_etag(web_server: Server) -> None:
    port = web_server.web_port or 0
    with trio.fail_after(10):
        _, plain, _ = await http(port, get("/app.css"))
        _, packed, _ = await http(port, get("/app.css", "Accept-Encoding: gzip\r\n"))
        for accept, tags, status in (
            ("gzip", packed["etag"], 304),
            ("gzip", f'W/"nope", {packed["etag"]}', 304),
            ("gzip", f"W/{packed['etag']}", 304),
            ("gzip", "*", 304),
            ("gzip", plain["etag"], 200),  # the plain form's tag: this client gets the other
            ("identity", plain["etag"], 304),
            ("identity", packed["etag"], 200),
        ):
            extra = f"Accept-Encoding: {accept}\r\nIf-None-Match: {tags}\r\n"
            got, headers, body = await http(port, get("/app.css", extra))
            assert got == status, (accept, tags)
            if status == 304:
                assert body == b"" and headers["vary"] == "Accept-Encoding"
                assert headers["etag"] == (packed if accept == "gzip" else plain)["etag"]
                assert "content-encoding" not in headers


async def test_a_file_too_small_to_gain_is_sent_as_it_is(web_server: Server) -> None:
    port = web_server.web_port or 0
    with trio.fail_after(10):
        status, headers, body = await http(port, get("/icon.svg", "Accept-Encoding: gzip\r\n"))
        assert status == 200 and body.startswith(b"<svg")
        assert "content-encoding" not in headers and "vary" not in headers


def test_the_gzip_forms_are_made_once_and_the_same_at_every_start() -> None:
    site, again = load_site(), load_site()
    forms = {path: file.gzipped for path, file in site.items() if file.gzipped is not None}
    assert {"/", "/index.html", "/app.css", "/js/app.js", "/presets.json"} <= set(forms)
    for path, form in forms.items():
        assert form == again[path].gzipped  # mtime 0: the same bytes, so the same ETag
        assert gzip.decompress(form.body) == site[path].body
    plain = sum(len(file.body) for path, file in site.items() if path != "/")
    packed = sum(
        len((file.gzipped or file.plain).body) for path, file in site.items() if path != "/"
    )
    assert packed < plain / 2


@pytest.mark.parametrize(
    ("header", "takes"),
    [
        (None, False),
        (b"", False),
        (b"gzip", True),
        (b"GZIP", True),
        (b"x-gzip", True),
        (b"deflate, gzip;q=0.5", True),
        (b"gzip;q=0", False),
        (b"gzip; q=0.000", False),
        (b"gzip;q=nonsense", False),
        (b"*", True),
        (b"*;q=0", False),
        (b"*, gzip;q=0", False),
        (b"gzip;q=0, *", False),
        (b"identity", False),
        (b"br, zstd", False),
    ],
)
def test_accept_encoding_is_read_with_its_weights(header: bytes | None, takes: bool) -> None:
    assert accepts_gzip(header) is takes


@pytest.mark.parametrize(
    ("header", "matches"),
    [
        (None, False),
        (b'"abc"', True),
        (b'W/"abc"', True),
        (b'"x", "abc"', True),
        (b'"x",W/"abc"', True),
        (b"*", True),
        (b'"abcd"', False),
        (b"abc", False),
    ],
)
def test_if_none_match_is_compared_weakly(header: bytes | None, matches: bool) -> None:
    assert etag_matches(header, '"abc"') is matches
