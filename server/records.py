"""Hand records as stored and exported: JSON objects, one per finished hand.

INTERIM: `engine.records` (the documented `spades-hand/1` format) has not landed yet. Until it
does, a `HandHistory` is stored field by field in plain JSON with cards in notation, marked
`"format": "server-interim/0"`. When `engine.records` lands, `hand_record` calls it instead.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

from engine.actions import action_to_dict
from engine.cards import card_text, mask_text
from engine.history import HandHistory
from engine.ruleset import Ruleset

_CARD_FIELDS = frozenset({"deal", "face_up", "set_aside"})


def _plain(name: str, value: Any) -> Any:
    if name in _CARD_FIELDS:
        if isinstance(value, tuple):
            return [mask_text(mask) for mask in value]
        return mask_text(value)
    if name == "seed":
        return value.hex()
    if name == "plays":
        return [[seat, card_text(card)] for seat, card in value]
    if name == "actions":
        return [action_to_dict(action) for action in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(f.name, getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple | list):
        return [_plain(name, item) for item in value]
    if isinstance(value, bytes):
        return value.hex()
    return value


def hand_record(history: HandHistory, ruleset: Ruleset, game_id: int) -> dict[str, Any]:
    """The JSON object stored for a finished hand (the engine's `spades-hand/1` once it exists)."""
    try:
        records = importlib.import_module("engine.records")
    except ImportError:
        records = None
    to_record = getattr(records, "hand_to_record", None)
    if to_record is not None:
        record: dict[str, Any] = to_record(history, ruleset, game_id=str(game_id))
        return record
    out: dict[str, Any] = {"format": "server-interim/0", "game_id": str(game_id)}
    for f in dataclasses.fields(history):
        out[f.name] = _plain(f.name, getattr(history, f.name))
    return out
