"""Entering sample bots on the ladder as house bots, from the command line.

`spades-server ladder add-house-bots [SPEC...]` works on the database file directly, with the server
stopped or running (see `server.storage.write_transaction`); a running ladder picks new house bots
up within `LadderSettings.house_poll` seconds.
"""

from __future__ import annotations

from collections.abc import Sequence

from server.ladder import store as ladder_store
from server.storage.target import Target

#: The sample bots `add-house-bots` enters when none are named.
DEFAULT_HOUSE_BOTS = ("random", "heuristic", "search")


def add_house_bots_command(db_path: Target, specs: Sequence[str] = ()) -> str:
    """Enter sample bots (the defaults when `specs` is empty); returns what to print.

    Raises `ValueError` for a spec that names no bot (nothing written), `server.storage.StorageError`
    for a bad file.
    """
    from server.storage import write_transaction

    with write_transaction(db_path) as tx:
        added = ladder_store.add_house_bots(tx, specs or DEFAULT_HOUSE_BOTS)
    if not added:
        return "the house bots were already entered"
    return "entered on the ladder: " + ", ".join(added)
