"""Player statistics from hand records: what one finished hand adds to each seat's counters.

`hand_tallies(record)` folds one `spades-hand/1` record (docs/hand-records.md) into a `Tally` per
seat; a player's statistics are the sum of the tallies of the seats it held (`Tally.__add__`), so
counting hands in any order, or rebuilding from every stored hand, gives the same counters.

What is counted, per seat:

- `hands`: the hand was played at this seat.
- `contracts`, `contracts_made`, `contracts_set`: the seat made an ordinary bid (neither nil, nor Moe, nor a blind
  bid, which are scored on their own), and its side's contract was made or set. The verdict and the
  tricks are the engine's own, read from the record's scoring notes (`contract 7 made with 9`: the
  engine writes one such note a side that has a contract, sides in order), never recomputed here.
- `bags`: the overtricks of a contract made (the note's tricks beyond the contract), the side's.
- `nil_tried`/`nil_made`, `blind_nil_tried`/`blind_nil_made`: a nil promises no trick, so a nil
  (plain or two-handed double) or blind nil is made when the seat took none.
- `decisions`, `decision_ms`: one per entry of the record's `clock` for this seat (when the record
  carries one: the server adds it from the stored actions' times), and the time each took.

Hearts hands count `hands` and the decisions only. Pure: standard library and the engine only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import astuple, dataclass, fields
from typing import Any

from engine.errors import RecordError
from engine.records import FORMAT

_CONTRACT = re.compile(r"^contract (\d+) (made|set) with (\d+)$")


@dataclass(frozen=True, slots=True)
class Tally:
    """Counters of one player (or what one hand adds to them). Every field is a count."""

    hands: int = 0
    contracts: int = 0
    contracts_made: int = 0
    contracts_set: int = 0
    bags: int = 0
    nil_tried: int = 0
    nil_made: int = 0
    blind_nil_tried: int = 0
    blind_nil_made: int = 0
    decisions: int = 0
    decision_ms: int = 0

    def __add__(self, other: Tally) -> Tally:
        return Tally(*(a + b for a, b in zip(astuple(self), astuple(other), strict=True)))

    def as_dict(self) -> dict[str, int]:
        return dict(zip(TALLY_FIELDS, astuple(self), strict=True))

    @classmethod
    def from_values(cls, values: Sequence[int]) -> Tally:
        """From the counters in `TALLY_FIELDS` order (a stored row)."""
        return cls(*(int(v) for v in values))


#: The counters' names, in order: the columns the store keeps them in.
TALLY_FIELDS: tuple[str, ...] = tuple(f.name for f in fields(Tally))


def _int_list(record: Mapping[str, Any], name: str) -> list[int]:
    value = record.get(name)
    if not isinstance(value, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) for v in value
    ):
        raise RecordError(f"{name!r} must be a list of whole numbers")
    return value


def _ordinary(bid: Mapping[str, Any]) -> bool:
    """A bid that adds to its side's contract (ten for 200 replaces it, and counts too)."""
    return int(bid.get("bid", 0)) > 0 and not bid.get("blind") and not bid.get("moe")


def hand_tallies(record: object) -> tuple[Tally, ...]:
    """What one finished hand adds to each seat's counters, by seat. Raises `RecordError` for a
    record that is not a `spades-hand/1` object with the fields read here (nothing is counted)."""
    if not isinstance(record, Mapping) or record.get("format") != FORMAT:
        raise RecordError(f"a hand record is a {FORMAT!r} object")
    players = record.get("players")
    if not isinstance(players, int) or not 2 <= players <= 4:
        raise RecordError("'players' must be 2, 3 or 4")
    counts: list[dict[str, int]] = [dict.fromkeys(TALLY_FIELDS, 0) for _ in range(players)]
    for seat_counts in counts:
        seat_counts["hands"] = 1
    _count_clock(record, counts)
    if record.get("game") == "spades":
        _count_bids(record, counts)
    return tuple(Tally(**c) for c in counts)


def _count_clock(record: Mapping[str, Any], counts: list[dict[str, int]]) -> None:
    clock = record.get("clock")
    if clock is None:
        return
    if not isinstance(clock, list):
        raise RecordError("'clock' must be a list")
    for entry in clock:
        seat = entry.get("seat") if isinstance(entry, Mapping) else None
        ms = entry.get("ms") if isinstance(entry, Mapping) else None
        if not isinstance(seat, int) or not 0 <= seat < len(counts) or not isinstance(ms, int):
            raise RecordError("a clock entry is {'seat', 'ms'} with a seat of the hand")
        counts[seat]["decisions"] += 1
        counts[seat]["decision_ms"] += max(0, ms)


def _count_bids(record: Mapping[str, Any], counts: list[dict[str, int]]) -> None:
    tricks = _int_list(record, "tricks")
    bids = record.get("bids")
    score = record.get("score")
    notes = record.get("notes")
    if len(tricks) != len(counts) or not isinstance(bids, list) or not isinstance(notes, list):
        raise RecordError("'tricks', 'bids' and 'notes' must cover the hand's seats")
    sides = score.get("sides") if isinstance(score, Mapping) else None
    if not isinstance(sides, list) or not all(isinstance(s, list) for s in sides):
        raise RecordError("'score' must name the sides' seats")
    by_seat: dict[int, Mapping[str, Any]] = {}
    for bid in bids:
        seat = bid.get("seat") if isinstance(bid, Mapping) else None
        if not isinstance(seat, int) or not 0 <= seat < len(counts):
            raise RecordError("a bid is an object with a seat of the hand")
        by_seat[seat] = bid
    for seat, bid in by_seat.items():
        if int(bid.get("bid", -1)) == 0 and not bid.get("moe"):
            kind = "blind_nil" if bid.get("blind") else "nil"
            counts[seat][f"{kind}_tried"] += 1
            counts[seat][f"{kind}_made"] += tricks[seat] == 0
    # The engine writes one "contract" note for each side with a contract, sides in order.
    verdicts = [m for note in notes if isinstance(note, str) and (m := _CONTRACT.match(note))]
    with_contract = [
        [s for s in side if s in by_seat and _ordinary(by_seat[s])]
        for side in sides
        if any(s in by_seat and _ordinary(by_seat[s]) for s in side)
    ]
    if len(verdicts) != len(with_contract):
        raise RecordError("the record's notes do not give each side's contract")
    for bidders, verdict in zip(with_contract, verdicts, strict=True):
        contract, outcome, took = int(verdict[1]), verdict[2], int(verdict[3])
        for seat in bidders:
            counts[seat]["contracts"] += 1
            if outcome == "made":
                counts[seat]["contracts_made"] += 1
                counts[seat]["bags"] += max(0, took - contract)
            else:
                counts[seat]["contracts_set"] += 1
