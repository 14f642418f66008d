"""The slow token hash's own threads: one at a time each, fair between addresses, never ahead of the tables.

A token stored with the old hash (PBKDF2, `server.accounts.LEGACY_ITERATIONS`) costs about 5 ms of
CPU to check. Run in trio's shared thread pool (as it once was), 64 connections sending wrong
tokens filled that pool and every core: built-in bots think and the store commits in the same pool,
so a bot table fell from about 800 events a second to 4. Here such work goes to threads of its own
(`Hasher`: one thread), so at most one core hashes for everyone who is not in good standing, and that
thread lowers its own priority (nice 19 on Linux): the tables' threads and the event loop always run
ahead of it. `Hashers` adds a second lane at normal priority for the logins of addresses in good
standing (`server.quotas.TokenGuard.clean`), whose work is bounded without a queue (see there).

Jobs wait in a queue per address (`server.quotas.network_of`), each at most `per_address` long (a
job beyond that is refused with `HashQueueFull`: the caller answers `rate_limited`), and the thread
takes the next job from the addresses in turn (round-robin), so one address flooding the queue
delays another address's login by at most one job per address with jobs waiting, not by the whole
flood.

A thread starts with its first job and ends with `close` (the server's last act): an idle thread
waits on a queue and costs nothing.
"""

from __future__ import annotations

import os
import queue
import sys
import threading
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

import structlog
import trio

log = structlog.get_logger("server.hashing")

NICENESS = 19  # the lowest priority an unprivileged thread can give itself on Linux
# What `HashQueueFull.retry_ms` says: about one slow hash per job ahead of a retry.
JOB_MS_ESTIMATE = 20


class HashQueueFull(Exception):
    """This address already has as many jobs waiting as it may; nothing was queued."""

    def __init__(self, retry_ms: int) -> None:
        super().__init__(f"the hashing queue of this address is full; retry in {retry_ms} ms")
        self.retry_ms = retry_ms


@dataclass(eq=False)
class _Job:
    fn: Callable[[], bytes]
    done: trio.Event = field(default_factory=trio.Event)
    result: bytes | None = None
    error: BaseException | None = None


def lower_own_priority(niceness: int = NICENESS) -> None:
    """Make the calling thread the last to get a core (Linux: a thread's nice value is its own,
    set through its native id). Elsewhere nothing happens: one thread still bounds the cost."""
    if sys.platform != "linux" or niceness <= 0:
        return
    try:
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), niceness)
    except OSError as exc:  # a sandbox may forbid it; one thread still bounds the cost
        log.warning("hashing_priority_unchanged", error=str(exc))


class Hasher:
    """Runs CPU-heavy functions (token hashes) on one low-priority thread, fairly by address.

    Must be used from one trio run (the one of the first `run`); `close` ends the thread."""

    def __init__(self, per_address: int = 4, niceness: int = NICENESS) -> None:
        self.per_address = per_address
        self.niceness = niceness
        self._waiting: OrderedDict[str, deque[_Job]] = OrderedDict()  # in turn order
        self._running: _Job | None = None
        self._inbox: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False  # after `close`, jobs run in trio's threads (a server stopping)
        self.jobs_done = 0  # for tests and logs

    @property
    def native_id(self) -> int | None:
        """The hashing thread's native id once it runs (for tests of its priority)."""
        return None if self._thread is None else self._thread.native_id

    def queued(self, network: str) -> int:
        """Jobs of `network` waiting (not the one running)."""
        jobs = self._waiting.get(network)
        return 0 if jobs is None else len(jobs)

    async def run(self, network: str, fn: Callable[[], bytes]) -> bytes:
        """`fn()` on the hashing thread, after the jobs ahead of it in `network`'s turn.

        Raises `HashQueueFull` (nothing queued) when `network` has `per_address` jobs waiting.
        Cancelled while waiting, the job is dropped; while running, it finishes unheard."""
        if self._closed:  # the server is stopping: no new thread of ours
            return await trio.to_thread.run_sync(fn)
        jobs = self._waiting.get(network)
        if jobs is not None and len(jobs) >= self.per_address:
            raise HashQueueFull(JOB_MS_ESTIMATE * (len(jobs) + len(self._waiting)))
        job = _Job(fn)
        if jobs is None:
            jobs = self._waiting[network] = deque()
        jobs.append(job)
        self._feed()
        try:
            await job.done.wait()
        except BaseException:
            if not job.done.is_set():
                self._drop(network, job)
            raise
        if job.error is not None:
            raise job.error
        assert job.result is not None
        return job.result

    def close(self) -> None:
        """End the thread once it has finished the job in hand (if any); later jobs run in trio's
        worker threads. Idempotent."""
        self._closed = True
        if self._thread is not None:
            self._inbox.put(None)
            self._thread = None

    # ---------------------------------------------------------------- the trio side

    def _drop(self, network: str, job: _Job) -> None:
        jobs = self._waiting.get(network)
        if jobs is not None and job in jobs:
            jobs.remove(job)
            if not jobs:
                del self._waiting[network]

    def _feed(self) -> None:
        """Hand the next address's next job to the thread, if it is idle."""
        if self._running is not None or not self._waiting:
            return
        if self._closed:  # stopping: whoever still waits is told so, no thread is started
            for jobs in self._waiting.values():
                for job in jobs:
                    job.error = RuntimeError("the server is stopping")
                    job.done.set()
            self._waiting.clear()
            return
        network, jobs = next(iter(self._waiting.items()))
        job = jobs.popleft()
        # Round-robin: this address goes to the back of the line (or leaves it, if done).
        del self._waiting[network]
        if jobs:
            self._waiting[network] = jobs
        self._running = job
        if self._thread is None:
            token = trio.lowlevel.current_trio_token()
            self._thread = threading.Thread(
                target=self._work,
                args=(self._inbox, token),
                name=f"token-hashing-nice{self.niceness}",
                daemon=True,
            )
            self._thread.start()
        self._inbox.put(job)

    def _finished(self, job: _Job) -> None:
        """(In the trio thread) the running job is done: wake its caller, start the next."""
        self._running = None
        self.jobs_done += 1
        job.done.set()
        self._feed()

    # ---------------------------------------------------------------- the thread

    def _work(self, inbox: queue.SimpleQueue[_Job | None], token: trio.lowlevel.TrioToken) -> None:
        lower_own_priority(self.niceness)
        while True:  # bounded by `close` (None) or the trio run's end
            job = inbox.get()
            if job is None:
                return
            try:
                job.result = job.fn()
            except Exception as exc:  # handed to the caller, raised there
                job.error = exc
            try:
                token.run_sync_soon(self._finished, job)
            except trio.RunFinishedError:
                return


@dataclass(frozen=True)
class Hashers:
    """The server's two hashing lanes, each one thread.

    `suspect` (nice 19) checks every slow hash by default: it never takes a core from the tables.
    `clean` (normal priority) checks only a login from an address in good standing
    (`server.quotas.TokenGuard.clean`: no wrong token from it lately, no other login of it in
    flight): an owner's first login with an old token is then not made to wait for a core that a
    busy machine never leaves idle. What reaches `clean` is bounded: one check per address at a
    time, none for 10 minutes after its wrong token, an old token is stored anew with the cheap
    hash at its first login (so no account sends it there twice), and at most
    `Limits.clean_hash_checks_per_second` from all addresses together (`TokenGuard.take_clean_check`:
    fresh addresses are cheap on some networks)."""

    clean: Hasher
    suspect: Hasher

    @classmethod
    def make(cls, per_address: int = 4) -> Hashers:
        return cls(clean=Hasher(per_address, niceness=0), suspect=Hasher(per_address))

    def close(self) -> None:
        self.clean.close()
        self.suspect.close()
