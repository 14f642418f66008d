"""What a spectator of twin tables is shown (the duplicate gate, `server.deal_gate`), checked the
same way for the ladder's twins and an event's round: the table ahead watched a deal late."""

from __future__ import annotations

from pathlib import Path

import trio

from protocol.messages import DealSeed, Joined, Ping, Pong, Snapshot
from server.storage import read_transaction
from tests.server.wire_client import WireClient


def hands_recorded(server_db: Path, table: str) -> tuple[int, bool]:
    """How many hands the table's game has finished, and whether the game is over (read from the
    database as it is now)."""
    with read_transaction(server_db) as tx:
        game = tx.latest_game_at(table)
        if game is None:
            return 0, False
        return tx.hand_count(game)[1], tx.game_status(game) == "finished"


async def a_deal_late(
    watcher: WireClient,
    before: int,
    db: Path,
    ahead: str,
    behind: str,
    stalled: trio.Event,
) -> None:
    """Once the table ahead has played its first deal through while the table behind waits on
    its `stalled` player: the spectator of the table ahead (its messages from `before` on) has seen
    nothing of that deal; then, the player let go, each of the two deals reaches the spectator only
    once the table behind has played it too (its hand recorded, or its game over)."""
    assert hands_recorded(db, ahead)[0] >= 1 and hands_recorded(db, behind)[0] == 0
    assert isinstance(await watcher.request(Ping()), Pong)
    seen = [m for m in watcher.received[before:] if not isinstance(m, Joined | Pong)]
    assert all(isinstance(m, Snapshot) and m.version == 0 for m in seen), seen
    stalled.set()
    for hand in (1, 2):
        revealed = await watcher.expect(DealSeed)
        assert revealed.table == ahead and revealed.hand_number == hand
        done, over = hands_recorded(db, behind)
        assert done >= hand or over, (done, over)
