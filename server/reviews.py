"""Hand reviews for clients (`review` -> `hand_review`, docs/protocol.md "Hand review"): a finished
hand's double-dummy review, computed off every table's task by the same niced solver process the
player statistics use (`server.hand_analysis.worker_answer`, `server.dd_worker`).

A review costs seconds of CPU, so no client may spend everyone's (`Limits`):

- one review at a time per connection, at most `max_reviews_per_address` from one network address
  and `max_reviews` from everyone together: more are refused `review_busy` at once, never queued
  (a queue would only hide the wait, and hold the records);
- a record of at most `review_max_bytes` (as JSON), checked before anything else is done with it;
- a position's search at most `review_budget` positions (the engine's budget: a position past it
  is left unanswered, its cards' costs nil) and the whole hand at most `review_seconds` (the
  process is then killed and every cost is nil);
- the process runs at nice 19 and is killed with its connection.

Which hands are reviewed at all (the deal from its seed, the play finished) is
`server.review_record`'s: checked here before a slot is taken, so a refused record costs no
process, and again in the worker, which reviews only the hand that check gives.

The statistics' job stores tricks lost per account, not per card, so nothing it stored can answer a
review: each review is computed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from engine.review import NotReviewable
from protocol.errors import ErrorCode
from protocol.messages import HandReview
from server.config import Limits
from server.hand_analysis import worker_answer
from server.review_record import record_size, reviewable_hand

#: How long a client refused for the server's (or its address's) reviews is told to wait: about a
#: hand's review on a quiet machine.
BUSY_RETRY_MS = 5000

#: (the request the worker reads, seconds) -> what it answered, None past the time.
ReviewRunner = Callable[[dict[str, Any], float], Awaitable[dict[str, Any] | None]]


class ReviewRefused(Exception):
    """A `review` not carried out: `code` and a sentence (`retry_ms` for `review_busy`)."""

    def __init__(self, code: ErrorCode, message: str, retry_ms: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retry_ms = retry_ms


@dataclass(frozen=True, slots=True)
class Slot:
    """A review admitted: whose it is, released when its answer is sent (or the connection goes)."""

    connection: object
    network: str


class Reviews:
    """The server's reviews in progress and their bounds (one per server, in `SessionServices`)."""

    def __init__(self, limits: Limits, run: ReviewRunner = worker_answer) -> None:
        self.limits = limits
        self.run = run
        self.running = 0
        self._connections: set[int] = set()
        self._networks: Counter[str] = Counter()
        self.answered = 0  # reviews answered (`hand_review`)
        self.refused_busy = 0  # refused `review_busy`

    def admit(self, connection: object, network: str, record: dict[str, Any]) -> Slot:
        """Take a slot for `connection`'s review of `record`, or raise ReviewRefused (nothing is
        then held). The cheap checks come first: the record's size, then whether it is a hand the
        server reviews at all, then the slots."""
        limits = self.limits
        if limits.max_reviews < 1:
            raise ReviewRefused(ErrorCode.NOT_REVIEWABLE, "this server reviews no hands")
        try:
            size = record_size(record)
        except NotReviewable as exc:
            raise ReviewRefused(ErrorCode.NOT_REVIEWABLE, exc.message) from None
        if size > limits.review_max_bytes:
            raise ReviewRefused(
                ErrorCode.NOT_REVIEWABLE,
                f"the record is {size} bytes as JSON: at most {limits.review_max_bytes} are reviewed",
            )
        try:
            reviewable_hand(record)
        except NotReviewable as exc:
            raise ReviewRefused(ErrorCode.NOT_REVIEWABLE, exc.message) from None
        if id(connection) in self._connections:
            self.refused_busy += 1
            raise ReviewRefused(
                ErrorCode.REVIEW_BUSY,
                "this connection's previous review is not answered yet: one at a time",
            )
        if self._networks[network] >= limits.max_reviews_per_address:
            self.refused_busy += 1
            raise ReviewRefused(
                ErrorCode.REVIEW_BUSY,
                f"your address has {self._networks[network]} reviews under way, as many as it may",
                BUSY_RETRY_MS,
            )
        if self.running >= limits.max_reviews:
            self.refused_busy += 1
            raise ReviewRefused(
                ErrorCode.REVIEW_BUSY,
                f"the server is reviewing {self.running} hands, as many as it may at once",
                BUSY_RETRY_MS,
            )
        self.running += 1
        self._connections.add(id(connection))
        self._networks[network] += 1
        return Slot(connection, network)

    def release(self, slot: Slot) -> None:
        self.running -= 1
        self._connections.discard(id(slot.connection))
        self._networks[slot.network] -= 1
        if self._networks[slot.network] <= 0:
            del self._networks[slot.network]

    async def review(
        self, slot: Slot, request_id: int | None, record: dict[str, Any]
    ) -> HandReview:
        """The admitted review, answered (the slot released however it ends, cancelled too).
        Raises ReviewRefused when the worker refuses the hand."""
        limits = self.limits
        try:
            request = {"mode": "review", "record": record, "budget": limits.review_budget}
            answer = await self.run(request, limits.review_seconds)
        finally:
            self.release(slot)
        plays = record.get("plays")
        count = min(len(plays), 52) if isinstance(plays, list) else 0
        if answer is None:  # past its time: nothing is known
            self.answered += 1
            return HandReview(
                id=request_id, costs=[None] * count, budget=limits.review_budget, unanswered=count
            )
        if "error" in answer:
            raise ReviewRefused(ErrorCode.NOT_REVIEWABLE, str(answer["error"])[:200])
        self.answered += 1
        # The worker's answer is the engine's; it is still held to the reply's ranges, so a bug
        # there costs an unknown figure, never a reply the protocol refuses to send.
        dd = answer.get("double_dummy")
        costs = [_within(c, 13) for c in answer.get("costs") or []][:52]
        sides = [_within(t, 18) for t in dd] if isinstance(dd, list) and len(dd) == 2 else None
        return HandReview(
            id=request_id,
            double_dummy=None if sides is None or None in sides else [t or 0 for t in sides],
            costs=costs,
            budget=limits.review_budget,
            unanswered=costs.count(None),
        )


def _within(value: Any, top: int) -> int | None:
    """`value` when it is a count from 0 to `top`, else None (unknown)."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= top:
        return value
    return None
