"""The client's side of one TCP (or TLS) connection: hello, requests matched to replies, events in order.

`open_connection(address, token=...)` connects, says `hello`, waits for `welcome` and yields a
`Connection` whose reader task runs in the background:

- `await conn.request(message)` numbers the request, sends it and returns its reply (raising
  `ServerError` for an `error` reply, `ConnectionLost` if the connection ends first);
- `conn.events` is a bounded channel of everything else the server pushes (events, and replies the
  client did not ask for, such as the `joined` that follows a resume). It ends when the connection
  does; `conn.close_reason` then says why.

The protocol itself is `protocol.connection.Connection` (sans-IO: the phases, the request ids, the
`seq` of events); this module adds the socket, the waiting and the keepalive. Nothing here knows the
game.
"""

from __future__ import annotations

import contextlib
import ssl
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import trio

from client.config import ServerAddress
from protocol.connection import CONNECTION_CLOSED
from protocol.connection import Connection as ProtocolConnection
from protocol.errors import LocalProtocolError, RemoteProtocolError, closes_connection
from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Bye,
    Error,
    HandRecords,
    Hello,
    MatchRecords,
    Message,
    Ping,
    Pong,
    Reply,
    Request,
    Sender,
    ServicePaused,
    Welcome,
)
from protocol.types import ClientKind

CONNECT_TIMEOUT = 10.0
REPLY_TIMEOUT = 20.0
EVENT_BUFFER = 512  # events waiting for the UI; a full buffer stops reading (TCP pushes back)
MAX_FRAME = 1 << 20
CLIENT_NAME = "spades-client/1"

R = TypeVar("R", bound=Reply)


class ConnectionLost(Exception):
    """The connection ended (or could not be made); `str()` says why in words. `code` is the
    server's error code when it refused the connection (`bad_token`, `version_mismatch`, ...)."""

    def __init__(self, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code


class ServerError(Exception):
    """The server refused a request with an `error` reply; `code` is the protocol's error code."""

    def __init__(self, code: str, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = detail


def leaf_errors(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or the error itself."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaf_errors(inner)]
    return [error]


@contextlib.contextmanager
def lone_errors() -> Iterator[None]:
    """Re-raise a group holding a single exception (trio wraps errors crossing a nursery) as that
    exception, so callers can catch `ConnectionLost` and friends by type."""
    try:
        yield
    except BaseExceptionGroup as group:
        leaves = leaf_errors(group)
        if len(leaves) == 1:
            raise leaves[0] from None
        raise


class _Waiter:
    def __init__(self) -> None:
        self.done = trio.Event()
        self.reply: Message | None = None


class Connection:
    """One live connection. Create with `open_connection`."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.protocol = ProtocolConnection(Sender.CLIENT, max_frame_size=MAX_FRAME)
        self._send_events, self.events = trio.open_memory_channel[Message](EVENT_BUFFER)
        self._waiters: dict[int, _Waiter] = {}
        self._send_lock = trio.Lock()
        self.close_reason: str | None = None
        self.closed = trio.Event()
        self.welcome: Welcome | None = None
        # The server has paused play (`service_paused`): its answers wait for its database, so a
        # request's wait for its reply does not run out meanwhile. `pauses` counts them.
        self.paused = False
        self.pauses = 0

    # ---------------------------------------------------------------- sending

    async def send(self, message: Message) -> None:
        """Send one message (a request without `id` is numbered); raises ConnectionLost if the stream
        is gone or closing, and ServerError, without sending anything, for a message the server
        would refuse (one out of its phase, or breaking its schema: a chat line too long, say)."""
        try:
            data = self.protocol.send(message)
        except LocalProtocolError as exc:
            if not self.protocol.can_send:
                raise ConnectionLost(self.close_reason or "the connection is closing") from None
            raise ServerError(exc.code.value, exc.message, exc.detail) from None
        try:
            async with self._send_lock:
                await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError) as exc:
            self._close(f"the connection broke ({type(exc).__name__})")
            raise ConnectionLost(self.close_reason or "the connection broke") from None

    async def request(self, message: Request, *, wait: float = REPLY_TIMEOUT) -> Reply:
        """Send a request with a fresh `id` and return its reply.

        Raises `ServerError` for an `error` reply, `ConnectionLost` if the connection ends (or no
        reply comes within `wait` seconds, which we treat as a dead connection).
        """
        if self.closed.is_set():
            raise ConnectionLost(self.close_reason or "not connected")
        message = self.protocol.numbered(message)
        rid = message.id
        assert rid is not None
        waiter = _Waiter()
        self._waiters[rid] = waiter
        try:
            pauses = self.pauses
            await self.send(message)
            while not self.closed.is_set():  # bounded by the connection's life
                with trio.move_on_after(wait):
                    await waiter.done.wait()
                if waiter.done.is_set() or not (self.paused or self.pauses != pauses):
                    break
                pauses = self.pauses  # paused meanwhile: the answer waits for the server's store
        finally:
            self._waiters.pop(rid, None)
        reply = waiter.reply
        if reply is None:
            if not self.closed.is_set():
                self._close(f"no answer from the server within {wait:.0f} s")
            raise ConnectionLost(self.close_reason or "the connection ended")
        if isinstance(reply, Error):
            raise ServerError(reply.code, reply.message, reply.detail)
        assert isinstance(reply, Reply)
        return reply

    async def expect(self, message: Request, kind: type[R]) -> R:
        """`request`, checking the reply's type (anything else is a server bug, reported as such)."""
        reply = await self.request(message)
        if not isinstance(reply, kind):
            raise ServerError("internal", f"the server answered {reply.TYPE}, not {kind.TYPE}")
        return reply

    # ---------------------------------------------------------------- the reader

    async def run_reader(self) -> None:
        """Read until the connection ends; route replies to their waiters and the rest to `events`."""
        try:
            while not self.closed.is_set():
                try:
                    data = await self.stream.receive_some(65536)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    data = b""
                if not data:
                    # (Not fed to the protocol: a server that drops us mid-frame closed it too.)
                    self._close(self.close_reason or "the server closed the connection")
                    return
                self.protocol.receive_data(data)
                await self._drain()
        finally:
            self._close(self.close_reason or "the connection ended")

    async def _drain(self) -> None:
        while True:
            try:
                message = self.protocol.next_event()
            except RemoteProtocolError as exc:
                if exc.fatal:
                    self._close(f"the server sent something unreadable ({exc.code.value})")
                    return
                continue  # one refused message (an unknown type, a reply to nothing): skip it
            if message is None:
                return
            if message is CONNECTION_CLOSED:
                self._close(self.close_reason or "the server closed the connection")
                return
            assert isinstance(message, Message)
            if isinstance(message, Bye):
                self._close(message.reason or "the server said goodbye")
                return
            if isinstance(message, Reply) and message.id in self._waiters:
                waiter = self._waiters[message.id]
                waiter.reply = message
                waiter.done.set()
                continue
            if (
                isinstance(message, Error)
                and message.id is None
                and closes_connection(message.code)
            ):
                self._close(message.message or message.code)
                return
            if isinstance(message, Ping):
                await self.send(Pong(id=message.id))
                continue
            if isinstance(message, ServicePaused):
                self.paused = message.paused
                self.pauses += int(message.paused)
            try:
                await self._send_events.send(message)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return

    def _close(self, reason: str) -> None:
        if self.close_reason is None:
            self.close_reason = reason
        if self.closed.is_set():
            return
        self.closed.set()
        self._send_events.close()
        for waiter in self._waiters.values():
            waiter.done.set()

    async def keepalive(self, interval: float) -> None:
        """Ping every `interval` seconds so an idle-timeout server keeps us (runs until cancelled)."""
        while not self.closed.is_set():
            await trio.sleep(interval)
            try:
                await self.request(Ping(), wait=max(interval, 5.0))
            except (ConnectionLost, ServerError):
                return


def tls_context(ca: str | None) -> ssl.SSLContext:
    """A client context that checks the server's certificate and name: against the system's CAs,
    or against the PEM file `ca` alone. Raises `ConnectionLost` if `ca` cannot be read."""
    try:
        return ssl.create_default_context(cafile=ca)
    except (OSError, ssl.SSLError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc)
        raise ConnectionLost(f"cannot use the CA file {ca}: {reason}") from None


async def open_stream(
    address: ServerAddress, connect_timeout: float = CONNECT_TIMEOUT
) -> trio.abc.Stream:
    """A TCP stream to `address`, wrapped in TLS (handshake done) for a `tls://` address.

    Raises `ConnectionLost` with a sentence when the server cannot be reached in time or its
    certificate is not trusted; nothing is left open then.
    """
    context = tls_context(address.ca) if address.tls else None
    try:
        with trio.fail_after(connect_timeout):
            tcp = await trio.open_tcp_stream(address.host, address.port)
            if context is None:
                return tcp
            stream = trio.SSLStream(tcp, context, server_hostname=address.host)
            try:
                await stream.do_handshake()
            except BaseException:
                await trio.aclose_forcefully(tcp)
                raise
            return stream
    except trio.TooSlowError:
        raise ConnectionLost(
            f"no answer from {address.text} within {connect_timeout:.0f} s"
        ) from None
    except trio.BrokenResourceError as exc:
        cause = exc.__cause__
        reason = getattr(cause, "verify_message", None) or getattr(cause, "reason", None)
        raise ConnectionLost(
            f"TLS with {address.text} failed: {reason or cause or 'the server hung up'}"
            " (is it serving TLS, and is its certificate trusted? see --ca)"
        ) from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise ConnectionLost(
            f"cannot reach {address.text}: {reason} (is a server running there? `spades-server"
            " serve` prints the address to give; the port is 7777 unless it says another)"
        ) from None


@asynccontextmanager
async def open_connection(
    address: ServerAddress,
    *,
    token: str | None = None,
    kind: ClientKind = ClientKind.HUMAN,
    connect_timeout: float = CONNECT_TIMEOUT,
) -> AsyncIterator[Connection]:
    """Connect and say hello; yields the connection once `welcome` has come.

    Raises `ConnectionLost` when the server cannot be reached or refuses the hello (the server's
    sentence is the message: a bad token, a protocol version it does not speak, a full server).
    """
    stream = await open_stream(address, connect_timeout)
    conn = Connection(stream)
    try:
        with lone_errors():
            async with trio.open_nursery() as nursery:
                nursery.start_soon(conn.run_reader)
                try:
                    hello = Hello(
                        protocol=PROTOCOL_VERSION_TEXT, client=CLIENT_NAME, kind=kind, token=token
                    )
                    welcome = await conn.expect(hello, Welcome)
                except ServerError as exc:
                    raise ConnectionLost(exc.message, exc.code) from None
                conn.welcome = welcome
                idle_ms = welcome.limits.idle_timeout_ms
                if idle_ms > 0:
                    nursery.start_soon(conn.keepalive, max(0.1, idle_ms / 3000))
                try:
                    yield conn
                finally:
                    if not conn.closed.is_set():
                        with trio.move_on_after(1.0), contextlib.suppress(ConnectionLost):
                            await conn.send(Bye(reason="client closing"))
                    nursery.cancel_scope.cancel()
                    conn._close(conn.close_reason or "closed by the client")
    finally:
        await trio.aclose_forcefully(stream)


async def all_record_pages(
    conn: Connection,
    page: Callable[[int], Request],
    kind: type[HandRecords] | type[MatchRecords],
    *,
    most: int,
    what: str,
) -> list[dict[str, Any]]:
    """Every hand record of a paged reply (`hand_records`, `match_records`), asking `page(start)`
    for each page in turn until one says it is the last; `ServerError` `internal` when `most`
    pages did not reach the end (a server that never ends its pages is a bug; the loop is bounded
    all the same)."""
    records: list[dict[str, Any]] = []
    start: int | None = 0
    for _ in range(most):
        if start is None:
            return records
        reply = await conn.expect(page(start), kind)
        records.extend(reply.records)
        start = reply.next if reply.records else None  # a page without records ends it
    raise ServerError("internal", f"{what} did not end after {most} pages")
