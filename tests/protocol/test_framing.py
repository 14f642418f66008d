"""The frame layer: length prefixes, limits enforced from the prefix, any split of the stream."""

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.errors import ErrorCode, ProtocolError
from protocol.framing import HEADER, FrameDecoder, frame


def drain(decoder: FrameDecoder) -> list[bytes]:
    bodies: list[bytes] = []
    for _ in range(10_000):
        body = decoder.next_frame()
        if body is None:
            return bodies
        bodies.append(body)
    raise AssertionError("next_frame never returned None")


def test_frame_prefixes_big_endian_length() -> None:
    assert frame(b"\x80") == b"\x00\x00\x00\x01\x80"
    assert frame(b"x" * 258)[:4] == b"\x00\x00\x01\x02"


def test_frame_refuses_empty_body() -> None:
    with pytest.raises(ValueError, match="empty"):
        frame(b"")


def test_whole_frames_come_out_in_order() -> None:
    decoder = FrameDecoder()
    decoder.receive_data(frame(b"one") + frame(b"two") + frame(b"three")[:5])
    assert drain(decoder) == [b"one", b"two"]
    decoder.receive_data(frame(b"three")[5:])
    assert drain(decoder) == [b"three"]
    assert decoder.buffered == 0


def test_one_byte_at_a_time() -> None:
    stream = frame(b"hello") + frame(b"\x00" * 300)
    decoder = FrameDecoder()
    got: list[bytes] = []
    for i in range(len(stream)):
        decoder.receive_data(stream[i : i + 1])
        got.extend(drain(decoder))
    assert got == [b"hello", b"\x00" * 300]


@settings(max_examples=100, deadline=None)
@given(
    bodies=st.lists(st.binary(min_size=1, max_size=64), min_size=1, max_size=8),
    cuts=st.lists(st.integers(min_value=0, max_value=1000), max_size=20),
)
def test_any_split_gives_the_same_frames(bodies: list[bytes], cuts: list[int]) -> None:
    stream = b"".join(frame(b) for b in bodies)
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    decoder = FrameDecoder()
    got: list[bytes] = []
    for start, end in itertools.pairwise(points):
        decoder.receive_data(stream[start:end])
        got.extend(drain(decoder))
    assert got == bodies


def test_giant_prefix_is_refused_before_the_body() -> None:
    decoder = FrameDecoder(max_frame_size=1024)
    decoder.receive_data(HEADER.pack(1025))
    assert decoder.buffered == 0  # nothing kept: refused from the prefix alone
    with pytest.raises(ProtocolError) as info:
        decoder.next_frame()
    assert info.value.code is ErrorCode.FRAME_TOO_LARGE
    assert info.value.fatal


def test_max_u32_prefix() -> None:
    decoder = FrameDecoder()
    decoder.receive_data(b"\xff\xff\xff\xff" + b"x" * 100)
    with pytest.raises(ProtocolError) as info:
        decoder.next_frame()
    assert info.value.code is ErrorCode.FRAME_TOO_LARGE


def test_frame_at_the_limit_passes() -> None:
    decoder = FrameDecoder(max_frame_size=16)
    decoder.receive_data(frame(b"y" * 16))
    assert drain(decoder) == [b"y" * 16]


def test_frames_before_a_bad_prefix_are_still_delivered() -> None:
    decoder = FrameDecoder(max_frame_size=16)
    decoder.receive_data(frame(b"ok") + HEADER.pack(17))
    assert decoder.next_frame() == b"ok"
    with pytest.raises(ProtocolError):
        decoder.next_frame()


def test_error_is_sticky_and_drops_the_buffer() -> None:
    decoder = FrameDecoder()
    decoder.receive_data(b"\x00\x00\x00\x00rest")
    for _ in range(3):
        with pytest.raises(ProtocolError) as info:
            decoder.next_frame()
        assert info.value.code is ErrorCode.BAD_FRAME
    decoder.receive_data(frame(b"ignored"))
    assert decoder.buffered == 0
    assert decoder.error is not None


def test_clean_end_of_stream() -> None:
    decoder = FrameDecoder()
    decoder.receive_data(frame(b"last"))
    decoder.receive_data(b"")
    assert decoder.eof
    assert drain(decoder) == [b"last"]
    assert decoder.next_frame() is None


def test_end_of_stream_inside_a_frame_is_bad_frame() -> None:
    decoder = FrameDecoder()
    decoder.receive_data(frame(b"cut short")[:6])
    decoder.receive_data(b"")
    with pytest.raises(ProtocolError) as info:
        decoder.next_frame()
    assert info.value.code is ErrorCode.BAD_FRAME
    assert info.value.fatal


def test_data_after_end_of_stream_is_a_caller_bug() -> None:
    decoder = FrameDecoder()
    decoder.receive_data(b"")
    with pytest.raises(RuntimeError):
        decoder.receive_data(b"x")


@pytest.mark.parametrize("size", [0, -1, 2**32])
def test_max_frame_size_is_checked(size: int) -> None:
    with pytest.raises(ValueError):
        FrameDecoder(max_frame_size=size)
