"""An explicit nil for an optional field means the same as leaving the field out (docs/protocol.md,
Framing: "Receivers must accept ... an explicit nil for an absent optional field"; Message reference:
"nil means the same as absent").

Issue 37 item 9: `{"t": "join", ..., "takeover": nil}` was refused with `invalid_field` ("expected a
boolean, got nil"), as were nils for `create_table`'s `options`, `bots` and `private`, `list_tables`'s
`open_seats` and the ladder's limits. The property below walks every message type and every wire
structure nested in one (both directions: the client and the bot SDK decode the server's messages with
the same schema) and checks, for each optional field, that absent and nil decode to the same value.
"""

import dataclasses
import typing
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol import MESSAGE_TYPES, ErrorCode, ProtocolError, Sender, decode
from protocol.messages import CreateTable, Join, LadderMatches, LadderStandings, ListTables
from protocol.schema import FieldProblem, from_map, schema_of, to_map
from protocol.types import Game
from protocol.wire import to_wire
from tests.protocol.strategies import struct_strategy


def _structs_in(annotation: Any, found: dict[str, type]) -> None:
    """Every wire dataclass an annotation reaches (through Annotated, unions, lists, maps)."""
    if dataclasses.is_dataclass(annotation) and isinstance(annotation, type):
        if annotation.__name__ not in found:
            found[annotation.__name__] = annotation
            for spec in schema_of(annotation).fields:
                _structs_in(spec.annotation, found)
        return
    for arg in typing.get_args(annotation):
        _structs_in(arg, found)


def _nested_structs() -> dict[str, type]:
    found: dict[str, type] = {}
    for cls in MESSAGE_TYPES.values():
        for spec in schema_of(cls).fields:
            _structs_in(spec.annotation, found)
    return found


NESTED = _nested_structs()


def _optional_fields(cls: type) -> list[str]:
    return [spec.name for spec in schema_of(cls).fields if not spec.required]


def test_the_walk_finds_messages_and_structures_with_optional_fields() -> None:
    # A guard on the property below: it must have something to walk.
    assert {"Action", "Clock", "ServerLimits", "TableInfo", "LadderMatch"} <= set(NESTED)
    assert "takeover" in _optional_fields(Join)
    assert sum(len(_optional_fields(cls)) for cls in MESSAGE_TYPES.values()) > 100


@pytest.mark.parametrize("type_name", sorted(MESSAGE_TYPES))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_every_message_decodes_nil_as_absent(type_name: str, data: st.DataObject) -> None:
    cls = MESSAGE_TYPES[type_name]
    wire = to_wire(data.draw(struct_strategy(cls)))
    for name in _optional_fields(cls):
        absent = {key: value for key, value in wire.items() if key != name}
        with_nil = {**absent, name: None}
        assert _outcome(absent) == _outcome(with_nil), name


@pytest.mark.parametrize("struct_name", sorted(NESTED))
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_every_nested_structure_decodes_nil_as_absent(
    struct_name: str, data: st.DataObject
) -> None:
    cls = NESTED[struct_name]
    plain = to_map(data.draw(struct_strategy(cls)))
    for name in _optional_fields(cls):
        absent = {key: value for key, value in plain.items() if key != name}
        with_nil = {**absent, name: None}
        assert _built(cls, absent) == _built(cls, with_nil), name


def _built(cls: type, plain: dict[str, Any]) -> object:
    """The structure, or the problem (an invariant may need the field: nil must fail it alike)."""
    try:
        return from_map(cls, plain)
    except FieldProblem as problem:
        return (problem.path, problem.reason, problem.missing)


def _outcome(wire: dict[str, Any]) -> object:
    """The decoded message, or the refusal (a field's absence may break an invariant: then nil must
    break it the same way)."""
    body: bytes = msgpack.packb(wire, use_bin_type=True)
    try:
        return decode(body, Sender.EITHER)
    except ProtocolError as error:
        return (error.code, error.message, error.detail)


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        (
            {"t": "join", "id": 1, "table": "t1", "takeover": None},
            Join(id=1, table="t1", takeover=False),
        ),
        (
            {
                "t": "create_table",
                "game": "spades",
                "preset": "classic",
                "options": None,
                "bots": None,
                "private": None,
                "seats": None,
            },
            CreateTable(game=Game.SPADES, preset="classic"),
        ),
        ({"t": "list_tables", "open_seats": None}, ListTables(open_seats=False)),
        ({"t": "ladder_standings", "limit": None}, LadderStandings(limit=100)),
        ({"t": "ladder_matches", "limit": None}, LadderMatches(limit=20)),
    ],
)
def test_the_nils_the_issue_names(wire: dict[str, Any], expected: object) -> None:
    body: bytes = msgpack.packb(wire, use_bin_type=True)
    assert decode(body, Sender.CLIENT) == expected


def test_a_nil_for_a_required_field_is_still_refused() -> None:
    body: bytes = msgpack.packb({"t": "join", "id": 3, "table": None}, use_bin_type=True)
    with pytest.raises(ProtocolError) as info:
        decode(body, Sender.CLIENT)
    assert (info.value.code, info.value.detail, info.value.request_id) == (
        ErrorCode.INVALID_FIELD,
        "table",
        3,
    )
