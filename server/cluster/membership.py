"""The cluster's bookkeeping in PostgreSQL: who is in it, for how long, and who runs which table.

Plain functions over a psycopg connection in autocommit mode (each one transaction), called from a
worker thread by `server.cluster.node`. Every time is PostgreSQL's own clock (`NOW` below), so the
servers' clocks never have to agree.

- A server joins with `register` and keeps its lease with `renew` (every `RENEW_EVERY` seconds, for
  `LEASE` seconds). A renewal that finds the server declared dead returns False: that server must
  stop at once, its tables are someone else's. A lease that merely ran out (the database was down,
  so nobody could renew) is renewed: nobody declared it dead, so nobody took its tables.
- A server whose bookkeeping connection was opened again (PostgreSQL restarted, or the network
  to it came back) declares nobody dead for a lease's time (`server.cluster.node`): the others
  lost the database too and renew their lapsed leases meanwhile, so an outage they all shared
  kills no server.
- `expire` declares dead every server whose lease ran out; `claim` then moves, a few at a time,
  their tables to the caller (row locks and SKIP LOCKED: each table goes to exactly one server,
  and servers claiming together share them).
- `FENCE` is a statement the writer puts in every batch of a cluster server (`PostgresDatabase`):
  it fails the transaction (division by zero) unless the server is alive with its lease unexpired,
  and holds a share lock on the server's row until the commit, so `expire` (which must lock that
  row) waits for a batch in flight and a server declared dead can never commit again. Two servers
  therefore never both write for one table: the old owner's commits end before its tables are
  claimed, and the claimer reads them when it loads the games.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

import psycopg

from server.storage.errors import StorageError
from server.table_commands import TableConfig

#: Seconds a lease lasts, and how often a server renews its own (and looks for dead ones).
LEASE = 4.0
RENEW_EVERY = 1.0
#: Tables one server claims from the dead at a time (the next scan claims more).
CLAIM_BATCH = 64

NOW = "EXTRACT(EPOCH FROM clock_timestamp())"

FENCE = (
    "SELECT 1 / (SELECT COUNT(*) FROM (SELECT 1 FROM cluster_workers WHERE id = %s AND alive = 1"
    f" AND lease_until > {NOW} FOR SHARE) AS alive)::int"
)

#: What a statement raises when the database cannot be reached (or refused it): the caller
#: tries again later.
UNREACHABLE = (psycopg.Error, StorageError)

#: The NOTIFY channel of lobby notices (a table's listing line changed, or it closed).
LOBBY_CHANNEL = "spades_lobby"


@dataclass(frozen=True)
class Worker:
    id: str
    link: str  # host:port of its link listener
    ladder: bool


def register(conn: psycopg.Connection[Any], worker: str, link: str) -> None:
    conn.execute(
        "INSERT INTO cluster_workers (id, link, lease_until, alive, ladder, started_at)"
        f" VALUES (%s, %s, {NOW} + %s, 1, 0, {NOW})",
        (worker, link, LEASE),
    )


def renew(conn: psycopg.Connection[Any], worker: str) -> bool:
    """Extend `worker`'s lease; False if it is no longer alive (it must stop).

    A lease that lapsed is renewed as long as nobody declared its server dead (`expire`, under
    the row's lock): a server that could not renew because the database was down is not dead,
    and no table of its was claimed (only a dead server's are)."""
    row = conn.execute(
        f"UPDATE cluster_workers SET lease_until = {NOW} + %s"
        " WHERE id = %s AND alive = 1 RETURNING id",
        (LEASE, worker),
    ).fetchone()
    return row is not None


def leave(conn: psycopg.Connection[Any], worker: str) -> None:
    """A clean stop: the server's tables are closed or stored, it is gone at once."""
    conn.execute("UPDATE cluster_workers SET alive = 0, ladder = 0 WHERE id = %s", (worker,))


def expire(conn: psycopg.Connection[Any]) -> list[str]:
    """Declare dead every server whose lease ran out; their ids. (A server that has just opened
    its connection again after an outage does not ask this for a lease's time: see
    `server.cluster.node`.)"""
    rows = conn.execute(
        f"UPDATE cluster_workers SET alive = 0, ladder = 0 WHERE alive = 1 AND lease_until <= {NOW}"
        " RETURNING id"
    ).fetchall()
    return [str(r[0]) for r in rows]


def claim(conn: psycopg.Connection[Any], worker: str) -> list[str]:
    """Move up to `CLAIM_BATCH` tables of dead servers to `worker`; their ids. Also adopts the
    open tables nobody owns (a database a lone server ran before the cluster, for one)."""
    with conn.transaction():
        rows = conn.execute(
            "UPDATE cluster_tables SET worker = %s WHERE table_id IN ("
            " SELECT c.table_id FROM cluster_tables c JOIN cluster_workers w ON w.id = c.worker"
            " WHERE w.alive = 0 ORDER BY c.table_id LIMIT %s FOR UPDATE OF c SKIP LOCKED)"
            " RETURNING table_id",
            (worker, CLAIM_BATCH),
        ).fetchall()
        # Orphans: open tables with no owner row, whoever else is alive. A cluster server writes
        # its table's row before it stores the table (`own`, then the store), so a table being
        # opened is never one, and a lone server never shares the database with a cluster: these
        # are a lone server's from before, or tables stored whose row was dropped (the table
        # crashed, or its creation was cancelled once the store had it). They resume here as
        # after a restart. ON CONFLICT: each goes to one claimer.
        rows += conn.execute(
            "INSERT INTO cluster_tables (table_id, worker) SELECT t.id, %s FROM tables t"
            " WHERE t.closed_at IS NULL AND NOT EXISTS"
            " (SELECT 1 FROM cluster_tables c WHERE c.table_id = t.id) AND ("
            " EXISTS (SELECT 1 FROM games g WHERE g.table_id = t.id AND g.status = 'running')"
            " OR (t.seats IS NOT NULL AND NOT EXISTS"
            " (SELECT 1 FROM games g WHERE g.table_id = t.id)))"
            " ON CONFLICT DO NOTHING RETURNING table_id",
            (worker,),
        ).fetchall()
    return [str(r[0]) for r in rows]


def own(conn: psycopg.Connection[Any], worker: str, table_id: str) -> None:
    """`worker` opens a new table: its row, before the table runs."""
    conn.execute(
        "INSERT INTO cluster_tables (table_id, worker) VALUES (%s, %s)", (table_id, worker)
    )


def publish(
    conn: psycopg.Connection[Any], worker: str, changes: dict[str, dict[str, Any] | None]
) -> None:
    """The listing lines of `worker`'s tables that changed (None: the table closed), stored and
    announced on `LOBBY_CHANNEL` in one transaction (PostgreSQL delivers a NOTIFY at commit)."""
    with conn.transaction():
        for table_id, info in changes.items():
            if info is None:
                conn.execute(
                    "DELETE FROM cluster_tables WHERE table_id = %s AND worker = %s",
                    (table_id, worker),
                )
                notice: dict[str, Any] = {"closed": table_id, "worker": worker}
            else:
                conn.execute(
                    "UPDATE cluster_tables SET info = %s WHERE table_id = %s AND worker = %s",
                    (json.dumps(info), table_id, worker),
                )
                notice = {"info": info, "worker": worker}
            conn.execute("SELECT pg_notify(%s, %s)", (LOBBY_CHANNEL, json.dumps(notice)))


def listing(conn: psycopg.Connection[Any], worker: str) -> dict[str, tuple[str, dict[str, Any]]]:
    """Every other live server's tables: table id -> (owner, listing line)."""
    rows = conn.execute(
        "SELECT c.table_id, c.worker, c.info FROM cluster_tables c"
        " JOIN cluster_workers w ON w.id = c.worker"
        " WHERE w.alive = 1 AND c.worker != %s AND c.info IS NOT NULL",
        (worker,),
    ).fetchall()
    return {str(r[0]): (str(r[1]), json.loads(r[2])) for r in rows}


def owner_of(conn: psycopg.Connection[Any], table_id: str) -> str | None:
    row = conn.execute(
        "SELECT c.worker FROM cluster_tables c JOIN cluster_workers w ON w.id = c.worker"
        " WHERE c.table_id = %s AND w.alive = 1",
        (table_id,),
    ).fetchone()
    return None if row is None else str(row[0])


def find(conn: psycopg.Connection[Any], table_id: str) -> tuple[str, TableConfig] | None:
    """Who runs an open table (a live server), and its configuration; None if nobody does."""
    row = conn.execute(
        "SELECT c.worker, t.config FROM cluster_tables c JOIN cluster_workers w ON w.id = c.worker"
        " JOIN tables t ON t.id = c.table_id WHERE c.table_id = %s AND w.alive = 1",
        (table_id,),
    ).fetchone()
    return None if row is None else (str(row[0]), TableConfig.from_json(json.loads(row[1])))


def workers(conn: psycopg.Connection[Any]) -> list[Worker]:
    """Every live server."""
    return [
        Worker(str(r[0]), str(r[1]), bool(r[2]))
        for r in conn.execute(
            "SELECT id, link, ladder FROM cluster_workers WHERE alive = 1 ORDER BY started_at"
        )
    ]


def is_alive(conn: psycopg.Connection[Any], worker: str) -> bool:
    """Whether `worker` is a live member (registered, not declared dead, its lease running)."""
    row = conn.execute(
        f"SELECT 1 FROM cluster_workers WHERE id = %s AND alive = 1 AND lease_until > {NOW}",
        (worker,),
    ).fetchone()
    return row is not None


def run_ladder(conn: psycopg.Connection[Any], worker: str) -> None:
    """`worker` holds the ladder's lock: it runs the one ladder."""
    conn.execute("UPDATE cluster_workers SET ladder = 1 WHERE id = %s", (worker,))
