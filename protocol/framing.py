"""Length-prefixed frames: a 4-byte big-endian unsigned length, then that many body bytes.

This module knows nothing of msgpack; it cuts a byte stream into frame bodies. The size limit is
enforced from the length prefix alone, so a peer that announces a giant frame is refused before a
single body byte is kept. Sans-IO: bytes in (``receive_data``), frame bodies out (``next_frame``).
"""

import struct
from typing import Final

from protocol.errors import ErrorCode, ProtocolError

HEADER: Final = struct.Struct(">I")
HEADER_SIZE: Final = HEADER.size
DEFAULT_MAX_FRAME_SIZE: Final = 64 * 1024
# The length prefix is a u32; no limit may exceed what it can say.
MAX_FRAME_SIZE_LIMIT: Final = 2**32 - 1


def frame(body: bytes) -> bytes:
    """Prefix ``body`` with its length. Raises ``ValueError`` if it is empty or cannot be framed."""
    if not body:
        raise ValueError("a frame body is never empty")
    if len(body) > MAX_FRAME_SIZE_LIMIT:
        raise ValueError(f"a frame body of {len(body)} bytes does not fit a u32 length")
    return HEADER.pack(len(body)) + body


class FrameDecoder:
    """Cuts a byte stream, fed in pieces of any size, into frame bodies.

    Feed bytes with :meth:`receive_data` (``b""`` means the peer closed the stream), then call
    :meth:`next_frame` until it returns ``None`` before feeding more. Kept to that rhythm, the bytes it
    holds never exceed ``max_frame_size + 4`` plus the last piece fed.

    Every error here is fatal (``ProtocolError.fatal``): once the framing is wrong nothing after it can be
    trusted, so the decoder keeps raising the same error and drops what it had buffered.
    """

    def __init__(self, max_frame_size: int = DEFAULT_MAX_FRAME_SIZE) -> None:
        if not 1 <= max_frame_size <= MAX_FRAME_SIZE_LIMIT:
            raise ValueError(f"max_frame_size must be in 1..{MAX_FRAME_SIZE_LIMIT}")
        self.max_frame_size = max_frame_size
        self._buffer = bytearray()
        self._eof = False
        self._error: ProtocolError | None = None

    @property
    def buffered(self) -> int:
        """How many received bytes are held, waiting to complete a frame."""
        return len(self._buffer)

    @property
    def eof(self) -> bool:
        """Whether the peer has closed its side (``receive_data(b"")`` was called)."""
        return self._eof

    @property
    def error(self) -> ProtocolError | None:
        """The fatal error that broke this decoder, if any."""
        return self._error

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Take bytes from the stream; ``b""`` marks its end. Never raises for bad input.

        Errors surface from :meth:`next_frame`, in stream order, after every whole frame before them.
        Feeding data after the end of the stream is a caller bug and raises ``RuntimeError``.
        """
        if self._eof:
            raise RuntimeError("receive_data after end of stream")
        if self._error is not None:
            return
        if not data:
            self._eof = True
            return
        self._buffer += data
        # Check the head frame's prefix at once, so a giant length does not make us hold its body while
        # earlier frames wait to be collected.
        self._check_head()

    def next_frame(self) -> bytes | None:
        """The next whole frame body, or ``None`` if more bytes are needed (or the stream ended cleanly).

        Raises a fatal :class:`ProtocolError`: ``frame_too_large`` for a prefix above the limit,
        ``bad_frame`` for a zero length or a stream that ended inside a frame.
        """
        if self._error is not None:
            raise self._error
        length = self._check_head()
        if self._error is not None:
            raise self._error
        if length is None or len(self._buffer) < HEADER_SIZE + length:
            if self._eof and self._buffer:
                self._fail(
                    ErrorCode.BAD_FRAME,
                    f"the stream ended inside a frame ({len(self._buffer)} bytes pending)",
                )
                assert self._error is not None
                raise self._error
            return None
        end = HEADER_SIZE + length
        body = bytes(self._buffer[HEADER_SIZE:end])
        del self._buffer[:end]
        return body

    def _check_head(self) -> int | None:
        """The head frame's announced length once its prefix is complete; records a fatal error if bad."""
        if self._error is not None or len(self._buffer) < HEADER_SIZE:
            return None
        (length,) = HEADER.unpack_from(self._buffer)
        if length == 0:
            self._fail(ErrorCode.BAD_FRAME, "a frame length of 0 (a message is never empty)")
            return None
        if length > self.max_frame_size:
            self._fail(
                ErrorCode.FRAME_TOO_LARGE,
                f"a frame of {length} bytes is above the limit of {self.max_frame_size}",
            )
            return None
        return int(length)

    def _fail(self, code: ErrorCode, message: str) -> None:
        self._error = ProtocolError(code, message, fatal=True)
        # Nothing after a framing error is usable; let the memory go now.
        self._buffer = bytearray()
