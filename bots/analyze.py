"""`spades-bot analyze RECORDS.jsonl`: the arena's and the ladder's hand records reviewed
double-dummy (engine/review.py), with a summary per seat: the tricks its play lost, per hand and in
total. A seat is named as the records name it (the arena's entrant, the ladder's account), so a bot
that sat in several seats is summed over them.

A hand the solver does not play (three- or two-handed, Hearts) is listed as not analysed, with why;
a card whose position passed the budget is counted under `not_analysed`, never guessed.
"""

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.cards import card_text
from engine.errors import EngineError
from engine.records import record_to_hand
from engine.review import HandReview, NotReviewable, PlayedHand, Reviewer
from engine.seat_names import seat_word


class RecordsError(Exception):
    """The records file cannot be read; the message says which line and why."""


def read_records(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file, one a line (blank lines skipped)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        raise RecordsError(f"cannot read {path}: {exc.strerror or exc}") from None
    records = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise RecordsError(f"{path}, line {number}: not JSON") from None
        if not isinstance(record, dict):
            raise RecordsError(f"{path}, line {number}: not a hand record (a JSON object)")
        records.append(record)
    return records


def seat_names(record: dict[str, Any]) -> list[str]:
    """Each seat's player as the record names it: the arena's entrant, the ladder's account, else
    the seat's direction."""
    players = int(record.get("players", 4))
    arena = record.get("arena")
    named = arena.get("seats") if isinstance(arena, dict) else record.get("names")
    names = named if isinstance(named, list) else []
    return [
        str(names[s]) if s < len(names) and names[s] else seat_word(s, players)
        for s in range(players)
    ]


@dataclass
class Job:
    """One record's review to run, or why it is not analysed."""

    record: dict[str, Any]
    names: list[str]
    reviewer: Reviewer | None
    reason: str = ""
    review: HandReview | None = None


def jobs_of(records: Iterable[dict[str, Any]], budget: int | None) -> list[Job]:
    out = []
    for record in records:
        names = seat_names(record)
        try:
            history, ruleset = record_to_hand(record)
            reviewer = Reviewer(PlayedHand.of_history(history, ruleset), budget=budget)
            out.append(Job(record, names, reviewer))
        except NotReviewable as exc:
            out.append(Job(record, names, None, exc.message))
        except EngineError as exc:
            out.append(Job(record, names, None, f"the record does not replay: {exc.message}"))
    return out


def run(jobs: Sequence[Job], advance: Callable[[], None]) -> bool:
    """Review every job, calling `advance` after each position; Ctrl-C (KeyboardInterrupt) stops
    and keeps what was analysed. True if it ran to the end."""
    stopped = False
    for job in jobs:
        if job.reviewer is None:
            continue
        if not stopped:
            try:
                for _ in job.reviewer.steps():
                    advance()
            except KeyboardInterrupt:
                stopped = True
        job.review = job.reviewer.review()
    return not stopped


@dataclass
class SeatSummary:
    """A player's play over the hands analysed."""

    hands: int = 0
    tricks_lost: int = 0
    not_analysed: int = 0  # its cards whose cost is not known
    per_hand: list[int] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {
            "hands": self.hands,
            "tricks_lost": self.tricks_lost,
            "tricks_lost_per_hand": round(self.tricks_lost / self.hands, 3) if self.hands else 0,
            "not_analysed": self.not_analysed,
        }


def hand_dict(job: Job) -> dict[str, object]:
    """One hand's analysis as JSON."""
    record = job.record
    out: dict[str, object] = {
        "game_id": record.get("game_id", ""),
        "hand_number": record.get("hand_number"),
        "seats": job.names,
    }
    review = job.review
    if review is None:
        out["not_analysed"] = job.reason or "stopped before this hand"
        return out
    out["double_dummy"] = list(review.double_dummy) if review.double_dummy else None
    out["taken"] = list(review.taken) if review.taken else None
    out["bids"] = [[b.get("seat"), b.get("bid")] for b in record.get("bids", [])]
    out["tricks_lost"] = list(review.lost)
    out["cards"] = [
        {"trick": c.trick, "seat": c.seat, "card": card_text(c.card), "cost": c.cost}
        for c in review.cards
        if c.cost != 0
    ]
    out["cards_not_analysed"] = review.not_analysed
    return out


def summarize(jobs: Sequence[Job]) -> dict[str, SeatSummary]:
    """Per player (by name: a bot at two seats is one player), over the hands analysed."""
    seats: dict[str, SeatSummary] = {}
    for job in jobs:
        if job.review is None:
            continue
        lost = job.review.lost
        missing = [0, 0, 0, 0]
        for card in job.review.cards:
            if card.cost is None:
                missing[card.seat] += 1
        # A bot holding both seats of a side (the arena's two-bot runs) plays one hand, not two.
        by_name: dict[str, tuple[int, int]] = {}
        for seat, name in enumerate(job.names):
            was_lost, was_missing = by_name.get(name, (0, 0))
            by_name[name] = (was_lost + lost[seat], was_missing + missing[seat])
        for name, (name_lost, name_missing) in by_name.items():
            summary = seats.setdefault(name, SeatSummary())
            summary.hands += 1
            summary.tricks_lost += name_lost
            summary.per_hand.append(name_lost)
            summary.not_analysed += name_missing
    return seats


def report(jobs: Sequence[Job], finished: bool, budget: int | None) -> dict[str, object]:
    """Everything as one JSON object."""
    return {
        "finished": finished,
        "budget": budget,
        "hands": [hand_dict(job) for job in jobs],
        "seats": {name: s.to_dict() for name, s in sorted(summarize(jobs).items())},
    }


def text_lines(jobs: Sequence[Job], finished: bool) -> list[str]:
    """The report for people: a line or two a hand, then the summary per seat."""
    lines = []
    for job in jobs:
        record = job.record
        head = f"game {record.get('game_id') or '?'} hand {record.get('hand_number', '?')}"
        if job.review is None:
            lines.append(f"{head}: not analysed: {job.reason or 'stopped before this hand'}")
            continue
        review = job.review
        dd = review.double_dummy
        could = f"NS {dd[0]}, EW {dd[1]}" if dd else "not analysed (budget)"
        taken = review.taken
        took = f"; took NS {taken[0]}, EW {taken[1]}" if taken else ""
        lines.append(f"{head}: double-dummy {could}{took}")
        costly = [
            f"trick {c.trick} {job.names[c.seat]} {card_text(c.card)} -{c.cost}"
            for c in review.cards
            if c.cost
        ]
        if costly:
            lines.append("   cost tricks: " + ", ".join(costly))
        if review.not_analysed:
            lines.append(f"   not analysed (budget): {review.not_analysed} cards")
    lines.append("")
    lines.append("tricks lost by play, per seat:")
    for name, summary in sorted(summarize(jobs).items()):
        per_hand = summary.tricks_lost / summary.hands if summary.hands else 0.0
        missing = f", {summary.not_analysed} cards not analysed" if summary.not_analysed else ""
        lines.append(
            f"   {name}: {summary.tricks_lost} in {summary.hands} hands"
            f" ({per_hand:.2f} a hand{missing})"
        )
    if not finished:
        lines.append("analysis stopped (Ctrl-C): the figures cover what was analysed")
    return lines
