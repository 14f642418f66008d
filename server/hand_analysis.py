"""The double-dummy part of the player statistics: how many tricks each player's cards cost its
side against perfect play, for the hands there was time to analyse. Never at play's expense:

- the solver runs in a process of its own (`server.dd_worker`) at the lowest priority (`nice 19`),
  one at a time (this job is one task), so it takes only CPU the tables leave;
- each hand has a budget: positions searched (the engine's per-position limit) and wall-clock
  seconds, after which the process is killed and the hand is not analysed;
- a hand is skipped, not analysed, when the machine is busy (its load average at or above twice
  its CPU count) or when the job's bounded queue is full: the statistics' job posts to it without
  waiting, as the tables post to that one;
- what is counted is only complete analyses (every card's cost known), per account, in one
  transaction with a row saying the hand is analysed (`Tx.count_dd_hand`), so a hand counts once.

The statistics then say how many hands the figure covers (`dd_hands`); the others (`hands -
dd_hands`) were not analysed.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import structlog
import trio

from engine.review import DEFAULT_BUDGET
from server.storage import StorageError, Store

log = structlog.get_logger("server.hand_analysis")

#: Seconds one hand's analysis may take before its process is killed (the hand is not analysed).
HAND_SECONDS = 120.0

#: (game id, hand number, the hand's record, the account at each seat or None)
AnalysisJob = tuple[int, int, dict[str, Any], list[int | None]]
Analyser = Callable[[dict[str, Any]], Awaitable[list[int] | None]]


async def worker_answer(request: dict[str, Any], seconds: float) -> dict[str, Any] | None:
    """What a `server.dd_worker` process at nice 19 answers `request` (its JSON object); None when
    it took longer than `seconds` (it is killed: trio's `run_process` kills it when cancelled, as
    it is when the connection that asked goes away) or answered no object. The statistics' hands
    and the clients' `review`s (`server.reviews`) both take this one path to the solver."""
    with trio.move_on_after(seconds):
        done = await trio.run_process(
            [sys.executable, "-m", "server.dd_worker"],
            stdin=json.dumps(request).encode(),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
        try:
            answer = json.loads(done.stdout)
        except ValueError:
            return None
        return answer if isinstance(answer, dict) else None
    return None  # past its time: the process was killed


async def analyse_in_process(
    record: dict[str, Any], *, budget: int = DEFAULT_BUDGET, seconds: float = HAND_SECONDS
) -> list[int] | None:
    """Tricks each seat's cards cost, from a `server.dd_worker` process at nice 19; None when the
    hand could not be analysed whole (its budget, its time, or a record the review refuses)."""
    answer = await worker_answer({"record": record, "budget": budget}, seconds)
    if answer is None:
        return None
    lost = answer.get("lost")
    if answer.get("complete") and isinstance(lost, list) and len(lost) == 4:
        return [int(n) for n in lost]
    return None


def machine_busy() -> bool:
    """Whether the machine has no CPU to spare: its 1-minute load average at or above twice its
    CPUs (the analysis runs at nice 19, so below that it takes only what the tables leave)."""
    try:
        return os.getloadavg()[0] >= 2 * (os.cpu_count() or 1)
    except OSError:  # pragma: no cover - no load average on this platform
        return False


@dataclass
class HandAnalysis:
    """The background job: `post` from the statistics' job, `run` in the server's nursery."""

    store: Store
    analyse: Analyser = analyse_in_process
    busy: Callable[[], bool] = machine_busy
    queue_size: int = 8
    analysed: int = 0  # hands analysed whole and counted
    skipped: int = 0  # hands not analysed: busy, queue full, over budget, refused
    _pending: int = field(default=0, repr=False)

    def __post_init__(self) -> None:
        self._send, self._receive = trio.open_memory_channel[AnalysisJob](self.queue_size)
        self.idle = trio.Event()  # set while nothing is queued or running (tests)
        self.idle.set()

    def post(self, job: AnalysisJob) -> None:
        """A hand was counted: analyse it if there is room. Never waits."""
        try:
            self._send.send_nowait(job)
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            self.skipped += 1
            return
        self._pending += 1
        if self.idle.is_set():
            self.idle = trio.Event()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        async for game_id, hand_no, record, seats in self._receive:
            try:
                await self._one(game_id, hand_no, record, seats)
            finally:
                self._pending -= 1
                if self._pending == 0:
                    self.idle.set()

    async def _one(
        self, game_id: int, hand_no: int, record: dict[str, Any], seats: list[int | None]
    ) -> None:
        if self.busy():
            self.skipped += 1
            return
        lost = await self.analyse(record)
        if lost is None:
            self.skipped += 1
            return
        by_account: dict[int, tuple[int, int]] = {}  # account -> (seats held, tricks lost)
        for seat, account in enumerate(seats):
            if account is not None and seat < len(lost):
                held, tricks = by_account.get(account, (0, 0))
                by_account[account] = (held + 1, tricks + lost[seat])
        try:
            await self.store.call(lambda tx: tx.count_dd_hand(game_id, hand_no, by_account))
        except StorageError as exc:
            log.warning("dd_count_failed", game=game_id, hand=hand_no, error=str(exc))
            self.skipped += 1
            return
        self.analysed += 1


def analysable(record: Mapping[str, Any]) -> bool:
    """Only four-handed Spades is analysed (the solver's game)."""
    return record.get("game") == "spades" and record.get("players") == 4
