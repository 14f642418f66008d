"""The writer: frames queued together leave in one write (bounded), in order, byte for byte; and
an event delivered to many sessions is encoded once (`SharedEvent`)."""

from __future__ import annotations

import dataclasses

import trio
import trio.testing

from protocol.codec import unpack_body
from protocol.framing import FrameDecoder
from protocol.messages import CardPlayed, Pong
from protocol.wire import decode, encode
from server.connection import MAX_WRITE_BYTES, Outbox
from server.peers import SharedEvent


class Recording(trio.abc.HalfCloseableStream):
    """A real socket stream that remembers the size of every `send_all`."""

    def __init__(self, inner: trio.SocketStream) -> None:
        self.inner = inner
        self.writes: list[int] = []

    async def send_all(self, data: bytes | bytearray | memoryview) -> None:
        self.writes.append(len(data))
        await self.inner.send_all(data)

    async def wait_send_all_might_not_block(self) -> None:
        await self.inner.wait_send_all_might_not_block()

    async def receive_some(self, max_bytes: int | None = None) -> bytes | bytearray:
        return await self.inner.receive_some(max_bytes)

    async def send_eof(self) -> None:
        await self.inner.send_eof()

    async def aclose(self) -> None:
        await self.inner.aclose()


async def _read_frames(stream: trio.SocketStream, count: int) -> list[bytes]:
    decoder = FrameDecoder(1 << 20)
    bodies: list[bytes] = []
    while len(bodies) < count:  # bounded by the caller's fail_after
        data = await stream.receive_some(1 << 16)
        assert data, "the writer hung up early"
        decoder.receive_data(data)
        while (body := decoder.next_frame()) is not None:
            bodies.append(body)
    return bodies


async def test_frames_queued_together_leave_in_one_write_in_order() -> None:
    ours, theirs = trio.socket.socketpair()
    recording = Recording(trio.SocketStream(ours))
    peer = trio.SocketStream(theirs)
    connection = Outbox(recording, outbox_size=16)
    pongs = [Pong(id=i) for i in range(5)]
    with trio.fail_after(10):
        for pong in pongs:
            assert connection.send({"t": "pong", "id": pong.id})
        async with trio.open_nursery() as nursery:
            nursery.start_soon(connection.run_writer)
            bodies = await _read_frames(peer, len(pongs))
            connection.finish()
            # The peer hangs up in turn, as a client does: else the writer lingers for it (up
            # to LINGER_TIME, a second) before it returns.
            await peer.aclose()
    assert [decode(body) for body in bodies] == pongs
    assert recording.writes == [sum(len(encode(p)) for p in pongs)]
    assert connection.frames_sent == len(pongs)
    await peer.aclose()


async def test_a_long_burst_is_cut_into_bounded_writes() -> None:
    ours, theirs = trio.socket.socketpair()
    recording = Recording(trio.SocketStream(ours))
    peer = trio.SocketStream(theirs)
    connection = Outbox(recording, outbox_size=64)
    # 40 frames of about 12 KB: several writes' worth, all queued before the writer wakes.
    maps = [{"t": "pong", "id": i, "pad": ["x" * 4000] * 3} for i in range(40)]
    with trio.fail_after(10):
        for message in maps:
            assert connection.send(message)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(connection.run_writer)
            bodies = await _read_frames(peer, len(maps))
            connection.finish()
            await peer.aclose()  # (as above: no linger)
    assert [unpack_body(body) for body in bodies] == maps
    frame_size = len(bodies[0]) + 4
    assert sum(recording.writes) == frame_size * len(maps)
    assert len(recording.writes) >= len(maps) * frame_size // (MAX_WRITE_BYTES + frame_size)
    assert all(size < MAX_WRITE_BYTES + frame_size for size in recording.writes)
    assert connection.frames_sent == len(maps)
    await peer.aclose()


def test_an_event_object_is_encoded_once_for_all_its_recipients() -> None:
    event = CardPlayed(table="t1", version=3, seat=1, card="QS", trick_number=1)
    shared = SharedEvent(event)
    frames = shared.frames()
    assert shared.frames() is frames  # the next recipient reuses the one encoding
    assert frames.frame(7) == encode(dataclasses.replace(event, seq=7))
    assert frames.frame(8) == encode(dataclasses.replace(event, seq=8))


def test_the_stall_check_counts_from_when_it_first_sees_no_progress() -> None:
    # trio's clock does not start at 0: the first look only starts the count.
    outbox = Outbox(trio.testing.memory_stream_pair()[0], outbox_size=8, write_timeout=5.0)
    assert outbox.send({"t": "pong", "id": 1})  # queued, and no writer runs: no progress
    outbox.check_progress(100_000.0)
    assert outbox.close_reason is None
    outbox.check_progress(100_004.9)
    assert outbox.close_reason is None
    outbox.check_progress(100_005.0)
    assert outbox.close_reason == "slow_consumer"
