"""A kit's client: one TCP stream with the protocol's own `Connection`, every wait bounded.

It checks the server as any client would (the phase of every message, the `seq` of every event, the
`id` of every reply) and keeps what it finds: a reply that answers no request of its own is a server
bug, recorded in `problems` and skipped, never acted on. It can also break the protocol on purpose,
as a conformance check must: `send` puts on the wire what the connection refuses to send (a request
before `hello`, a second `hello`), and `send_raw` any bytes; the replies to such requests are taken
although the connection never saw them asked.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import TypeVar

import trio

from protocol.codec import unpack_body
from protocol.connection import CONNECTION_CLOSED, Connection
from protocol.errors import LocalProtocolError, ProtocolError, RemoteProtocolError
from protocol.framing import FrameDecoder
from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Error,
    Hello,
    Message,
    Ping,
    Pong,
    Reply,
    Request,
    Sender,
    Welcome,
)
from protocol.types import ClientKind
from protocol.wire import encode

M = TypeVar("M", bound=Message)

#: The longest a kit waits for one answer from the server, unless told otherwise.
WAIT: float = 10.0
#: Every wait reads at most this many messages: a bound in count beside the bound in time.
MAX_MESSAGES = 50_000


class ServerSilent(Exception):
    """The server did not send what was awaited in time, or closed the connection first."""


def request_ids(data: bytes) -> set[int]:
    """The `id`s of the maps in the whole frames of `data`, as far as they read."""
    frames = FrameDecoder(2**32 - 1)
    frames.receive_data(data)
    found: set[int] = set()
    try:
        while (body := frames.next_frame()) is not None:
            rid = unpack_body(body).get("id")
            if type(rid) is int:
                found.add(rid)
    except ProtocolError:
        pass
    return found


class KitClient:
    """Sends requests with fresh ids; keeps every message received (`received`) and those not yet
    read (`pending`); `problems` lists what the connection refused from the server."""

    def __init__(self, stream: trio.abc.Stream, *, name: str = "kit") -> None:
        self.stream = stream
        self.name = name
        self.conn = Connection(Sender.CLIENT, max_frame_size=1 << 22)
        self.pending: deque[Message] = deque()
        self.received: list[Message] = []
        self.problems: list[str] = []
        self.closed = False
        self.fatal: RemoteProtocolError | None = None
        self._asked_aside: set[int] = set()
        #: The messages the last `wait_for` passed over before the one it returned, in order (they
        #: stay queued too): what the server sent *before* it.
        self.before: list[Message] = []

    @classmethod
    async def connect(cls, host: str, port: int, *, name: str = "kit") -> KitClient:
        with trio.fail_after(WAIT):
            stream = await trio.open_tcp_stream(host, port)
        return cls(stream, name=name)

    # ---------------------------------------------------------------- sending

    async def send(self, message: Message) -> int | None:
        """Send `message`; a request without an id gets a fresh one (returned). What the connection
        will not send (out of its phase, or invalid) goes out as it is: the kit wants the server to
        see it."""
        if isinstance(message, Request):
            message = self.conn.numbered(message)
        try:
            data = self.conn.send(message)
        except LocalProtocolError:
            data = encode(message)
            if isinstance(message, Request) and message.id is not None:
                self._asked_aside.add(message.id)
        try:
            await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.closed = True
        return message.id if isinstance(message, Request | Reply) else None

    async def send_raw(self, data: bytes) -> None:
        """Any bytes, as they are."""
        self._asked_aside |= request_ids(data)
        try:
            await self.stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.closed = True

    # ---------------------------------------------------------------- receiving

    def _next(self) -> Message | None:
        while True:
            try:
                event = self.conn.next_event()
            except RemoteProtocolError as exc:
                reply = exc.received
                if not exc.fatal and isinstance(reply, Reply) and reply.id in self._asked_aside:
                    self._asked_aside.discard(reply.id)
                    return reply  # the answer to a request sent around the connection
                if exc.fatal:
                    self.fatal = exc
                    self.closed = True
                    return None
                self.problems.append(f"{exc.code.value}: {exc.message}")
                continue
            if event is CONNECTION_CLOSED:
                self.closed = True
                return None
            assert event is None or isinstance(event, Message)
            return event

    async def receive(self) -> Message | None:
        """The next message, or None once the server has closed (or broken) the connection."""
        while not self.pending:
            if self.closed:
                return None
            try:
                data = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            self.conn.receive_data(data)
            while (message := self._next()) is not None:
                self.received.append(message)
                self.pending.append(message)
            if not data:
                self.closed = True
        return self.pending.popleft()

    async def next_message(self, within: float = WAIT) -> Message | None:
        """The next message within `within` seconds; None if the connection closed first. Raises
        ServerSilent when nothing came in time."""
        with trio.move_on_after(within):
            return await self.receive()
        raise ServerSilent(f"nothing from the server in {within:g} s")

    async def wait_for(
        self, accept: Callable[[Message], bool], what: str, within: float = WAIT
    ) -> Message:
        """The first message `accept`s (the messages before it stay queued, in order, and are
        in `before`). Raises ServerSilent naming `what` when none came in time or the connection
        closed first."""
        skipped: list[Message] = []
        self.before = skipped
        try:
            with trio.move_on_after(within):
                for _ in range(MAX_MESSAGES):
                    message = await self.receive()
                    if message is None:
                        raise ServerSilent(f"the server closed the connection before {what}")
                    if accept(message):
                        return message
                    skipped.append(message)
            raise ServerSilent(f"no {what} within {within:g} s")
        finally:
            self.pending.extendleft(reversed(skipped))

    async def expect(self, kind: type[M], within: float = WAIT) -> M:
        """The first message of `kind` (the others before it stay queued)."""
        found = await self.wait_for(lambda m: isinstance(m, kind), f"`{kind.TYPE}`", within)
        assert isinstance(found, kind)
        return found

    async def reply_to(self, rid: int | None, within: float = WAIT) -> Reply:
        found = await self.wait_for(
            lambda m: isinstance(m, Reply) and m.id == rid, f"reply to request {rid}", within
        )
        assert isinstance(found, Reply)
        return found

    async def request(self, message: Request, within: float = WAIT) -> Reply:
        """Send and wait for the reply with the same id (events in between stay queued)."""
        return await self.reply_to(await self.send(message), within)

    def drain(self) -> list[Message]:
        """The messages received and not yet read, removed from the queue."""
        out = list(self.pending)
        self.pending.clear()
        return out

    async def barrier(self, within: float = WAIT) -> list[Message]:
        """Ping and read up to its `pong`: everything the server had queued for this connection
        before it read the ping (it answers in order), the queue included. This is how the kit
        knows a notice was *not* sent, without waiting on a clock."""
        rid = await self.send(Ping())
        out = self.drain()
        with trio.move_on_after(within):
            for _ in range(MAX_MESSAGES):
                message = await self.receive()
                if message is None:
                    raise ServerSilent("the server closed the connection before `pong`")
                if isinstance(message, Pong) and message.id == rid:
                    return out
                out.append(message)
        raise ServerSilent(f"no `pong` within {within:g} s")

    async def hello(
        self, token: str | None = None, kind: ClientKind = ClientKind.HUMAN, client: str = ""
    ) -> Welcome:
        """Say hello; the welcome (raises ServerSilent, or AssertionError for a refusal)."""
        reply = await self.request(
            Hello(
                protocol=PROTOCOL_VERSION_TEXT,
                client=client or f"spades-conformance/{self.name}",
                kind=kind,
                token=token,
            )
        )
        if isinstance(reply, Error):
            raise ServerSilent(f"hello was refused: {reply.code}: {reply.message}")
        if not isinstance(reply, Welcome):
            raise ServerSilent(f"hello was answered with {reply.TYPE}, not welcome")
        return reply

    async def aclose(self) -> None:
        await trio.aclose_forcefully(self.stream)
