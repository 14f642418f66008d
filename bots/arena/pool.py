"""Run arena games on a pool of worker processes, in order of completion, in batches sized to their cost.

Games are independent and CPU-bound, so processes (not threads); the results come back as they finish
and the caller sorts them by game index where order matters. One job runs in this process, which keeps
tracebacks simple and avoids the pool's start-up cost for small runs.

A game lasts anywhere from a fraction of a millisecond (one hand of random play) to minutes (a searching
bot), so batches are sized as the run goes: one game per task until the first come back, then about
`batch_seconds` of games per task (a task costs a few hundred microseconds of pickling and hand-over,
negligible against 50 ms), and smaller again near the end so that every worker finishes at about the
same time.
"""

import math
import multiprocessing
import multiprocessing.pool
import os
import pickle
import queue
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TypeVar

Job = TypeVar("Job")
Result = TypeVar("Result")

#: The most games one task carries, whatever they cost.
MAX_BATCH = 256


def default_jobs() -> int:
    """All the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


class JobError(RuntimeError):
    """A job's error that could not be sent back from its worker as itself: its type, message and
    traceback, as text."""


def run_batch(work: Callable[[Job], Result], batch: Sequence[Job]) -> tuple[list[Result], float]:
    """In a worker: `work` on every job of a batch, and the seconds the batch took."""
    started = time.perf_counter()
    try:
        results = [work(job) for job in batch]
    except Exception as exc:
        # The pool sends the error back pickled; one that cannot be rebuilt from its pickle (a
        # constructor of two arguments, say) kills the pool's result thread, and the run then
        # waits forever. Such an error comes back as text instead.
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:
            text = "".join(traceback.format_exception(exc)).rstrip()
            raise JobError(f"{type(exc).__name__}: {exc}\n{text}") from None
        raise
    return results, time.perf_counter() - started


class BatchSizer:
    """How many jobs the next task carries, from the time the finished ones took per job."""

    def __init__(self, processes: int, batch_seconds: float) -> None:
        self.processes = processes
        self.batch_seconds = batch_seconds
        self.seconds = 0.0
        self.jobs = 0

    def observe(self, jobs: int, seconds: float) -> None:
        self.jobs += jobs
        self.seconds += seconds

    def size(self, remaining: int) -> int:
        if not self.jobs:
            return 1
        per_job = max(self.seconds / self.jobs, 1e-6)
        wanted = max(1, min(MAX_BATCH, round(self.batch_seconds / per_job)))
        # Near the end, share what is left out so that no worker is left with a long last batch.
        fair = math.ceil(remaining / (2 * self.processes))
        return max(1, min(wanted, fair))


#: Seconds an early stop (an error, or the caller leaving) waits for the tasks in flight to come
#: back before the workers are killed.
SETTLE_SECONDS = 5.0


def _settle(
    pool: multiprocessing.pool.Pool,
    finished: queue.SimpleQueue[tuple[list[Result], float] | BaseException],
    in_flight: int,
) -> None:
    """Let the pool end cleanly where it can. `Pool.terminate` kills workers wherever they are, and a
    worker killed while it writes a result keeps the result queue's lock for ever: the pool's own
    task thread then waits on it at shutdown, and the run hangs (seen under load in
    tests/bots/test_pool.py). So the results in flight are awaited first (and dropped), for at most
    `SETTLE_SECONDS`: then no worker is writing, and the pool is closed and joined. Tasks still
    running after that (a long game) are killed as before."""
    deadline = time.monotonic() + SETTLE_SECONDS
    while in_flight:
        try:
            finished.get(timeout=max(0.0, deadline - time.monotonic()))
        except queue.Empty:
            return  # the `with` terminates the pool
        in_flight -= 1
    pool.close()
    pool.join()


def run_pool(
    work: Callable[[Job], Result],
    jobs: Iterable[Job],
    *,
    processes: int,
    batch_seconds: float = 0.05,
    initializer: Callable[[], None] | None = None,
) -> Iterator[Result]:
    """Yield `work(job)` for every job, computed on `processes` worker processes, as each finishes.

    `work` must be a module-level function (it is pickled by name). `spawn` rather than `fork`: the
    caller may hold threads (a progress bar's refresher, trio's), and a forked child inherits their locks.
    Leaving the iterator early (or an error in a job) stops the workers at once.
    """
    if processes <= 1:
        if initializer is not None:
            initializer()
        for job in jobs:
            yield work(job)
        return
    todo = list(jobs)
    sizer = BatchSizer(processes, batch_seconds)
    finished: queue.SimpleQueue[tuple[list[Result], float] | BaseException] = queue.SimpleQueue()
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes=processes, initializer=initializer) as pool:
        sent = 0
        in_flight = 0
        try:
            while sent < len(todo) or in_flight:
                # Two tasks per worker in flight: one running, one waiting, so no worker idles.
                while sent < len(todo) and in_flight < 2 * processes:
                    size = sizer.size(len(todo) - sent)
                    batch = todo[sent : sent + size]
                    sent += size
                    in_flight += 1
                    pool.apply_async(
                        run_batch,
                        (work, batch),
                        callback=finished.put,
                        error_callback=finished.put,
                    )
                outcome = finished.get()
                in_flight -= 1
                if isinstance(outcome, BaseException):
                    raise outcome
                results, seconds = outcome
                sizer.observe(len(results), seconds)
                yield from results
        finally:
            _settle(pool, finished, in_flight)
