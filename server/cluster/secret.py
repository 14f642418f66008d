"""The cluster's secret: the key with which its servers prove to each other, on the link, that
they belong to the cluster (`server.cluster.link_protocol`).

It is either kept in the database the servers share (the one-row table `cluster_secret`, made
by the first server of the cluster that starts: 32 random bytes), or read from a file the
operator gives every server (`serve --cluster-secret-file`), for a cluster whose database is
reachable by more people than its servers. Either way only the servers hold it: the database's
credentials, or the file, are what an attacker on the LAN does not have.
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import psycopg

#: Bytes of a secret the servers make; and the fewest a file may hold.
SIZE = 32
MIN_SIZE = 16


class SecretError(Exception):
    """The secret file cannot be used; `str()` says which and why."""


def from_file(path: Path) -> bytes:
    """The secret in `path` (its bytes, surrounding whitespace dropped: a line of
    `openssl rand -hex 32` will do). Raises `SecretError`."""
    try:
        data = path.read_bytes().strip()
    except OSError as exc:
        raise SecretError(
            f"cannot read the cluster secret file {path}: {exc.strerror or exc}"
        ) from None
    if len(data) < MIN_SIZE:
        raise SecretError(
            f"the cluster secret file {path} holds {len(data)} bytes; it needs at least "
            f"{MIN_SIZE} (make one with: openssl rand -hex 32 > {path})"
        )
    return data


def kept(conn: psycopg.Connection[Any]) -> bytes:
    """The secret kept in the database, made now if no server made it before (servers starting
    together agree: one insert wins, every one reads the row)."""
    conn.execute(
        "INSERT INTO cluster_secret (id, secret) VALUES (1, %s) ON CONFLICT (id) DO NOTHING",
        (secrets.token_bytes(SIZE),),
    )
    row = conn.execute("SELECT secret FROM cluster_secret WHERE id = 1").fetchone()
    assert row is not None
    return bytes(row[0])
