"""The double-dummy analysis of one hand, in a process of its own at the lowest priority:
`python -m server.dd_worker` reads `{"record": ..., "budget": N}` (JSON) on stdin and writes
`{"lost": [four counts], "complete": bool}` or `{"error": "..."}` on stdout, then exits. With
`"mode": "review"` (the `review` request, `server.reviews`) the record is one a client sent: it is
checked as `server.review_record` says (its deal from its seed, its play finished) and the answer
is each card's cost, `{"double_dummy": [two counts] | null, "costs": [...], "unanswered": N}`.

The server (`server.hand_analysis`) starts one for a hand, waits for it at most its time budget
and kills it after, so the solver's CPU never competes with the tables at equal priority and a
hand that takes too long costs nothing but its budget. `budget` is the engine's per-position limit
(`engine.review.Reviewer`): a position past it is left unanalysed, and so is the hand.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any

from engine.errors import EngineError
from engine.review import PlayedHand, Reviewer
from engine.ruleset import Ruleset
from server.review_record import reviewable_hand


def analyse(request: Any) -> dict[str, Any]:
    """Tricks each seat's cards cost its side, double-dummy, and whether every card was analysed."""
    if not isinstance(request, dict) or not isinstance(request.get("record"), dict):
        return {"error": "the request is {'record': {...}, 'budget': N}"}
    record = request["record"]
    budget = request.get("budget")
    try:
        ruleset = Ruleset.from_stored(record.get("ruleset") or {})
        review = Reviewer(
            PlayedHand.of_record(record, ruleset),
            budget=int(budget) if isinstance(budget, int) else None,
        ).run()
    except (EngineError, TypeError, ValueError) as exc:
        return {"error": str(exc)}
    return {"lost": list(review.lost), "complete": review.complete and review.not_analysed == 0}


def review(request: Any) -> dict[str, Any]:
    """A client's hand, reviewed card by card (the `hand_review` reply's fields), or
    `{"error": sentence}` for a hand the server does not review."""
    if not isinstance(request, dict):
        return {"error": "the request is {'record': {...}, 'budget': N, 'mode': 'review'}"}
    budget = request.get("budget")
    try:
        hand = reviewable_hand(request.get("record"))
        done = Reviewer(hand, budget=int(budget) if isinstance(budget, int) else None).run()
    except (EngineError, TypeError, ValueError) as exc:
        return {"error": exc.message if isinstance(exc, EngineError) else str(exc)}
    return {
        "double_dummy": None if done.double_dummy is None else list(done.double_dummy),
        "costs": [card.cost for card in done.cards],
        "unanswered": done.not_analysed,
    }


def main() -> int:
    with contextlib.suppress(OSError):  # a platform without nice: at the default priority
        os.nice(19)  # below every table: the solver takes what CPU is left over
    try:
        request = json.loads(sys.stdin.read())
    except ValueError as exc:
        print(json.dumps({"error": f"not JSON: {exc}"}))
        return 1
    if isinstance(request, dict) and request.get("mode") == "review":
        print(json.dumps(review(request)))
    else:
        print(json.dumps(analyse(request)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
