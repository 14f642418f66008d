"""`spades-server events export EVENT --out DIR`: an event's final standings and every board's hand
record, written from the database (the server running or not; `server.storage.read_transaction`).

- `standings.json`: the event (id, name, format, status, rounds, boards), its standings (place,
  entrant key, names, house, percent, boards, margin, forfeits) and, for a knockout, its matches;
- `records.jsonl`: one `spades-hand/1` record a line, by round, table and board, each with the
  event's fields `event` (`E1/r2/t3`) and `board`.

Both are rebuilt from the stored boards, so an export made twice is the same bytes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from server.events import store as event_store
from server.events.scoring import knockout_matches
from server.events.settings import EventFormat
from server.storage.target import Target


def export_command(db: Target, event: str, out: Path) -> str:
    """Write the two files into `out` (made if missing); returns what to print.

    Raises `ValueError` for an event id that is no event's (nothing written), `StorageError` for a
    database that cannot be read, `OSError` for a folder that cannot be written."""
    from server.storage import read_transaction

    number = event_store.event_number(event)
    with read_transaction(db) as tx:
        stored = event_store.load(tx, number)
        if stored is None:
            raise ValueError(f"no event is called {event!r}")
        results = event_store.board_results(tx, stored)
        records, _total, _after = event_store.records(tx, stored)
    lines = event_store.standing_lines(stored, results)
    house = {e.key for e in stored.entrants if e.house is not None}
    summary: dict[str, Any] = {
        "event": stored.id,
        "name": stored.row.name,
        "format": stored.settings.format.value,
        "status": stored.row.status,
        "rounds": len(stored.plans),
        "boards": stored.settings.boards,
        "settings": stored.settings.to_json(),
        "standings": [
            {
                "place": line.place,
                "key": line.key,
                "names": event_store.names_of(stored, line.key),
                "house": line.key in house,
                "percent": line.percent,
                "boards": line.boards,
                "margin": line.margin,
                "forfeits": line.forfeits,
            }
            for line in lines
        ],
    }
    if stored.settings.format is EventFormat.KNOCKOUT_PAIRS and stored.plans:
        summary["matches"] = [
            {
                "round": m.round_no,
                "table": m.table_no,
                "a": m.a,
                "b": m.b,
                "won_a": m.boards_won_a,
                "won_b": m.boards_won_b,
                "winner": m.winner,
                "decided_by": m.how,
            }
            for m in knockout_matches(
                event_store.entrants(stored),
                event_store.plans_of(stored),
                results,
                stored.settings.boards,
            )
        ]
    out.mkdir(parents=True, exist_ok=True)
    (out / "standings.json").write_text(
        json.dumps(summary, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    with (out / "records.jsonl").open("w", encoding="utf-8") as sink:
        for record in records:
            sink.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
    return (
        f"{stored.id} ({stored.row.status}): {len(lines)} standings lines to"
        f" {out / 'standings.json'}, {len(records)} boards to {out / 'records.jsonl'}"
    )
