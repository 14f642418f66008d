"""A proxy between a bot and the server on 127.0.0.1: every frame both ways is decoded, written down
(`Timeline`), and passed on, held, dropped or added to, as the scenario's hooks say.

Frames are forwarded as they came (a bot's malformed frame reaches the server as it is, and the
server's answer is the bot's to read); the decoding is only for the record and the hooks. A hook
that awaits holds its direction of that connection (nothing behind the frame moves either), which
is how a scenario delays a message until something has happened.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import StrEnum
from functools import partial

import trio

from protocol.codec import unpack_body
from protocol.errors import ProtocolError
from protocol.framing import FrameDecoder, frame
from protocol.messages import Message, Ping, Pong, Sender
from protocol.wire import encode, from_wire

READ_CHUNK = 65536
OBSERVED_FRAME = 1 << 24  # the proxy judges nothing by size: the server does


class Source(StrEnum):
    BOT = "bot"
    SERVER = "server"
    KIT = "kit"  # added by the proxy itself


@dataclass
class Entry:
    """One thing that crossed the proxy (or that it did)."""

    at: float
    link: int
    source: Source
    message: Message | None = None
    problem: str | None = None  # a frame that did not decode, or what happened to the link
    forwarded: bool = True
    to: Source | None = None  # for the kit's own messages: which side it sent them to


class Timeline:
    """Everything the proxy saw, in order, and a way to wait until something is in it."""

    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self._changed = trio.Event()

    def add(self, entry: Entry) -> Entry:
        self.entries.append(entry)
        self.poke()
        return entry

    def poke(self) -> None:
        """Wake whoever waits (also when something outside the timeline changed)."""
        self._changed.set()
        self._changed = trio.Event()

    async def until(self, condition: Callable[[], bool]) -> None:
        """Return once `condition()` holds (the caller bounds the wait)."""
        while not condition():
            await self._changed.wait()


BotHook = Callable[["Link", Message], Awaitable[bool]]
ServerHook = Callable[["Link", Message], Awaitable[bool]]


async def _forward(link: Link, message: Message) -> bool:
    return True


@dataclass
class Link:
    """One connection of the bot, through the proxy, to the server."""

    index: int
    bot: trio.SocketStream
    server: trio.SocketStream
    timeline: Timeline
    opened: float = field(default_factory=trio.current_time)
    bot_closed: bool = False  # the bot ended its side (or the proxy cut it)
    server_closed: bool = False
    cut_by_kit: bool = False
    muted: bool = False  # nothing more from the server reaches the bot (after the kit's bye)
    kit_pings: set[int] = field(default_factory=set)  # ids of the kit's own pings to the bot
    _send_lock: trio.Lock = field(default_factory=trio.Lock)
    _to_server_lock: trio.Lock = field(default_factory=trio.Lock)

    async def to_bot(self, message: Message) -> None:
        """Send the bot a message of the kit's own (a `ping`, a `bye`), as if from the server. The
        bot's `pong` to the kit's `ping` is the kit's: it does not reach the server."""
        if isinstance(message, Ping) and message.id is not None:
            self.kit_pings.add(message.id)
        self.timeline.add(
            Entry(trio.current_time(), self.index, Source.KIT, message, to=Source.BOT)
        )
        await self._write_bot(encode(message))

    async def to_server(self, message: Message) -> None:
        """Send the server a message of the kit's own on the bot's connection."""
        self.timeline.add(
            Entry(trio.current_time(), self.index, Source.KIT, message, to=Source.SERVER)
        )
        await self._write_server(encode(message))

    async def _write_bot(self, data: bytes) -> None:
        async with self._send_lock:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self.bot.send_all(data)

    async def _write_server(self, data: bytes) -> None:
        async with self._to_server_lock:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self.server.send_all(data)

    async def cut(self, why: str) -> None:
        """Drop the connection at once, both sides, as a network would."""
        if self.cut_by_kit:
            return
        self.cut_by_kit = True
        self.timeline.add(Entry(trio.current_time(), self.index, Source.KIT, problem=f"cut: {why}"))
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(self.bot)
            await trio.aclose_forcefully(self.server)

    async def close_server_side(self, why: str) -> None:
        """Hang up on the server only (it sees the bot's connection drop)."""
        self.timeline.add(
            Entry(trio.current_time(), self.index, Source.KIT, problem=f"server side closed: {why}")
        )
        await trio.aclose_forcefully(self.server)


def _answers_kit(link: Link, source: Source, message: Message) -> bool:
    """Whether `message` is the bot's answer to the kit's own ping (kept from the server)."""
    return source is Source.BOT and isinstance(message, Pong) and message.id in link.kit_pings


class Proxy:
    """Listens on 127.0.0.1 (port 0) and joins each connection to the server at `upstream`."""

    def __init__(self, upstream: tuple[str, int], timeline: Timeline) -> None:
        self.upstream = upstream
        self.timeline = timeline
        self.links: list[Link] = []
        self.port = 0
        self.on_bot: BotHook = _forward
        self.on_server: ServerHook = _forward
        # Called once a server message has been written to the bot (to add something after it).
        self.after_server: ServerHook = _forward

    async def serve(self, *, task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED) -> None:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        self.port = listeners[0].socket.getsockname()[1]
        async with trio.open_nursery() as nursery:
            task_status.started(self.port)
            await trio.serve_listeners(
                partial(self._handle, nursery), listeners, handler_nursery=nursery
            )

    async def _handle(self, nursery: trio.Nursery, bot: trio.SocketStream) -> None:
        try:
            server = await trio.open_tcp_stream(*self.upstream)
        except OSError:
            await trio.aclose_forcefully(bot)
            return
        link = Link(len(self.links), bot, server, self.timeline)
        self.links.append(link)
        self.timeline.add(Entry(trio.current_time(), link.index, Source.KIT, problem="connected"))
        try:
            async with trio.open_nursery() as pumps:
                pumps.start_soon(self._pump, link, Source.BOT)
                pumps.start_soon(self._pump, link, Source.SERVER)
        finally:
            with trio.CancelScope(shield=True):  # (cancelled: each close would stop the next)
                await trio.aclose_forcefully(bot)
                await trio.aclose_forcefully(server)

    async def _pump(self, link: Link, source: Source) -> None:
        """Carry one direction of `link` until its end: each whole frame is recorded and, unless
        a hook says otherwise, passed on."""
        reader = link.bot if source is Source.BOT else link.server
        write = link._write_server if source is Source.BOT else link._write_bot
        hook = self.on_bot if source is Source.BOT else self.on_server
        sender = Sender.CLIENT if source is Source.BOT else Sender.SERVER
        frames = FrameDecoder(OBSERVED_FRAME)
        raw = False  # the framing broke: pass bytes on as they come, decode no more
        while True:
            try:
                data = await reader.receive_some(READ_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                data = b""
            if not data:
                break
            if raw:
                await write(data)
                continue
            frames.receive_data(data)
            while True:
                try:
                    body = frames.next_frame()
                except ProtocolError as exc:
                    self.timeline.add(
                        Entry(
                            trio.current_time(),
                            link.index,
                            source,
                            problem=f"bad frame: {exc.message}",
                        )
                    )
                    raw = True
                    await write(data)  # what came with the bad prefix, as it came
                    break
                if body is None:
                    break
                message: Message | None = None
                problem: str | None = None
                try:
                    message = from_wire(unpack_body(body), sender)
                except ProtocolError as exc:
                    problem = f"{exc.code.value}: {exc.message}"
                forward = True
                if message is not None:
                    forward = (
                        not (source is Source.SERVER and link.muted)
                        and not _answers_kit(link, source, message)
                        and await hook(link, message)
                    )
                self.timeline.add(
                    Entry(trio.current_time(), link.index, source, message, problem, forward)
                )
                if forward:
                    await write(frame(body))
                    if source is Source.SERVER and message is not None:
                        await self.after_server(link, message)
        # This side ended: say so, and end the other side's writing too.
        if source is Source.BOT:
            link.bot_closed = True
            with contextlib.suppress(
                trio.BrokenResourceError, trio.ClosedResourceError, AttributeError
            ):
                await link.server.send_eof()
        else:
            link.server_closed = True
            await trio.aclose_forcefully(link.bot)
        self.timeline.add(
            Entry(trio.current_time(), link.index, source, problem=f"{source.value} closed")
        )


def transcript(timeline: Timeline) -> str:
    """The timeline as text, one line per entry: seconds from the start, connection, who sent what
    to whom (`bot>`, `>bot` for the server's, `kit>bot`, `kit>server`), and the message as JSON."""
    import json

    from protocol.wire import to_wire

    if not timeline.entries:
        return ""
    start = timeline.entries[0].at
    lines = []
    for e in timeline.entries:
        if e.source is Source.BOT:
            arrow = "bot>    "
        elif e.source is Source.SERVER:
            arrow = "   >bot " if e.forwarded else "   >(dropped by the kit)"
        else:
            arrow = f"kit>{e.to.value if e.to else ''}"
        body = (
            json.dumps(to_wire(e.message), separators=(",", ":"), default=str)
            if e.message is not None
            else ""
        )
        if len(body) > 300:
            body = body[:300] + "..."
        note = f" [{e.problem}]" if e.problem else ""
        lines.append(f"{e.at - start:8.3f} c{e.link} {arrow} {body}{note}")
    return "\n".join(lines) + "\n"
