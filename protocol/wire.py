"""Messages to bytes and bytes to messages: the sans-IO face of the protocol.

``encode(message)`` gives one frame. A :class:`MessageDecoder` takes bytes in any split with
``receive_data`` and yields validated messages from ``next_message`` (or by iteration). Whatever the
input, it yields messages or raises :class:`ProtocolError`; ``error.fatal`` says whether the connection
can go on (see ``protocol.errors``). Nothing here touches a socket or a clock.
"""

from collections.abc import Iterator, Mapping
from typing import Any

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
)
from protocol.schema import FieldProblem, assemble, from_map, to_map


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
    """

    __slots__ = ("_head", "_tail", "message")

    def __init__(self, message: Event) -> None:
        self.message = message
        wire = to_wire(message)
        body = pack_body(wire)
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

    def frame(self, seq: int) -> bytes:
        """The whole frame (length prefix included) with ``seq`` set to ``seq``."""
        value = pack_value(seq)
        length = len(self._head) + len(value) + len(self._tail)
        return HEADER.pack(length) + self._head + value + self._tail


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


def game_event(
    table: str, version: int, event: Mapping[str, Any], *, trusted: bool = False
) -> GameEvent:
    """The message for one engine event as a recipient may see it (``event.for_seat(seat)``).

    ``event["kind"]`` picks the class; ``table`` and ``version`` fill the envelope (``seq`` is left 0
    for the session to stamp). Raises a non-fatal ``ProtocolError`` with code ``internal`` if the
    engine's map does not fit the declared message: a bug to log, not something to send.

    ``trusted`` skips the checks (``protocol.schema.assemble``): for a server sending the engine's
    own maps, which tests/protocol/test_engine_alignment.py holds to the declarations; a map that
    does not fit is then not caught here (a missing field still is, as ``internal``).
    """
    kind = event.get("kind")
    cls = GAME_EVENT_TYPES.get(kind) if isinstance(kind, str) else None
    if cls is None:
        raise ProtocolError(ErrorCode.INTERNAL, f"no message for engine event {kind!r}")
    try:
        if trusted:
            return assemble(cls, {**event, "table": table, "version": version})
        return from_map(cls, {**event, "table": table, "version": version})
    except TypeError as exc:
        raise ProtocolError(
            ErrorCode.INTERNAL, f"engine event {kind} does not fit its message: {exc}"
        ) from None
    except FieldProblem as problem:
        raise ProtocolError(
            ErrorCode.INTERNAL, f"engine event {kind} does not fit its message: {problem}"
        ) from None


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
