"""Two servers on one PostgreSQL behave as one server: one lobby, and any table joined, watched
and played from whichever server a client reached (the hop forwards to the table's server).

Both servers run in this process (`running_server` twice, `cluster=True`, one database of the
run's throwaway cluster), on real TCP."""

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import trio

from protocol.messages import (
    Act,
    Chat,
    ChatMessage,
    CreateTable,
    Join,
    Joined,
    ListTables,
    Register,
    Registered,
    Snapshot,
    Spectate,
    TableChanged,
    TableCreated,
    Tables,
    Turn,
    YourTurn,
)
from protocol.types import ChatScope, Game, TableStatus
from server.app import Server, local_config, running_server
from tests.server.players import random_choice
from tests.server.wire_client import WireClient

ServerOf = Callable[[str], AbstractAsyncContextManager[Server]]


@asynccontextmanager
async def two_servers(pg_url: str, tmp_path: Path) -> AsyncIterator[tuple[Server, Server]]:
    def config(name: str) -> object:
        return local_config(tmp_path / f"{name}.db", db_url=pg_url, cluster=True)

    async with (
        running_server(config("a")) as first,  # type: ignore[arg-type]
        running_server(config("b")) as second,  # type: ignore[arg-type]
    ):
        yield first, second


async def registered(port: int, name: str) -> tuple[WireClient, Registered]:
    client = await WireClient.connect(port)
    await client.hello()
    reply = await client.request(Register(name=name))
    assert isinstance(reply, Registered), reply
    return client, reply


async def until(client: WireClient, kind: type, check: Callable[..., bool] = lambda m: True):  # type: ignore[no-untyped-def]
    while True:  # bounded by the caller's fail_after
        message = await client.receive()
        assert message is not None, "the connection closed"
        if isinstance(message, kind) and check(message):
            return message


async def test_one_lobby_and_tables_joined_watched_and_played_across_servers(
    pg_url: str, tmp_path: Path
) -> None:
    with trio.fail_after(60):
        async with two_servers(pg_url, tmp_path) as (first, second):
            ada, _ = await registered(first.port, "ada")
            bea, _ = await registered(second.port, "bea")
            cid, _ = await registered(second.port, "cid")
            await bea.request(ListTables())  # bea hears lobby notices from now on
            created = await ada.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[2, 3], sit=0)
            )
            assert isinstance(created, TableCreated)
            table = created.table
            # The other server's lobby hears of it and lists it.
            await until(bea, TableChanged, lambda m: m.table.table == table)
            listing = await cid.request(ListTables())
            assert isinstance(listing, Tables)
            (info,) = [i for i in listing.tables if i.table == table]
            assert info.status is TableStatus.WAITING
            # bea, on the other server, takes the last seat; cid watches from there too.
            joined = await bea.request(Join(table=table))
            assert isinstance(joined, Joined) and joined.seat == 1
            await bea.expect(Snapshot)
            watching = await cid.request(Spectate(table=table))
            assert isinstance(watching, Joined) and watching.seat is None
            await cid.expect(Snapshot)
            assert table in first.lobby.tables and table not in second.lobby.tables

            # Both play their turns (bea through the hop); cid, watching from bea's server,
            # sees the table move on.
            async def play(client: WireClient, seed: int, turns: int) -> None:
                choose = random_choice(seed)
                for _ in range(turns):
                    turn = await until(client, YourTurn)
                    await client.send(Act(table=table, version=turn.version, action=choose(turn)))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(play, ada, 1, 3)
                nursery.start_soon(play, bea, 2, 3)
                seen = await until(cid, Turn, lambda m: m.version >= 6)
                assert seen.version >= 6
            # Lobby chat reaches the other server's members.
            await ada.request(Chat(scope=ChatScope.LOBBY, text="hello from a"))
            line = await until(cid, ChatMessage, lambda m: m.scope is ChatScope.LOBBY)
            assert line.text == "hello from a" and line.name == "ada"
            for client in (ada, bea, cid):
                await client.aclose()


async def test_a_table_opened_a_moment_ago_elsewhere_is_found_in_the_store(
    pg_url: str, tmp_path: Path
) -> None:
    """A join that reaches the other server before the table's notice does is looked up in the
    store and forwarded; a table nobody runs, or a wrong join code, is refused as on one server."""
    with trio.fail_after(60):
        async with two_servers(pg_url, tmp_path) as (first, second):
            ada, _ = await registered(first.port, "ada")
            for private in (False, True):
                bea, _ = await registered(second.port, f"bea{int(private)}")
                created = await ada.request(
                    CreateTable(game=Game.SPADES, preset="standard", bots=[2, 3], private=private)
                )
                assert isinstance(created, TableCreated)
                second.lobby.cluster.remote.pop(created.table, None)  # type: ignore[union-attr]
                if private:
                    refused = await bea.request(Join(table=created.table, code="WRONG1"))
                    assert refused.TYPE == "error" and refused.code == "private_table", refused  # type: ignore[attr-defined]
                    second.lobby.cluster.remote.pop(created.table, None)  # type: ignore[union-attr]
                joined = await bea.request(Join(table=created.table, code=created.code))
                assert isinstance(joined, Joined) and joined.seat == 0, joined
                await bea.expect(Snapshot)
                if not private:
                    await bea.aclose()
            missing = await bea.request(Spectate(table="nosuchtb"))
            assert missing.TYPE == "error" and missing.code == "no_such_table"  # type: ignore[attr-defined]
            await ada.aclose()
            await bea.aclose()


async def test_a_private_table_another_server_has_heard_of_opens_with_its_code(
    pg_url: str, tmp_path: Path
) -> None:
    """Once the other server has heard of a private table (its notice arrived), the right code
    joins it there and a wrong one is refused, as on one server. Before, every join of it from
    there was refused "the join code is wrong", the right code too (the table lookup checked the
    code it was not given); the test above met it only when the notice came late."""
    with trio.fail_after(60):
        async with two_servers(pg_url, tmp_path) as (first, second):
            ada, _ = await registered(first.port, "ada")
            bea, _ = await registered(second.port, "bea")
            await bea.request(ListTables())  # bea hears lobby notices from now on
            created = await ada.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[2, 3], private=True)
            )
            assert isinstance(created, TableCreated) and created.code
            await until(bea, TableChanged, lambda m: m.table.table == created.table)
            assert created.table in second.lobby.cluster.remote  # type: ignore[union-attr]
            refused = await bea.request(Join(table=created.table, code="WRONG1"))
            assert refused.TYPE == "error" and refused.code == "private_table", refused  # type: ignore[attr-defined]
            joined = await bea.request(Join(table=created.table, code=created.code))
            assert isinstance(joined, Joined) and joined.seat == 0, joined
            await bea.expect(Snapshot)
            await ada.aclose()
            await bea.aclose()
