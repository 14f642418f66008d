"""`spades stats [NAME]`: an account's player statistics, asked of the server (`stats`) and shown
as a few lines (docs/client.md, Statistics)."""

from __future__ import annotations

from typing import Any

from client.config import ServerAddress
from client.connection import open_connection
from protocol import messages as m
from protocol.schema import to_map


async def fetch_stats(address: ServerAddress, token: str | None, name: str | None) -> m.PlayerStats:
    """The account's statistics (your own when `name` is None: `token` must log you in);
    `ServerError` `no_such_account` for a name no account has."""
    async with open_connection(address, token=token) as conn:
        return await conn.expect(m.Stats(name=name), m.PlayerStats)


def stats_dict(stats: m.PlayerStats) -> dict[str, Any]:
    """The reply as plain JSON-ready data, without the envelope."""
    shown = to_map(stats)
    shown.pop("t", None)
    shown.pop("id", None)
    return shown


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({100 * part / whole:.0f}%)" if whole else "0/0"


def stats_lines(stats: m.PlayerStats) -> list[str]:
    """The statistics for people: a line each for games, bids, nils and time."""
    s = stats
    bags = f"{s.bags / s.contracts:.2f}" if s.contracts else "-"
    mean = f"{s.decision_ms / s.decisions / 1000:.2f} s" if s.decisions else "-"
    return [
        f"{s.name} ({s.kind.value})",
        f"games {s.games} ({s.wins} won) · hands {s.hands}",
        f"contracts made {_share(s.contracts_made, s.contracts)}, set {s.contracts_set};"
        f" average bags {bags}",
        f"nil made {_share(s.nil_made, s.nil_tried)}; blind nil made"
        f" {_share(s.blind_nil_made, s.blind_nil_tried)}",
        f"time a decision {mean} ({s.decisions} decisions)",
        f"tricks lost to play (double dummy): {s.dd_tricks_lost} in {s.dd_hands} hands analysed"
        f" ({s.hands - s.dd_hands} not analysed)",
    ]
