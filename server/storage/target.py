"""What `--db` names: a SQLite file (a path) or a PostgreSQL database (a `postgresql://` URL).

Kept apart from the engines so a caller can tell them apart, and print one, without importing a
driver it does not need (a SQLite server never loads psycopg).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

POSTGRES_SCHEMES = ("postgresql://", "postgres://")

#: The password of a URL too malformed to split (`scheme://user:password@`).
_PASSWORD = re.compile(r"^([a-z]+://[^:/@]*:)[^@]*@", re.IGNORECASE)

#: A database as callers give it: a SQLite file's path (or ":memory:"), or a PostgreSQL URL.
Target = Path | str


def is_postgres(target: Target) -> bool:
    """Whether `target` is a PostgreSQL URL (`postgresql://user@host:port/db`)."""
    return isinstance(target, str) and target.lower().startswith(POSTGRES_SCHEMES)


def shown(target: Target) -> str:
    """`target` as it may be logged or printed: a URL without its password."""
    if not is_postgres(target):
        return str(target)
    assert isinstance(target, str)
    try:
        parts = urlsplit(target)
        password = parts.password
    except ValueError:  # malformed (the driver refuses it too), but still never shown its password
        return _PASSWORD.sub(r"\1***@", target)
    if password is None:
        return target
    netloc = parts.netloc.rsplit("@", 1)[1]
    user = parts.username or ""
    return urlunsplit(parts._replace(netloc=f"{user}:***@{netloc}"))


def parse(text: str) -> Target:
    """A `--db` value: a URL stays a string, anything else is a path."""
    return text if is_postgres(text) else Path(text)
