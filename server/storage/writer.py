"""`Store`: every request to the database goes through one writer task, with group commit.

Requests queue in a bounded channel; the writer takes everything that is waiting and commits it as
ONE transaction (group commit), so actions of many tables that arrive together cost one commit.
Each request is a function of a `Tx` (`server.storage.tx`), run in a savepoint of its own: one that
fails is rolled back alone. `await store.call(fn)` returns only once its transaction has committed:
the table sends no event about an action before it is committed.

How far a commit survives is the `Durability` setting: `normal` (the default; for SQLite, WAL with
`synchronous=NORMAL`: a committed transaction is in the WAL file when the call returns, so it
survives the server process being killed, but an OS crash or power loss may lose the last commits)
or `full` (`synchronous=FULL`: the WAL is fsynced at every commit, so a commit also survives power
loss, at the cost of one fsync on every action's path).

When the database cannot be reached (the engine raises `StoreUnavailable`: PostgreSQL stopped or
cut off, a SQLite file that cannot be written), the writer keeps the batch and tries it again,
with backoff, until it commits; `health` (`server.storage.health.StoreHealth`) says it is down
meanwhile, so the tables stop their clocks and the server tells its connections. With nothing to
commit it probes the database every `probe_every` seconds, so a quiet server notices too.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import trio

from server.storage.engine import Database, Durability, Job
from server.storage.errors import StorageError, StoreClosed, StoreUnavailable
from server.storage.health import StoreHealth
from server.storage.target import Target, is_postgres
from server.storage.tx import Tx

T = TypeVar("T")

#: Seconds between attempts at a batch while the database cannot be reached: doubling from the
#: first to the last, so play resumes within about `RETRY_MAX` of the database's return.
RETRY_FIRST = 0.05
RETRY_MAX = 0.5
#: Seconds a closing store still waits for an unreachable database before giving up its requests.
CLOSE_WAIT = 5.0


class Store:
    """The database, written by one task with group commit.

    Use `async with open_store(path) as store:`; `call` returns once its work has committed (or
    raises, leaving nothing of that request written).

    When the database `commits_inline` (SQLite under `Durability.normal`), a batch is committed in
    the trio thread itself: without an fsync a commit is a write to the WAL file, far cheaper than
    the two thread switches of handing it to a worker; the engine's upkeep (WAL checkpoints, which
    do fsync) runs off the event loop instead. Otherwise every batch goes to a worker thread, so
    the event loop never waits for the disk.
    """

    def __init__(self, database: Database, *, queue_size: int = 1024, max_batch: int = 512):
        self.database = database
        self.inline = database.commits_inline
        # The engine's durability as it reads it back (SQLite: 1 NORMAL, 2 FULL), for the log.
        self.synchronous = database.synchronous
        self._send, self._receive = trio.open_memory_channel[Job](queue_size)
        self._max_batch = max_batch
        self.batches = 0  # committed transactions, for tests and stats
        self.jobs = 0
        # Down while a batch cannot be committed for want of the database (`StoreUnavailable`).
        self.health = StoreHealth()
        self._closing = False
        # False while the database cannot be reached (kept from `health`: a batch that found it
        # gone, until one commits again); /readyz reads it (server.health).
        self.reachable = True
        self.health.watch(self._set_reachable)
        # Told each batch's commit time in seconds (the server's metrics histogram), if set.
        self.on_commit: Callable[[float], None] | None = None

    def _set_reachable(self, available: bool) -> None:
        self.reachable = available

    @property
    def queued(self) -> int:
        """Requests waiting for the writer (not yet in a batch)."""
        return self._send.statistics().current_buffer_used

    async def call(self, fn: Callable[[Tx], T]) -> T:
        """Run `fn(tx)` inside the next batch transaction and return its result once committed.

        Raises what `fn` raised if it was a `ValueError`, `KeyError` or `StorageError` (anything
        else becomes a `StorageError`); nothing of `fn`'s is written then. `fn` runs in the writer,
        possibly in a worker thread: it must not touch trio or the caller's state, only `tx` and
        the values it closed over.

        A caller cancelled while it waits still waits for the commit, then gets `Cancelled`: the
        write is on disk but its result is lost to the caller. Code that must account for what it
        committed (a table counting its actions) should not wait under a scope that can be
        cancelled meanwhile.
        """
        job = Job(fn)
        try:
            try:
                # Queued without yielding when there is room (nearly always): the wait below is
                # the caller's one pause per request.
                self._send.send_nowait(job)
            except trio.WouldBlock:
                await self._send.send(job)
        except (trio.ClosedResourceError, trio.BrokenResourceError) as exc:
            raise StoreClosed("the store is shutting down") from exc
        # The write is shielded from our caller's cancellation by design: once queued it will commit,
        # and we wait for it so that "returned" always means "on disk". (The shield is raised only
        # if a cancellation arrives: a shielded scope for every request costs every action.)
        try:
            await job.done.wait()
        except trio.Cancelled:
            with trio.CancelScope(shield=True):
                await job.done.wait()
            raise
        if job.error is not None:
            raise job.error
        return job.result  # type: ignore[no-any-return]

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """The writer task: until `close()`, take every waiting job and commit them together."""
        task_status.started()
        # Shielded: a cancelled server still commits what it queued; only close() ends the loop.
        with trio.CancelScope(shield=True):
            async with trio.open_nursery() as nursery:
                await self._drain(nursery)

    async def _drain(self, nursery: trio.Nursery) -> None:
        database = self.database
        async with self._receive:
            while True:
                try:
                    first = await self._next_request()
                except trio.EndOfChannel:
                    return
                if first is None:
                    continue  # a probe instead: nothing was waiting
                batch = [first]
                while len(batch) < self._max_batch:
                    try:
                        batch.append(self._receive.receive_nowait())
                    except (trio.WouldBlock, trio.EndOfChannel):
                        break
                started = time.perf_counter()
                try:
                    await self._commit(batch)
                except BaseException as exc:  # pragma: no cover - a bug, but never strand a waiter
                    for job in batch:
                        job.error = StorageError(f"writer failed: {exc!r}")
                    raise
                finally:
                    if self.on_commit is not None:
                        self.on_commit(time.perf_counter() - started)
                    self.batches += 1
                    self.jobs += len(batch)
                    for job in batch:
                        job.done.set()
                await database.upkeep(nursery)

    async def _next_request(self) -> Job | None:
        """The next request; None after probing the database instead, when nothing came for the
        engine's `probe_every` seconds (or sooner, while it is down): so an outage is noticed,
        and told, on a quiet server too, and its end without waiting for a request."""
        every = self.database.probe_every
        if every is None:
            return await self._receive.receive()
        if not self.health.available:
            every = RETRY_MAX
        with trio.move_on_after(every):
            return await self._receive.receive()
        try:
            await trio.to_thread.run_sync(self.database.probe)
        except StoreUnavailable as exc:
            self.health.down(str(exc))
        else:
            self.health.up()
        return None

    async def _commit(self, batch: list[Job]) -> None:
        """Commit `batch`, trying it again while the database cannot be reached: nothing in it is
        answered before it is stored, so its callers (and their tables) wait meanwhile. Once the
        store is closing, an outage is waited out for `CLOSE_WAIT` seconds at most; the requests
        still waiting then get `StoreUnavailable` (nothing of them was written)."""
        database = self.database
        delay = RETRY_FIRST
        gave_up_at: float | None = None
        while True:
            try:
                if self.inline:
                    database.commit_batch(batch)
                else:
                    await trio.to_thread.run_sync(database.commit_batch, batch)
            except StoreUnavailable as exc:
                self.health.down(str(exc))
                now = trio.current_time()
                if self._closing:
                    gave_up_at = now + CLOSE_WAIT if gave_up_at is None else gave_up_at
                    if now >= gave_up_at:
                        for job in batch:
                            job.result = None
                            job.error = StoreUnavailable(
                                f"not written: the database is unreachable ({exc})"
                            )
                        return
                await trio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)
                continue
            self.health.up()
            return

    def close(self) -> None:
        """Stop accepting requests; the writer finishes those already queued, then returns."""
        self._closing = True
        self._send.close()


def open_database(
    target: Target, durability: Durability, fence: tuple[str, tuple[Any, ...]] | None = None
) -> Database:
    """The engine `target` names, opened and migrated for a writer (blocking: a worker thread)."""
    if is_postgres(target):
        # psycopg is loaded only for PostgreSQL.
        from server.storage.postgres import open_for_serving as open_postgres

        return open_postgres(str(target), durability, fence=fence)
    if fence is not None:
        raise StorageError("several servers share a PostgreSQL database, not a SQLite file")
    from server.storage.sqlite import open_for_serving as open_sqlite

    return open_sqlite(target, durability)


@asynccontextmanager
async def open_store(
    target: Target,
    durability: Durability = Durability.normal,
    *,
    fence: tuple[str, tuple[Any, ...]] | None = None,
) -> AsyncIterator[Store]:
    """`async with open_store(target) as store:` opens and migrates the database and runs the
    writer. `target` is a SQLite file's path (its lock is taken: one server per file), `":memory:"`
    (a private database, for tests) or a PostgreSQL URL (`postgresql://user@host:port/db`, which
    several servers may share).

    Raises `DatabaseInUse` if another server holds the SQLite file, `DatabaseFolderMissing`,
    `NotADatabase`, `SchemaTooNew`, `DatabaseUnreachable` (PostgreSQL) or another
    `StorageError` if it cannot be opened; nothing is held then. On exit (also by cancellation or
    error) the writer first commits every queued request, then the database is left whole (for
    SQLite: the WAL checkpointed and truncated), the connection closed and the lock released.

    `fence` (PostgreSQL only) makes this the store of one server of a cluster: see
    `server.storage.postgres.open_for_serving`.
    """
    database = await trio.to_thread.run_sync(open_database, target, durability, fence)
    store = Store(database)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(store.run)
            try:
                yield store
            finally:
                store.close()
    finally:
        with trio.CancelScope(shield=True):
            await trio.to_thread.run_sync(database.close)
