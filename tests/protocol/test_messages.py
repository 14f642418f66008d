"""Every message type: round trips, validation codes, direction, the decoder's error contract."""

from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import (
    MESSAGE_TYPES,
    Act,
    Action,
    ActionKind,
    Chat,
    ChatScope,
    ErrorCode,
    Hello,
    Message,
    MessageDecoder,
    Ok,
    Ping,
    ProtocolError,
    Sender,
    Welcome,
    check_version,
    decode,
    encode,
    encode_body,
    error_message,
    frame,
    validate,
)
from protocol.messages import Event, Reply, Request, Role
from protocol.schema import schema_of
from tests.protocol.strategies import struct_strategy


def body(**fields: Any) -> bytes:
    packed: bytes = msgpack.packb(fields, use_bin_type=True)
    return packed


def refusal(data: bytes, sender: Sender | None = None) -> ProtocolError:
    with pytest.raises(ProtocolError) as info:
        decode(data, sender)
    return info.value


@pytest.mark.parametrize("type_name", sorted(MESSAGE_TYPES))
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_round_trip_every_type(type_name: str, data: st.DataObject) -> None:
    message = data.draw(struct_strategy(MESSAGE_TYPES[type_name]))
    wire = encode(message)
    decoder = MessageDecoder(Sender.EITHER, max_frame_size=len(wire))
    decoder.receive_data(wire)
    assert decoder.next_message() == message
    assert decoder.next_message() is None
    assert encode(decode(wire[4:])) == wire  # canonical: re-encoding gives the same bytes


def test_registry_is_consistent() -> None:
    assert len(MESSAGE_TYPES) >= 40
    for type_name, cls in MESSAGE_TYPES.items():
        assert type_name == cls.TYPE
        fields = [spec.name for spec in schema_of(cls).fields]
        assert "t" not in fields
        if issubclass(cls, Request | Reply):
            assert fields[0] == "id"
        if issubclass(cls, Event):
            assert fields[0] == "seq"
            assert cls.SENDER is Sender.SERVER
        assert cls.ROLE in Role
        assert cls.__doc__


def test_t_comes_first_and_none_fields_are_left_out() -> None:
    wire = encode_body(Hello(protocol="1.0", client="x", kind="bot"))  # type: ignore[arg-type]
    assert msgpack.unpackb(wire) == {"t": "hello", "protocol": "1.0", "client": "x", "kind": "bot"}
    assert next(iter(msgpack.unpackb(wire))) == "t"


def test_unknown_fields_are_ignored() -> None:
    message = decode(body(t="ping", id=3, future="yes", more={"a": [1]}))
    assert message == Ping(id=3)


def test_missing_t() -> None:
    error = refusal(body(id=5))
    assert (error.code, error.request_id, error.fatal) == (ErrorCode.MISSING_FIELD, 5, False)


def test_t_not_a_string() -> None:
    assert refusal(body(t=1)).code is ErrorCode.INVALID_FIELD


def test_unknown_type_keeps_the_id() -> None:
    error = refusal(body(t="teleport", id=9))
    assert (error.code, error.request_id, error.fatal) == (ErrorCode.UNKNOWN_TYPE, 9, False)


def test_direction_is_enforced() -> None:
    wire = encode_body(Ok(id=1))
    assert refusal(wire, Sender.CLIENT).code is ErrorCode.UNEXPECTED_MESSAGE
    assert decode(wire, Sender.SERVER) == Ok(id=1)
    assert decode(encode_body(Ping(id=2)), Sender.CLIENT) == Ping(id=2)


@pytest.mark.parametrize(
    ("fields", "code", "detail"),
    [
        ({"t": "act", "table": "t1", "version": 3}, ErrorCode.MISSING_FIELD, "action"),
        (
            {"t": "act", "table": "t1", "version": 3, "action": {"kind": "play"}},
            ErrorCode.MISSING_FIELD,
            "action.card",
        ),
        (
            {"t": "act", "table": "t1", "version": 3, "action": {"kind": "play", "card": "QX"}},
            ErrorCode.INVALID_FIELD,
            "action.card",
        ),
        (
            {"t": "act", "table": "t1", "version": -1, "action": {"kind": "claim"}},
            ErrorCode.INVALID_FIELD,
            "version",
        ),
        (
            {"t": "act", "table": "t1", "version": True, "action": {"kind": "claim"}},
            ErrorCode.INVALID_FIELD,
            "version",
        ),
        (
            {"t": "act", "table": "t 1", "version": 1, "action": {"kind": "claim"}},
            ErrorCode.INVALID_FIELD,
            "table",
        ),
        (
            {"t": "act", "table": "t1", "version": 1, "action": {"kind": "fly"}},
            ErrorCode.INVALID_FIELD,
            "action.kind",
        ),
        (
            {"t": "act", "table": "t1", "version": 1, "action": {"kind": "bid", "tricks": 19}},
            ErrorCode.INVALID_FIELD,
            "action.tricks",
        ),
        (
            {
                "t": "act",
                "table": "t1",
                "version": 1,
                "action": {"kind": "pass", "cards": ["2C", 3]},
            },
            ErrorCode.INVALID_FIELD,
            "action.cards[1]",
        ),
        (
            {"t": "hello", "protocol": "1", "client": "c", "kind": "bot"},
            ErrorCode.INVALID_FIELD,
            "protocol",
        ),
        (
            {"t": "hello", "protocol": "1.0", "client": "", "kind": "bot"},
            ErrorCode.INVALID_FIELD,
            "client",
        ),
        (
            {"t": "hello", "protocol": "1.0", "client": "c", "kind": "cat"},
            ErrorCode.INVALID_FIELD,
            "kind",
        ),
        ({"t": "chat", "scope": "table", "text": "hi"}, ErrorCode.MISSING_FIELD, "table"),
        ({"t": "chat", "scope": "lobby", "text": "x" * 501}, ErrorCode.INVALID_FIELD, "text"),
        (
            {"t": "create_table", "game": "spades", "preset": "p", "options": {"a": [1]}},
            ErrorCode.INVALID_FIELD,
            "options.a",
        ),
        (
            {"t": "create_table", "game": "spades", "preset": "p", "bots": [4]},
            ErrorCode.INVALID_FIELD,
            "bots[0]",
        ),
        ({"t": "ping", "id": 2**32}, ErrorCode.INVALID_FIELD, "id"),
        ({"t": "ping", "id": "7"}, ErrorCode.INVALID_FIELD, "id"),
    ],
)
def test_schema_refusals(fields: dict[str, Any], code: ErrorCode, detail: str) -> None:
    error = refusal(msgpack.packb(fields))
    assert error.code is code
    assert error.detail == detail
    assert not error.fatal
    assert error.message


def test_refusal_carries_the_request_id() -> None:
    error = refusal(body(t="act", id=77, table="t1", version="x", action={"kind": "claim"}))
    assert error.request_id == 77
    reply = error_message(error)
    assert reply.id == 77
    assert reply.code == "invalid_field"
    assert reply.detail == "version"
    assert decode(encode_body(reply)) == reply


def test_options_keep_their_types() -> None:
    wire = body(
        t="create_table", game="hearts", preset="standard", options={"a": True, "b": 3, "c": "x"}
    )
    message = decode(wire)
    assert getattr(message, "options") == {"a": True, "b": 3, "c": "x"}  # noqa: B009
    assert type(getattr(message, "options")["a"]) is bool  # noqa: B009


def test_recoverable_error_lets_the_stream_go_on() -> None:
    decoder = MessageDecoder(Sender.CLIENT)
    decoder.receive_data(frame(body(t="nope", id=1)) + encode(Ping(id=2)))
    with pytest.raises(ProtocolError) as info:
        decoder.next_message()
    assert not info.value.fatal
    assert decoder.next_message() == Ping(id=2)
    assert decoder.error is None


def test_fatal_error_is_sticky() -> None:
    decoder = MessageDecoder(Sender.CLIENT)
    decoder.receive_data(frame(b"\xc1") + encode(Ping(id=2)))
    for _ in range(2):
        with pytest.raises(ProtocolError) as info:
            decoder.next_message()
        assert info.value.code is ErrorCode.BAD_MSGPACK
        assert info.value.fatal
    assert decoder.error is not None


def test_iteration_yields_what_is_there() -> None:
    decoder = MessageDecoder(Sender.SERVER)
    pings = [Ping(id=i) for i in range(5)]
    stream = b"".join(encode(p) for p in pings)
    decoder.receive_data(stream[:-1])
    assert list(decoder) == pings[:4]
    decoder.receive_data(stream[-1:])
    assert list(decoder) == pings[4:]


def test_action_shapes() -> None:
    bid = Action(kind=ActionKind.BID, tricks=0, blind=False)
    assert decode(encode_body(Act(table="t", version=1, action=bid))) == Act(
        table="t", version=1, action=bid
    )
    assert Action(kind=ActionKind.PLAY).invariant() == ("card", "is required")
    assert Action(kind=ActionKind.PASS).invariant() == ("cards", "is required")
    assert Action(kind=ActionKind.PASS, cards=["QS", "AH", "KH"]).invariant() is None
    assert Chat(scope=ChatScope.TABLE, text="hi").invariant() == ("table", "is required")


@pytest.mark.parametrize(
    ("version", "ok"), [("1.0", True), ("1.7", True), ("2.0", False), ("0.9", False)]
)
def test_check_version(version: str, ok: bool) -> None:
    error = check_version(version)
    assert (error is None) is ok
    if error is not None:
        assert error.code is ErrorCode.VERSION_MISMATCH
        assert error.fatal


def test_messages_are_frozen() -> None:
    message = Ping(id=1)
    with pytest.raises(AttributeError):
        message.id = 2  # type: ignore[misc]


def test_welcome_limits_are_nested_and_typed() -> None:
    assert schema_of(Welcome).fields[-1].name == "limits"
    assert isinstance(Message, type)


def test_validate_catches_what_the_peer_would_refuse() -> None:
    validate(Ping(id=1))
    with pytest.raises(ProtocolError) as info:
        validate(Act(table="t1", version=1, action=Action(kind=ActionKind.PLAY, card="XX")))
    assert (info.value.code, info.value.detail, info.value.fatal) == (
        ErrorCode.INTERNAL,
        "action.card",
        False,
    )


@pytest.mark.parametrize("type_name", sorted(MESSAGE_TYPES))
@settings(max_examples=3, deadline=None)
@given(data=st.data())
def test_each_side_accepts_only_its_peers_messages(type_name: str, data: st.DataObject) -> None:
    cls = MESSAGE_TYPES[type_name]
    body = encode_body(data.draw(struct_strategy(cls)))
    for receiver_hears in (Sender.CLIENT, Sender.SERVER):
        if cls.SENDER in (receiver_hears, Sender.EITHER):
            assert type_name == decode(body, receiver_hears).TYPE
        else:
            error = refusal(body, receiver_hears)
            assert (error.code, error.fatal) == (ErrorCode.UNEXPECTED_MESSAGE, False)
