"""Run arena games on a pool of worker processes, in order of completion, with a progress callback.

Games are independent and CPU-bound, so processes (not threads) and `imap_unordered`: the results come
back as they finish and the caller sorts them by game index where order matters. One job runs in this
process, which keeps tracebacks simple and avoids the pool's start-up cost for small runs.
"""

import multiprocessing
import os
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

Job = TypeVar("Job")
Result = TypeVar("Result")


def default_jobs() -> int:
    """All the cores this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not on Linux
        return max(1, os.cpu_count() or 1)


def run_pool(
    work: Callable[[Job], Result],
    jobs: Iterable[Job],
    *,
    processes: int,
    chunksize: int = 1,
    initializer: Callable[[], None] | None = None,
) -> Iterator[Result]:
    """Yield `work(job)` for every job, computed on `processes` worker processes, as each finishes.

    `work` must be a module-level function (it is pickled by name). `spawn` rather than `fork`: the
    caller may hold threads (a progress bar's refresher, trio's), and a forked child inherits their locks.
    """
    if processes <= 1:
        if initializer is not None:
            initializer()
        for job in jobs:
            yield work(job)
        return
    context = multiprocessing.get_context("spawn")
    with context.Pool(processes=processes, initializer=initializer) as pool:
        yield from pool.imap_unordered(work, jobs, chunksize=chunksize)
