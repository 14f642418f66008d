"""The lobby's listing: bounded entries (`server.listing`, pure) and pages that fit a frame, followed
by cursor through a whole server over memory streams."""

from __future__ import annotations

import dataclasses

import pytest
import trio

from protocol.codec import pack_value
from protocol.messages import (
    CreateTable,
    Error,
    Guest,
    ListTables,
    LoggedIn,
    TableChanged,
    TableClosed,
    TableCreated,
    Tables,
)
from protocol.types import Clock, Game, SeatInfo, TableInfo, TableStatus
from protocol.wire import encode, encode_body, to_wire
from server.app import running_server
from server.config import Limits
from server.listing import OPTIONS_BUDGET, Page, bounded_info, packed_size
from server.table_commands import CloseUnoccupiedCommand
from tests.server.unit.memory import MemoryClient, MemoryListener, memory_config

FRAME = 64 * 1024


def worst_info(number: int = 0, /, **options: object) -> TableInfo:
    """A table entry with every bounded field at its longest, and the options given."""
    return TableInfo(
        table=f"{number:032d}",
        game=Game.SPADES,
        preset="p" * 64,
        options=dict(options),  # type: ignore[arg-type]
        seats=[SeatInfo(seat=seat, player="n" * 32, bot=True, connected=True) for seat in range(4)],
        clock=Clock(turn_ms=2**31 - 1, bank_ms=2**31 - 1),
        bot_clock=Clock(turn_ms=2**31 - 1, bank_ms=2**31 - 1),
        private=True,
        status=TableStatus.WAITING,
        spectators=2**31 - 1,
    )


LONG = ["x" * 64] * 1000  # a list option as long as the wire lets one be


def test_small_options_are_listed_as_they_are() -> None:
    info = worst_info(target_score=500, blind_nil=True, hand_schedule=["regular", "mirror"])
    assert bounded_info(info) is info


def test_an_option_too_long_to_list_is_left_out_and_named() -> None:
    info = worst_info(target_score=500, blind_nil=True, hand_schedule=LONG, hearts_pass_cycle=LONG)
    entry = bounded_info(info)
    assert entry.options == {"target_score": 500, "blind_nil": True}
    assert entry.options_omitted == ["hand_schedule", "hearts_pass_cycle"]
    assert packed_size(entry.options) <= OPTIONS_BUDGET
    assert dataclasses.replace(entry, options=info.options, options_omitted=None) == info


def test_the_small_options_survive_beside_a_long_one() -> None:
    # Kept shortest first, so one long list does not push out the many small options.
    many = {f"option_{n:02d}": n for n in range(40)}
    entry = bounded_info(worst_info(hand_schedule=["y" * 60] * 20, **many))
    assert entry.options == many and entry.options_omitted == ["hand_schedule"]


def test_every_entry_is_bounded_whatever_its_options() -> None:
    options = {f"{'o' * 60}{n:02d}": LONG for n in range(64)}
    entry = bounded_info(worst_info(**options))
    assert packed_size(to_wire(TableChanged(seq=2**53 - 1, table=entry))) < 8 * 1024
    assert entry.options_omitted is not None and len(entry.options_omitted) == 64


@pytest.mark.parametrize("frame", [FRAME, 16 * 1024, 4 * 1024])
def test_every_page_fits_the_frame(frame: int) -> None:
    infos = [worst_info(n, hand_schedule=["z" * 60] * (n % 20)) for n in range(500)]
    listed: list[TableInfo] = []
    for _ in range(500):  # bounded: every page takes at least one entry
        page = Page(limit=200, max_bytes=frame)
        start = len(listed)
        for info in infos[start:]:
            if not page.add(info):
                break
        assert page.entries, "a page took nothing"
        listed.extend(page.entries)
        more = len(listed) < len(infos)
        reply = Tables(id=2**32 - 1, tables=page.entries, next="9" * 32 if more else None)
        assert len(encode_body(reply)) <= frame
        if not more:
            break
    assert [info.table for info in listed] == [info.table for info in infos]


def test_a_page_stops_at_its_limit() -> None:
    page = Page(limit=3, max_bytes=FRAME)
    assert [page.add(worst_info(n)) for n in range(4)] == [True, True, True, False]


def test_an_entry_too_big_for_a_tiny_frame_is_listed_without_its_options() -> None:
    info = worst_info(hand_schedule=["z" * 60] * 15)
    page = Page(limit=10, max_bytes=1400)
    assert page.add(info)
    assert page.entries[0].options == {} and page.entries[0].options_omitted == ["hand_schedule"]
    assert not page.add(info)  # the next one waits for the next page


async def test_a_client_follows_the_cursor_through_every_table() -> None:
    # A small frame (8 KiB) makes pages of a few tables; tables opened and closed between the
    # pages neither repeat nor hide the others.
    listener = MemoryListener()
    limits = Limits(max_frame_bytes=8 * 1024, max_tables_per_address=100)
    with trio.fail_after(30):
        async with running_server(memory_config(limits=limits), listeners=[listener]) as server:
            client = await MemoryClient.connect(listener)
            await client.hello()
            assert isinstance(await client.request(Guest()), LoggedIn)
            schedule = ["partnership_fourteen"] * 15  # about 330 bytes of options each
            opened = []
            for _ in range(60):
                created = await client.request(
                    CreateTable(
                        game=Game.SPADES, preset="standard", options={"hand_schedule": schedule}
                    )
                )
                assert isinstance(created, TableCreated), created
                opened.append(created.table)
            first = next(iter(server.lobby.tables))
            seen: list[str] = []
            cursor = None
            pages = 0
            for _ in range(100):
                reply = await client.request(ListTables(cursor=cursor, limit=200))
                assert isinstance(reply, Tables), reply
                assert len(encode(reply)) - 4 <= limits.max_frame_bytes
                seen += [info.table for info in reply.tables]
                pages += 1
                if pages == 2:
                    # One listed table closes, and a new one opens, between pages.
                    lobby = server.lobby
                    lobby.submit_later(lobby.tables[first], CloseUnoccupiedCommand(ttl=0.0))
                    assert (await client.expect(TableClosed)).table == first
                    opened.remove(first)
                    late = await client.request(CreateTable(game=Game.HEARTS, preset="hearts"))
                    assert isinstance(late, TableCreated)
                    opened.append(late.table)
                if reply.next is None:
                    break
                cursor = reply.next
            assert pages >= 5
            assert len(seen) == len(set(seen))
            assert set(opened) <= set(seen)
            # A cursor this server did not make is refused, naming the field.
            refused = await client.request(ListTables(cursor="abc"))
            assert isinstance(refused, Error) and refused.code == "invalid_field", refused
            assert refused.detail == "cursor"
            # Every table_changed the listing's notices brought fits too.
            changes = [m for m in client.received if isinstance(m, TableChanged)]
            assert changes
            assert all(len(pack_value(to_wire(m))) <= limits.max_frame_bytes for m in changes)
