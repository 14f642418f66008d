"""The PostgreSQL engine: connecting, migrating, and `PostgresDatabase`, the writer's connection.

psycopg 3's synchronous connections, each driven by one thread at a time: the writer runs every
batch in a worker thread (`commits_inline` is False: a commit waits for the network and the
server), commands run theirs in their own thread. Its async API is asyncio's; trio is served by
this, as the `Database` protocol already hands batches to a thread.

Durability, as `Durability` promises it: `normal` commits with `synchronous_commit = off` (the
commit is the server's, and every other connection sees it, when `call` returns, so a killed
spades-server loses nothing; a crash of the PostgreSQL machine may lose its last fraction of a
second), `full` with `on` (the commit is flushed to PostgreSQL's WAL before `call` returns).

Several servers (workers, machines) may share one database: PostgreSQL serialises their writes,
there is no lock file, and the migrations take an advisory lock so two servers starting together
apply each once.
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import socket
import time
from collections.abc import Sequence
from typing import Any

import psycopg
import structlog
import trio

from server.storage.dialect import POSTGRES
from server.storage.engine import Durability, Job
from server.storage.errors import PostgresInUse, SchemaTooNew, StorageError, StoreUnavailable
from server.storage.postgres_driver import postgres_tx
from server.storage.schema import SCHEMA_VERSION, migrations, statements
from server.storage.target import shown

log = structlog.get_logger("server.storage")


class _QuietCutOff(logging.Filter):
    """psycopg logs (to plain stderr, whatever our log format) that it could not end a pipeline
    whose connection was lost: our own log already says so (`store_unavailable`), in its format."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("error ignored terminating")


logging.getLogger("psycopg").addFilter(_QuietCutOff())

#: The advisory lock every migration takes (any fixed number: "spades" in ASCII).
MIGRATION_LOCK = 0x737061646573
#: The advisory lock (key pair) a serving server holds: exclusively for a lone server, shared by
#: the workers of one cluster, so a lone server and a cluster never run on one database.
SERVING_LOCK = (0x73706164, 1)
#: The advisory lock a `serve --workers N` supervisor holds for as long as it runs: exclusively, so a
#: second supervisor is refused (it would serve the same lobby on a port of its own, unnoticed);
#: shared by the supervisors of `serve --cluster --workers N`, one on each machine of a cluster.
SUPERVISOR_LOCK = (0x73706164, 2)
#: Seconds to wait for the server to answer a connection attempt.
CONNECT_TIMEOUT = 10
#: Seconds after a reconnection during which a refused fence is taken for a lease that lapsed in
#: the outage, not yet renewed (the batch waits), rather than for a server declared dead.
LEASE_REGAINED = 10.0

_MIGRATIONS = migrations(POSTGRES)


class DatabaseUnreachable(StorageError):
    """PostgreSQL could not be reached, or refused us (no such database, user or password)."""

    def __init__(self, url: str, error: BaseException) -> None:
        # The driver may quote the URL it could not parse: never with its password.
        reason = " ".join(str(error).replace(url, shown(url)).split()) or type(error).__name__
        super().__init__(f"cannot connect to PostgreSQL at {shown(url)}: {reason}")
        self.url = shown(url)


def connect(url: str, *, purpose: str = "spades-server") -> psycopg.Connection[Any]:
    """An autocommit connection to `url` (transactions are begun explicitly); raises
    `DatabaseUnreachable` with the server's reason when it cannot be had."""
    try:
        return psycopg.connect(
            url, autocommit=True, connect_timeout=CONNECT_TIMEOUT, application_name=purpose
        )
    except psycopg.Error as exc:
        raise DatabaseUnreachable(url, exc) from None


def schema_version(conn: psycopg.Connection[Any]) -> int:
    """The version `migrate` wrote, 0 for a database it never touched."""
    row = conn.execute("SELECT to_regclass('spades_schema') IS NOT NULL").fetchone()
    if row is None or not row[0]:
        return 0
    found = conn.execute("SELECT version FROM spades_schema").fetchone()
    return 0 if found is None else int(found[0])


def migrate(conn: psycopg.Connection[Any], url: str, *, to: int = SCHEMA_VERSION) -> int:
    """Bring the schema to `SCHEMA_VERSION` (or only as far as version `to`, for a copy of an
    older database: `server.storage.dbcopy`); returns the version found before migrating.

    Each migration is one transaction with its version bump (PostgreSQL's DDL is transactional),
    under an advisory lock, reading the version again inside: servers starting together apply
    each migration once, and a crash mid-way leaves a consistent older version.
    """
    found = schema_version(conn)
    if found > SCHEMA_VERSION:
        raise SchemaTooNew(shown(url), found, SCHEMA_VERSION)
    for version in range(found, min(to, SCHEMA_VERSION)):
        try:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))
                conn.execute("CREATE TABLE IF NOT EXISTS spades_schema (version INTEGER NOT NULL)")
                current = schema_version(conn)
                if current > version:
                    continue  # another server applied this one meanwhile
                for statement in statements(_MIGRATIONS[version]):
                    conn.execute(statement)
                conn.execute("DELETE FROM spades_schema")
                conn.execute("INSERT INTO spades_schema (version) VALUES (%s)", (version + 1,))
        except psycopg.Error as exc:
            raise StorageError(
                f"cannot migrate the PostgreSQL database {shown(url)} to version {version + 1}:"
                f" {' '.join(str(exc).split())}"
            ) from None
        log.info("schema_migrated", to_version=version + 1, db=shown(url))
    if found > 0 and schema_version(conn) > SCHEMA_VERSION:  # pragma: no cover - a race
        raise SchemaTooNew(shown(url), schema_version(conn), SCHEMA_VERSION)
    return found


def _holder_name() -> str:
    """How this process names itself to PostgreSQL (`application_name`, at most 63 bytes)."""
    return f"spades-server pid {os.getpid()} on {socket.gethostname()}"[:63]


def hold_serving_lock(url: str, *, shared: bool) -> psycopg.Connection[Any]:
    """A connection holding the serving lock: alone (`shared=False`, a lone server) or beside the
    other workers of a cluster (`shared=True`). It goes with the connection, so a killed server
    lets go. Raises `PostgresInUse`, naming the holder, when it cannot be had."""
    conn = connect(url, purpose=_holder_name())
    kind = "pg_try_advisory_lock_shared" if shared else "pg_try_advisory_lock"
    row = conn.execute(f"SELECT {kind}(%s, %s)", SERVING_LOCK).fetchone()
    if row is not None and row[0]:
        return conn
    holders = conn.execute(
        "SELECT a.application_name, l.mode FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.classid = %s AND l.objid = %s AND l.granted"
        " ORDER BY a.backend_start LIMIT 1",
        SERVING_LOCK,
    ).fetchone()
    conn.close()
    holder = None if holders is None else str(holders[0]) or None
    if shared:
        detail = ", which serves it alone (start it as a worker too, or stop it)"
    elif holders is not None and holders[1] == "ShareLock":
        detail = " and the other workers of a cluster (serve it with --workers, or stop them)"
    else:
        detail = ""
    raise PostgresInUse(shown(url), holder, detail)


def hold_supervisor_lock(url: str, address: str, *, shared: bool) -> psycopg.Connection[Any]:
    """A connection holding the supervisor lock for this process, which listens at `address`
    (`host:port`, as its `listening` line shows it): alone (`shared=False`, `--workers`), or beside
    the supervisors of other machines of a cluster (`shared=True`, `--cluster --workers`). It goes
    with the connection, so a killed supervisor lets go. Raises `PostgresInUse` naming a supervisor
    that holds it (its pid, address and machine: they are its `application_name`), or
    `DatabaseUnreachable`."""
    name = f"spades-server --workers pid {os.getpid()} at {address} on {socket.gethostname()}"
    conn = connect(url, purpose=name[:63])
    kind = "pg_try_advisory_lock_shared" if shared else "pg_try_advisory_lock"
    row = conn.execute(f"SELECT {kind}(%s, %s)", SUPERVISOR_LOCK).fetchone()
    if row is not None and row[0]:
        return conn
    holder = conn.execute(
        "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid"
        " WHERE l.locktype = 'advisory' AND l.classid = %s AND l.objid = %s AND l.granted"
        " ORDER BY a.backend_start LIMIT 1",
        SUPERVISOR_LOCK,
    ).fetchone()
    conn.close()
    if shared:
        detail = ", which supervises its workers alone (stop it, or start both with --cluster)"
    else:
        detail = (
            ", which supervises this database's workers (one --workers per database; machines of"
            " a cluster each start theirs with --cluster)"
        )
    raise PostgresInUse(shown(url), None if holder is None else str(holder[0]) or None, detail)


def release_serving_lock(lock: psycopg.Connection[Any]) -> None:
    """Let go of the serving lock, then close its connection. Unlocked first because PostgreSQL
    ends a session's backend (and only then frees its locks) a moment after the client hangs up:
    a server started right after this one stopped would find the database still held."""
    with contextlib.suppress(psycopg.Error):
        lock.execute("SELECT pg_advisory_unlock_all()")
    lock.close()


#: A statement (and its parameters) a cluster server's writer runs first in every batch: it fails
#: the transaction unless the server's lease is good (`server.cluster.membership.FENCE`).
Fence = tuple[str, tuple[Any, ...]]


def open_for_serving(
    url: str, durability: Durability, *, fence: Fence | None = None
) -> PostgresDatabase:
    """Take the serving lock, connect and migrate for the writer (blocking: call it in a worker
    thread). With a `fence` the server is one of a cluster: the lock is shared with the others,
    and every batch runs the fence first. Raises `PostgresInUse`, `DatabaseUnreachable`,
    `SchemaTooNew` or another `StorageError`; nothing is held then."""
    lock = hold_serving_lock(url, shared=fence is not None)
    try:
        conn = connect(url)
    except BaseException:
        release_serving_lock(lock)
        raise
    try:
        migrate(conn, url)
        return PostgresDatabase(conn, url, durability, lock, fence)
    except BaseException:
        conn.close()
        release_serving_lock(lock)
        raise


def _job_error(exc: Exception) -> BaseException:
    if isinstance(exc, StorageError | KeyError | ValueError):
        return exc
    return StorageError(f"write failed: {' '.join(str(exc).split())}")


class PostgresDatabase:
    """The writer's PostgreSQL connection (a `server.storage.engine.Database`).

    A batch is first sent pipelined, without a savepoint per job: the writes go out together and
    the commit waits for the server once, not once per statement. If anything in it fails (a job
    raising, a statement refused), the whole transaction is rolled back and the batch runs again
    job by job, each in its own savepoint, so the one that failed is rolled back alone, as the
    protocol asks. (A job is a function of the `Tx` and the values it closed over, so running it
    again writes the same thing.)
    """

    commits_inline = False
    synchronous: int | None = None  # SQLite's word: PostgreSQL's is `synchronous_commit`
    probe_every: float | None = 1.0

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        url: str,
        durability: Durability,
        lock: psycopg.Connection[Any] | None = None,
        fence: Fence | None = None,
    ) -> None:
        self.conn = conn
        self.lock = lock  # the connection holding the serving lock (`hold_serving_lock`)
        self.fence = fence
        self.url = url
        self.durability = Durability(durability)
        self.tx = postgres_tx(conn)
        self._configure()
        self.retried = 0  # batches run again job by job, for tests and stats
        # The transaction id of a batch whose connection was lost after it was sent (None: no
        # such batch, or one that never reached COMMIT).
        self._unsettled: int | None = None
        self.reconnected_at = -math.inf  # time.monotonic() of the last reconnection

    def _configure(self) -> None:
        level = "on" if self.durability is Durability.full else "off"
        self.conn.execute(f"SET synchronous_commit = {level}")
        if self.fence is not None:
            # A stalled server (stopped, swapped out) must not hold its fence's lock, which the
            # others need to declare it dead, for longer than this.
            self.conn.execute("SET idle_in_transaction_session_timeout = '10s'")

    # ---------------------------------------------------------------- commits

    def commit_batch(self, jobs: Sequence[Job]) -> None:
        self._reconnect_if_lost()
        if self._unsettled is not None and self._cut_off_batch_committed():
            return  # the batch was committed before its answer was lost: its results stand
        tried = self._pipelined(jobs)
        if tried is None:
            return
        self.retried += 1
        if tried:
            # Whatever failed, that transaction may have been committed (psycopg may report a
            # lost connection only after the COMMIT went out): asked, not guessed.
            self._unsettled = tried
            if self._cut_off_batch_committed(cut_off=False):
                return
        self._job_by_job(jobs)

    def probe(self) -> None:
        self._reconnect_if_lost()
        try:
            self.conn.execute("SELECT 1")
        except psycopg.Error as exc:
            if self.conn.broken or self.conn.closed:
                raise StoreUnavailable(
                    f"the connection to PostgreSQL was lost: {' '.join(str(exc).split())}"
                ) from None

    def _pipelined(self, jobs: Sequence[Job]) -> int | None:
        """None once committed; else the id of the transaction it began (0 if none yet)."""
        conn = self.conn
        xid: int | None = None
        try:
            xid = self._begin()
            with conn.pipeline():
                if self.fence is not None:
                    conn.execute(*self.fence)
                for job in jobs:
                    job.result = job.fn(self.tx)
                conn.execute("COMMIT")
        except Exception as exc:  # any failure: roll back, run again job by job
            self._if_lost(exc, xid)
            self._roll_back()
            for job in jobs:
                job.result = None
            return xid or 0
        return None

    def _job_by_job(self, jobs: Sequence[Job]) -> None:
        conn = self.conn
        tx = self.tx
        xid: int | None = None
        try:
            xid = self._begin()
            if self.fence is not None:
                self._run_fence()
            for job in jobs:
                conn.execute("SAVEPOINT job")
                try:
                    job.result = job.fn(tx)
                except Exception as exc:
                    self._if_lost(exc, xid)
                    conn.execute("ROLLBACK TO SAVEPOINT job")
                    job.result = None
                    job.error = _job_error(exc)
                conn.execute("RELEASE SAVEPOINT job")
            conn.execute("COMMIT")
        except psycopg.Error as exc:
            self._if_lost(exc, xid)
            self._roll_back()
            for job in jobs:
                job.result = None
                job.error = StorageError(f"transaction failed: {' '.join(str(exc).split())}")

    def _begin(self) -> int:
        """Begin the batch's transaction; its id, known before its COMMIT is sent: if the
        connection is then lost, `txid_status` on a new one says whether the commit was made.
        One round trip, before the pipeline (a result read inside one would end psycopg's
        pipeline early, and a server-side cursor could then not be closed in it)."""
        cur = self.conn.execute("BEGIN; SELECT txid_current()")
        cur.nextset()
        row = cur.fetchone()
        assert row is not None
        return int(row[0])

    def _run_fence(self) -> None:
        """The fence, alone (job by job). Refused within `LEASE_REGAINED` seconds of a reconnect,
        it is the outage's doing: the lease lapsed while nobody could renew it, and the server's
        node renews it within a second (if the server was declared dead meanwhile, the node
        stops it instead), so the batch waits for that as for the database itself."""
        try:
            self.conn.execute(*self.fence)  # type: ignore[misc]
        except psycopg.errors.DivisionByZero:
            if time.monotonic() - self.reconnected_at < LEASE_REGAINED:
                self._roll_back()
                raise StoreUnavailable(
                    "the database is back but this server's lease is not renewed yet"
                ) from None
            raise

    def _if_lost(self, exc: BaseException, xid: int | None) -> None:
        """Raise `StoreUnavailable` if `exc` came from losing the connection. The batch's
        transaction id is kept when it was known: its commit may have been made before the
        answer was lost, which the next attempt asks first."""
        if not (self.conn.broken or self.conn.closed):
            return
        self._unsettled = xid  # None: its COMMIT was never sent, so nothing was committed
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise StoreUnavailable(f"the connection to PostgreSQL was lost: {reason}") from None

    def _cut_off_batch_committed(self, *, cut_off: bool = True) -> bool:
        """Whether the batch whose connection was lost mid-commit was committed (then its jobs'
        results and errors are as that run left them). Raises `StoreUnavailable` while that
        cannot be told (the old connection's transaction is still in progress on the server)."""
        xid = self._unsettled
        try:
            row = self.conn.execute("SELECT txid_status(%s)", (xid,)).fetchone()
            status = None if row is None else row[0]
        except psycopg.Error as exc:
            self._if_lost(exc, xid)
            # "in the future": PostgreSQL crashed and lost it (an asynchronous commit), or it is
            # too old to tell (never, this soon): either way not ours to count as written.
            status = None
        if status == "in progress":
            raise StoreUnavailable("the transaction cut off is still in progress on PostgreSQL")
        self._unsettled = None
        committed = status == "committed"
        if cut_off or committed:
            log.warning("batch_cut_off", xid=xid, committed=committed)
        return committed

    def _roll_back(self) -> None:
        if self.conn.broken or self.conn.closed:
            return
        try:
            if self.conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
                self.conn.execute("ROLLBACK")
        except psycopg.Error:
            pass  # a connection that fails here is found lost before the next batch

    def _reconnect_if_lost(self) -> None:
        """A connection PostgreSQL dropped (a restart, a network cut) is opened again before the
        next batch (and the serving lock, which went with its own connection, taken again);
        `StoreUnavailable` while it cannot be (the writer keeps the batch and tries again)."""
        if not (self.conn.broken or self.conn.closed):
            return
        try:
            conn = connect(self.url)
        except StorageError as exc:
            raise StoreUnavailable(str(exc)) from None
        log.warning("database_reconnected", db=shown(self.url))
        with contextlib.suppress(psycopg.Error):
            self.conn.close()
        self.conn = conn
        self.tx = postgres_tx(conn)
        self.reconnected_at = time.monotonic()
        try:
            self._configure()
        except psycopg.Error as exc:
            raise StoreUnavailable(f"the connection to PostgreSQL was lost: {exc}") from None
        self._hold_lock_again()

    def _hold_lock_again(self) -> None:
        if self.lock is None:
            return
        try:
            self.lock.execute("SELECT 1")
            return  # still held
        except psycopg.Error:
            pass
        with contextlib.suppress(psycopg.Error):
            self.lock.close()
        try:
            self.lock = hold_serving_lock(self.url, shared=self.fence is not None)
        except PostgresInUse as exc:  # another server took it meanwhile: say so, serve on
            self.lock = None
            log.error("serving_lock_lost", error=str(exc))
        except StorageError as exc:
            raise StoreUnavailable(str(exc)) from None

    async def upkeep(self, nursery: trio.Nursery) -> None:
        """Nothing between batches: PostgreSQL checkpoints and vacuums by itself."""

    def close(self) -> None:
        try:
            self.conn.close()
        finally:
            if self.lock is not None:
                release_serving_lock(self.lock)
