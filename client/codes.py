"""The join codes of the private tables this machine opened or joined, so their creator sees a code
again after the screen that showed it is gone (`spades tables`, the play screen's `/code`).

The protocol shows a code once, in `table_created`; the server never lists it. A code is a secret of
the table, so the file is the owner's alone, like the tokens (`client.config`), one per server:
`<config dir>/codes/<server>.json`, `{"table": "CODE"}`, the newest `KEPT` tables.
"""

from __future__ import annotations

from pathlib import Path

from client.config import ConfigError, _read_json, _write_private, config_dir

KEPT = 64  # tables remembered per server: far more than anyone has open at once


def normal_code(typed: str) -> str:
    """A code as people type or read it out (`wuti miba`) in the server's form (`WUTIMIBA`)."""
    return "".join(typed.split()).upper()


def _path(server_key: str) -> Path:
    safe = "".join(c if c.isalnum() or c in ".-" else "_" for c in server_key)
    return config_dir() / "codes" / f"{safe}.json"


def known(server_key: str) -> dict[str, str]:
    """Every code kept for this server, by table id; empty when none (or the file is unreadable:
    a lost code costs a question to the table's players, never the command)."""
    try:
        data = _read_json(_path(server_key))
    except ConfigError:
        return {}
    return {str(t): str(c) for t, c in data.items() if isinstance(c, str)}


def remember(server_key: str, table: str, code: str) -> None:
    """Keep `table`'s code (the newest last; the oldest dropped past `KEPT`). Best effort: a
    file that cannot be written loses only this convenience."""
    codes = known(server_key)
    codes.pop(table, None)
    codes[table] = code
    kept = dict(list(codes.items())[-KEPT:])
    try:
        _write_private(_path(server_key), kept)
    except OSError:
        return
