"""A protocol client for the server tests: a real stream, the protocol's own `Connection`, every wait
bounded by the caller.

The connection checks the server as any client would (the phase of every message, the `seq` of
every event, the `id` of every reply) and raises `RemoteProtocolError` when the server gets one
wrong. A test may also break the protocol on purpose: `send` puts on the wire what the connection
refuses to send (a request before `hello`, a second `hello`, an invalid field), and `send_raw` any
bytes; the replies to such requests are taken although the connection never saw them asked.
"""

from __future__ import annotations

from collections import deque
from typing import Any, TypeVar

import trio

from protocol.codec import unpack_body
from protocol.connection import CONNECTION_CLOSED, Connection
from protocol.errors import LocalProtocolError, ProtocolError, RemoteProtocolError
from protocol.framing import FrameDecoder
from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    CreateTable,
    Guest,
    Hello,
    LoggedIn,
    Message,
    Ping,
    Reply,
    Request,
    Sender,
    Spectate,
    TableCreated,
    Welcome,
)
from protocol.types import ClientKind, Game
from protocol.wire import encode

M = TypeVar("M", bound=Message)
# Every wait reads at most this many messages (a whole game's are a few thousand): a bound in count
# beside the caller's bound in time, which an autojump clock may not advance while messages flow.
MAX_MESSAGES = 100_000


def request_ids(data: bytes) -> set[int]:
    """The `id`s of the maps in the whole frames of `data` (a test's raw bytes), as far as they read."""
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


class WireClient:
    """Sends requests with fresh ids; keeps every message received in `received` (for leak checks),
    those not yet read in `pending`, and the raw chunks in `raw`."""

    def __init__(self, stream: trio.abc.Stream, *, max_frame_size: int = 1 << 20) -> None:
        self.stream = stream
        self.conn = Connection(Sender.CLIENT, max_frame_size=max_frame_size)
        self.pending: deque[Message] = deque()
        self.received: list[Message] = []
        self.raw: list[bytes] = []
        self.closed = False
        # Requests sent around the connection (on purpose): their replies are the test's to read.
        self._asked_aside: set[int] = set()

    @classmethod
    async def connect(cls, port: int) -> WireClient:
        return cls(await trio.open_tcp_stream("127.0.0.1", port))

    @property
    def last_seq(self) -> int:
        """The `seq` of the last event received (the connection checks they go 1, 2, 3, ...)."""
        return self.conn.seq

    def next_id(self) -> int:
        """A fresh request id (one the connection will not hand out again)."""
        rid = self.conn.numbered(Ping()).id
        assert rid is not None
        return rid

    async def send(self, message: Message) -> int | None:
        """Send `message`; a request without an id gets a fresh one (returned). What the connection
        will not send (out of its phase, or invalid) goes out as it is: the test wants the server
        to see it."""
        if isinstance(message, Request):
            message = self.conn.numbered(message)
        try:
            data = self.conn.send(message)
        except LocalProtocolError:
            data = encode(message)
            if isinstance(message, Request) and message.id is not None:
                self._asked_aside.add(message.id)
        await self.stream.send_all(data)
        return message.id if isinstance(message, Request | Reply) else None

    async def send_raw(self, data: bytes) -> None:
        """Any bytes, as they are."""
        self._asked_aside |= request_ids(data)
        await self.stream.send_all(data)

    def _next(self) -> Message | None:
        """The next message the connection has whole, or None."""
        while True:
            try:
                event = self.conn.next_event()
            except RemoteProtocolError as exc:
                reply = exc.received
                if exc.fatal or not isinstance(reply, Reply) or reply.id not in self._asked_aside:
                    raise
                self._asked_aside.discard(reply.id)
                return reply  # the answer to a request sent around the connection
            assert event is not CONNECTION_CLOSED  # (the end of the stream is not fed: see receive)
            assert event is None or isinstance(event, Message)
            return event

    async def receive(self) -> Message | None:
        """The next message, or None once the server has closed the connection."""
        while not self.pending:
            if self.closed:
                return None
            try:
                data = await self.stream.receive_some(65536)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if not data:
                # Closed, or reset: the same to a test, even inside a frame (a server that drops
                # a slow reader stops where it is).
                self.closed = True
                return None
            self.raw.append(bytes(data))
            self.conn.receive_data(data)
            while (message := self._next()) is not None:
                self.received.append(message)
                self.pending.append(message)
        return self.pending.popleft()

    async def expect(self, kind: type[M]) -> M:
        """Skip other messages until one of `kind` arrives (the caller bounds the wait)."""
        for _ in range(MAX_MESSAGES):
            message = await self.receive()
            assert message is not None, f"connection closed while waiting for {kind.__name__}"
            if isinstance(message, kind):
                return message
        raise AssertionError(f"no {kind.__name__} in {MAX_MESSAGES} messages")

    async def reply_to(self, rid: int | None) -> Reply:
        """The reply carrying `rid` (the messages before it stay queued, in order)."""
        skipped: list[Message] = []
        try:
            for _ in range(MAX_MESSAGES):
                message = await self.receive()
                assert message is not None, f"connection closed while waiting for reply {rid}"
                if isinstance(message, Reply) and message.id == rid:
                    return message
                skipped.append(message)
            raise AssertionError(f"no reply {rid} in {MAX_MESSAGES} messages")
        finally:
            self.pending.extendleft(reversed(skipped))

    async def request(self, message: Request) -> Reply:
        """Send and wait for the reply with the same id (events in between are kept)."""
        return await self.reply_to(await self.send(message))

    async def hello(self, token: str | None = None, kind: ClientKind = ClientKind.HUMAN) -> Any:
        return await self.request(
            Hello(protocol=PROTOCOL_VERSION_TEXT, client="tests/1", kind=kind, token=token)
        )

    async def aclose(self) -> None:
        await self.stream.aclose()


async def watch_bots_game(port: int, options: dict[str, Any]) -> tuple[WireClient, TableCreated]:
    """A guest on the server at `port` creates a standard Spades table of four built-in bots with
    `options` and watches it; the connection (its events from the deal on) and the table."""
    client = await WireClient.connect(port)
    assert isinstance(await client.hello(), Welcome)
    assert isinstance(await client.request(Guest()), LoggedIn)
    created = await client.request(
        CreateTable(game=Game.SPADES, preset="standard", options=options, bots=[0, 1, 2, 3])
    )
    assert isinstance(created, TableCreated), created
    await client.request(Spectate(table=created.table))
    return client, created
