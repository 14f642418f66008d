"""The operator's side of the wire: one connection to a running server that says `hello`, proves
it holds an operator token (`operator_login`) and sends one operator request (docs/protocol.md,
Operator). `spades-server admin` (server/cli_admin.py) is its command line; tests call it too.

It is the protocol's own `Connection` in a few lines of trio, as every client of the project is;
every wait is bounded by `timeout`.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TypeVar

import trio

from protocol.connection import Connection, ConnectionClosed
from protocol.errors import LocalProtocolError, ProtocolError
from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Bye,
    Error,
    Hello,
    Message,
    OperatorLogin,
    Reply,
    Request,
    Sender,
    Welcome,
)
from protocol.types import ClientKind

CLIENT_NAME = "spades-server admin"
MAX_MESSAGES = 10_000  # read at most this many messages for one answer (events come meanwhile)
MAX_PAGES = 100_000  # pages of one listing read at most (a bound; `total` ends it first)

T = TypeVar("T")


class AdminError(Exception):
    """The request was not carried out; `str()` is one line for the operator."""


class Unreachable(AdminError):
    """The server could not be reached, or answered nothing that makes sense in time."""


class Refused(AdminError):
    """The server refused the request (`code`: the protocol's error code)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}" if message else code)
        self.code = code


@dataclass(frozen=True)
class ServerAddress:
    """Where the server listens: HOST:PORT, and whether it speaks TLS (`tls://HOST:PORT`)."""

    host: str
    port: int
    tls: bool = False

    @classmethod
    def parse(cls, text: str, default_port: int) -> ServerAddress:
        """`HOST`, `HOST:PORT`, `[IPv6]:PORT`, each maybe after `tls://`; `ValueError` if not."""
        rest = text.strip()
        tls = rest.lower().startswith("tls://")
        if tls:
            rest = rest[len("tls://") :]
        if "://" in rest or not rest:
            raise ValueError(f"{text!r} is not HOST:PORT (or tls://HOST:PORT)")
        host, port = rest, default_port
        if rest.startswith("["):
            host, _, after = rest[1:].partition("]")
            if after:
                if not after.startswith(":"):
                    raise ValueError(f"{text!r} is not [ADDRESS]:PORT")
                port = _port(after[1:], text)
        elif rest.count(":") == 1:
            host, _, number = rest.partition(":")
            port = _port(number, text)
        if not host:
            raise ValueError(f"{text!r} names no host")
        return cls(host, port, tls)

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'tls://' if self.tls else ''}{host}:{self.port}"


def _port(text: str, whole: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"{whole!r}: the port is a number from 1 to 65535")
    return int(text)


async def _open(address: ServerAddress, ca: str | None) -> trio.abc.Stream:
    try:
        stream: trio.abc.Stream = await trio.open_tcp_stream(address.host, address.port)
    except OSError as exc:
        raise Unreachable(f"cannot reach {address}: {exc.strerror or exc}") from None
    if not address.tls:
        return stream
    try:
        context = ssl.create_default_context(cafile=ca)
    except (OSError, ssl.SSLError) as exc:
        await stream.aclose()
        raise AdminError(f"cannot load the CA file {ca}: {exc}") from None
    tls = trio.SSLStream(stream, context, server_hostname=address.host)
    try:
        await tls.do_handshake()
    except trio.BrokenResourceError as exc:
        await trio.aclose_forcefully(tls)
        raise Unreachable(f"TLS with {address} failed: {exc.__cause__ or exc}") from None
    return tls


class _Line:
    """One connection: requests out, their replies in (events in between are passed over)."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.conn = Connection(Sender.CLIENT)

    async def ask(self, request: Request) -> Reply:
        request = self.conn.numbered(request)
        try:
            data = self.conn.send(request)
        except LocalProtocolError as exc:  # a field the protocol refuses: the operator's typo
            raise AdminError(f"{exc.detail or request.TYPE}: {exc.message}") from None
        await self.stream.send_all(data)
        for _ in range(MAX_MESSAGES):
            message = await self._next()
            if isinstance(message, Error) and (message.id in (None, request.id)):
                raise Refused(message.code, message.message)
            if isinstance(message, Reply) and message.id == request.id:
                return message
            if isinstance(message, Bye):
                raise Unreachable(f"the server closed the connection: {message.reason or 'bye'}")
        raise Unreachable(f"no answer to {request.TYPE} in {MAX_MESSAGES} messages")

    async def _next(self) -> Message:
        while True:
            try:
                event = self.conn.next_event()
            except ProtocolError as exc:
                raise Unreachable(f"the server broke the protocol: {exc}") from None
            if isinstance(event, ConnectionClosed):
                raise Unreachable("the server closed the connection")
            if event is not None:
                return event
            try:
                data = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
                raise Unreachable(f"the connection broke: {exc}") from None
            if not data:
                raise Unreachable("the server closed the connection")
            self.conn.receive_data(data)


@asynccontextmanager
async def operator_line(
    address: ServerAddress, token: str, *, ca: str | None = None
) -> AsyncIterator[_Line]:
    """A connection to the server at `address`, said `hello` to and proven the operator's
    (`token`): its requests are answered as the operator's. Says `bye` and closes on leaving."""
    stream = await _open(address, ca)
    try:
        line = _Line(stream)
        welcome = await line.ask(
            Hello(protocol=PROTOCOL_VERSION_TEXT, client=CLIENT_NAME, kind=ClientKind.HUMAN)
        )
        assert isinstance(welcome, Welcome)
        await line.ask(OperatorLogin(token=token))
        yield line
        if line.conn.can_send:
            await stream.send_all(line.conn.send(Bye(reason="done")))
    finally:
        await trio.aclose_forcefully(stream)


async def operate(
    address: ServerAddress,
    token: str,
    request: Request,
    *,
    ca: str | None = None,
) -> Reply:
    """Send `request` as the operator (`token`) to the server at `address`; its reply. Raises
    `Unreachable`, `Refused` (an `error` reply: a bad token, a target not found) or `AdminError`.
    The caller bounds the time (`within`)."""
    async with operator_line(address, token, ca=ca) as line:
        return await line.ask(request)


async def every_page(
    address: ServerAddress,
    token: str,
    page: Callable[[int], Request],
    count: Callable[[Reply], tuple[int, int]],
    *,
    ca: str | None = None,
) -> list[Reply]:
    """Every page of a paged listing (`list_sessions`, `list_bans`) on one connection: `page(offset)`
    is the request of the page from `offset`, `count(reply)` its (length, total)."""
    replies: list[Reply] = []
    async with operator_line(address, token, ca=ca) as line:
        offset = 0
        for _ in range(MAX_PAGES):
            reply = await line.ask(page(offset))
            replies.append(reply)
            length, total = count(reply)
            offset += length
            if not length or offset >= total:
                break
    return replies


async def within(seconds: float, work: Callable[[], Awaitable[T]], address: ServerAddress) -> T:
    """`work()` (an `operate` or `every_page`), given `seconds` in all; `Unreachable` if the server
    at `address` takes longer."""
    with trio.move_on_after(seconds):
        return await work()
    raise Unreachable(f"no answer from {address} within {seconds:g} s")
