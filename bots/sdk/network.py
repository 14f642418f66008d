"""The runner's side of the network: an address, a stream (over TLS when asked), and the protocol's
`Connection` on it (`ServerConnection`). `spades-bot run` (`bots.sdk.runner`) and `spades-bot
register` (`bots.sdk.register`) both connect through here.
"""

import logging
import os
import socket
import ssl
from collections import deque
from typing import Final

import trio

from protocol.connection import CONNECTION_CLOSED, Connection
from protocol.errors import RemoteProtocolError
from protocol.messages import Message, Request, Sender

log = logging.getLogger("bots.runner")

#: The port of `HOST` without `:PORT` (the server's default, as `spades connect` assumes).
DEFAULT_PORT: Final = 7777


class RunnerError(Exception):
    """The runner cannot go on (a refused token, a table that does not exist, a server it could
    not reach in time). `gave_up` is true when trying longer might have helped (`retry_forever`)."""

    def __init__(self, message: str, *, gave_up: bool = False) -> None:
        super().__init__(message)
        self.gave_up = gave_up


class ServerConnection:
    """One stream with the protocol's `Connection`: send messages, receive validated ones."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.protocol = Connection(Sender.CLIENT, max_frame_size=1 << 20)
        self.pending: deque[Message] = deque()
        # The last requests sent, by id: one refused `rate_limited` is sent again (a few at most
        # are ever in flight, so a short memory is enough).
        self.sent: dict[int, Request] = {}

    async def send(self, message: Message) -> int | None:
        """Send `message` (a request is numbered: its id is returned). Raises `LocalProtocolError`
        when the protocol forbids it now (say, after the server's closing error)."""
        if isinstance(message, Request):
            message = self.protocol.numbered(message)
            assert message.id is not None
            self.sent[message.id] = message
            if len(self.sent) > 32:
                del self.sent[next(iter(self.sent))]
        await self.stream.send_all(self.protocol.send(message))
        return message.id if isinstance(message, Request) else None

    async def receive(self) -> Message | None:
        """The next message; None when the server closed the connection. Raises a fatal
        `RemoteProtocolError` when the server's bytes or events cannot be trusted."""
        while not self.pending:
            data = await self.stream.receive_some(65536)
            if not data:
                return None
            self.protocol.receive_data(data)
            while True:
                try:
                    message = self.protocol.next_event()
                except RemoteProtocolError as exc:
                    if exc.fatal:
                        raise
                    log.warning("skipped a message from the server: %s", exc)
                    continue
                if message is None or message is CONNECTION_CLOSED:
                    break
                assert isinstance(message, Message)
                self.pending.append(message)
        return self.pending.popleft()


def client_tls_context(ca: str | None) -> ssl.SSLContext:
    """A context that checks the server's certificate and name (against `ca` alone when given).
    Raises RunnerError when the CA file cannot be used."""
    try:
        return ssl.create_default_context(cafile=ca)
    except (OSError, ssl.SSLError) as exc:
        raise RunnerError(f"cannot use the CA file {ca}: {exc}") from None


async def tls_handshake(stream: trio.SSLStream[trio.SocketStream]) -> None:
    """The handshake; an untrusted certificate is a RunnerError (retrying cannot help), any
    other failure a lost connection (BrokenResourceError) like a dropped line."""
    try:
        await stream.do_handshake()
    except trio.BrokenResourceError as exc:
        if isinstance(exc.__cause__, ssl.SSLCertVerificationError):
            raise RunnerError(
                f"the server's TLS certificate is not trusted: {exc.__cause__.verify_message}"
                " (give its CA with --ca)"
            ) from None
        raise


def reason_of(exc: BaseException) -> str:
    """A lost connection's cause in a few words ("connection refused", not trio's wrapping)."""
    if isinstance(exc, trio.TooSlowError):
        return "no answer in time"
    for cause in _causes(exc):
        if isinstance(cause, socket.gaierror) and cause.strerror:
            return cause.strerror.lower()
        if isinstance(cause, OSError) and cause.errno and cause.errno > 0:
            return os.strerror(cause.errno).lower()
    return str(exc) or type(exc).__name__


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc`, then what it was raised from, and the errors inside exception groups on the way."""
    out: list[BaseException] = []
    todo = [exc]
    while todo and len(out) < 20:
        error = todo.pop(0)
        out.append(error)
        if isinstance(error, BaseExceptionGroup):
            todo.extend(error.exceptions)
        if error.__cause__ is not None:
            todo.append(error.__cause__)
    return out


def parse_address(text: str) -> tuple[str, int]:
    """`HOST[:PORT]` (or `[v6]:PORT`, or a bare v6 address) as a pair; the port is 7777 when not
    given, as `spades connect` assumes. Raises ValueError with a sentence."""
    text = text.strip()
    port_text: str | None = None
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError(f"{text!r}: write the server as HOST:PORT, e.g. [::1]:7777")
        port_text = rest[1:] if rest else None
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
    else:  # a name, an IPv4 address, or a bare IPv6 one: the default port
        host = text
    if port_text is None:
        return host or "127.0.0.1", DEFAULT_PORT
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"{text!r}: the port must be a number from 1 to 65535 (or left out: 7777)")
    return host or "127.0.0.1", int(port_text)


async def open_stream(
    host: str, port: int, tls: ssl.SSLContext | None
) -> tuple[trio.SocketStream, trio.abc.Stream]:
    """A TCP stream to `host:port` and the stream to speak on (the same, or TLS over it after its
    handshake); the caller bounds it in time. Raises OSError / trio.BrokenResourceError for a
    failure to connect, RunnerError for a certificate that is not trusted."""
    tcp = await trio.open_tcp_stream(host, port)
    if tls is None:
        return tcp, tcp
    stream = trio.SSLStream(tcp, tls, server_hostname=host)
    try:
        await tls_handshake(stream)
    except BaseException:
        await trio.aclose_forcefully(tcp)
        raise
    return tcp, stream
