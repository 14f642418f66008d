"""The msgpack body of a frame: one map, decoded strictly and within fixed limits.

msgpack-python does the byte work; this module puts a fence around it. Sizes of strings, binaries,
arrays and maps are capped inside the unpacker (so a claimed huge array is refused before it is
allocated), ext types are refused, map keys must be unique strings, and nesting is capped by a walk
after unpacking (bounded by the frame size, since every value costs at least one byte).
Whatever the bytes, :func:`unpack_body` returns a ``dict[str, Any]`` or raises :class:`ProtocolError`.
"""

import threading
from dataclasses import dataclass
from typing import Any, Final

import msgpack

from protocol.errors import ErrorCode, ProtocolError


@dataclass(frozen=True, slots=True)
class Limits:
    """The bounds a decoder enforces on one frame body; ``welcome`` tells clients the server's."""

    max_str_len: int = 4096
    max_bin_len: int = 4096
    max_array_len: int = 1024
    max_map_len: int = 256
    max_depth: int = 16


DEFAULT_LIMITS: Final = Limits()


class _Refused(Exception):
    """Raised inside msgpack's hooks; turned into ``bad_msgpack`` by :func:`unpack_body`."""


def _refuse_ext(code: int, data: bytes) -> Any:
    raise _Refused(f"ext type {code} is not allowed")


def _string_keyed_map(pairs: list[tuple[Any, Any]]) -> dict[str, Any]:
    result = dict(pairs)  # an unhashable key raises TypeError, reported as bad_msgpack
    if len(result) != len(pairs):
        raise _Refused("a map key appears twice")
    for key in result:
        if type(key) is not str:
            raise _Refused(f"map key {key!r:.40} is not a string")
    return result


def _depth_exceeds(value: Any, max_depth: int) -> bool:
    """Whether containers nest deeper than ``max_depth`` (the top-level map is depth 1).

    Level by level, holding only containers: the work is bounded by the number of values, itself
    bounded by the frame size.
    """
    level = [value] if type(value) in (dict, list) else []
    depth = 1
    while level:
        if depth > max_depth:
            return True
        below = []
        for item in level:
            for child in item.values() if type(item) is dict else item:
                if type(child) is dict or type(child) is list:
                    below.append(child)
        level = below
        depth += 1
    return False


def unpack_body(body: bytes, limits: Limits = DEFAULT_LIMITS) -> dict[str, Any]:
    """Decode one frame body into a map with string keys.

    Raises :class:`ProtocolError`: ``bad_msgpack`` (fatal) when the bytes are not exactly one msgpack
    value within ``limits``; ``not_a_map`` (not fatal) when that value is not a map.
    """
    try:
        value = msgpack.unpackb(
            body,
            raw=False,
            use_list=True,
            strict_map_key=False,  # our hook checks keys, with a better message
            object_pairs_hook=_string_keyed_map,
            ext_hook=_refuse_ext,
            max_str_len=limits.max_str_len,
            max_bin_len=limits.max_bin_len,
            max_array_len=limits.max_array_len,
            max_map_len=limits.max_map_len,
            max_ext_len=0,
        )
    # msgpack raises ValueError subclasses, UnicodeDecodeError, TypeError, OverflowError and our own
    # refusals; none of them may escape the decoder, so everything becomes one documented code.
    except Exception as exc:
        raise ProtocolError(
            ErrorCode.BAD_MSGPACK, f"undecodable msgpack: {exc or type(exc).__name__}", fatal=True
        ) from None
    if _depth_exceeds(value, limits.max_depth):
        raise ProtocolError(
            ErrorCode.BAD_MSGPACK, f"values nest deeper than {limits.max_depth}", fatal=True
        )
    if not isinstance(value, dict):
        raise ProtocolError(
            ErrorCode.NOT_A_MAP, f"a message is a msgpack map, not {type(value).__name__}"
        )
    return value


# One packer per thread, reused: `msgpack.packb` makes a new `Packer` on every call, which costs
# several times the packing of a small value (a server packs a `seq` for every frame it sends). A
# packer holds a buffer while it packs, so threads do not share one.
_PACKERS = threading.local()


def _packer() -> msgpack.Packer:
    try:
        packer: msgpack.Packer = _PACKERS.packer
    except AttributeError:
        packer = _PACKERS.packer = msgpack.Packer(use_bin_type=True, strict_types=False)
    return packer


def pack_body(value: dict[str, Any]) -> bytes:
    """Encode a map canonically: keys in the order given, strings as str, bytes as bin."""
    packed: bytes = _packer().pack(value)
    return packed


def pack_value(value: Any) -> bytes:
    """Any one value, packed as it is inside a :func:`pack_body` map (same options)."""
    packed: bytes = _packer().pack(value)
    return packed
