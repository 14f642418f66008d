"""The msgpack body: one string-keyed map within the limits, or a ProtocolError."""

from typing import Any

import msgpack
import pytest

from protocol.codec import Limits, pack_body, unpack_body
from protocol.errors import ErrorCode, ProtocolError


def test_round_trip_keeps_key_order() -> None:
    value: dict[str, Any] = {
        "t": "play",
        "id": 3,
        "card": "QS",
        "x": [1, {"y": None}],
        "b": b"\x01",
    }
    body = pack_body(value)
    assert unpack_body(body) == value
    assert list(unpack_body(body)) == ["t", "id", "card", "x", "b"]


@pytest.mark.parametrize(
    ("body", "code", "fatal"),
    [
        (b"\x81\xc4\x01a\x01", ErrorCode.BAD_MSGPACK, True),  # bin key
        (b"\x81\x01\x01", ErrorCode.BAD_MSGPACK, True),  # int key
        (b"\x81\x91\x01\x01", ErrorCode.BAD_MSGPACK, True),  # array key
        (b"\x82\xa1a\x01\xa1a\x02", ErrorCode.BAD_MSGPACK, True),  # duplicate key
        (b"\xd4\x05\x00", ErrorCode.BAD_MSGPACK, True),  # fixext
        (b"\x81\xa1a\xc7\x01\x05a", ErrorCode.BAD_MSGPACK, True),  # ext inside a map
        (b"\xc1", ErrorCode.BAD_MSGPACK, True),  # never-used byte
        (b"\x92\x01", ErrorCode.BAD_MSGPACK, True),  # truncated
        (b"\x80\x80", ErrorCode.BAD_MSGPACK, True),  # trailing value
        (b"\xa2\xff\xfe", ErrorCode.BAD_MSGPACK, True),  # invalid UTF-8
        (b"\xdd\xff\xff\xff\xff", ErrorCode.BAD_MSGPACK, True),  # claims 4G items
        (b"\x01", ErrorCode.NOT_A_MAP, False),
        (b"\x90", ErrorCode.NOT_A_MAP, False),
        (b"\xc0", ErrorCode.NOT_A_MAP, False),
    ],
)
def test_refusals(body: bytes, code: ErrorCode, fatal: bool) -> None:
    with pytest.raises(ProtocolError) as info:
        unpack_body(body)
    assert info.value.code is code
    assert info.value.fatal is fatal


def test_nesting_limit() -> None:
    limits = Limits(max_depth=4)
    ok = {"a": [[{"b": 1}]]}
    assert unpack_body(msgpack.packb(ok), limits) == ok
    with pytest.raises(ProtocolError) as info:
        unpack_body(msgpack.packb({"a": [[[{"b": 1}]]]}), limits)
    assert info.value.code is ErrorCode.BAD_MSGPACK


def test_deep_nesting_far_beyond_msgpack_stack() -> None:
    with pytest.raises(ProtocolError) as info:
        unpack_body(b"\x81\xa1a" + b"\x91" * 50_000 + b"\xc0")
    assert info.value.code is ErrorCode.BAD_MSGPACK


@pytest.mark.parametrize(
    ("value", "limits"),
    [
        ({"s": "x" * 11}, Limits(max_str_len=10)),
        ({"b": b"x" * 11}, Limits(max_bin_len=10)),
        ({"a": [0] * 11}, Limits(max_array_len=10)),
        ({str(i): i for i in range(11)}, Limits(max_map_len=10)),
    ],
)
def test_size_limits(value: dict[str, Any], limits: Limits) -> None:
    with pytest.raises(ProtocolError) as info:
        unpack_body(msgpack.packb(value, use_bin_type=True), limits)
    assert info.value.code is ErrorCode.BAD_MSGPACK
