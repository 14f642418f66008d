"""An explicit nil for an optional field is read as the field left out, over TCP against a real server
process (issue 37 item 9; docs/protocol.md, Framing: receivers accept "an explicit nil for an absent
optional field"). Each message below was refused `invalid_field` ("expected a boolean, got nil")
before; the property over every message type is tests/protocol/test_explicit_nil.py.
"""

from __future__ import annotations

from typing import Any

import trio

from protocol.messages import Joined, Matches, Ok, Reply, Standings, TableCreated, Tables
from tests.hostile.peer import Peer, welcomed
from tests.hostile.proc import ServerProcess


async def ask(peer: Peer, body: dict[str, Any]) -> Reply:
    """Send `body` as it is (nils and all) with a fresh id; its reply."""
    rid = peer.next_id()
    await peer.send_map({**body, "id": rid})
    return await peer.reply_to(rid)


async def test_explicit_nils_for_optional_fields_are_read_as_absent(
    shared_server: ServerProcess, fresh_name: str
) -> None:
    port = shared_server.port
    with trio.fail_after(30):
        async with await welcomed(port, fresh_name) as peer:
            created = await ask(
                peer,
                {
                    "t": "create_table",
                    "game": "spades",
                    "preset": "standard",
                    "options": None,
                    "seats": None,
                    "bots": None,
                    "clock": None,
                    "private": None,
                    "sit": None,
                },
            )
            assert isinstance(created, TableCreated) and created.code is None, created
            listed = await ask(
                peer,
                {
                    "t": "list_tables",
                    "game": None,
                    "status": None,
                    "open_seats": None,
                    "cursor": None,
                    "limit": None,
                },
            )
            assert isinstance(listed, Tables), listed
            joined = await ask(
                peer,
                {"t": "join", "table": created.table, "seat": None, "code": None, "takeover": None},
            )
            assert isinstance(joined, Joined) and joined.seat is not None, joined
            left = await ask(peer, {"t": "leave", "table": created.table})
            assert isinstance(left, Ok), left
            standings = await ask(peer, {"t": "ladder_standings", "limit": None})
            assert isinstance(standings, Standings), standings
            matches = await ask(peer, {"t": "ladder_matches", "entrant": None, "limit": None})
            assert isinstance(matches, Matches), matches
