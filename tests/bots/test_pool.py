"""The arena's worker pool: every job's result comes back once, batches follow the jobs' cost, and a
job's error stops the run."""

import pytest

from bots.arena.pool import MAX_BATCH, BatchSizer, run_pool


def square(value: int) -> int:
    if value < 0:
        raise ValueError(f"no square for {value}")
    return value * value


class TwoPartError(Exception):
    """An error whose constructor takes two arguments: pickle cannot rebuild it from its args (the
    engine's IllegalAction was one)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def refuse(value: int) -> int:
    if value == 2:
        raise TwoPartError("odd_job", f"job {value} refused")
    return value


def test_every_result_comes_back_once_from_two_workers() -> None:
    results = list(run_pool(square, range(200), processes=2, batch_seconds=0.001))
    assert sorted(results) == [value * value for value in range(200)]


def test_one_process_plays_in_order_here() -> None:
    assert list(run_pool(square, [3, 1, 2], processes=1)) == [9, 1, 4]


def test_an_error_in_a_worker_stops_the_run() -> None:
    with pytest.raises(ValueError, match="no square for -1"):
        list(run_pool(square, [1, 2, -1, 4], processes=2))


@pytest.mark.timeout(60)
def test_an_error_that_cannot_cross_processes_still_stops_the_run() -> None:
    # It used to kill the pool's result thread and leave the run waiting forever.
    with pytest.raises(RuntimeError, match=r"TwoPartError: job 2 refused"):
        list(run_pool(refuse, [1, 2, 3], processes=2))


def test_batches_follow_the_cost_of_a_job() -> None:
    sizer = BatchSizer(processes=2, batch_seconds=0.05)
    assert sizer.size(remaining=1000) == 1  # nothing measured yet
    sizer.observe(jobs=4, seconds=0.04)  # 10 ms a job: five a batch
    assert sizer.size(remaining=1000) == 5
    assert sizer.size(remaining=6) == 2  # the end is shared out between the workers
    assert sizer.size(remaining=1) == 1
    cheap = BatchSizer(processes=2, batch_seconds=0.05)
    cheap.observe(jobs=1000, seconds=0.001)
    assert cheap.size(remaining=100_000) == MAX_BATCH
    slow = BatchSizer(processes=2, batch_seconds=0.05)
    slow.observe(jobs=1, seconds=3.0)
    assert slow.size(remaining=100) == 1
