"""`spades-server serve` and `export` as a user runs them."""

import json
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import trio
from typer.testing import CliRunner

from protocol.messages import Bye, CreateTable, GameOver, Guest, Spectate, TableCreated
from protocol.types import Game
from server.app import local_config, running_server
from server.cli import app
from tests.server.test_crash import start_server
from tests.server.wire_client import WireClient


async def test_serve_prints_the_address_and_stops_gracefully_on_sigterm(tmp_path: Path) -> None:
    db = tmp_path / "served.db"
    with trio.fail_after(30):
        process, port = await start_server(db)
        client = await WireClient.connect(port)
        await client.hello()
        process.send_signal(signal.SIGTERM)
        bye = await client.expect(Bye)
        assert bye.reason and "shutting down" in bye.reason
        assert await process.wait() == 0
        await client.aclose()
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    conn.close()


def test_serve_refuses_a_bad_port() -> None:
    result = CliRunner().invoke(app, ["serve", "--port", "70000"])
    assert result.exit_code == 2
    assert "port" in result.output


async def _play_one_game(db: Path) -> int:
    async with running_server(local_config(db)) as srv:
        client = await WireClient.connect(srv.port)
        await client.hello()
        await client.request(Guest())
        created = await client.request(
            CreateTable(
                game=Game.HEARTS, preset="hearts", options={"target_score": 30}, bots=[0, 1, 2, 3]
            )
        )
        assert isinstance(created, TableCreated)
        await client.request(Spectate(table=created.table))
        game_id = srv.lobby.tables[created.table].game_id
        await client.expect(GameOver)
        await client.aclose()
        assert game_id is not None
        return game_id


async def test_export_writes_json_lines(tmp_path: Path) -> None:
    db = tmp_path / "export.db"
    with trio.fail_after(60):
        game_id = await _play_one_game(db)
    out = tmp_path / "hands.jsonl"
    runner = CliRunner()
    result = runner.invoke(app, ["export", "--game", str(game_id), "--db", str(db), "-o", str(out)])
    assert result.exit_code == 0, result.output
    lines = out.read_text().splitlines()
    assert lines and all(isinstance(json.loads(line), dict) for line in lines)
    everything = runner.invoke(app, ["export", "--all", "--db", str(db)])
    assert everything.exit_code == 0
    assert len([line for line in everything.stdout.splitlines() if line.startswith("{")]) == len(
        lines
    )
    missing = runner.invoke(app, ["export", "--game", "999", "--db", str(db)])
    assert missing.exit_code == 1 and "no game 999" in missing.output
    neither = runner.invoke(app, ["export", "--db", str(db)])
    assert neither.exit_code == 2
    nodb = runner.invoke(app, ["export", "--all", "--db", str(tmp_path / "none.db")])
    assert nodb.exit_code == 1 and "no database" in nodb.output


def test_module_runs_as_a_script() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "server.cli", "version"], capture_output=True, text=True, check=True
    )
    assert done.stdout.startswith("spades-server ")


SERVE = [sys.executable, "-m", "server.cli", "serve", "--host", "127.0.0.1", "--port", "0"]


async def test_json_logs_are_one_object_per_line(tmp_path: Path) -> None:
    db = tmp_path / "json.db"
    with trio.fail_after(30):
        process = await trio.lowlevel.open_process(
            [*SERVE, "--db", str(db), "--log-format", "json", "--no-ladder"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        assert process.stderr is not None
        text = b""
        while b'"listening"' not in text:  # bounded by fail_after
            chunk = await process.stderr.receive_some(4096)
            assert chunk, text
            text += chunk
        process.send_signal(signal.SIGTERM)
        while chunk := await process.stderr.receive_some(4096):
            text += chunk
        assert await process.wait() == 0
    events = [json.loads(line) for line in text.decode().splitlines() if line.strip()]
    names = [event["event"] for event in events]
    assert "listening" in names and "signal" in names and names[-1] == "stopped"
    listening = events[names.index("listening")]
    assert listening["port"] > 0 and listening["level"] == "info" and "timestamp" in listening
