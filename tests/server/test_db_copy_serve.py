"""A real server's data moved from SQLite to PostgreSQL with `spades-server db copy` (real
processes, the run's throwaway PostgreSQL): the server started on the copy resumes the game where
it stopped (the same snapshot, the same next action as the original gives), `export` is byte for
byte the same on the original, the copy and the copy back to SQLite, and every table's digest is
the same on all three."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import trio

from protocol.messages import (
    CreateTable,
    Joined,
    Register,
    Registered,
    Snapshot,
    TableCreated,
    Turn,
    YourTurn,
)
from protocol.types import Game
from server.storage.target import Target
from tests.server.players import play_into_second_hand, random_choice
from tests.server.test_crash import start_server
from tests.server.wire_client import WireClient

CLI = [sys.executable, "-m", "server.cli"]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *args], capture_output=True, text=True, timeout=120, check=False)


async def stop(process: trio.Process) -> None:
    process.send_signal(signal.SIGTERM)
    assert await process.wait() == 0


async def resumed(db: Target, token: str, table_id: str) -> tuple[object, ...]:
    """Start a server on `db`, log in again, and read what the table tells our seat: the
    snapshot, who must act, and what we may do; then stop the server."""
    process, port = await start_server(db)  # type: ignore[arg-type]
    try:
        client = await WireClient.connect(port)
        await client.hello(token=token)
        joined = await client.expect(Joined)
        assert joined.table == table_id and joined.seat == 0
        snapshot = await client.expect(Snapshot)
        turn = await client.expect(Turn)
        mine = await client.expect(YourTurn)
        await client.aclose()
    finally:
        await stop(process)
    return (
        snapshot.version,
        snapshot.seat,
        snapshot.view,
        snapshot.commitment,
        turn.to_act,
        mine.version,
        mine.legal,
    )


async def a_game_into_its_second_hand(db: Path, name: str, seed: int) -> tuple[str, str]:
    """A real server on `db`: account `name` plays a hand and into the next with three bots, until
    its card is due; then the server stops. (token, table)."""
    process, port = await start_server(db)
    try:
        client = await WireClient.connect(port)
        await client.hello()
        registered = await client.request(Register(name=name))
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
        # A hand scored and recorded, then into the next until our card is due.
        await play_into_second_hand(client, created.table, random_choice(seed))
        await client.aclose()
    finally:
        await stop(process)
    return registered.token, created.table


async def test_a_server_on_the_postgresql_copy_resumes_the_game(
    tmp_path: Path, pg_url: str
) -> None:
    original = tmp_path / "club.db"
    with trio.fail_after(100):
        token, table = await a_game_into_its_second_hand(original, "mover", 11)

    copied = run("db", "copy", "--from", str(original), "--to", pg_url)
    assert copied.returncode == 0, copied.stderr
    report = copied.stdout.splitlines()
    assert [line.split(":")[0] for line in report][:5] == [
        "accounts",
        "tables",
        "games",
        "hands",
        "actions",
    ]
    assert "hand_records: 1 rows" in copied.stdout
    back = tmp_path / "back.db"
    returned = run("db", "copy", "--from", pg_url, "--to", str(back))
    assert returned.returncode == 0, returned.stderr
    assert returned.stdout.splitlines() == report
    for db in (str(original), pg_url, str(back)):
        assert run("db", "digest", "--db", db).stdout.splitlines() == report

    exports = [run("export", "--all", "--db", db) for db in (str(original), pg_url, str(back))]
    assert all(e.returncode == 0 for e in exports), [e.stderr for e in exports]
    assert exports[0].stdout and exports[0].stdout == exports[1].stdout == exports[2].stdout

    again = run("db", "copy", "--from", str(original), "--to", pg_url)
    assert again.returncode == 7 and len(again.stderr.splitlines()) == 1

    with trio.fail_after(100):
        on_copy = await resumed(pg_url, token, table)
        on_original = await resumed(original, token, table)
    assert on_copy == on_original
