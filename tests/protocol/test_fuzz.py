"""Whatever the bytes, the decoder yields messages or raises ProtocolError, and holds bounded memory."""

import itertools
from typing import Any

import msgpack
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from protocol import (
    Act,
    Action,
    ActionKind,
    Chat,
    ChatScope,
    Message,
    MessageDecoder,
    Ping,
    ProtocolError,
    Sender,
    encode,
)
from protocol.errors import ErrorCode
from protocol.framing import HEADER, frame
from protocol.wire import to_wire
from tests.protocol.strategies import JSONISH, any_message

MAX_FRAME = 4096


def fitting_message() -> st.SearchStrategy[Message]:
    """Any message whose frame the decoder here takes (`MAX_FRAME`): a rare draw of long nested
    lists may not fit, and a server never sends a frame its peer's limit refuses."""
    return any_message().filter(lambda message: len(encode(message)) <= MAX_FRAME)


FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def feed(stream: bytes, cuts: list[int], *, eof: bool = False) -> tuple[list[Message], list[Any]]:
    """Feed ``stream`` split at ``cuts``; collect messages and errors, checking the contract as it goes."""
    decoder = MessageDecoder(Sender.EITHER, max_frame_size=MAX_FRAME)
    points = sorted({c % (len(stream) + 1) for c in cuts} | {0, len(stream)})
    chunks = [stream[a:b] for a, b in itertools.pairwise(points)]
    if eof:
        chunks.append(b"")
    messages: list[Message] = []
    errors: list[ProtocolError] = []
    for chunk in chunks:
        if decoder.error is not None:
            break
        decoder.receive_data(chunk)
        for _ in range(len(stream) + 2):  # each call consumes a frame or returns None
            try:
                message = decoder.next_message()
            except ProtocolError as error:
                errors.append(error)
                if error.fatal:
                    break
                continue
            if message is None:
                break
            assert isinstance(message, Message)
            messages.append(message)
        # Drained to the end, the decoder holds less than one whole frame plus the last chunk.
        assert decoder.buffered <= 4 + MAX_FRAME + len(chunk)
    return messages, errors


@FUZZ
@given(data=st.binary(max_size=3000), cuts=st.lists(st.integers(0, 3000), max_size=10))
def test_random_bytes(data: bytes, cuts: list[int]) -> None:
    feed(data, cuts, eof=True)


@FUZZ
@given(
    bodies=st.lists(st.binary(min_size=1, max_size=200), max_size=6),
    cuts=st.lists(st.integers(0, 2000), max_size=6),
)
def test_random_bodies_in_valid_frames(bodies: list[bytes], cuts: list[int]) -> None:
    # Framing intact, bodies garbage: each frame gives a message or an error, in order.
    _, errors = feed(b"".join(frame(b) for b in bodies), cuts)
    assert all(isinstance(e, ProtocolError) for e in errors)


@FUZZ
@given(messages=st.lists(fitting_message(), min_size=1, max_size=5), data=st.data())
def test_any_split_of_a_valid_stream(messages: list[Message], data: st.DataObject) -> None:
    stream = b"".join(encode(m) for m in messages)
    cuts = data.draw(st.lists(st.integers(0, len(stream)), max_size=12))
    got, errors = feed(stream, cuts, eof=True)
    assert errors == []
    assert got == messages


def test_one_byte_at_a_time() -> None:
    messages: list[Message] = [
        Ping(id=1),
        Act(table="t1", version=9, action=Action(kind=ActionKind.PLAY, card="QS")),
        Chat(scope=ChatScope.LOBBY, text="héllo ♠"),
    ]
    stream = b"".join(encode(m) for m in messages)
    got, errors = feed(stream, list(range(len(stream))))
    assert (got, errors) == (messages, [])


@FUZZ
@given(message=fitting_message(), data=st.data())
def test_truncated_stream(message: Message, data: st.DataObject) -> None:
    wire = encode(message)
    cut = data.draw(st.integers(1, len(wire) - 1))
    got, errors = feed(wire[:cut], [], eof=True)
    assert got == []
    assert [e.code for e in errors] == [ErrorCode.BAD_FRAME]
    assert errors[0].fatal


@FUZZ
@given(message=fitting_message(), data=st.data())
def test_mutated_frames(message: Message, data: st.DataObject) -> None:
    wire = bytearray(encode(message))
    for _ in range(data.draw(st.integers(1, 4))):
        where = data.draw(st.integers(0, len(wire) - 1))
        how = data.draw(st.sampled_from(["flip", "insert", "delete"]))
        if how == "flip":
            wire[where] ^= data.draw(st.integers(1, 255))
        elif how == "insert":
            wire[where:where] = bytes([data.draw(st.integers(0, 255))])
        elif len(wire) > 1:
            del wire[where]
    feed(bytes(wire), data.draw(st.lists(st.integers(0, len(wire)), max_size=4)), eof=True)


@FUZZ
@given(message=fitting_message(), data=st.data())
def test_mutated_fields(message: Message, data: st.DataObject) -> None:
    # Well-formed msgpack with a field replaced, removed or added: refused without breaking the stream.
    wire_map = to_wire(message)
    key = data.draw(st.sampled_from(sorted(wire_map)))
    action = data.draw(st.sampled_from(["replace", "remove", "add"]))
    if action == "replace":
        wire_map[key] = data.draw(JSONISH)
    elif action == "remove":
        del wire_map[key]
    else:
        wire_map[data.draw(st.text(max_size=8))] = data.draw(JSONISH)
    body = msgpack.packb(wire_map, use_bin_type=True)
    got, errors = feed(frame(body) + encode(message), [])
    assert all(not e.fatal for e in errors)
    assert got[-1] == message  # the stream went on


@pytest.mark.parametrize("length", [MAX_FRAME + 1, 2**16, 2**31, 2**32 - 1])
def test_giant_length_prefix(length: int) -> None:
    decoder = MessageDecoder(Sender.EITHER, max_frame_size=MAX_FRAME)
    decoder.receive_data(HEADER.pack(length) + b"\x80" * 100)
    assert decoder.buffered == 0
    with pytest.raises(ProtocolError) as info:
        decoder.next_message()
    assert (info.value.code, info.value.fatal) == (ErrorCode.FRAME_TOO_LARGE, True)
    # Nothing more is kept, however much follows.
    for _ in range(10):
        decoder.receive_data(b"\x00" * 1000)
    assert decoder.buffered == 0


@pytest.mark.parametrize("depth", [15, 16, 100, 1300])  # 1300: past msgpack's own stack
@pytest.mark.parametrize("container", [b"\x91", b"\x81\xa1k"])
def test_deep_nesting(depth: int, container: bytes) -> None:
    body = b"\x82\xa1t\xa4ping\xa1x" + container * depth + b"\xc0"
    got, errors = feed(frame(body), [], eof=True)
    if depth + 1 <= 16:
        assert got and not errors
    else:
        assert got == []
        assert [(e.code, e.fatal) for e in errors] == [(ErrorCode.BAD_MSGPACK, True)]


def test_claimed_huge_containers_are_refused_before_allocation() -> None:
    for head in (b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff", b"\xdb\xff\xff\xff\xff"):
        _, errors = feed(frame(b"\x81\xa1t" + head), [])
        assert [(e.code, e.fatal) for e in errors] == [(ErrorCode.BAD_MSGPACK, True)]
