"""The client's connection while the server has paused play (issue 38): an answer that waits for
the server's database is waited for, where a request otherwise gives the connection up after its
reply timeout (a server that stopped answering)."""

from pathlib import Path

import trio

from client.config import ServerAddress
from client.connection import open_connection
from protocol.messages import Register, Registered
from server.app import local_config, running_server
from server.storage.sqlite import SqliteDatabase


async def test_a_request_outlives_its_timeout_while_play_is_paused(tmp_path: Path) -> None:
    with trio.fail_after(30):
        async with running_server(local_config(tmp_path / "s.db")) as server:
            database = server.store.database
            assert isinstance(database, SqliteDatabase)
            # The file is read-only (simulated): the next write waits, and play is paused.
            database.conn.execute("PRAGMA query_only = 1")
            went_down = trio.Event()
            server.store.health.watch(lambda up: None if up else went_down.set())
            async with open_connection(ServerAddress("127.0.0.1", server.port)) as conn:
                answered: list[object] = []

                async def register() -> None:
                    answered.append(await conn.request(Register(name="a" * 20), wait=0.5))

                async with trio.open_nursery() as nursery:
                    nursery.start_soon(register)
                    await went_down.wait()
                    # Three reply timeouts pass: the request still waits (the server is paused).
                    await trio.sleep(1.5)
                    assert not answered and not conn.closed.is_set() and conn.paused
                    database.conn.execute("PRAGMA query_only = 0")
                assert isinstance(answered[0], Registered)
                assert not conn.paused and conn.pauses == 1
