"""Who claims an open table nobody owns (`membership.claim`), and why no table being opened is one.

A cluster server writes its table's `cluster_tables` row before it stores the table, so a stored
open table without an owner row is never one a live server is opening: it is a lone server's from
before the cluster, or one a server stored and then lost its row for (it died in between, or the
table crashed). Any live server adopts it, whoever else is alive, and each goes to one server.
"""

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import trio

from protocol.messages import (
    CreateTable,
    Joined,
    ListTables,
    LoggedIn,
    Login,
    Snapshot,
    TableCreated,
    Tables,
)
from protocol.types import Game
from server.app import local_config, running_server
from server.cluster import membership
from server.storage.postgres import connect, migrate
from tests.server.cluster.test_one_lobby import registered, until
from tests.server.wire_client import WireClient


@contextmanager
def _database(pg_url: str) -> Iterator[psycopg.Connection[Any]]:
    conn = connect(pg_url)
    try:
        migrate(conn, pg_url)
        yield conn
    finally:
        conn.close()


def _store_waiting_table(conn: psycopg.Connection[Any], table_id: str) -> None:
    conn.execute(
        "INSERT INTO tables (id, config, created_at, seats) VALUES (%s, '{}', 0, '[null]')",
        (table_id,),
    )


def test_an_open_table_nobody_owns_goes_to_one_server_while_others_live(pg_url: str) -> None:
    with _database(pg_url) as conn:
        for worker in ("w1", "w2"):
            membership.register(conn, worker, "127.0.0.1:1")
        _store_waiting_table(conn, "lost")  # its server died before it wrote the owner row
        assert membership.claim(conn, "w1") == ["lost"]
        assert membership.claim(conn, "w2") == []
        assert membership.owner_of(conn, "lost") == "w1"


def test_a_table_being_opened_is_never_taken_by_another_server(pg_url: str) -> None:
    with _database(pg_url) as conn:
        for worker in ("w1", "w2"):
            membership.register(conn, worker, "127.0.0.1:1")
        membership.own(conn, "w1", "new")
        assert membership.claim(conn, "w2") == []
        _store_waiting_table(conn, "new")
        assert membership.claim(conn, "w2") == []
        assert membership.owner_of(conn, "new") == "w1"


async def test_a_cluster_server_owns_its_table_before_it_stores_it(
    pg_url: str, tmp_path: Path
) -> None:
    """The database itself refuses a table stored before its owner row (a trigger), so a table
    created through a cluster server shows the order the server writes them in."""
    with _database(pg_url) as conn:
        conn.execute(
            "CREATE FUNCTION owned_first() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            " IF NOT EXISTS (SELECT 1 FROM cluster_tables WHERE table_id = NEW.id) THEN"
            " RAISE EXCEPTION 'table % stored before its owner row', NEW.id; END IF;"
            " RETURN NEW; END $$"
        )
        conn.execute(
            "CREATE TRIGGER owned_first BEFORE INSERT ON tables"
            " FOR EACH ROW EXECUTE FUNCTION owned_first()"
        )
        config = local_config(tmp_path / "unused.db", db_url=pg_url, cluster=True)
        with trio.fail_after(60):
            async with running_server(config) as server:
                ada, _ = await registered(server.port, "ada")
                created = await ada.request(
                    CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
                )
                assert isinstance(created, TableCreated), created
                await ada.aclose()


async def test_a_lone_servers_open_tables_are_adopted_by_the_cluster_after_it(
    pg_url: str, tmp_path: Path
) -> None:
    """A lone server on PostgreSQL stops; a cluster server started on its database opens the
    game it left (its player gets the seat back on logging in) and lists its waiting table."""
    with trio.fail_after(60):
        async with running_server(local_config(tmp_path / "unused.db", db_url=pg_url)) as lone:
            ada, login = await registered(lone.port, "ada")
            playing = await ada.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
            )
            bea, _ = await registered(lone.port, "bea")
            waiting = await bea.request(CreateTable(game=Game.SPADES, preset="standard", sit=0))
            assert isinstance(playing, TableCreated) and isinstance(waiting, TableCreated)
            for client in (ada, bea):
                await client.aclose()
        config = local_config(tmp_path / "unused.db", db_url=pg_url, cluster=True)
        async with running_server(config) as server:
            assert {playing.table, waiting.table} <= set(server.lobby.tables)
            ada = await WireClient.connect(server.port)
            await ada.hello()
            assert isinstance(await ada.request(Login(token=login.token)), LoggedIn)
            back = await until(ada, Joined, lambda m: m.table == playing.table)
            assert back.seat == 0
            await ada.expect(Snapshot)
            listing = await ada.request(ListTables())
            assert isinstance(listing, Tables)
            assert waiting.table in {info.table for info in listing.tables}
            await ada.aclose()


async def test_a_table_the_database_will_not_own_is_refused_and_nothing_opens(
    pg_url: str, tmp_path: Path
) -> None:
    with _database(pg_url) as conn:
        conn.execute(
            "CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            " RAISE EXCEPTION 'no more tables'; END $$"
        )
        conn.execute(
            "CREATE TRIGGER refuse BEFORE INSERT ON cluster_tables"
            " FOR EACH ROW EXECUTE FUNCTION refuse()"
        )
        config = local_config(tmp_path / "unused.db", db_url=pg_url, cluster=True)
        with trio.fail_after(60):
            async with running_server(config) as server:
                ada, _ = await registered(server.port, "ada")
                refused = await ada.request(
                    CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
                )
                assert refused.TYPE == "error" and refused.code == "internal", refused  # type: ignore[attr-defined]
                assert refused.message == "the server could not save that"  # type: ignore[attr-defined]
                assert server.lobby.tables == {}
                await ada.aclose()
        assert conn.execute("SELECT COUNT(*) FROM tables").fetchone() == (0,)
