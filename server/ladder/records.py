"""A ladder match's hand records as `ladder_records` sends them (docs/hand-records.md, "The ladder's
fields"): the stored `spades-hand/1` records of the match's table (an old duplicate pair's: of each
of its two halves), with who sat where, the match and its clocks, and for each action the seat's
time and who chose it.

Pure: it reads what `server.ladder.store.stored_match` returned and touches no database.

Clock use comes from the store's own stamps: every applied action is written with the time of its
write (`actions.created_at`, to the millisecond), so a decision's time is the gap between its
action's stamp and the one before it at the same table (the game's start for the first). That is the
seat's thinking plus one round trip to it and the server's own work between the two writes (a deal
between two hands is a few milliseconds); the table's clock measured the same decision from the
moment it sent `your_turn`, a little later than the previous write.
"""

from __future__ import annotations

from typing import Any

from server.ladder.store import StoredHalf, StoredMatch
from server.storage import StoredAction

#: The engine's action kind that declares a dead deal: stored as an action, but a record keeps it
#: in the next hand's `dead_deals`, not in its `actions`.
DEFICIENT = "deficient"


def match_hand_records(match: StoredMatch) -> list[dict[str, Any]]:
    """Every hand record of the match (an old pair's: first half then second), each with the
    ladder's fields."""
    forfeits = [
        {"name": match.accounts.get(account, (f"#{account}", False))[0], "reason": why}
        for account, why in match.forfeits.items()
    ]
    out: list[dict[str, Any]] = []
    for half in match.halves:
        out.extend(_half_records(match, half, len(match.halves), forfeits))
    return out


def _half_records(
    match: StoredMatch, half: StoredHalf, halves: int, forfeits: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    names = [_seat_name(match, seat) for seat in half.seats]
    ladder: dict[str, Any] = {
        "match": match.match,
        # A match is one table now (half 1 of 1); an old duplicate pair's halves are 1 and 2 of 2.
        "half": half.half + 1,
        "halves": halves,
        "table": half.table_id,
        "game": half.game_id,
        "turn_ms": [_turn_ms(match, half, seat) for seat in half.seats],
        "forfeits": forfeits,
    }
    if match.twin is not None:
        ladder["twin"] = match.twin
    clocks = _clock_entries(half)
    out = []
    for record in half.records:
        enriched = dict(record)
        enriched["names"] = names
        enriched["ladder"] = ladder
        actions = record.get("actions")
        if clocks is not None and isinstance(actions, list):
            taken, clocks = _take(clocks, actions)
            if clocks is not None:
                enriched["clock"] = taken
        out.append(enriched)
    return out


def _seat_name(match: StoredMatch, seat: dict[str, Any]) -> str:
    account = seat.get("account")
    if account is not None:
        return match.accounts.get(int(account), (f"#{account}", False))[0]
    return str(seat.get("bot") or "bot")


def _turn_ms(match: StoredMatch, half: StoredHalf, seat: dict[str, Any]) -> int | None:
    """The seat's time for each decision: the bots' clock for a built-in seat or a bot account,
    the people's for a person (the table's config says both)."""
    config = half.table_config
    account = seat.get("account")
    is_bot = seat.get("bot") is not None or (
        account is not None and match.accounts.get(int(account), ("", False))[1]
    )
    value = config.get("bot_turn_ms" if is_bot else "human_turn_ms")
    return int(value) if isinstance(value, int) else None


def _clock_entries(half: StoredHalf) -> list[tuple[dict[str, Any], dict[str, Any]]] | None:
    """(the stored action, its clock entry) for every action but dead-deal declarations."""
    out = []
    previous = half.started_at
    for action in half.actions:
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


def _take(
    clocks: list[tuple[dict[str, Any], dict[str, Any]]], actions: list[Any]
) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], dict[str, Any]]] | None]:
    """The clock entries of one record's `actions` (the next that many stored ones, which must be
    the same actions), and what is left for the records after it. When they are not the same
    (which would be a bug), this record and the later ones of the half go without `clock`."""
    taken = clocks[: len(actions)]
    if len(taken) != len(actions) or any(
        stored != action for (stored, _), action in zip(taken, actions, strict=True)
    ):
        return [], None
    return [entry for _, entry in taken], clocks[len(actions) :]
