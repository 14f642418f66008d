"""Each decision's time, from the store's own stamps, laid beside a game's hand records.

Every applied action is written with the time of its write (`actions.created_at`, to the
millisecond), so a decision's time is the gap between its action's stamp and the one before it at
the same table (the game's start for the first). That is the seat's thinking plus one round trip to
it and the server's own work between the two writes (a deal between two hands is a few
milliseconds); the table's clock measured the same decision from the moment it sent `your_turn`, a
little later than the previous write. The ladder's records (`server.ladder.records`) and the
player statistics (`server.stats`) both read the clocks this way.

Pure: it reads stored actions and records and touches no database.
"""

from __future__ import annotations

from typing import Any

from server.storage import StoredAction

#: The engine's action kind that declares a dead deal: stored as an action, but a record keeps it
#: in the next hand's `dead_deals`, not in its `actions`.
DEFICIENT = "deficient"

#: (the stored action, its clock entry `{"seat", "ms", "by"[, "bank_left_ms"]}`)
ClockEntry = tuple[dict[str, Any], dict[str, Any]]


def clock_entries(actions: list[StoredAction], started_at: float) -> list[ClockEntry]:
    """(the stored action, its clock entry) for every action but dead-deal declarations."""
    out = []
    previous = started_at
    for action in actions:
        at = action.at if action.at is not None else previous
        entry = _entry(action, at - previous)
        previous = at
        if action.action.get("kind") != DEFICIENT:
            out.append((action.action, entry))
    return out


def _entry(action: StoredAction, seconds: float) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "seat": action.seat,
        "ms": max(0, round(seconds * 1000)),
        "by": action.source,
    }
    if action.bank_left_ms is not None:
        entry["bank_left_ms"] = action.bank_left_ms
    return entry


def take_clock(
    clocks: list[ClockEntry], actions: list[Any]
) -> tuple[list[dict[str, Any]], list[ClockEntry] | None]:
    """The clock entries of one record's `actions` (the next that many stored ones, which must be
    the same actions), and what is left for the records after it. When they are not the same
    (which would be a bug), this record and the later ones go without `clock` (None left)."""
    taken = clocks[: len(actions)]
    if len(taken) != len(actions) or any(
        stored != action for (stored, _), action in zip(taken, actions, strict=True)
    ):
        return [], None
    return [entry for _, entry in taken], clocks[len(actions) :]


def with_clocks(
    records: list[dict[str, Any]], actions: list[StoredAction], started_at: float
) -> list[dict[str, Any]]:
    """A game's records from its first hand, each given its `clock` (a copy; a record whose
    actions are not the stored ones, and every later one, is left without)."""
    clocks: list[ClockEntry] | None = clock_entries(actions, started_at)
    out = []
    for record in records:
        recorded = record.get("actions")
        if clocks is not None and isinstance(recorded, list):
            taken, clocks = take_clock(clocks, recorded)
            if clocks is not None:
                out.append({**record, "clock": taken})
                continue
        out.append(record)
    return out
