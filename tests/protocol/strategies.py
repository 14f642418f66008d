"""Hypothesis strategies derived from the same annotations the validator reads.

One generic builder walks a wire type's annotations, so every message type gets a strategy and a new
message needs no new test code.
"""

import dataclasses
import enum
import re
import types
import typing
from typing import Any, Literal, Union

from hypothesis import strategies as st

from protocol.messages import MESSAGE_TYPES, Message, Turn
from protocol.schema import Length, OneOf, Pattern, Range, schema_of
from protocol.types import GameVersion, Millis, Seat, Seq, TableId

SMALL_INT = st.integers(min_value=-(2**31), max_value=2**31 - 1)
KEYS = st.text(alphabet="abcdefghijklmnopqrstuvwxyz_", min_size=1, max_size=12)
SCALARS = (
    st.none()
    | st.booleans()
    | SMALL_INT
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20)
)
# A game view: nested maps and arrays of plain values, well inside the codec's limits.
JSONISH: st.SearchStrategy[Any] = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(KEYS, inner, max_size=5),
    max_leaves=20,
)


def _split(annotation: Any) -> tuple[Any, list[Any]]:
    if typing.get_origin(annotation) is typing.Annotated:
        base, *markers = typing.get_args(annotation)
        inner, more = _split(base)
        return inner, [*more, *markers]
    return annotation, []


def strategy_for(annotation: Any, depth: int = 0) -> st.SearchStrategy[Any]:
    """Values that the annotation's converter accepts (and gives back unchanged).

    `depth` counts the lists this value sits in: a list inside a list is drawn shorter, so a
    message of nested lists (an event's rounds of tables of boards) still fits a frame."""
    base, markers = _split(annotation)
    lo_hi = next((m for m in markers if isinstance(m, Range)), None)
    length = next((m for m in markers if isinstance(m, Length)), None)
    pattern = next((m for m in markers if isinstance(m, Pattern)), None)
    one_of = next((m for m in markers if isinstance(m, OneOf)), None)
    origin = typing.get_origin(base)
    if one_of is not None:
        return st.sampled_from(sorted(one_of.values))
    if base is Any:
        return JSONISH
    if base is bool:
        return st.booleans()
    if base is int:
        if lo_hi is not None:
            return st.integers(min_value=int(lo_hi.lo), max_value=int(lo_hi.hi))
        return SMALL_INT
    if base is float:
        return st.floats(allow_nan=False, allow_infinity=False, width=64)
    if base is str:
        if pattern is not None:
            return st.from_regex(re.compile(pattern.regex), fullmatch=True)
        lo, hi = (length.lo, length.hi) if length else (0, 40)
        return st.text(min_size=lo, max_size=min(hi, 40))
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return st.sampled_from(list(base))
    if origin is Literal:
        return st.sampled_from(typing.get_args(base))
    if origin is Union or origin is types.UnionType:
        return st.one_of([strategy_for(option, depth) for option in typing.get_args(base)])
    if base is type(None):
        return st.none()
    if origin is list:
        lo, hi = (length.lo, length.hi) if length else (0, 6)
        longest = max(lo, min(hi, 6 if depth == 0 else 3))
        item = strategy_for(typing.get_args(base)[0], depth + 1)
        return st.lists(item, min_size=lo, max_size=longest)
    if origin is tuple:
        return st.tuples(*(strategy_for(item, depth) for item in typing.get_args(base)))
    if origin is dict:
        return st.dictionaries(KEYS, strategy_for(typing.get_args(base)[1], depth), max_size=4)
    if isinstance(base, type) and dataclasses.is_dataclass(base):
        return struct_strategy(base, depth)
    raise TypeError(f"no strategy for {base!r}")


def turn_strategy() -> st.SearchStrategy[Any]:
    """`turn` messages: one clock per seat to act (filtering random lists would reject most)."""

    def build(to_act: list[int]) -> st.SearchStrategy[Any]:
        clocks = st.lists(strategy_for(Millis), min_size=len(to_act), max_size=len(to_act))
        return st.builds(
            Turn,
            seq=strategy_for(Seq),
            table=strategy_for(TableId),
            version=strategy_for(GameVersion),
            to_act=st.just(to_act),
            deadline_ms=clocks,
            bank_ms=clocks,
        )

    seats = st.lists(strategy_for(Seat), min_size=1, max_size=4, unique=True)
    return seats.flatmap(build)


def struct_strategy(cls: type, depth: int = 0) -> st.SearchStrategy[Any]:
    """Instances of a wire dataclass that pass its own invariant."""
    if cls is Turn:
        return turn_strategy()
    fields = {}
    for spec in schema_of(cls).fields:
        value = strategy_for(spec.annotation, depth)
        fields[spec.name] = value
    built = st.fixed_dictionaries(fields).map(lambda kwargs: cls(**kwargs))
    if hasattr(cls, "invariant"):
        built = built.filter(lambda obj: obj.invariant() is None)
    return built


def any_message() -> st.SearchStrategy[Message]:
    """Any message of any registered type."""
    return st.one_of([struct_strategy(cls) for cls in MESSAGE_TYPES.values()])
