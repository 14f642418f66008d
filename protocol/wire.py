"""Messages to bytes and bytes to messages: the sans-IO face of the protocol.

``encode(message)`` gives one frame. A :class:`MessageDecoder` takes bytes in any split with
``receive_data`` and yields validated messages from ``next_message`` (or by iteration). Whatever the
input, it yields messages or raises :class:`ProtocolError`; ``error.fatal`` says whether the connection
can go on (see ``protocol.errors``). Nothing here touches a socket or a clock.
"""

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import msgpack

from protocol.codec import (
    DEFAULT_LIMITS,
    Limits,
    pack_body,
    pack_value,
    unpack_body,
)
from protocol.errors import ErrorCode, ProtocolError
from protocol.framing import DEFAULT_MAX_FRAME_SIZE, HEADER, FrameDecoder, frame
from protocol.messages import (
    GAME_EVENT_TYPES,
    MESSAGE_TYPES,
    PROTOCOL_VERSION,
    Error,
    Event,
    GameEvent,
    Message,
    Sender,
    YourTurn,
)
from protocol.schema import FieldProblem, from_map, to_map


def to_wire(message: Message) -> dict[str, Any]:
    """The message as a plain map, ``t`` first, then fields in declaration order."""
    return {"t": message.TYPE, **to_map(message)}


def encode_body(message: Message) -> bytes:
    """The msgpack body of a message, without the length prefix."""
    return pack_body(to_wire(message))


def encode(message: Message) -> bytes:
    """One whole frame: the 4-byte length, then the msgpack map."""
    return frame(encode_body(message))


_SEQ_KEY_SIZE = len(pack_value("seq"))


def _map_header_size(size: int) -> int:
    """Bytes of the msgpack header of a map of `size` pairs (fixmap, map16, map32)."""
    return 1 if size < 16 else 3 if size < 2**16 else 5


class EventFrames:
    """One event's frame, encoded once, for any number of recipients: only ``seq`` differs.

    A server sends the same event to every seat and spectator that may see the same thing, and each
    connection numbers its events itself. The map is packed once, in two pieces around the value of
    ``seq``; :meth:`frame` splices a connection's number in between. The bytes are exactly those of
    ``encode(dataclasses.replace(message, seq=n))``, without walking the message again.

    Made from a message (``EventFrames(message)``), from the wire map a server composed itself
    (:meth:`from_map`: an engine event's map, a ``your_turn``; no message object is ever built), or
    from the body another server of the cluster encoded (:meth:`from_body`: passed through as it
    is). ``kind`` is the message class, and ``table`` and ``version`` are a game event's envelope
    (what a connection's state needs: ``Connection.send_event``); :attr:`message` is the message
    itself, decoded from the bytes on first need for whoever wants the object (an in-process bot,
    a test).
    """

    __slots__ = ("_body", "_head", "_message", "_tail", "kind", "table", "version")

    kind: type[Event]
    table: str | None
    version: int | None

    def __init__(self, message: Event) -> None:
        wire = to_wire(message)
        self._split(type(message), wire, pack_body(wire))
        self._message: Event | None = message

    @classmethod
    def from_map(cls, kind: type[Event], wire: dict[str, Any]) -> "EventFrames":
        """The frames of a wire map this program composed itself: ``t`` first, then ``seq`` (any
        value: each recipient's is spliced in), then the fields in ``kind``'s declared order, with
        no nil for an optional field (left out instead) and every value already plain data.

        Nothing is checked: the server's own maps (an engine event's ``for_seat`` map, a
        ``your_turn``'s legal actions) are held to the declarations by
        tests/protocol/test_engine_alignment.py, which generates them from the engine's classes
        and compares these bytes with the checked message's."""
        frames = cls.__new__(cls)
        frames._split(kind, wire, pack_body(wire))
        frames._message = None
        return frames

    @classmethod
    def from_body(cls, body: bytes) -> "EventFrames | None":
        """The frames of an event's body as another program of ours encoded it (``t`` first,
        ``seq`` next, then for a game event ``table`` and ``version``): passed through unchanged,
        its fields not decoded or checked (the cluster's link carries bytes only its members could
        have sent). None if ``t`` names a message that is not an event (decode that one). Raises
        a non-fatal ``ProtocolError`` (``invalid_field``) for bytes that do not start as a message
        of ours does."""
        try:
            unpacker = msgpack.Unpacker(raw=False, strict_map_key=True)
            unpacker.feed(body)
            size = unpacker.read_map_header()
            if size < 1 or unpacker.unpack() != "t":
                raise ValueError("t is not first")
            kind = MESSAGE_TYPES.get(unpacker.unpack())
            if kind is None:
                raise ValueError("no such message type")
            if not issubclass(kind, Event):
                return None
            if size < 2 or unpacker.unpack() != "seq":
                raise ValueError("seq is not second")
            start = unpacker.tell()
            if type(unpacker.unpack()) is not int:
                raise ValueError("seq is not an integer")
            end = unpacker.tell()
            table = version = None
            if issubclass(kind, GameEvent):
                if size < 4 or unpacker.unpack() != "table":
                    raise ValueError("table is not third")
                table = unpacker.unpack()
                if type(table) is not str or unpacker.unpack() != "version":
                    raise ValueError("version is not fourth")
                version = unpacker.unpack()
                if type(version) is not int:
                    raise ValueError("version is not an integer")
        except Exception as exc:  # msgpack raises several kinds on bytes it cannot read
            raise ProtocolError(
                ErrorCode.INVALID_FIELD, f"not an event's body: {exc}", detail="body"
            ) from None
        frames = cls.__new__(cls)
        frames.kind, frames.table, frames.version = kind, table, version
        frames._head, frames._tail = body[:start], body[end:]
        frames._body = body
        frames._message = None
        return frames

    def _split(self, kind: type[Event], wire: dict[str, Any], body: bytes) -> None:
        self.kind = kind
        self.table = wire.get("table")
        self.version = wire.get("version")
        # Where the value of `seq` starts: after the map header and every key and value before it
        # (only `t`, in every event), and the key "seq" itself.
        offset = _map_header_size(len(wire))
        for key, value in wire.items():
            if key == "seq":
                break
            offset += len(pack_value(key)) + len(pack_value(value))
        offset += _SEQ_KEY_SIZE
        self._head = body[:offset]
        self._tail = body[offset + len(pack_value(wire["seq"])) :]
        self._body: bytes | None = None

    def frame(self, seq: int) -> bytes:
        """The whole frame (length prefix included) with ``seq`` set to ``seq``."""
        value = pack_value(seq)
        length = len(self._head) + len(value) + len(self._tail)
        return HEADER.pack(length) + self._head + value + self._tail

    def body(self) -> bytes:
        """The body with ``seq`` 0, made once (the same bytes object every time): what the cluster's
        link carries to another server, which splices its own connections' numbers in."""
        if self._body is None:
            self._body = self._head + _SEQ_ZERO + self._tail
        return self._body

    @property
    def message(self) -> Event:
        """The event as a message object: the one it was made from, else decoded (and checked)
        from its bytes once, on first need. Raises ``ProtocolError`` for bytes that do not decode."""
        if self._message is None:
            message = decode(self.body(), Sender.SERVER)
            assert isinstance(message, Event)
            self._message = message
        return self._message


_SEQ_ZERO = pack_value(0)


def _request_id(data: dict[str, Any]) -> int | None:
    """The ``id`` of a refused map, if it is a plausible one, so the ``error`` can carry it back."""
    value = data.get("id")
    if type(value) is int and 0 <= value < 2**32:
        return value
    return None


def from_wire(data: dict[str, Any], sender: Sender | None = None) -> Message:
    """Validate a decoded map into its message class.

    ``sender`` is the side the map came from; a message that side may not send is refused with
    ``unexpected_message`` (``None`` or ``Sender.EITHER`` accepts every type, for tools and tests).
    Raises a non-fatal :class:`ProtocolError` carrying the map's ``id``.
    """
    request_id = _request_id(data)
    kind = data.get("t")
    if kind is None:
        raise ProtocolError(
            ErrorCode.MISSING_FIELD, "t: is required", request_id=request_id, detail="t"
        )
    if type(kind) is not str:
        raise ProtocolError(
            ErrorCode.INVALID_FIELD, "t: expected a string", request_id=request_id, detail="t"
        )
    cls = MESSAGE_TYPES.get(kind)
    if cls is None:
        raise ProtocolError(
            ErrorCode.UNKNOWN_TYPE,
            f"no message type {kind[:40]!r}",
            request_id=request_id,
            detail=kind[:40],
        )
    if sender not in (None, Sender.EITHER) and cls.SENDER not in (sender, Sender.EITHER):
        raise ProtocolError(
            ErrorCode.UNEXPECTED_MESSAGE,
            f"a {kind} is never sent by the {sender}",
            request_id=request_id,
            detail=kind,
        )
    try:
        return from_map(cls, data)
    except FieldProblem as problem:
        code = ErrorCode.MISSING_FIELD if problem.missing else ErrorCode.INVALID_FIELD
        raise ProtocolError(
            code, f"{kind}: {problem}", request_id=request_id, detail=problem.path[:200]
        ) from None


def decode(body: bytes, sender: Sender | None = None, limits: Limits = DEFAULT_LIMITS) -> Message:
    """Decode and validate one frame body (no length prefix). Raises :class:`ProtocolError`."""
    return from_wire(unpack_body(body, limits), sender)


class MessageDecoder:
    """Bytes in, validated messages out, for one direction of one connection.

    ``sender`` is who is at the other end: a server decodes with ``Sender.CLIENT`` (refusing, say, a
    ``welcome`` from a client), a client with ``Sender.SERVER``. Call :meth:`next_message` until it
    returns ``None`` after each :meth:`receive_data`. A non-fatal ``ProtocolError`` has already consumed
    its frame: answer it and call again. After a fatal one every call raises it again.
    """

    def __init__(
        self,
        sender: Sender,
        *,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        limits: Limits = DEFAULT_LIMITS,
    ) -> None:
        self.sender = sender
        self.limits = limits
        self._frames = FrameDecoder(max_frame_size)
        self._error: ProtocolError | None = None

    @property
    def max_frame_size(self) -> int:
        """The largest frame body accepted, in bytes."""
        return self._frames.max_frame_size

    @property
    def buffered(self) -> int:
        """Bytes received but not yet part of a whole frame."""
        return self._frames.buffered

    @property
    def error(self) -> ProtocolError | None:
        """The fatal error that stopped this decoder, if any."""
        return self._error or self._frames.error

    @property
    def eof(self) -> bool:
        """Whether the peer has closed its side (``receive_data(b"")`` was called)."""
        return self._frames.eof

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Feed bytes from the stream; ``b""`` when the peer closed it."""
        self._frames.receive_data(data)

    def next_message(self) -> Message | None:
        """The next message, or ``None`` until more bytes arrive (or after a clean end of stream)."""
        if self._error is not None:
            raise self._error
        body = self._frames.next_frame()
        if body is None:
            return None
        try:
            return decode(body, self.sender, self.limits)
        except ProtocolError as error:
            if error.fatal:
                self._error = error
            raise

    def __iter__(self) -> Iterator[Message]:
        """The messages available now; stops when more bytes are needed. Errors propagate."""
        while (message := self.next_message()) is not None:
            yield message


def check_version(text: str) -> ProtocolError | None:
    """The refusal for a client's ``hello.protocol``, or ``None`` if this server speaks it.

    Same major version: compatible (minor versions only add). Otherwise ``version_mismatch``, fatal.
    """
    major_text, _, _ = text.partition(".")
    major = int(major_text) if major_text.isdigit() else -1
    if major == PROTOCOL_VERSION[0]:
        return None
    return ProtocolError(
        ErrorCode.VERSION_MISMATCH,
        f"this server speaks protocol {PROTOCOL_VERSION[0]}.x, not {text[:16]}",
        fatal=True,
        detail=f"{PROTOCOL_VERSION[0]}.{PROTOCOL_VERSION[1]}",
    )


def error_message(error: ProtocolError) -> Error:
    """The ``error`` message that answers a :class:`ProtocolError` (carrying its request ``id``)."""
    return Error(
        id=error.request_id,
        code=error.code.value,
        message=error.message[:500],
        detail=error.detail[:200] if error.detail else None,
    )


def game_event(table: str, version: int, event: Mapping[str, Any]) -> GameEvent:
    """The message for one engine event as a recipient may see it (``event.for_seat(seat)``),
    checked against its declaration: for tools and tests (a server sends the same map's bytes
    straight away: :func:`game_event_frames`).

    ``event["kind"]`` picks the class; ``table`` and ``version`` fill the envelope (``seq`` is left 0
    for the session to stamp). Raises a non-fatal ``ProtocolError`` with code ``internal`` if the
    engine's map does not fit the declared message: a bug to log, not something to send.
    """
    kind = event.get("kind")
    cls = GAME_EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError(ErrorCode.INTERNAL, f"no message for engine event {kind!r}")
    try:
        return from_map(cls, {**event, "table": table, "version": version})
    except FieldProblem as problem:
        raise ProtocolError(
            ErrorCode.INTERNAL, f"engine event {kind} does not fit its message: {problem}"
        ) from None


def game_event_frames(table: str, version: int, event: Mapping[str, Any]) -> EventFrames:
    """The frames of one engine event as a recipient may see it (``event.for_seat(seat)``),
    straight from the engine's map: no message object is built and nothing is checked again.

    The engine's map is the wire's shape (its keys in the message's declared order, cards in
    notation), which tests/protocol/test_engine_alignment.py checks over generated events of
    every engine event class and whole games of every preset: the bytes are those of the checked
    message (:func:`game_event`). A nil is left out, as an optional field's is. Raises a non-fatal
    ``ProtocolError`` with code ``internal`` for a kind no message declares."""
    kind = event["kind"]
    cls = GAME_EVENT_TYPES.get(kind)
    if cls is None:
        raise ProtocolError(ErrorCode.INTERNAL, f"no message for engine event {kind!r}")
    wire: dict[str, Any] = {"t": kind, "seq": 0, "table": table, "version": version}
    for key, value in event.items():
        if value is not None and key != "kind":
            wire[key] = value
    return EventFrames.from_map(cls, wire)


def your_turn_frames(
    table: str,
    version: int,
    *,
    seat: int,
    legal: Sequence[Mapping[str, Any]],
    deadline_ms: int,
    bank_ms: int,
) -> EventFrames:
    """The frames of a ``your_turn`` whose ``legal`` actions are the engine's own wire maps
    (``engine.actions.action_to_dict(action, with_seat=False)``), put in as they are: the engine's
    legal actions are not checked again on their way out (tests/protocol/test_engine_alignment.py
    holds every engine action's map to the protocol's ``Action``)."""
    wire: dict[str, Any] = {
        "t": YourTurn.TYPE,
        "seq": 0,
        "table": table,
        "version": version,
        "seat": seat,
        "legal": legal,
        "deadline_ms": deadline_ms,
        "bank_ms": bank_ms,
    }
    return EventFrames.from_map(YourTurn, wire)


def validate(message: Message) -> None:
    """Check an outgoing message as its receiver will, before sending it.

    ``encode`` trusts its input (it is our own code's); call this in tests, or in debug builds, to catch a
    message the peer would refuse. Raises a non-fatal ``ProtocolError`` with code ``internal`` and the
    field at fault in ``detail``; the message is not changed.
    """
    try:
        from_map(type(message), to_map(message))
    except FieldProblem as problem:
        raise ProtocolError(
            ErrorCode.INTERNAL,
            f"{message.TYPE} would be refused: {problem}",
            detail=problem.path[:200],
        ) from None
