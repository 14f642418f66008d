"""One HTTP/1.1 connection of the web port: the page's files, or the upgrade to a WebSocket.

h11 parses the requests (sans-IO, like our own protocol package); wsproto checks a WebSocket upgrade
and writes its answer. Everything a browser (or a script pretending to be one) can do is bounded:

- it must be for this server's own name (`Host`: an IP address, `localhost` or a `--web-name`),
  else 421, so a DNS-rebinding page cannot pose as this one (server/web/names.py);
- one request head (request line and headers) is at most `max_request_bytes` however its bytes
  arrive (one write or many), else 431;
- it must arrive whole within `request_timeout` of the wait for it starting (also between the
  requests of a kept-alive connection), else 408 (or a silent close if nothing came);
- only GET and HEAD are served (405), never with a body (413), at most
  `max_requests_per_connection` on one connection; a refused HEAD gets its status line too;
- each response must be written within `send_timeout`, else the connection is dropped;
- while it waits on its peer (for a head, or for an answer to be read), its slot among the HTTP
  connections at once may be taken back for another address's newcomer (server/web/slots.py).

The WebSocket lives at `/ws`. A browser's upgrade must come from this server's own page: its
`Origin`, when it sends one, must name the host it asked for (`Host`), so another site open in the
same browser cannot talk to the server in the user's name (the token is in this origin's storage
anyway; this is a second lock). Programs other than browsers send no `Origin` and are let in.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from http import HTTPStatus
from urllib.parse import urlsplit

import h11
import structlog
import trio
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, RejectConnection
from wsproto.events import Request as WSRequest
from wsproto.utilities import RemoteProtocolError as WSRemoteProtocolError

from server.web.names import HostNames
from server.web.ops import Routes
from server.web.slots import Slot
from server.web.static_files import StaticFile, etag_matches
from server.web.websocket import WebSocketStream

log = structlog.get_logger("server.web")

WEBSOCKET_PATH = "/ws"
RECEIVE_CHUNK = 16 * 1024
LINGER_TIME = 1.0
LINGER_BYTES = 64 * 1024
# The page's code is all served from here; no inline script or style, no other origin.
SECURITY_HEADERS: list[tuple[bytes, bytes]] = [
    (
        b"Content-Security-Policy",
        b"default-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; "
        b"form-action 'none'; frame-ancestors 'none'",
    ),
    (b"X-Content-Type-Options", b"nosniff"),
    (b"Referrer-Policy", b"no-referrer"),
    (b"X-Frame-Options", b"DENY"),
]


@dataclass(frozen=True)
class WebLimits:
    """Bounds on the web port's HTTP side (a WebSocket session has the server's own `Limits`)."""

    max_connections: int = 128  # HTTP connections open at once (not counting WebSocket sessions)
    # HTTP connections one address (IPv6: one /64) may hold; 0: its share, `per_address`.
    max_connections_per_address: int = 0
    request_timeout: float = 10.0  # seconds for a TLS handshake, or for one whole request head
    max_request_bytes: int = 8 * 1024  # request line and headers
    max_requests_per_connection: int = 100
    send_timeout: float = 10.0  # seconds to write one response

    @property
    def per_address(self) -> int:
        """The slots one address may hold: `max_connections_per_address`, or by default an
        eighth of them (at least 4: a browser opens about six to one server at once)."""
        if self.max_connections_per_address > 0:
            return self.max_connections_per_address
        return max(4, self.max_connections // 8)


class _Close(Exception):
    """The connection is over (answered or not); nothing more is read from it."""


class HttpConnection:
    """Serves one connection's requests; `serve()` returns the WebSocket if it upgraded."""

    def __init__(
        self,
        stream: trio.abc.Stream,
        peer: str,
        site: dict[str, StaticFile],
        limits: WebLimits,
        *,
        slot: Slot,
        max_message_bytes: int,
        names: HostNames | None = None,
        ops: Routes | None = None,
        websocket: bool = True,
    ) -> None:
        self.stream = stream
        self.peer = peer
        # While it waits on its peer (a request head, or an answer read), a newcomer may take
        # its slot back (server/web/slots.py).
        self.slot = slot
        self.site = site
        self.limits = limits
        self.max_message_bytes = max_message_bytes
        self.ops = ops  # /healthz, /readyz, /metrics (server.health), answered before the page
        self.websocket = websocket  # False: no upgrade at /ws (the operator's port)
        self.names = names or HostNames()
        # h11 bounds a head it is still waiting for; `_read_request` bounds a whole one, which
        # h11 would take at any size if it came in one read.
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=limits.max_request_bytes)
        self.requests = 0
        # The method of the request being answered (None before its head is read): a HEAD's
        # answer, an error included, has no body.
        self.method: bytes | None = None

    async def serve(self) -> WebSocketStream | None:
        """Answer requests until the connection is to end (None: then call `close()`) or
        upgrades (the WebSocket, which owns the stream from then on)."""
        try:
            while self.requests < self.limits.max_requests_per_connection:
                request = await self._read_request()
                if request is None:
                    break
                self.requests += 1
                upgraded = await self._answer(request)
                if upgraded is not None:
                    return upgraded
                if self.h11.our_state is h11.MUST_CLOSE:
                    break
                self.h11.start_next_cycle()
        except _Close:
            pass
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass
        return None

    # ------------------------------------------------------------------ reading

    async def _read_request(self) -> h11.Request | None:
        """The next request, whole (head, and the end of its empty body), or None at the end."""
        request: h11.Request | None = None
        self.method = None
        # Bytes that may belong to this request's head: what h11 kept from the last read (a
        # pipelined request) and all received since, until the head is parsed.
        received = len(self.h11.trailing_data[0])
        with self.slot.waiting(self.limits.request_timeout) as timer:
            while True:
                try:
                    event = self.h11.next_event()
                except h11.RemoteProtocolError as exc:
                    status = exc.error_status_hint
                    reason = (
                        "request head too large"
                        if status == 431
                        else f"bad request: {str(exc) or 'not HTTP/1.1'}"
                    )
                    await self._error(status, reason)
                    raise _Close from None
                if event is h11.NEED_DATA:
                    data = bytes(await self.stream.receive_some(RECEIVE_CHUNK))
                    if request is None:
                        received += len(data)
                    self.h11.receive_data(data)
                    continue
                if isinstance(event, h11.ConnectionClosed) or event is h11.PAUSED:
                    return request
                if isinstance(event, h11.Request):
                    request = event
                    self.slot.done_waiting()  # a request to answer: no longer to be taken back
                    self.method = event.method.upper()
                    # The head's size is what h11 consumed for it, whether it came in one read
                    # (which h11 does not bound) or in many.
                    if received - len(self.h11.trailing_data[0]) > self.limits.max_request_bytes:
                        await self._error(431, "request head too large")
                        raise _Close
                    if _has_body(event):
                        await self._error(413, "requests with a body are not accepted here")
                        raise _Close
                    continue
                if isinstance(event, h11.EndOfMessage):
                    return request
                # Data of a body we refused would have closed already; anything else ends it.
                raise _Close
        if timer.cancelled_caught and self.slot.evicted:
            # Its slot went to a newcomer (server/web/slots.py): a request begun is told why.
            if request is None and self.h11.trailing_data[0]:
                await self._error(
                    503,
                    "the server needed this connection for another address; try again",
                    [(b"Retry-After", b"1")],
                )
            raise _Close
        if timer.cancelled_caught:
            if request is not None or self.h11.trailing_data[0]:
                await self._error(408, "the request did not arrive in time")
            raise _Close
        return request  # pragma: no cover - the loop returns or raises

    # ------------------------------------------------------------------ answering

    async def _answer(self, request: h11.Request) -> WebSocketStream | None:
        method = request.method.upper()
        target = urlsplit(request.target.decode("ascii", "replace"))
        # (h11 refuses a request with two Host headers itself, 400, as RFC 9112 says.) A target
        # in absolute form (`GET http://name/ HTTP/1.1`, as to a proxy) names the host the
        # request is for, over `Host` (RFC 9112 3.2.2): it must be ours too.
        refusal = self.names.refusal(_header(request, b"host"))
        if refusal is None and target.scheme:
            refusal = self.names.refusal(target.netloc.encode("latin-1"))
        if refusal is not None:
            # Pages and upgrades alike: nothing is answered for another site's name.
            status, reason = refusal
            host = (_header(request, b"host") or b"").decode("latin-1")[:80]
            log.info("web_host_refused", peer=self.peer, host=host)
            await self._error(status, reason)
            raise _Close
        path = target.path
        if method not in (b"GET", b"HEAD"):
            await self._error(405, "only GET and HEAD", [(b"Allow", b"GET, HEAD")])
            raise _Close
        reply = self.ops.answer(path) if self.ops is not None else None
        if reply is not None:
            await self._respond(reply.status, reply.content_type, reply.body, method)
            return None
        if path == WEBSOCKET_PATH and self.websocket:
            if method != b"GET" or not _is_upgrade(request):
                await self._error(
                    426, "this address is the WebSocket", [(b"Upgrade", b"websocket")]
                )
                raise _Close
            return await self._upgrade(request)
        found = self.site.get(path)
        if found is None:
            await self._respond(404, b"text/plain; charset=utf-8", b"not found\n", method)
            return None
        # Compressed (once, at start) for a browser that takes it; revalidated by its ETag.
        form = found.form_for(_joined_header(request, b"accept-encoding"))
        extra = [(b"Vary", b"Accept-Encoding")] if found.gzipped is not None else []
        if etag_matches(_joined_header(request, b"if-none-match"), form.etag):
            await self._respond(304, None, b"", method, etag=form.etag, extra=extra)
            return None
        if form.encoding is not None:
            extra.append((b"Content-Encoding", form.encoding))
        await self._respond(
            200, found.content_type.encode(), form.body, method, etag=form.etag, extra=extra
        )
        return None

    async def _upgrade(self, request: h11.Request) -> WebSocketStream:
        origin = _header(request, b"origin")
        if origin is not None and not _same_origin(origin, _header(request, b"host")):
            log.info("web_origin_refused", peer=self.peer, origin=origin.decode("latin-1"))
            await self._error(403, "this WebSocket is for this server's own page")
            raise _Close
        ws = WSConnection(ConnectionType.SERVER)
        try:
            ws.initiate_upgrade_connection(list(request.headers), request.target)
        except WSRemoteProtocolError as exc:
            hint = exc.event_hint
            status = hint.status_code if isinstance(hint, RejectConnection) else 400
            await self._error(status, f"bad WebSocket upgrade: {exc}")
            raise _Close from None
        if not any(isinstance(event, WSRequest) for event in ws.events()):  # pragma: no cover
            await self._error(400, "bad WebSocket upgrade")
            raise _Close
        # No extensions (no per-message compression: nothing to inflate past the size limit).
        await self._send(ws.send(AcceptConnection()))
        trailing, _closed = self.h11.trailing_data
        return WebSocketStream(
            self.stream, ws, max_message_bytes=self.max_message_bytes, trailing=trailing
        )

    async def _respond(
        self,
        status: int,
        content_type: bytes | None,
        body: bytes,
        method: bytes,
        *,
        etag: str | None = None,
        extra: list[tuple[bytes, bytes]] | None = None,
        close: bool = False,
    ) -> None:
        headers = [*SECURITY_HEADERS, (b"Cache-Control", b"no-cache")]
        if content_type is not None:
            headers.append((b"Content-Type", content_type))
        if etag is not None:
            headers.append((b"ETag", etag.encode()))
        if status != 304:
            headers.append((b"Content-Length", str(len(body)).encode()))
        if close or self.requests >= self.limits.max_requests_per_connection:
            headers.append((b"Connection", b"close"))
        headers.extend(extra or ())
        try:
            reason = HTTPStatus(status).phrase.encode()
            data = self.h11.send(h11.Response(status_code=status, headers=headers, reason=reason))
            if body and method != b"HEAD" and status != 304:
                data += self.h11.send(h11.Data(data=body))
            data += self.h11.send(h11.EndOfMessage())
        except h11.LocalProtocolError:
            raise _Close from None
        await self._send(data)

    async def _error(
        self, status: int, reason: str, extra: list[tuple[bytes, bytes]] | None = None
    ) -> None:
        """Answer with `status` and a one-line reason (its status line alone to a HEAD), then
        the connection closes."""
        if self.h11.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        body = f"{status} {reason}\n".encode()
        # h11 frames the answer by the request's method: a body sent to a HEAD is its error.
        method = self.method or b"GET"
        with contextlib.suppress(_Close, trio.BrokenResourceError, trio.ClosedResourceError):
            await self._respond(
                status, b"text/plain; charset=utf-8", body, method, extra=extra, close=True
            )

    async def _send(self, data: bytes) -> None:
        # A peer that does not read holds its slot as surely as one that does not write: the
        # slot may be taken back meanwhile too (the answer is then cut short).
        with self.slot.waiting(self.limits.send_timeout) as timer:
            await self.stream.send_all(data)
        if timer.cancelled_caught:
            log.info("web_send_cut", peer=self.peer, evicted=self.slot.evicted)
            await trio.aclose_forcefully(self.stream)
            raise _Close

    async def close(self) -> None:
        """Close after the last response: half-close, drain a little, hang up (as the session
        does, so unread input does not make the kernel reset the answer away)."""
        stream = self.stream
        try:
            with trio.move_on_after(LINGER_TIME), contextlib.suppress(Exception):
                if isinstance(stream, trio.abc.HalfCloseableStream):
                    await stream.send_eof()
                    drained = 0
                    while drained < LINGER_BYTES:
                        data = await stream.receive_some(RECEIVE_CHUNK)
                        if not data:
                            break
                        drained += len(data)
        finally:
            await trio.aclose_forcefully(stream)


def _header(request: h11.Request, name: bytes) -> bytes | None:
    for key, value in request.headers:
        if key == name:  # h11 gives header names in lowercase
            return bytes(value)
    return None


def _joined_header(request: h11.Request, name: bytes) -> bytes | None:
    """Every value of a header that may be a list, joined by commas as RFC 9110 5.3 allows."""
    values = [bytes(value) for key, value in request.headers if key == name]
    return b", ".join(values) if values else None


def _has_body(request: h11.Request) -> bool:
    length = _header(request, b"content-length")
    return _header(request, b"transfer-encoding") is not None or (
        length is not None and length.strip() != b"0"
    )


def _is_upgrade(request: h11.Request) -> bool:
    upgrade = _header(request, b"upgrade")
    return upgrade is not None and upgrade.strip().lower() == b"websocket"


def _same_origin(origin: bytes, host: bytes | None) -> bool:
    """Whether `Origin` (scheme://host[:port]) names the `Host` the request was sent to."""
    if host is None:
        return False
    parts = urlsplit(origin.decode("latin-1"))
    return (
        parts.scheme in ("http", "https")
        and parts.netloc.lower() == host.decode("latin-1").strip().lower()
    )
