"""A table's digest: one SHA-256 over a canonical encoding of its rows, the same on both engines.

`spades-server db copy` checks its copy with it, and `spades-server db digest` prints it, so a
table read from SQLite and the same table read from PostgreSQL (the same rows, in the same order:
the copy reads both by the table's key) give the same digest. What the drivers hand back is already
engine-neutral (an `int` for SQLite's INTEGER and PostgreSQL's BIGINT, a `float` for REAL and
DOUBLE PRECISION, `bytes` for BLOB and BYTEA, `str` for TEXT, `None` for NULL); the encoding only
has to be unambiguous:

- the table's column names, sorted, each as a value below, then `|`;
- then each row, its values in that column order, then `.`;
- a value is a tag, the payload's length in bytes in decimal, `:` and the payload: `N0:` (NULL),
  `I` and the integer in decimal, `F` and the float as `float.hex` (exact, so 0.1 is the same
  double on both sides or it is not the same value), `S` and the text in UTF-8, `B` and the bytes.

A float that happens to be whole is still a float (`F`), never the integer: a REAL column that
reads back as a float on one engine and an integer on the other would be a different value.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence


def encode_value(value: object) -> bytes:
    """One value's canonical bytes (see the module's doc); `TypeError` for a type no column holds."""
    if value is None:
        return b"N0:"
    if isinstance(value, bool):  # a driver's bool is an integer column's 0 or 1
        value = int(value)
    if isinstance(value, int):
        tag, payload = b"I", str(value).encode()
    elif isinstance(value, float):
        tag, payload = b"F", value.hex().encode()
    elif isinstance(value, str):
        tag, payload = b"S", value.encode("utf-8", "surrogatepass")
    elif isinstance(value, bytes | bytearray | memoryview):
        tag, payload = b"B", bytes(value)
    else:
        raise TypeError(f"no canonical encoding for a {type(value).__name__}")
    return tag + str(len(payload)).encode() + b":" + payload


def encode_row(row: Iterable[object]) -> bytes:
    """A row's canonical bytes: its values' encodings, then `.`."""
    return b"".join(encode_value(value) for value in row) + b"."


class TableDigest:
    """The running digest of one table's rows, fed in order with `add`."""

    def __init__(self, columns: Sequence[str]) -> None:
        if list(columns) != sorted(columns):
            raise ValueError("a digest's columns are given sorted by name")
        self.columns = tuple(columns)
        self.rows = 0
        self._hash = hashlib.sha256(b"".join(encode_value(c) for c in columns) + b"|")

    def add(self, row: Sequence[object]) -> None:
        """One more row, its values in `columns`' order."""
        self._hash.update(encode_row(row))
        self.rows += 1

    def hexdigest(self) -> str:
        return self._hash.hexdigest()
