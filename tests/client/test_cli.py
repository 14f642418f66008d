"""`spades` commands through typer's runner against a real in-process server.

The runner is synchronous and each command runs its own `trio.run`, so it runs in a worker thread
while the test's trio loop serves the server.
"""

from __future__ import annotations

import json
from pathlib import Path

import trio
from typer.testing import CliRunner, Result

from client.cli import app
from engine.game import new_game
from engine.records import game_records
from engine.ruleset import Ruleset
from server.app import Server

runner = CliRunner()


async def spades(*args: str, input: str | None = None) -> Result:
    def invoke() -> Result:
        return runner.invoke(app, list(args), input=input)

    with trio.fail_after(60):
        return await trio.to_thread.run_sync(invoke)


def one_line_error(result: Result, code: int = 1) -> str:
    """A failure is one `error: ...` line and a non-zero exit, never a traceback."""
    assert result.exit_code == code, result.output
    assert isinstance(result.exception, SystemExit), result.exception
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    assert "Traceback" not in result.output
    return lines[0]


async def test_connect_register_login_and_tables(server: Server, client_dirs: Path) -> None:
    address = f"127.0.0.1:{server.port}"
    result = await spades("connect", address)
    assert result.exit_code == 0, result.output
    assert f"at {address}" in result.output
    result = await spades("register", "ada")
    assert result.exit_code == 0, result.output
    assert "registered ada" in result.output
    token_file = next((client_dirs / "config" / "servers").glob("*.json"))
    token = json.loads(token_file.read_text())["token"]
    assert oct(token_file.stat().st_mode & 0o777) == "0o600"
    result = await spades("login", "--token", token)
    assert result.exit_code == 0 and "logged in as ada" in result.output, result.output
    result = await spades("connect", address)
    assert "logged in as ada" in result.output
    result = await spades("tables", "--json")
    assert result.exit_code == 0 and json.loads(result.output) == []
    result = await spades("create", "--preset", "hearts", "--bots", "2", "--no-sit", "--private")
    assert result.exit_code == 0, result.output
    assert "opened table" in result.output and "join code" in result.output
    listed = json.loads((await spades("tables", "--json")).output)
    assert len(listed) == 1 and listed[0]["game"] == "hearts" and listed[0]["private"] is True
    shown = await spades("tables")
    assert listed[0]["table"] in shown.output and "hearts" in shown.output


async def test_join_opens_the_play_screen_and_quit_leaves(server: Server) -> None:
    await spades("connect", f"127.0.0.1:{server.port}")
    opened = await spades(
        "create", "--preset", "standard", "--bots", "3", "--seat", "1", "--no-sit"
    )
    table = opened.output.split()[2]
    result = await spades("join", table, input="/help\n/quit\n")
    assert result.exit_code == 0, result.output
    assert f"table {table}" in result.output and "Scores" in result.output
    assert "/verify" in result.output  # the help overlay was drawn
    assert "your seat is held" in result.output


async def test_watch_a_table_of_bots(server: Server) -> None:
    await spades("connect", f"127.0.0.1:{server.port}")
    opened = await spades("create", "--preset", "standard", "--bots", "4", "--no-sit")
    assert opened.exit_code == 0, opened.output
    table = opened.output.split()[2]
    result = await spades("watch", table, input="/quit\n")
    assert result.exit_code == 0, result.output
    assert "watching" in result.output and "South" in result.output
    assert "Stopped watching" in result.output


async def test_failures_are_one_line(server: Server) -> None:
    assert "no server chosen" in one_line_error(await spades("tables"))
    assert "cannot reach" in one_line_error(await spades("connect", "127.0.0.1:1"))
    one_line_error(await spades("connect", "host:notaport"), code=2)
    await spades("connect", f"127.0.0.1:{server.port}")
    assert "unknown preset" in one_line_error(await spades("create", "--preset", "nope"), code=2)
    assert "no option" in one_line_error(await spades("create", "--opt", "colour=red"), code=2)
    assert "no table" in one_line_error(await spades("join", "nosuchtable"))
    assert "bad_name" in one_line_error(await spades("register", "x"))
    await spades("register", "ada")
    assert "name_taken" in one_line_error(await spades("register", "ada"))
    assert "token" in one_line_error(await spades("login", "--token", "tok-wrong"))
    assert "no game" in one_line_error(await spades("replay", "g404"))


def write_server_export(path: Path) -> list[dict[str, object]]:
    """A whole Hearts game by the engine, as `spades-server export` writes it."""
    game = new_game(Ruleset.from_preset("hearts", target_score=30))
    for number in range(200):
        if game.is_over:
            break
        if game.phase.value == "dealing":
            game.deal(f"export-seed-{number}".encode())
            continue
        seat = game.to_act()[0]
        game.apply(game.legal_actions(seat)[0])
    records = game_records(game, game_id="g7")
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return records


async def test_replay_a_server_export_and_the_local_history(tmp_path: Path) -> None:
    export = tmp_path / "hands.jsonl"
    records = write_server_export(export)
    result = await spades("replay", str(export), "--all")
    assert result.exit_code == 0, result.output
    assert result.output.count("trick 13") == len(records)
    assert result.output.count("verified: seed matches") == len(records)
    assert "MISMATCH" not in result.output
    # A doctored deal is caught.
    bad = dict(records[0])
    bad["deal"] = [records[0]["deal"][1], records[0]["deal"][0], *records[0]["deal"][2:]]  # type: ignore[index]
    doctored = tmp_path / "doctored.jsonl"
    doctored.write_text(json.dumps(bad) + "\n")
    assert "MISMATCH" in (await spades("replay", str(doctored))).output
    # The local history starts empty, then lists what the client journaled.
    assert "no games yet" in (await spades("history")).output
    from tests.client.test_state_render import play_hand

    state, _ = play_hand(Ruleset.from_preset("standard"), b"history-seed")
    from client.journal import Journal

    Journal("example:7777").append(state.finished_hands[0] | {"game_id": "t42"})
    listed = json.loads((await spades("history", "--json")).output)
    assert [g["game_id"] for g in listed] == ["t42"] and listed[0]["verified"] == "verified"
    table = await spades("history")
    assert "t42" in table.output and "spades" in table.output
    shown = await spades("replay", "t42")
    assert shown.exit_code == 0, shown.output
    assert "trick 13" in shown.output and "verified" in shown.output and "bids:" in shown.output


async def test_ladder_standings(server: Server) -> None:
    await spades("connect", f"127.0.0.1:{server.port}")
    result = await spades("ladder", "standings", "--json")
    assert result.exit_code == 0, result.output
    assert isinstance(json.loads(result.output), list)
    shown = await spades("ladder", "standings")
    assert shown.exit_code == 0, shown.output
    one_line_error(await spades("ladder", "standings", "--limit", "0"), code=2)


async def test_play_runs_its_own_server_and_resumes_the_game(client_dirs: Path) -> None:
    first = await spades("play", input="/quit\n")
    assert first.exit_code == 0, first.output
    assert "Spades" in first.output and "West (heuristic)" in first.output
    assert "`spades play` takes you back" in first.output
    again = await spades("play", input="/quit\n")
    assert again.exit_code == 0, again.output
    assert "Welcome back: your unfinished game" in again.output
    assert (client_dirs / "data" / "local-server.db").exists()


async def test_join_by_server_address_as_the_server_prints_it(server: Server) -> None:
    address = f"127.0.0.1:{server.port}"
    none_yet = one_line_error(await spades("join", address))
    assert "no public table has a free seat" in none_yet
    await spades("create", "--preset", "standard", "--bots", "3", "--seat", "2", "--no-sit")
    result = await spades("join", address, input="/quit\n")
    assert result.exit_code == 0, result.output
    assert "you are seat 2" in result.output


async def test_create_chooses_the_bots_strength(server: Server) -> None:
    await spades("connect", f"127.0.0.1:{server.port}")
    opened = await spades(
        "create", "--bots", "3", "--seat", "0", "--no-sit", "--bot", "search_fast"
    )
    assert opened.exit_code == 0, opened.output
    listed = json.loads((await spades("tables", "--json")).output)
    seats = listed[0]["seats"]
    assert [s.get("bot_kind") for s in seats] == [None, "search_fast", "search_fast", "search_fast"]
    assert [s.get("player") for s in seats][1:] == ["bot:search_fast"] * 3
    # A kind the server does not offer is refused before anything is sent, naming the kinds.
    refused = await spades("create", "--bots", "3", "--bot", "godlike")
    assert refused.exit_code == 2 and "search_fast" in refused.output, refused.output
    refused = await spades("play", "--bot", "godlike")  # the same choice, the same refusal
    assert refused.exit_code == 2 and "search_fast" in refused.output, refused.output


async def test_rules_says_a_ruleset_in_the_engines_words() -> None:
    shown = await spades("rules", "--preset", "hearts")
    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith("hearts: Hearts exactly as source 002 plays it")
    assert "Shooting the moon: no bonus: the shooter takes 26" in shown.output
    assert "Nil" not in shown.output and "_" not in shown.output
    shown = await spades("rules", "--opt", "blind_nil=true")
    assert "standard with blind_nil changed: Spades as pagat gives it" in shown.output
    assert "Blind nil: yes" in shown.output and "Blind nil is worth: 100 points" in shown.output
    assert "moon" not in shown.output
    assert "unknown preset" in one_line_error(await spades("rules", "--preset", "nope"), code=2)
    assert "nil_value" in one_line_error(await spades("rules", "--opt", "nil_value=-5"), code=2)
