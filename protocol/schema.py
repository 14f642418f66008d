"""One generic validator and encoder, derived from dataclass annotations.

A wire type is a frozen dataclass whose annotations say everything about its fields: ``int``,
``float``, ``bool``, ``str``, a ``StrEnum``, a ``Literal``, ``X | None``, ``list[X]``,
``tuple[X, Y]`` (a fixed-length array), ``dict[str, X]``, a union of scalars, ``Any`` (any decoded
msgpack value) or another wire dataclass, refined with ``Annotated`` markers (:class:`Range`,
:class:`Length`, :class:`Pattern`, :class:`OneOf`, :class:`Named`, :class:`Doc`); a type of the
caller's own (the cluster link's accounts, engine actions, bytes of a fixed size) brings its own
converter and encoder (:class:`Check`). Each class is
compiled once into a list of field converters; the same compiled form validates decoded maps, encodes
instances and renders the documentation's field tables, so the three can never disagree.
Unknown keys are ignored (forward compatibility); an explicit nil for an optional field is read as the
field left out (its default), whatever its type.
"""

import dataclasses
import enum
import math
import re
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal, TypeVar, Union

# The bounds and the docs' sentence are one declaration with the engine's events (whose fields the
# protocol's game events are made of: protocol/game_events.py), so a marker is never translated;
# re-exported (`as`) for the protocol's modules, which take them from here.
from engine.event_fields import Doc as Doc  # noqa: PLC0414
from engine.event_fields import Length as Length  # noqa: PLC0414
from engine.event_fields import Range as Range  # noqa: PLC0414

T = TypeVar("T")

Converter = Callable[[Any, str], Any]


# ---- Annotated markers -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Pattern:
    """A regular expression the whole string must match; ``shows`` is how the docs describe it."""

    regex: str
    shows: str


@dataclass(frozen=True, slots=True)
class OneOf:
    """A closed set of allowed values (card notation, say)."""

    values: frozenset[Any]


@dataclass(frozen=True, slots=True)
class Named:
    """Show this name in the docs instead of the expanded type (``Card``, ``Seat``)."""

    name: str


@dataclass(frozen=True, slots=True)
class Check:
    """A converter of the declaring module's own, in place of the base type's: ``convert(value, path)``
    checks a decoded value and returns the field's value (raising :class:`FieldProblem`, or an error
    of the caller's, which passes through); ``encode`` turns the field's value into plain data
    (None: as the base type encodes, or the value as it is). For types this module does not know
    (``server.cluster.link_protocol``'s ids, accounts and actions)."""

    convert: Converter
    encode: Callable[[Any], Any] | None = None


# ---- Errors raised while converting (turned into ProtocolError by the caller) ------------------


class FieldProblem(Exception):
    """A value does not fit its declaration. ``missing`` tells a missing field from a wrong one."""

    def __init__(self, path: str, reason: str, *, missing: bool = False) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
        self.missing = missing


# ---- Compiled form ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FieldSpec:
    """One field of a wire type, compiled."""

    name: str
    annotation: Any
    convert: Converter
    required: bool
    default: Any
    omit_none: bool  # an optional field whose value is None is left out of the encoding
    doc: str
    encode: Callable[[Any], Any] | None  # None: the value is already plain msgpack data


@dataclass(frozen=True, slots=True)
class Schema:
    """A compiled wire type: its fields in declaration order (which is also the encoding order)."""

    cls: type
    fields: tuple[FieldSpec, ...]


_SCHEMAS: dict[type, Schema] = {}
_MISSING: Final = dataclasses.MISSING


def schema_of(cls: type) -> Schema:
    """The compiled schema of a wire dataclass (compiled on first use, then cached)."""
    found = _SCHEMAS.get(cls)
    if found is None:
        found = _compile(cls)
        _SCHEMAS[cls] = found
    return found


def _compile(cls: type) -> Schema:
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls.__name__} is not a dataclass")
    hints = typing.get_type_hints(cls, include_extras=True)
    specs = []
    for f in dataclasses.fields(cls):
        if not f.init:
            continue
        annotation = hints[f.name]
        has_default = f.default is not _MISSING or f.default_factory is not _MISSING
        default = f.default if f.default is not _MISSING else _MISSING
        specs.append(
            FieldSpec(
                name=f.name,
                annotation=annotation,
                convert=converter_for(annotation),
                required=not has_default,
                default=default,
                omit_none=has_default and default is None,
                doc=_doc_of(annotation),
                encode=encoder_for(annotation),
            )
        )
    return Schema(cls, tuple(specs))


def _doc_of(annotation: Any) -> str:
    _, markers = _strip_annotated(annotation)
    texts = [marker.text for marker in markers if isinstance(marker, Doc)]
    return texts[-1] if texts else ""


# ---- Building converters from annotations --------------------------------------------------------


def _strip_annotated(annotation: Any) -> tuple[Any, tuple[Any, ...]]:
    if typing.get_origin(annotation) is typing.Annotated:
        base, *markers = typing.get_args(annotation)
        inner, more = _strip_annotated(base)
        return inner, (*more, *markers)
    return annotation, ()


def _is_union(origin: Any) -> bool:
    return origin is Union or origin is types.UnionType


def converter_for(annotation: Any) -> Converter:
    """A function ``(value, path) -> value`` that checks and converts one decoded value."""
    base, markers = _strip_annotated(annotation)
    own = [marker.convert for marker in markers if isinstance(marker, Check)]
    convert = own[-1] if own else _base_converter(base)
    checks = [_marker_check(marker) for marker in markers]
    active = [check for check in checks if check is not None]
    if not active:
        return convert

    def refined(value: Any, path: str) -> Any:
        result = convert(value, path)
        for check in active:
            check(result, path)
        return result

    return refined


def _base_converter(base: Any) -> Converter:
    origin = typing.get_origin(base)
    if base is Any:
        return lambda value, path: value
    if base is bool:
        return _convert_bool
    if base is int:
        return _convert_int
    if base is float:
        return _convert_float
    if base is str:
        return _convert_str
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return _enum_converter(base)
    if origin is Literal:
        return _literal_converter(typing.get_args(base))
    if _is_union(origin):
        return _union_converter(typing.get_args(base))
    if origin is list:
        (item,) = typing.get_args(base)
        return _list_converter(converter_for(item))
    if origin is tuple:
        return _tuple_converter([converter_for(item) for item in typing.get_args(base)])
    if origin is dict:
        key, value = typing.get_args(base)
        if key is not str:
            raise TypeError("wire maps have string keys")
        return _dict_converter(converter_for(value))
    if isinstance(base, type) and dataclasses.is_dataclass(base):
        return _struct_converter(base)
    raise TypeError(f"no wire converter for {base!r}")


def _convert_bool(value: Any, path: str) -> bool:
    if type(value) is not bool:
        raise FieldProblem(path, f"expected a boolean, got {_kind(value)}")
    return value


def _convert_int(value: Any, path: str) -> int:
    if type(value) is not int:
        raise FieldProblem(path, f"expected an integer, got {_kind(value)}")
    return value


def _convert_float(value: Any, path: str) -> float:
    if type(value) is int:
        return float(value)
    if type(value) is not float or not math.isfinite(value):
        raise FieldProblem(path, f"expected a finite number, got {_kind(value)}")
    return value


def _convert_str(value: Any, path: str) -> str:
    if type(value) is not str:
        raise FieldProblem(path, f"expected a string, got {_kind(value)}")
    return value


def _enum_converter(cls: type[enum.Enum]) -> Converter:
    by_value = {member.value: member for member in cls}
    allowed = ", ".join(repr(v) for v in by_value)

    def convert(value: Any, path: str) -> Any:
        try:
            return by_value[value]
        except (KeyError, TypeError):
            raise FieldProblem(path, f"expected one of {allowed}, got {_show(value)}") from None

    return convert


def _literal_converter(values: tuple[Any, ...]) -> Converter:
    allowed = ", ".join(repr(v) for v in values)

    def convert(value: Any, path: str) -> Any:
        # type() equality keeps True from passing as 1 and 1 as True.
        if any(type(value) is type(v) and value == v for v in values):
            return value
        raise FieldProblem(path, f"expected one of {allowed}, got {_show(value)}")

    return convert


def _union_converter(options: tuple[Any, ...]) -> Converter:
    nullable = type(None) in options
    rest = [option for option in options if option is not type(None)]
    converters = [converter_for(option) for option in rest]

    if len(converters) == 1:
        (only,) = converters

        def convert_optional(value: Any, path: str) -> Any:
            if value is None:
                return None
            return only(value, path)

        return convert_optional

    expected = " or ".join(describe(option) for option in rest)

    def convert_any(value: Any, path: str) -> Any:
        if value is None and nullable:
            return None
        for convert in converters:
            try:
                return convert(value, path)
            except FieldProblem:
                continue
        raise FieldProblem(path, f"expected {expected}, got {_kind(value)}")

    return convert_any


def _list_converter(item: Converter) -> Converter:
    def convert(value: Any, path: str) -> list[Any]:
        if type(value) is not list:
            raise FieldProblem(path, f"expected an array, got {_kind(value)}")
        return [item(element, f"{path}[{i}]") for i, element in enumerate(value)]

    return convert


def _tuple_converter(items: list[Converter]) -> Converter:
    """A fixed-length array of differently typed items (``[seat, card]``), decoded to a tuple."""
    size = len(items)

    def convert(value: Any, path: str) -> tuple[Any, ...]:
        if type(value) is not list or len(value) != size:
            raise FieldProblem(path, f"expected an array of {size}, got {_kind(value)}")
        return tuple(
            item(element, f"{path}[{i}]")
            for i, (item, element) in enumerate(zip(items, value, strict=True))
        )

    return convert


def _dict_converter(item: Converter) -> Converter:
    def convert(value: Any, path: str) -> dict[str, Any]:
        if type(value) is not dict:
            raise FieldProblem(path, f"expected a map, got {_kind(value)}")
        # The codec has already made sure every key is a string.
        return {key: item(element, f"{path}.{key}") for key, element in value.items()}

    return convert


def _struct_converter(cls: type) -> Converter:
    def convert(value: Any, path: str) -> Any:
        if type(value) is not dict:
            raise FieldProblem(path, f"expected a map, got {_kind(value)}")
        return from_map(cls, value, path + ".")

    return convert


def _marker_check(marker: Any) -> Callable[[Any, str], None] | None:
    if isinstance(marker, Range):
        lo, hi = marker.lo, marker.hi

        def check_range(value: Any, path: str) -> None:
            if value is not None and not lo <= value <= hi:
                raise FieldProblem(path, f"{value} is outside {_num(lo)}..{_num(hi)}")

        return check_range
    if isinstance(marker, Length):
        short, long = marker.lo, marker.hi

        def check_length(value: Any, path: str) -> None:
            if value is not None and not short <= len(value) <= long:
                raise FieldProblem(path, f"length {len(value)} is outside {short}..{long}")

        return check_length
    if isinstance(marker, Pattern):
        compiled = re.compile(marker.regex)
        shows = marker.shows

        def check_pattern(value: Any, path: str) -> None:
            if value is not None and compiled.fullmatch(value) is None:
                raise FieldProblem(path, f"{_show(value)} is not {shows}")

        return check_pattern
    if isinstance(marker, OneOf):
        allowed = marker.values

        def check_one_of(value: Any, path: str) -> None:
            if value is not None and value not in allowed:
                raise FieldProblem(path, f"{_show(value)} is not allowed here")

        return check_one_of
    return None  # Named and other markers only matter to the docs


def _kind(value: Any) -> str:
    if value is None:
        return "nil"
    return {
        bool: "a boolean",
        int: "an integer",
        float: "a float",
        str: "a string",
        bytes: "binary",
        list: "an array",
        dict: "a map",
    }.get(type(value), type(value).__name__)


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


# ---- Decoding and encoding whole structs --------------------------------------------------------


def from_map(cls: type[T], data: dict[str, Any], prefix: str = "") -> T:
    """Build ``cls`` from a decoded map; unknown keys are ignored, and an optional field given as
    nil takes its default, as if it were absent. Raises :class:`FieldProblem`."""
    schema = schema_of(cls)
    kwargs: dict[str, Any] = {}
    for spec in schema.fields:
        value = data.get(spec.name, _MISSING)
        if value is None and not spec.required:
            # An explicit nil for an optional field means the same as leaving it out (the field's
            # default): docs/protocol.md, Framing. A required field's nil goes to its converter,
            # which accepts it only where the type says nil.
            continue
        if value is not _MISSING:
            kwargs[spec.name] = spec.convert(value, prefix + spec.name)
        elif spec.required:
            raise FieldProblem(prefix + spec.name, "is required", missing=True)
    obj = cls(**kwargs)
    invariant = getattr(obj, "invariant", None)
    if invariant is not None:
        problem = invariant()
        if problem is not None:
            field, reason = problem
            raise FieldProblem(prefix + field, reason, missing=reason == "is required")
    return obj


def to_map(obj: Any) -> dict[str, Any]:
    """The plain map of a wire dataclass, keys in declaration order, optional ``None`` fields left out."""
    out: dict[str, Any] = {}
    for spec in schema_of(type(obj)).fields:
        value = getattr(obj, spec.name)
        if value is None:
            if not spec.omit_none:
                out[spec.name] = None
            continue
        out[spec.name] = value if spec.encode is None else spec.encode(value)
    return out


def encoder_for(annotation: Any) -> Callable[[Any], Any] | None:
    """How to turn a field's value into plain data, or ``None`` when it already is (most fields:
    numbers, strings, lists of them, and ``Any`` maps such as views, which are never walked)."""
    base, markers = _strip_annotated(annotation)
    own = [marker.encode for marker in markers if isinstance(marker, Check) and marker.encode]
    if own:
        return own[-1]
    origin = typing.get_origin(base)
    if base is Any or base in (bool, int, float, str, bytes, type(None)) or origin is Literal:
        return None
    if origin is tuple:  # decoded as tuples, shown as lists
        return to_plain
    if origin is list and encoder_for(typing.get_args(base)[0]) is to_map:
        return _maps_of  # a list of structures (`your_turn.legal`): no generic walk per item
    if _is_union(origin) or origin in (list, dict):
        args = typing.get_args(base)
        items = args[1:] if origin is dict else args
        if all(encoder_for(item) is None for item in items if item is not Ellipsis):
            return None
        return to_plain
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return _enum_value
    if isinstance(base, type) and dataclasses.is_dataclass(base):
        return to_map
    return to_plain


def _maps_of(values: list[Any]) -> list[dict[str, Any]]:
    return [to_map(value) for value in values]


def _enum_value(value: Any) -> Any:
    # A caller may pass the plain string ("bot") for a StrEnum field; it encodes the same.
    return value.value if isinstance(value, enum.Enum) else value


def to_plain(value: Any) -> Any:
    """A value as msgpack-able data: enums by value, dataclasses as maps, containers recursively."""
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, list | tuple):
        return [to_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: to_plain(item) for key, item in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_map(value)
    return value


# ---- The documentation's view of a type ---------------------------------------------------------


def describe(annotation: Any) -> str:
    """How the docs write a field's type: ``int 0..3``, ``str 1..32 chars``, ``list[Card]``."""
    base, markers = _strip_annotated(annotation)
    for marker in markers:
        if isinstance(marker, Named):
            return marker.name
    text = _describe_base(base)
    for marker in markers:
        if isinstance(marker, Range):
            text += f" {_num(marker.lo)}..{_num(marker.hi)}"
        elif isinstance(marker, Length):
            unit = " chars" if base is str else " items"
            text += f" ({marker.lo}..{marker.hi}{unit})"
        elif isinstance(marker, Pattern):
            text += f" ({marker.shows})"
    return text


def _describe_base(base: Any) -> str:
    origin = typing.get_origin(base)
    if base is Any:
        return "any"
    if base in (bool, int, float, str):
        return str(base.__name__)
    if isinstance(base, type) and issubclass(base, enum.Enum):
        return " | ".join(f'"{member.value}"' for member in base)
    if origin is Literal:
        return " | ".join(_literal_text(v) for v in typing.get_args(base))
    if _is_union(origin):
        args = typing.get_args(base)
        rest = [describe(a) for a in args if a is not type(None)]
        text = " | ".join(rest)
        return text + " | nil" if type(None) in args else text
    if origin is list:
        return f"list[{describe(typing.get_args(base)[0])}]"
    if origin is tuple:
        return "[" + ", ".join(describe(item) for item in typing.get_args(base)) + "]"
    if origin is dict:
        return f"map[str, {describe(typing.get_args(base)[1])}]"
    if isinstance(base, type):
        return base.__name__
    return str(base)


def _literal_text(value: Any) -> str:
    if isinstance(value, str):
        return f'"{value}"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
