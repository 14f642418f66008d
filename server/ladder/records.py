"""A ladder match's hand records as `ladder_records` sends them (docs/hand-records.md, "The ladder's
fields"): the stored `spades-hand/1` records of the match's table (an old duplicate pair's: of each
of its two halves), with who sat where, the match and its clocks, and for each action the seat's
time and who chose it.

Pure: it reads what `server.ladder.store.stored_match` returned and touches no database.

Clock use comes from the store's own stamps, read as `server.hand_clocks` says.
"""

from __future__ import annotations

from typing import Any

from server.hand_clocks import ClockEntry, clock_entries, take_clock
from server.ladder.store import StoredHalf, StoredMatch


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
    clocks: list[ClockEntry] | None = clock_entries(half.actions, half.started_at)
    out = []
    for record in half.records:
        enriched = dict(record)
        enriched["names"] = names
        enriched["ladder"] = ladder
        actions = record.get("actions")
        if clocks is not None and isinstance(actions, list):
            taken, clocks = take_clock(clocks, actions)
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
