"""What the writer needs of a database engine: `Database`, and the `Job`s it commits.

The writer (`server.storage.writer.Store`) owns the queue, the batching and the waiting; an engine
owns its connection: how a batch becomes one transaction with a savepoint per job, whether that
may run on the event loop, and its own upkeep between batches (SQLite's WAL checkpoints).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

import trio

from server.storage.tx import Tx


class Durability(StrEnum):
    """How far a committed transaction survives (for SQLite, the `synchronous` pragma in WAL mode)."""

    # A commit survives a crash or kill of the server process; an OS crash or power loss may
    # lose the last group commits (the WAL is fsynced at checkpoints, not at every commit).
    normal = "normal"
    # A commit also survives power loss: one fsync of the WAL per group commit.
    full = "full"


@dataclass(eq=False)
class Job:
    """One request to the writer: run `fn` in the batch transaction, hand back its result."""

    fn: Callable[[Tx], Any]
    done: trio.Event = field(default_factory=trio.Event)
    result: Any = None
    error: BaseException | None = None


class Database(Protocol):
    """One engine's open database, as the writer task drives it."""

    @property
    def tx(self) -> Tx:
        """The transaction object jobs are given (it works on the connection's open transaction)."""
        ...

    #: True when a batch may commit in the event loop's own thread: it never waits for the disk
    #: (SQLite under `Durability.normal`). Otherwise every batch runs in a worker thread.
    commits_inline: bool
    #: The engine's own word for its durability as it reads it back (SQLite's `synchronous`
    #: level: 1 NORMAL, 2 FULL), for the `listening` log line; None if it has none.
    synchronous: int | None

    #: Seconds between the writer's probes of the database while it has nothing to commit (so an
    #: outage is noticed, and the tables' clocks stopped, even on a quiet server); None: never
    #: (a SQLite file does not go away between batches).
    probe_every: float | None

    def probe(self) -> None:
        """Raise `StoreUnavailable` if the database cannot be reached now (a lost connection is
        opened again first); return if it can. Called between batches, never during one."""
        ...

    def commit_batch(self, jobs: Sequence[Job]) -> None:
        """Run every job's `fn(tx)` in ONE transaction, each in a savepoint of its own: a job that
        raises is rolled back alone (its `error` set: `ValueError`, `KeyError` and `StorageError`
        as raised, anything else as a `StorageError`), the others commit. If the transaction
        itself fails, nothing is written and every job gets a `StorageError`.

        Raises `StoreUnavailable` (and nothing else) when the database cannot be reached and
        nothing of the batch was committed: the writer keeps the batch and calls this again with
        the same jobs later (an engine that lost its connection mid-commit finds out first whether
        that commit was made, and if it was, returns with the jobs' results as they were)."""
        ...

    async def upkeep(self, nursery: trio.Nursery) -> None:
        """Called by the writer task after each batch: the engine may start background work in
        `nursery`, or make the writer wait (briefly) before its next batch."""
        ...

    def close(self) -> None:
        """Leave the database whole and close it (called once, after the last batch)."""
        ...
