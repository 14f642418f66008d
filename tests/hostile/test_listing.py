"""No reply is larger than the frame the server announces, whatever the tables (issue 22, item 5):
the listing comes in pages, each entry's options are bounded, and a refusal that would repeat a
huge option value back is cut short. Against a real `spades-server serve` on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import trio

from client.config import ServerAddress
from client.lobby import list_tables
from protocol.messages import (
    CreateTable,
    Error,
    Guest,
    ListTables,
    LoggedIn,
    Message,
    TableChanged,
    TableCreated,
    Tables,
)
from protocol.types import Game
from protocol.wire import encode_body
from tests.hostile.peer import Peer, welcomed
from tests.hostile.proc import ServerProcess

# A hand schedule as long as a ruleset takes one (32 entries, docs/rules.md), of its longest
# hand type: about 700 bytes of options echoed in each listing entry.
SCHEDULE = ["partnership_fourteen"] * 32
ADDRESSES = [f"127.0.3.{n}" for n in range(1, 14)]  # 13 machines: 16 tables each
TABLES_EACH = 16


def body_size(message: Message) -> int:
    """The frame body the server sent for `message` (it encodes with the same codec)."""
    return len(encode_body(message))


async def open_tables(port: int, source: str) -> list[str]:
    opener = await welcomed(port, source=source)
    assert isinstance(await opener.request(Guest()), LoggedIn)
    tables = []
    for _ in range(TABLES_EACH):
        created = await opener.request(
            CreateTable(game=Game.SPADES, preset="standard", options={"hand_schedule": SCHEDULE})
        )
        assert isinstance(created, TableCreated), created
        tables.append(created.table)
    await opener.aclose()
    return tables


async def test_a_big_lobby_is_listed_in_pages_that_each_fit_a_frame(tmp_path: Path) -> None:
    with ServerProcess(tmp_path / "s.db", "--no-ladder") as server, trio.fail_after(90):
        watcher = await welcomed(server.port)
        limit = watcher.welcome.limits.max_frame_size
        first = await watcher.request(ListTables())  # from now on it hears table_changed
        assert isinstance(first, Tables) and first.tables == []
        opened: list[str] = []
        for source in ADDRESSES:
            opened += await open_tables(server.port, source)
        assert len(opened) == 208

        # Every page fits the announced frame; the cursor leads through every table once.
        listed: list[str] = []
        cursor = None
        pages = 0
        for _ in range(50):  # bounded: 208 tables
            reply = await watcher.request(
                ListTables() if cursor is None else ListTables(cursor=cursor)
            )
            assert isinstance(reply, Tables), reply
            assert body_size(reply) <= limit, (body_size(reply), limit)
            listed += [info.table for info in reply.tables]
            pages += 1
            if reply.next is None:
                break
            cursor = reply.next
        assert sorted(listed) == sorted(opened) and len(listed) == len(set(listed))
        assert pages > 1
        changes = [m for m in watcher.received if isinstance(m, TableChanged)]
        assert len(changes) >= len(opened)
        assert max(body_size(m) for m in changes) <= limit

        # The terminal client (`spades tables`) follows the pages to the end.
        infos = await list_tables(ServerAddress("127.0.0.1", server.port), None)
        assert sorted(info.table for info in infos) == sorted(opened)


async def test_a_refused_option_is_answered_in_a_frame_a_client_can_read(
    shared_server: ServerProcess,
) -> None:
    # A list where the option takes true or false: the engine's sentence repeats the value, and
    # an `error` may carry 500 characters of it (the peer's decoder has the protocol's limits).
    with trio.fail_after(30):
        peer = await Peer.connect(shared_server.port)
        await peer.hello()
        assert isinstance(await peer.request(Guest()), LoggedIn)
        huge = CreateTable(
            game=Game.SPADES, preset="standard", options={"blind_nil": ["x" * 60] * 900}
        )
        refused = await peer.request(huge)
        assert isinstance(refused, Error) and refused.code == "bad_options", refused
        assert refused.detail == "blind_nil" and len(refused.message) <= 500
        assert body_size(refused) <= peer.welcome.limits.max_frame_size
