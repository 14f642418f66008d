"""`spades-server serve --workers N` on PostgreSQL: the workers as one server, a worker killed with
`kill -9` loses no committed action and its tables are taken over from the store within seconds
(their players get their seats back as after a restart), and a stalled worker that comes back
after its tables were taken never writes for them again (two workers never run one table).
"""

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
import trio

from protocol.messages import (
    Act,
    CreateTable,
    Guest,
    Joined,
    ListTables,
    LoggedIn,
    Login,
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
from protocol.types import Game
from server.cluster.membership import LOBBY_CHANNEL
from server.storage import read_transaction
from tests.server.players import play_into_second_hand, random_choice
from tests.server.wire_client import WireClient

CLI = [sys.executable, "-m", "server.cli"]


async def start_workers(url: str, workers: int = 2) -> tuple[trio.Process, int]:
    process = await trio.lowlevel.open_process(
        [
            *CLI,
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--no-web",
            "--no-ladder",
            "--workers",
            str(workers),
            "--db",
            url,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    line = b""
    while not line.endswith(b"\n"):  # bounded by the caller's fail_after
        chunk = await process.stdout.receive_some(1)
        assert chunk, "the supervisor exited before printing its address"
        line += chunk
    assert b"with 2 workers" in line or f"with {workers} workers".encode() in line, line
    return process, int(line.decode().strip().rsplit(":", 1)[1])


def owner_pid(url: str, table_id: str) -> int:
    """The process id of the worker that runs `table_id` (its bookkeeping connection's name)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT a.application_name FROM cluster_tables c JOIN pg_stat_activity a"
            " ON a.application_name LIKE 'spades-server cluster ' || c.worker || ' pid %%'"
            " WHERE c.table_id = %s",
            (table_id,),
        ).fetchone()
    assert row is not None, "the table has an owner"
    return int(str(row[0]).rsplit(" ", 1)[1])


def actions(url: str, table_id: str) -> list[tuple[int, str]]:
    with read_transaction(url) as tx:
        game = tx.latest_game_at(table_id)
        assert game is not None
        stored = tx.load_game(game)
        assert stored is not None
        return [(a.seq, json.dumps(a.action, sort_keys=True)) for a in stored.actions]


async def stop(process: trio.Process) -> None:
    process.terminate()
    with trio.move_on_after(20):
        await process.wait()
    if process.returncode is None:
        process.kill()
        await process.wait()


async def seat_back(
    port: int, token: str, client: WireClient, table_id: str
) -> tuple[WireClient, Snapshot]:
    """The seat at `table_id` given back: on the same connection if it survived (the worker
    that took the table over asks for it), else after reconnecting and logging in again."""
    while True:  # bounded by the caller's fail_after
        message = await client.receive()
        if message is None:  # our worker was the one killed: reconnect, as a client does
            await client.aclose()
            client = await WireClient.connect(port)
            await client.hello()
            logged = await client.request(Login(token=token))
            assert isinstance(logged, LoggedIn)
            continue
        if isinstance(message, Joined) and message.table == table_id:
            assert message.seat == 0
            return client, await client.expect(Snapshot)


async def test_a_killed_worker_loses_nothing_and_its_tables_move(pg_url: str) -> None:
    with trio.fail_after(100):
        process, port = await start_workers(pg_url)
        try:
            ada = await WireClient.connect(port)
            await ada.hello()
            registered = await ada.request(Register(name="ada"))
            assert isinstance(registered, Registered)
            created = await ada.request(
                CreateTable(
                    game=Game.SPADES,
                    preset="standard",
                    options={"target_score": 300},
                    bots=[1, 2, 3],
                    sit=0,
                )
            )
            assert isinstance(created, TableCreated)
            table_id = created.table
            seen = await play_into_second_hand(ada, table_id, random_choice(5))
            before = actions(pg_url, table_id)
            victim = owner_pid(pg_url, table_id)
            os.kill(victim, signal.SIGKILL)
            killed_at = time.monotonic()
            ada, snapshot = await seat_back(port, registered.token, ada, table_id)
            moved_in = time.monotonic() - killed_at
            assert snapshot.version >= seen  # nothing ada was shown was lost
            assert actions(pg_url, table_id)[: len(before)] == before
            assert owner_pid(pg_url, table_id) != victim
            print(f"taken over and seated again {moved_in:.1f} s after kill -9")
            assert moved_in < 30
            # Both workers (the killed one started again) serve one lobby.
            for _ in range(4):
                other = await WireClient.connect(port)
                await other.hello()
                listing = await other.request(ListTables())
                assert isinstance(listing, Tables)
                assert table_id in {i.table for i in listing.tables}
                await other.aclose()
            await ada.aclose()
        finally:
            await stop(process)


async def test_a_stalled_worker_never_writes_for_a_table_taken_from_it(pg_url: str) -> None:
    """SIGSTOP the worker that runs ada's table: the other takes the table over once the lease
    ran out; SIGCONT: the stalled one finds its lease gone and stops (its writer's fence refuses
    any commit meanwhile). ada gets her seat back and plays on, one sequence of actions."""
    with trio.fail_after(100):
        process, port = await start_workers(pg_url)
        try:
            ada = await WireClient.connect(port)
            await ada.hello()
            registered = await ada.request(Register(name="ada"))
            assert isinstance(registered, Registered)
            created = await ada.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
            )
            assert isinstance(created, TableCreated)
            table_id = created.table
            seen = await play_into_second_hand(ada, table_id, random_choice(9))
            stalled = owner_pid(pg_url, table_id)
            with lobby_notices(pg_url) as notices:
                os.kill(stalled, signal.SIGSTOP)
                try:
                    await adopted(notices, table_id)
                    assert owner_pid(pg_url, table_id) != stalled
                finally:
                    os.kill(stalled, signal.SIGCONT)
            await exited(stalled)  # it found its lease gone and stopped
            ada, snapshot = await seat_back(port, registered.token, ada, table_id)
            assert snapshot.version >= seen
            choose = random_choice(11)
            played = 0
            while played < 8:  # bounded by fail_after
                message = await ada.receive()
                assert message is not None
                if isinstance(message, YourTurn):
                    await ada.send(
                        Act(table=table_id, version=message.version, action=choose(message))
                    )
                    played += 1
            await ada.aclose()
            seqs = [seq for seq, _ in actions(pg_url, table_id)]
            assert seqs == list(range(len(seqs))) and len(seqs) > seen
        finally:
            await stop(process)


async def listed(client: WireClient, table_id: str) -> None:
    """Until this client's server lists `table_id` (its lobby hears of another server's table
    a moment after that server opened it)."""
    listing = await client.request(ListTables())
    assert isinstance(listing, Tables)
    if table_id in {i.table for i in listing.tables}:
        return
    while True:  # bounded by the caller's fail_after; the listing subscribed us to notices
        message = await client.receive()
        assert message is not None
        if isinstance(message, TableChanged) and message.table.table == table_id:
            return


async def watch_until(port: int, table_id: str, version: int) -> None:
    """Watch the table until its game reaches `version`."""
    watcher = await WireClient.connect(port)
    await watcher.hello()
    assert isinstance(await watcher.request(Guest()), LoggedIn)
    await listed(watcher, table_id)
    joined = await watcher.request(Spectate(table=table_id))
    assert isinstance(joined, Joined), joined
    while True:  # bounded by the caller's fail_after
        message = await watcher.receive()
        assert message is not None
        if isinstance(message, Snapshot | Turn) and message.version >= version:
            break
    await watcher.aclose()


@contextmanager
def lobby_notices(url: str) -> Iterator[psycopg.Connection[Any]]:
    """A connection listening to the cluster's lobby notices."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"LISTEN {LOBBY_CHANNEL}")
        yield conn


async def adopted(conn: psycopg.Connection[Any], table_id: str) -> None:
    """Until a server says it took `table_id` over."""
    while True:  # bounded by the caller's fail_after
        conn.pgconn.consume_input()
        while (note := conn.pgconn.notifies()) is not None:
            if table_id in json.loads(note.extra).get("adopted", []):
                return
        await trio.lowlevel.wait_readable(conn.pgconn.socket)


async def exited(pid: int) -> None:
    """Until process `pid` (not ours: the supervisor's child) has ended."""
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    try:
        await trio.lowlevel.wait_readable(fd)
    finally:
        os.close(fd)


def test_workers_need_a_postgresql_database(tmp_path: object) -> None:
    done = subprocess.run(
        [*CLI, "serve", "--workers", "2", "--db", "/tmp/x.db"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "error: --workers 2 needs a PostgreSQL --db (postgresql://user@host:port/db), which the"
        " servers share; a SQLite file serves one process"
    ]


def test_a_database_that_cannot_be_had_is_one_line_and_exit_4() -> None:
    """Under --workers (the workers say why, the supervisor adds nothing and exits as they do),
    --cluster, and a URL too malformed to parse: one line, the password hidden, no traceback."""
    unreachable = "postgresql://ada:secret@127.0.0.1:1/nowhere"  # nobody listens on port 1
    for flags, url in (
        (["--workers", "2"], unreachable),
        (["--cluster"], unreachable),
        ([], "postgresql://ada:secret@[::1/nowhere"),
    ):
        done = subprocess.run(
            [*CLI, "serve", *flags, "--host", "127.0.0.1", "--port", "0", "--no-web", "--db", url],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 4, (flags, done.stderr)
        assert "Traceback" not in done.stderr and "secret" not in done.stderr, done.stderr
        (line,) = [line for line in done.stderr.splitlines() if line.startswith("error:")]
        assert line.startswith("error: cannot connect to PostgreSQL at postgresql://ada:***@"), line
