"""What a finished hand, and a time away from the table, come to in words for the play screen.

Pure functions of what the server said: a hand's result is `hand_scored` (sides, tricks, points,
bags and the engine's notes) with the bids seen during the hand; nothing here scores anything. The
engine writes its notes per seat number (`seat 3 nil failed`) and side by side; the screen names the
seats as the player sees them (`West nil failed`) and puts each note beside its side.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.cards import SUIT_LETTERS, SUIT_SYMBOLS

SEAT_NOTE = re.compile(r"\bseat (\d+)\b")
CONTRACT_NOTE = re.compile(r"^contract \d+ ")
BAGS_NOTE = re.compile(r"bags: -\d+$|^last digit passed 9")

Namer = Callable[[int], str]


@dataclass(slots=True)
class HandSummary:
    """One row of the scores: what `hand_scored` said, or (`last_hand` set) the hands from
    `hand_number` to `last_hand` that were played while this client was away, as one row."""

    hand_number: int
    sides: list[list[int]]
    delta: list[int]
    after: list[int]
    bags_after: list[int]
    notes: list[str]
    last_hand: int = 0

    @property
    def seen(self) -> bool:
        return self.last_hand == 0

    @property
    def label(self) -> str:
        if self.seen:
            return str(self.hand_number)
        if self.last_hand == self.hand_number:
            return f"{self.hand_number}*"
        return f"{self.hand_number}-{self.last_hand}*"

    @classmethod
    def from_record(cls, record: dict[str, Any]) -> HandSummary:
        """The row of a journal record (`spades-client-hand/1`); raises KeyError/TypeError/ValueError."""
        score = record["score"]
        return cls(
            hand_number=int(record["hand_number"]),
            sides=[[int(s) for s in side] for side in score["sides"]],
            delta=[int(x) for x in score["delta"]],
            after=[int(x) for x in score["after"]],
            bags_after=[int(x) for x in score.get("bags_after") or []],
            notes=[str(n) for n in record.get("notes") or []],
        )


@dataclass(frozen=True, slots=True)
class HandResult:
    """The result box shown after a hand until the next one is under way."""

    hand_number: int
    lines: tuple[str, ...]


def card_label(card: str) -> str:
    """`QS` -> `Q♠`, `TD` -> `10♦`; jokers and anything unknown as they are."""
    if len(card) != 2 or card in ("BJ", "LJ") or card[1] not in SUIT_LETTERS:
        return card
    rank = "10" if card[0] == "T" else card[0]
    return rank + SUIT_SYMBOLS[SUIT_LETTERS.index(card[1])]


def minutes(seconds: float) -> str:
    """`2:00`, `0:05`."""
    whole = max(0, int(seconds + 0.999))
    return f"{whole // 60}:{whole % 60:02d}"


def name_seats(text: str, name: Namer) -> str:
    """The engine's `seat 3` as the player sees it (`East`, `You`)."""
    return SEAT_NOTE.sub(lambda found: name(int(found.group(1))), text)


def said_of(note: str, side: str, name: Namer) -> str:
    """A note as people read it: a seat's note names the seat (`West (heuristic) nil failed`, not
    `North: North took 18 points`); a whole side's note (its contract, its bags) says whose it
    is (`North-South: contract 5 made with 7`)."""
    if SEAT_NOTE.search(note):
        return name_seats(note, name)
    return f"{side}: {note}"


def plural(count: int, word: str) -> str:
    """`1 card`, `3 cards`."""
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def bags_text(count: int) -> str:
    """`1 bag`, `3 bags`."""
    return plural(count, "bag")


def notes_by_side(notes: Sequence[str], sides: Sequence[Sequence[int]]) -> list[list[str]]:
    """The engine's notes, which it writes side by side (each side's seat notes, its contract, its
    bonuses, its bag penalty), put back with their side: a note naming a seat is that seat's side's;
    a second contract (or bag) note starts the next side."""
    side_of = {seat: index for index, side in enumerate(sides) for seat in side}
    out: list[list[str]] = [[] for _ in sides]
    if not out:
        return out
    current = 0
    had: set[tuple[int, str]] = set()
    for note in notes:
        seat = SEAT_NOTE.search(note)
        kind = (
            "contract" if CONTRACT_NOTE.search(note) else "bags" if BAGS_NOTE.search(note) else ""
        )
        if seat is not None and int(seat.group(1)) in side_of:
            current = max(current, side_of[int(seat.group(1))])
        elif kind and (current, kind) in had and current + 1 < len(out):
            current += 1
        if kind:
            had.add((current, kind))
        out[current].append(note)
    return out


def hand_result(
    summary: HandSummary,
    tricks: Sequence[int],
    bids: Sequence[Any],
    *,
    game: str,
    bags_shown: bool,
    name: Namer,
    side_name: Namer,
) -> HandResult:
    """The result box of a scored hand: each side's points, then who bid what and took what."""
    totals = []
    for index, (delta, after) in enumerate(zip(summary.delta, summary.after, strict=False)):
        text = f"{side_name(index)} {delta:+d} → {after}"
        if bags_shown and index < len(summary.bags_after):
            text += f" ({bags_text(summary.bags_after[index])})"
        totals.append(text)
    lines = [f"Hand {summary.hand_number} scored: " + " · ".join(totals)]
    by_side = notes_by_side(summary.notes, summary.sides)
    if game == "spades":
        for index, seats in enumerate(summary.sides):
            parts = []
            for seat in seats:
                bid = bids[seat] if seat < len(bids) else None
                said = str(bid.get("text")) if isinstance(bid, dict) else "–"
                took = tricks[seat] if seat < len(tricks) else 0
                parts.append(f"{name(seat)} {said} (took {took})")
            notes = "; ".join(name_seats(note, name) for note in by_side[index])
            lines.append(
                f"  {side_name(index)}: {', '.join(parts)}" + (f": {notes}" if notes else "")
            )
    else:
        notes = "; ".join(name_seats(note, name) for side in by_side for note in side)
        if notes:
            lines.append(f"  {notes}")
    lines.append("  (Enter, or your next move, puts the log back)")
    return HandResult(summary.hand_number, tuple(lines))


def meanwhile(
    before: dict[str, Any],
    after: dict[str, Any],
    seat: int | None,
    *,
    name: Namer,
    side_name: Namer,
    moved_myself: bool = False,
) -> list[str]:
    """What changed between the view before an absence and the view after it, in words."""
    lines: list[str] = []
    hand_before, hand_after = before.get("hand_number", 0), after.get("hand_number", 0)
    if hand_after != hand_before:
        lines.append(f"While you were away: play moved from hand {hand_before} to {hand_after}.")
    else:
        mine = _my_moves(before, after, seat, moved_myself)
        played = len(after.get("played") or []) - len(before.get("played") or [])
        tricks = sum(after.get("tricks") or []) - sum(before.get("tricks") or [])
        bids = _bids_made(after) - _bids_made(before)
        if mine:
            lines.append(f"While you were away: {mine}.")
        if played or tricks or bids:
            head = "Meanwhile" if mine else "While you were away"
            counts = ", ".join(
                [plural(bids, "bid"), plural(played, "card") + " played", plural(tricks, "trick")]
            )
            lines.append(f"{head}: {counts} won.")
        elif not mine:
            lines.append("While you were away: nothing happened at the table.")
    if after.get("scores") != before.get("scores") and isinstance(after.get("scores"), list):
        scores = ", ".join(f"{side_name(i)} {s}" for i, s in enumerate(after["scores"]))
        lines.append(f"Scores are now {scores}.")
    return lines


def _bids_made(view: dict[str, Any]) -> int:
    return sum(bid is not None for bid in view.get("bids") or [])


def _my_moves(
    before: dict[str, Any], after: dict[str, Any], seat: int | None, moved_myself: bool
) -> str:
    """Our seat's moves made while we were away: the server's fallback's, unless we had just sent
    one ourselves when the line dropped."""
    if seat is None:
        return ""

    def said(verb: str, what: str) -> str:
        return f"you {verb} {what}" if moved_myself else f"the server's bot {verb} {what} for you"

    out = []
    bids_before, bids_after = before.get("bids") or [], after.get("bids") or []
    if (
        seat < len(bids_after)
        and isinstance(bids_after[seat], dict)
        and (seat >= len(bids_before) or bids_before[seat] is None)
    ):
        out.append(said("bid", str(bids_after[seat].get("text", "?"))))
    held = set(before.get("hand") or [])
    played_after = set(after.get("played") or []) - set(before.get("played") or [])
    gone = sorted(held & played_after, key=lambda card: (card[-1], card))
    if gone:
        out.append(said("played", " ".join(card_label(c) for c in gone)))
    return "; ".join(out)
