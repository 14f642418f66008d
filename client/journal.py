"""The local history: every hand the client saw finish, kept on disk, one file per game.

The protocol has no request for past games, so the client keeps its own journal. After each hand it
appends one JSON object (format `spades-client-hand/1`) to
`<data dir>/history/<server>/<table>.jsonl`. The object is shaped like the server's `spades-hand/1`
hand record (docs/hand-records.md) where it can be: `dealer`, `seed`, `commitment`, `deal` (all four
hands, re-dealt by the engine from the revealed seed), `plays`, `trick_winners`, `tricks`, `score`,
`notes`; plus what only the client knows (`seat`, `names`, `verified`). It lacks the full `actions` list
(other seats' Hearts passes are secret), which is why it is a format of its own.

`spades history` lists these files; `spades replay` reads them, or a JSON Lines file written by
`spades-server export` (client/replay.py).
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from client.config import data_dir
from engine.seat_names import seat_label

CLIENT_FORMAT = "spades-client-hand/1"
SERVER_FORMAT = "spades-hand/1"


class JournalError(Exception):
    """A history file is missing or unreadable; the message says which and why."""


def _safe(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]", "_", text) or "_"


def history_dir() -> Path:
    return data_dir() / "history"


class Journal:
    """Appends the hands of one game at one server."""

    def __init__(self, server: str, table: str | None = None, root: Path | None = None) -> None:
        self.root = root if root is not None else history_dir()
        self.server = server
        self.table = table

    def path_for(self, table: str) -> Path:
        return self.root / _safe(self.server) / f"{_safe(table)}.jsonl"

    def progress_path(self, table: str) -> Path:
        return self.root / _safe(self.server) / f"{_safe(table)}.progress.json"

    def save_progress(self, table: str, progress: dict[str, Any]) -> None:
        """Keep what the client has seen of the hand in play (client/carryover.py), replacing the
        last copy whole (written beside it, then renamed), so a crash leaves one or the other."""
        path = self.progress_path(table)
        path.parent.mkdir(parents=True, exist_ok=True)
        spare = path.with_suffix(".tmp")
        spare.write_text(json.dumps(progress, separators=(",", ":"), ensure_ascii=False))
        os.replace(spare, path)

    def mark_left(self, table: str) -> None:
        """Remember that the player left this table's game for good (`spades play --new`)."""
        path = self.root / _safe(self.server) / f"{_safe(table)}.left"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.touch()

    def has_left(self, table: str) -> bool:
        return (self.root / _safe(self.server) / f"{_safe(table)}.left").exists()

    def last_seen(self, table: str) -> float:
        """When this client last followed the table's hand in play (0: never)."""
        try:
            return self.progress_path(table).stat().st_mtime
        except OSError:
            return 0.0

    def clear_progress(self, table: str) -> None:
        self.progress_path(table).unlink(missing_ok=True)

    def load(self, table: str) -> tuple[list[dict[str, Any]], object | None]:
        """What an earlier run kept of this table: its finished hands and the hand in play (each
        empty when missing or unreadable: a damaged history never stops play)."""
        path = self.path_for(table)
        try:
            records = read_records(path) if path.exists() else []
        except JournalError:
            records = []
        try:
            progress: object | None = json.loads(self.progress_path(table).read_text("utf-8"))
        except (OSError, ValueError):
            progress = None
        return records, progress

    def append(self, record: dict[str, Any]) -> Path:
        table = self.table or str(record.get("game_id") or "unknown")
        path = self.path_for(table)
        path.parent.mkdir(parents=True, exist_ok=True)
        line = dict(record)
        line.setdefault("server", self.server)
        with path.open("a", encoding="utf-8") as out:
            out.write(json.dumps(line, separators=(",", ":"), ensure_ascii=False) + "\n")
        return path


@dataclass(frozen=True, slots=True)
class GameSummary:
    """One game in the local history."""

    game_id: str
    server: str
    game: str
    hands: int
    scores: list[int]
    sides: list[str]
    result: str
    verified: str
    modified: float
    path: Path

    def to_dict(self) -> dict[str, Any]:
        return {
            "game_id": self.game_id,
            "server": self.server,
            "game": self.game,
            "hands": self.hands,
            "scores": self.scores,
            "sides": self.sides,
            "result": self.result,
            "verified": self.verified,
            "path": str(self.path),
        }


def read_records(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSON Lines file; raises JournalError naming the file and line."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise JournalError(f"no such file: {path}") from None
    except OSError as exc:
        raise JournalError(f"cannot read {path}: {exc.strerror or exc}") from None
    records: list[dict[str, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError:
            raise JournalError(f"{path}:{number} is not JSON") from None
        if not isinstance(record, dict) or record.get("format") not in (
            CLIENT_FORMAT,
            SERVER_FORMAT,
        ):
            raise JournalError(
                f"{path}:{number} is not a hand record ({CLIENT_FORMAT} or {SERVER_FORMAT})"
            )
        records.append(record)
    if not records:
        raise JournalError(f"{path} holds no hand records")
    return records


def summarise(path: Path) -> GameSummary:
    records = read_records(path)
    last = records[-1]
    seat = last.get("seat")
    score = last.get("score") or {}
    sides_seats: list[list[int]] = score.get("sides") or []
    after: list[int] = score.get("after") or []
    names = last.get("names") or []
    players = int(last.get("players") or len(names) or 4)

    def side_name(seats: list[int]) -> str:
        """Each seat by where it sat and who sat there (`you + North (heuristic)`, `West
        (heuristic) + East (heuristic)`), so a partner is never mistaken for an opponent."""
        return " + ".join(
            "you"
            if s == seat
            else seat_label(s, players, str(names[s]) if s < len(names) and names[s] else None)
            for s in seats
        )

    result = ""
    if after and isinstance(seat, int):
        mine = next((i for i, side in enumerate(sides_seats) if seat in side), None)
        if mine is not None:
            best = max(after) if last.get("game") != "hearts" else min(after)
            result = "ahead" if after[mine] == best else "behind"
    checks = {str(r.get("verified", "")) for r in records}
    verified = (
        "MISMATCH" if "MISMATCH" in checks else "verified" if checks == {"verified"} else "partial"
    )
    return GameSummary(
        game_id=str(last.get("game_id") or path.stem),
        server=str(last.get("server") or path.parent.name),
        game=str(last.get("game") or "?"),
        hands=len(records),
        scores=[int(x) for x in after],
        sides=[side_name(s) for s in sides_seats],
        result=result,
        verified=verified,
        modified=path.stat().st_mtime,
        path=path,
    )


def list_games(root: Path | None = None) -> list[GameSummary]:
    """Every game in the local history, most recent first (unreadable files are skipped)."""
    base = root if root is not None else history_dir()
    if not base.exists():
        return []
    games = []
    for path in sorted(base.glob("*/*.jsonl")):
        try:
            games.append(summarise(path))
        except (JournalError, OSError, ValueError, TypeError):
            continue
    games.sort(key=lambda g: g.modified, reverse=True)
    return games


def find_game(name: str, root: Path | None = None) -> Path:
    """A game by its id (table id) in the local history, or a path to a JSON Lines file."""
    candidate = Path(name)
    if candidate.suffix in (".jsonl", ".json") or candidate.exists():
        if not candidate.exists():
            raise JournalError(f"no such file: {candidate}")
        return candidate
    matches = [g.path for g in list_games(root) if g.game_id == name]
    if not matches:
        raise JournalError(
            f"no game {name!r} in your history (`spades history` lists them; "
            "or give a .jsonl file from `spades-server export`)"
        )
    return matches[0]
