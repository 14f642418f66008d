"""`protocol.schema.Check`: a declaring module's own converter and encoder for a type the schema does
not know (the cluster link declares its messages with it: server/cluster/link_protocol.py)."""

import enum
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

from protocol.schema import Check, FieldProblem, Range, from_map, to_map


class Colour(enum.Enum):
    RED = "red"


@dataclass(frozen=True)
class Point:
    x: int
    y: int


class Refused(Exception):
    """An error of the declaring module's own: it passes through the schema unchanged."""


def _point(value: Any, path: str) -> Point:
    if type(value) is not list or len(value) != 2:
        raise FieldProblem(path, "expected [x, y]")
    return Point(value[0], value[1])


def _colour(value: Any, path: str) -> Colour:
    if value != "red":
        raise Refused(f"{path}: not a colour")
    return Colour.RED


def _four_bytes(value: Any, path: str) -> bytes:
    if type(value) is not bytes or len(value) != 4:
        raise FieldProblem(path, "expected 4 bytes")
    return value


@dataclass(frozen=True, slots=True)
class Shape:
    at: Annotated[Point, Check(_point, lambda p: [p.x, p.y])]
    colour: Annotated[Colour, Check(_colour)]
    tag: Annotated[bytes, Check(_four_bytes)]
    size: Annotated[int, Range(1, 9)]


def test_a_checked_field_is_converted_by_its_own_converter_and_encoded_by_its_encoder() -> None:
    shape = from_map(Shape, {"at": [1, 2], "colour": "red", "tag": b"abcd", "size": 3}, "shape.")
    assert shape == Shape(Point(1, 2), Colour.RED, b"abcd", 3)
    # `at` by its encoder; `colour` as its base type encodes (an enum's value); bytes as they are.
    assert to_map(shape) == {"at": [1, 2], "colour": "red", "tag": b"abcd", "size": 3}


def test_a_checked_field_refuses_by_its_converter_with_the_path() -> None:
    with pytest.raises(FieldProblem, match=r"shape\.at: expected \[x, y\]"):
        from_map(Shape, {"at": 5, "colour": "red", "tag": b"abcd", "size": 3}, "shape.")
    with pytest.raises(FieldProblem, match=r"shape\.tag: expected 4 bytes"):
        from_map(Shape, {"at": [1, 2], "colour": "red", "tag": b"ab", "size": 3}, "shape.")
    with pytest.raises(Refused, match=r"shape\.colour: not a colour"):
        from_map(Shape, {"at": [1, 2], "colour": "blue", "tag": b"abcd", "size": 3}, "shape.")
    with pytest.raises(FieldProblem) as missing:
        from_map(Shape, {"colour": "red", "tag": b"abcd", "size": 3}, "shape.")
    assert missing.value.missing and missing.value.path == "shape.at"
