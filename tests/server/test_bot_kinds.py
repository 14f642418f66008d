"""The bots' strength chosen when a table is opened (`create_table.bot`, issue 39 item 4): each kind
seats its own bot under its own account and is listed with the seat; an old client that names none
gets the server's own (heuristic); an unknown kind is refused with a code and a sentence; a restart
reopens a waiting table with its kind. A real server on 127.0.0.1 (port 0), a SQLite file."""

import struct
from pathlib import Path

import msgpack
import pytest
import trio

from protocol.messages import (
    CreateTable,
    Error,
    GameOver,
    Guest,
    ListTables,
    LoggedIn,
    Spectate,
    TableClosed,
    TableCreated,
    Tables,
)
from protocol.types import BotKind, Game, TableInfo
from server.app import Server, local_config, running_server
from server.table_bots import BOT_SPECS, kind_of
from tests.server.wire_client import WireClient


async def _guest(port: int) -> WireClient:
    client = await WireClient.connect(port)
    await client.hello()
    assert isinstance(await client.request(Guest()), LoggedIn)
    return client


async def _info(client: WireClient, table: str) -> TableInfo:
    tables = await client.request(ListTables())
    assert isinstance(tables, Tables), tables
    return next(info for info in tables.tables if info.table == table)


def test_every_kind_names_a_bot_and_the_search_budgets_are_the_servers() -> None:
    assert set(BOT_SPECS) == set(BotKind)
    for kind, spec in BOT_SPECS.items():
        assert kind_of(spec) is kind
    assert kind_of("search") is BotKind.SEARCH  # the search bot's own default is 200 ms
    assert kind_of("tests.server.test_builtin_seats:RaisingBot") is None
    assert BOT_SPECS[BotKind.SEARCH_FAST] == "search,ms=50"


@pytest.mark.parametrize(
    ("kind", "account"),
    [
        (BotKind.RANDOM, "bot:random"),
        (BotKind.SEARCH_FAST, "bot:search_fast"),
        (BotKind.SEARCH, "bot:search"),
        (None, "bot:heuristic"),  # an old client: the server's own bot
    ],
)
async def test_a_tables_bots_are_the_kind_asked_for_and_listed_so(
    server: Server, kind: BotKind | None, account: str
) -> None:
    with trio.fail_after(20):
        client = await _guest(server.port)
        created = await client.request(
            CreateTable(game=Game.SPADES, preset="standard", bots=[1, 3], bot=kind)
        )
        assert isinstance(created, TableCreated), created
        info = await _info(client, created.table)
        seats = [(s.player, s.bot, s.bot_kind) for s in info.seats]
        listed = kind if kind is not None else BotKind.HEURISTIC
        assert seats == [
            (None, False, None),
            (account, True, listed),
            (None, False, None),
            (account, True, listed),
        ]
        await client.aclose()


async def test_an_unknown_kind_is_refused_with_a_sentence_and_nothing_opens(
    server: Server,
) -> None:
    with trio.fail_after(20):
        client = await _guest(server.port)
        body = msgpack.packb(
            {"t": "create_table", "id": 77, "game": "spades", "preset": "standard", "bot": "god"}
        )
        await client.send_raw(struct.pack(">I", len(body)) + body)
        reply = await client.reply_to(77)
        assert isinstance(reply, Error), reply
        assert reply.code == "invalid_field"
        assert "bot" in reply.message and "search_fast" in reply.message, reply.message
        tables = await client.request(ListTables())
        assert isinstance(tables, Tables) and tables.tables == []
        await client.aclose()


async def test_a_table_of_quick_search_bots_plays_its_hand_out(server: Server) -> None:
    with trio.fail_after(60):
        client = await _guest(server.port)
        created = await client.request(
            CreateTable(
                game=Game.SPADES,
                preset="standard",
                options={"max_hands": 1},
                bots=[0, 1, 2, 3],
                bot=BotKind.SEARCH_FAST,
            )
        )
        assert isinstance(created, TableCreated), created
        await client.request(Spectate(table=created.table))
        end = await client.expect(GameOver | TableClosed)
        assert isinstance(end, GameOver), end
        await client.aclose()


async def test_a_restart_reopens_a_waiting_table_with_its_kind(tmp_path: Path) -> None:
    db = tmp_path / "server.db"
    with trio.fail_after(60):
        async with running_server(local_config(db)) as server:
            client = await _guest(server.port)
            created = await client.request(
                CreateTable(game=Game.HEARTS, preset="hearts", bots=[2], bot=BotKind.RANDOM)
            )
            assert isinstance(created, TableCreated), created
            await client.aclose()
        async with running_server(local_config(db)) as server:
            client = await _guest(server.port)
            info = await _info(client, created.table)
            assert [(s.player, s.bot_kind) for s in info.seats][2] == (
                "bot:random",
                BotKind.RANDOM,
            )
            await client.aclose()
