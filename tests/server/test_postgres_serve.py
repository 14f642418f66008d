"""`spades-server` on PostgreSQL end to end: `serve --db postgresql://...`, a kill -9 that loses no
committed action, the restart that resumes the game, and the commands (`export`,
`ladder add-house-bots`) on the same URL. The cluster is the run's throwaway one (tests/postgres.py).
"""

import json
import subprocess
import sys

import trio

from protocol.messages import (
    CreateTable,
    Joined,
    ListTables,
    Register,
    Registered,
    Snapshot,
    TableCreated,
    Tables,
)
from protocol.types import Game, TableStatus
from server.storage import read_transaction
from tests.server.players import play_into_second_hand, random_choice
from tests.server.test_crash import start_server
from tests.server.wire_client import WireClient

CLI = [sys.executable, "-m", "server.cli"]


def _hand_records(url: str) -> list[str]:
    with read_transaction(url) as tx:
        return [json.dumps(r, sort_keys=True) for r in tx.hand_records()]


async def test_kill_9_on_postgresql_loses_nothing_and_the_game_resumes(pg_url: str) -> None:
    with trio.fail_after(100):
        process, port = await start_server(pg_url)  # type: ignore[arg-type]
        try:
            client = await WireClient.connect(port)
            await client.hello()
            registered = await client.request(Register(name="survivor"))
            assert isinstance(registered, Registered)
            created = await client.request(
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
            # One hand, then into the next until our turn to play.
            seen_version = await play_into_second_hand(client, table_id, random_choice(7))
        finally:
            process.kill()  # SIGKILL
            await process.wait()
        await client.aclose()
        before = _hand_records(pg_url)
        assert before, "the finished hand is in PostgreSQL"

        process, port = await start_server(pg_url)  # type: ignore[arg-type]
        try:
            back = await WireClient.connect(port)
            await back.hello(token=registered.token)
            joined = await back.expect(Joined)
            assert joined.table == table_id and joined.seat == 0
            snapshot = await back.expect(Snapshot)
            assert snapshot.version >= seen_version  # nothing we were shown was lost
            listing = await back.request(ListTables())
            assert isinstance(listing, Tables)
            assert {i.table: i.status for i in listing.tables}[table_id] == TableStatus.PLAYING
            await back.aclose()
        finally:
            process.terminate()
            await process.wait()
        assert set(before) <= set(_hand_records(pg_url))

    exported = await trio.run_process(
        [*CLI, "export", "--game", table_id, "--db", pg_url],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    assert exported.returncode == 0, exported.stderr
    lines = exported.stdout.decode().splitlines()
    assert len(lines) >= 1 and all(json.loads(line)["format"] for line in lines)
    assert b"hand records" in exported.stderr


def test_the_commands_take_a_url_and_say_when_it_cannot_be_reached(pg_url: str) -> None:
    added = subprocess.run(
        [*CLI, "ladder", "add-house-bots", "random", "--db", pg_url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert added.returncode == 0, added.stderr
    assert "entered on the ladder: house:random" in added.stdout
    with read_transaction(pg_url) as tx:
        assert [e.spec for e in tx.house_entrants()] == ["random"]
    # Nobody listens on port 1: one line naming the URL, without its password, exit 4.
    url = "postgresql://ada:secret@127.0.0.1:1/nowhere"
    refused = subprocess.run(
        [*CLI, "serve", "--host", "127.0.0.1", "--port", "0", "--no-web", "--db", url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 4, refused.stderr
    (line,) = refused.stderr.strip().splitlines()[-1:]
    assert line.startswith(
        "error: cannot connect to PostgreSQL at postgresql://ada:***@127.0.0.1:1"
    )
    assert "secret" not in refused.stderr
    export = subprocess.run(
        [*CLI, "export", "--all", "--db", url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert export.returncode == 1 and "cannot connect to PostgreSQL" in export.stderr
    assert "secret" not in export.stderr
