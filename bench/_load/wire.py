"""A lean client end of a framed msgpack connection, for load generators.

It does only what a bot must: cut the stream into frames, unpack each body with msgpack, and send frames.
The protocol's own connection (`protocol.Connection`, which validates every message and checks its
phase, reply id and seq) is deliberately not used here, so that the load generators spend as little
CPU as possible on the shared machine (the server is what is measured): bench/connection.py reads one
card's traffic (`card_played`, `turn`, `your_turn`, `ok`) in about 12 function calls this way against
about 420 through `Connection` (and 409 through `MessageDecoder`). The bytes on the wire are the same
as `protocol.encode` makes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

import msgpack
import trio

HEADER = struct.Struct(">I")
RECEIVE_CHUNK = 65536


def frame(message: dict[str, Any]) -> bytes:
    """One frame: the 4-byte big-endian length, then the msgpack map (keys in the order given)."""
    body: bytes = msgpack.packb(message, use_bin_type=True)
    return HEADER.pack(len(body)) + body


class FrameReader:
    """Cuts bytes fed in any split into unpacked maps."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> Iterator[dict[str, Any]]:
        buffer = self._buffer
        buffer += data
        start = 0
        size = len(buffer)
        while size - start >= 4:
            (length,) = HEADER.unpack_from(buffer, start)
            end = start + 4 + length
            if end > size:
                break
            message: dict[str, Any] = msgpack.unpackb(buffer[start + 4 : end], raw=False)
            start = end
            yield message
        if start:
            del buffer[:start]


async def connect(port: int, attempts: int = 20) -> trio.SocketStream:
    """A TCP connection to 127.0.0.1:port, retrying a few times (a busy listener's backlog)."""
    for attempt in range(attempts):
        try:
            return await trio.open_tcp_stream("127.0.0.1", port)
        except OSError:
            if attempt == attempts - 1:
                raise
            await trio.sleep(0.05 * (attempt + 1))
    raise AssertionError("unreachable")
