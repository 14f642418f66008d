"""The token-hashing thread (`server.hashing.Hasher`): one job at a time, on one thread of its own
at the lowest priority, taken from the addresses in turn, each address's queue bounded."""

from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest
import trio
import trio.testing

from server.hashing import NICENESS, Hasher, Hashers, HashQueueFull


class Recorder:
    """Jobs that note their name, thread and how many run at once; the first waits for `gate`."""

    def __init__(self) -> None:
        self.order: list[str] = []
        self.threads: set[int] = set()
        self.running = 0
        self.most_at_once = 0
        self.lock = threading.Lock()
        self.gate = threading.Event()
        self.held = threading.Event()  # set once the held job is running

    def job(self, name: str, *, hold: bool = False) -> bytes:
        with self.lock:
            self.running += 1
            self.most_at_once = max(self.most_at_once, self.running)
            self.threads.add(threading.get_native_id())
        if hold:
            self.held.set()
            assert self.gate.wait(10), "the test never opened the gate"
        with self.lock:
            self.running -= 1
            self.order.append(name)
        return name.encode()

    async def wait_held(self) -> None:
        """Until the held job runs on the hashing thread."""
        assert await trio.to_thread.run_sync(self.held.wait, 10)


async def wait_queued(hasher: Hasher, network: str, count: int) -> None:
    """Until every task started so far waits (its job queued), then check `network`'s count."""
    await trio.testing.wait_all_tasks_blocked()
    assert hasher.queued(network) == count


async def test_jobs_run_one_at_a_time_in_turn_between_addresses() -> None:
    hasher = Hasher(per_address=8)
    rec = Recorder()
    results: dict[str, bytes] = {}

    async def submit(network: str, name: str, hold: bool = False) -> None:
        results[name] = await hasher.run(network, lambda: rec.job(name, hold=hold))

    try:
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(submit, "flood", "f0", True)  # holds the thread
                await rec.wait_held()
                for i in range(1, 6):  # the flood queues five more ...
                    nursery.start_soon(submit, "flood", f"f{i}")
                    await wait_queued(hasher, "flood", i)
                nursery.start_soon(submit, "other", "o1")  # ... then another address one
                await wait_queued(hasher, "other", 1)
                rec.gate.set()
    finally:
        hasher.close()
    # The other address waited for the job in hand and one flood job, not for the whole flood.
    assert rec.order == ["f0", "f1", "o1", "f2", "f3", "f4", "f5"], rec.order
    assert results["o1"] == b"o1"
    assert rec.most_at_once == 1
    assert len(rec.threads) == 1 and threading.get_native_id() not in rec.threads


async def test_an_address_queue_is_bounded() -> None:
    hasher = Hasher(per_address=2)
    rec = Recorder()
    try:
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(hasher.run, "a", lambda: rec.job("held", hold=True))
                await rec.wait_held()
                for i in range(2):
                    nursery.start_soon(hasher.run, "a", lambda i=i: rec.job(f"a{i}"))
                    await wait_queued(hasher, "a", i + 1)
                with pytest.raises(HashQueueFull) as full:
                    await hasher.run("a", lambda: rec.job("too many"))
                assert full.value.retry_ms > 0
                # Another address still gets in.
                nursery.start_soon(hasher.run, "b", lambda: rec.job("b0"))
                await wait_queued(hasher, "b", 1)
                rec.gate.set()
    finally:
        hasher.close()
    assert "too many" not in rec.order and "b0" in rec.order


async def test_a_cancelled_waiting_job_never_runs() -> None:
    hasher = Hasher()
    rec = Recorder()
    try:
        with trio.fail_after(10):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(hasher.run, "a", lambda: rec.job("held", hold=True))
                await rec.wait_held()
                with trio.CancelScope() as scope:
                    scope.deadline = trio.current_time() + 0.05
                    await hasher.run("a", lambda: rec.job("cancelled"))
                assert hasher.queued("a") == 0
                rec.gate.set()
            assert await hasher.run("a", lambda: rec.job("after")) == b"after"
    finally:
        hasher.close()
    assert rec.order == ["held", "after"]


async def test_an_error_in_a_job_reaches_its_caller_and_the_thread_goes_on() -> None:
    hasher = Hasher()

    def broken() -> bytes:
        raise ValueError("bad salt")

    try:
        with trio.fail_after(10):
            with pytest.raises(ValueError, match="bad salt"):
                await hasher.run("a", broken)
            assert await hasher.run("a", lambda: b"ok") == b"ok"
    finally:
        hasher.close()


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own nice value is Linux's")
async def test_the_hashing_thread_runs_at_the_lowest_priority() -> None:
    hasher = Hasher()
    seen: list[int] = []
    loop_nice = nice_of_thread(threading.get_native_id())

    def nice_of_this_thread() -> bytes:
        seen.append(nice_of_thread(threading.get_native_id()))
        return b""

    try:
        with trio.fail_after(10):
            await hasher.run("a", nice_of_this_thread)
    finally:
        hasher.close()
    assert seen == [NICENESS]
    # The event loop's thread (and so the tables) keeps its own priority.
    assert nice_of_thread(threading.get_native_id()) == loop_nice


def nice_of_thread(native_id: int) -> int:
    """A thread's nice value, from /proc (field 19 of its stat line)."""
    stat = Path(f"/proc/self/task/{native_id}/stat").read_text()
    return int(stat.rsplit(")", 1)[1].split()[16])


@pytest.mark.skipif(sys.platform != "linux", reason="a thread's own nice value is Linux's")
async def test_the_clean_lane_keeps_the_normal_priority_and_the_suspect_lane_the_lowest() -> None:
    hashers = Hashers.make()
    seen: dict[str, int] = {}
    loop_nice = nice_of_thread(threading.get_native_id())

    def note(lane: str) -> bytes:
        seen[lane] = nice_of_thread(threading.get_native_id())
        return b""

    try:
        with trio.fail_after(10):
            await hashers.clean.run("a", lambda: note("clean"))
            await hashers.suspect.run("a", lambda: note("suspect"))
    finally:
        hashers.close()
    assert seen == {"clean": loop_nice, "suspect": NICENESS}
    assert hashers.clean.native_id is None and hashers.suspect.native_id is None  # closed


async def test_after_close_no_thread_of_its_own_is_started() -> None:
    hasher = Hasher()
    hasher.close()
    with trio.fail_after(10):
        assert await hasher.run("a", lambda: b"ok") == b"ok"
    assert hasher.native_id is None
