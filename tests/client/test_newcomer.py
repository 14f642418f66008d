"""Issue 18, a newcomer's first hour: each stumble reproduced, then fixed (the screen's own checks at
80x24 and 120x40 are in test_tmux_newcomer.py). Unit tests by the real engine, the play session
against a real in-process server, the commands through typer's runner."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import warnings
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
import trio
from rich.console import Console

from client.commands import Act, Problem, read_line
from client.config import ServerAddress
from client.journal import Journal, read_records
from client.lobby import create_request, register
from client.render import Screen, render
from client.results import notes_by_side
from client.session import Mode, PlaySession, Seating
from client.state import TableState
from engine.ruleset import Ruleset
from protocol import messages as m
from protocol.schema import to_map
from server.app import Server, local_config, running_server
from tests.client.engine_table import EngineTable
from tests.client.helpers import FakeDisplay, move_for, table_column, wait_for
from tests.client.test_cli import one_line_error, spades
from tests.client.test_state_render import feed, play_hand

ROOT = Path(__file__).resolve().parents[2]


def screen(state: TableState, width: int = 80, height: int = 24, now: float = 0.0) -> str:
    out = StringIO()
    Console(file=out, width=width, height=height).print(render(state, Screen(), now, width, height))
    return out.getvalue()


def start_session(
    address: ServerAddress, token: str | None, seating: Seating, root: Path
) -> tuple[PlaySession, FakeDisplay]:
    display = FakeDisplay()
    session = PlaySession(
        address=address,
        token=token,
        seating=seating,
        display=display,
        journal=Journal(address.key, root=root),
    )
    return session, display


async def play_until(session: PlaySession, display: FakeDisplay, done: object) -> None:
    """Type what a person would (a bid of 3, the first legal card) until `done()` holds."""
    state = session.state
    for _ in range(200):
        await wait_for(lambda: state.turn is not None or done(), "a turn")  # type: ignore[operator]
        if done():  # type: ignore[operator]
            return
        version = state.turn.version if state.turn else -1
        typed = move_for(state)
        await display.type(typed)
        try:
            await wait_for(
                lambda v=version: state.turn is None or state.turn.version != v,  # type: ignore[misc]
                "the move to be taken",
            )
        except AssertionError as exc:  # say what was typed and what the screen showed
            raise AssertionError(f"{exc}: typed {typed!r} at\n{display.screen}") from None
    raise AssertionError("never got there")


# ---------------------------------------------------------------- 1, 2, 3: across runs


async def test_scores_and_tricks_seen_before_a_quit_are_kept(
    server: Server, tmp_path: Path
) -> None:
    """Items 1 and 2: /quit after hand 1 and two tricks of hand 2, come back in a new session: the
    scores still list hand 1, and hand 2's record has every trick (none `not seen`)."""
    address = ServerAddress("127.0.0.1", server.port)
    credentials = await register(address, "newcomer")
    root = tmp_path / "history"
    create = Seating(Mode.CREATE, create=create_request("standard", {}, -1, False, 0))
    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            first, display = start_session(address, credentials.token, create, root)
            nursery.start_soon(first.run)
            await wait_for(first.seated.is_set, "the first snapshot")
            state = first.state

            def two_tricks_into_hand_2() -> bool:
                return len(state.scored) == 1 and sum(state.view.get("tricks") or []) >= 2

            await play_until(first, display, two_tricks_into_hand_2)
            table = state.table
            await display.type("/quit")
        async with trio.open_nursery() as nursery:
            again, display = start_session(
                address, credentials.token, Seating(Mode.JOIN, table=table), root
            )
            nursery.start_soon(again.run)
            await wait_for(again.seated.is_set, "the snapshot on coming back")
            state = again.state
            assert [row.hand_number for row in state.scored] == [1]
            await play_until(again, display, lambda: len(state.scored) == 2)
            display.width, display.height = 80, 24
            await display.type("/scores")
            await wait_for(lambda: display.screen.count("\nhand  ") == 1, "the scores overlay")
            assert re.search(r"^\s+1\s+[+-]\d+ → ", display.screen, re.M), display.screen
            assert re.search(r"^\s+2\s+[+-]\d+ → ", display.screen, re.M), display.screen
            await display.type("/quit")
    records = read_records(next(root.glob(f"*/{table}.jsonl")))
    assert [r["hand_number"] for r in records] == [1, 2]
    assert records[1]["missed_tricks"] == [] and records[1]["tricks_seen"] == list(range(1, 14))
    assert records[1]["verified"] == "verified"


async def test_the_fallback_s_moves_while_away_are_told(tmp_path: Path) -> None:
    """Item 3: /quit while to act, the server's bot plays for us, `spades join` again: the log says
    so (before: "nothing happened", the second snapshot's comparison with the first)."""
    config = local_config(tmp_path / "s.db", human_clock=0.3)
    async with running_server(config) as server:
        address = ServerAddress("127.0.0.1", server.port)
        credentials = await register(address, "zed")
        root = tmp_path / "history"
        create = Seating(Mode.CREATE, create=create_request("standard", {}, -1, False, 0))
        with trio.fail_after(60):
            async with trio.open_nursery() as nursery:
                first, _ = start_session(address, credentials.token, create, root)
                nursery.start_soon(first.run)
                await wait_for(lambda: first.state.turn is not None, "our turn")
                table = first.state.table
                first.quit()
            lobby = server.lobby.tables[table]
            await wait_for(lambda: lobby.game.version > first.state.turn.version + 4, "bots")  # type: ignore[union-attr]
            async with trio.open_nursery() as nursery:
                again, _ = start_session(
                    address, credentials.token, Seating(Mode.JOIN, table=table), root
                )
                nursery.start_soon(again.run)
                await wait_for(again.seated.is_set, "the snapshot on coming back")
                await wait_for(lambda: len(again.state.log) > 0, "the log")
                away = [line for line in again.state.log if "while you were away" in line.lower()]
                assert away, list(again.state.log)
                assert "nothing happened" not in " ".join(away)
                assert "the server's bot" in away[0] and "for you" in away[0], away
                again.quit()


def test_hands_scored_while_away_are_one_row_that_adds_up() -> None:
    state, table = play_hand(Ruleset.from_preset("standard"), b"seen-seed")
    assert [row.hand_number for row in state.scored] == [1]
    for number in range(2, 4):  # two hands we never saw
        table.take()
        table.deal(f"unseen-{number}".encode())
        while table.others_until_mine():
            table.act(to_map(table.legal()[0]))
    table.take()
    state.went_away()
    table.deal(b"back-seed")
    view = table.game.view(0).to_dict()
    state.apply(m.Snapshot(table="t1", version=table.game.version, seat=0, view=view), 0.0)
    rows = state.scored
    assert [(r.hand_number, r.label) for r in rows] == [(1, "1"), (2, "2-3*")]
    assert rows[-1].after == list(table.game.scores)
    assert [a + d for a, d in zip(rows[0].after, rows[1].delta, strict=True)] == rows[1].after


# ---------------------------------------------------------------- 4: another game while one waits


async def test_play_another_preset_says_a_game_is_unfinished(client_dirs: Path) -> None:
    first = await spades("play", input="/quit\n")
    assert first.exit_code == 0, first.output
    refused = one_line_error(await spades("play", "--preset", "hearts", input="/quit\n"))
    assert "spades game (standard)" in refused and "is unfinished" in refused, refused
    assert "`spades play --preset hearts --new`" in refused
    same = await spades("play", "--preset", "standard", input="/quit\n")
    assert "Welcome back" in same.output, same.output
    fresh = await spades("play", "--preset", "hearts", "--new", input="/quit\n")
    assert fresh.exit_code == 0, fresh.output
    assert "Left your unfinished game" in fresh.output and " Hearts " in fresh.output
    back = await spades("play", input="/quit\n")  # the Hearts game is the one held now
    assert "Welcome back" in back.output and " Hearts " in back.output, back.output


# ---------------------------------------------------------------- 5: the hand's result


def test_the_hands_result_names_whose_contract_and_stays_until_the_next_is_under_way() -> None:
    state, table = play_hand(Ruleset.from_preset("standard"), b"result-seed")
    assert state.result is not None
    text = "\n".join(state.result.lines)
    assert "seat " not in text
    assert re.search(r"Us: You \S+ \(took \d+\), North \S+ \(took \d+\)", text), text
    assert re.search(r"Them: West \S+ \(took \d+\), East \S+ \(took \d+\)", text), text
    assert re.search(r"Us: .*contract \d+ (made|set) with \d+", text), text
    for size in ((80, 24), (120, 40)):
        shown = screen(state, *size)
        assert state.result.lines[0] in shown and "Us: You" in shown
    table.deal(b"next-hand")
    feed(state, table)
    for _ in range(10):  # the bids of the next hand: the result stays
        if table.game.phase.value != "bidding":
            break
        assert state.result is not None
        seat = table.game.to_act()[0]
        table._tell(table.game.apply(table.game.legal_actions(seat)[0]))
        feed(state, table)
    assert table.game.phase.value == "playing" and state.result is not None
    seat = table.game.to_act()[0]
    table._tell(table.game.apply(table.game.legal_actions(seat)[0]))  # the first card
    feed(state, table)
    assert state.result is None


def test_notes_go_with_their_side() -> None:
    sides = [[0, 2], [1, 3]]
    notes = [
        "contract 5 made with 7",
        "seat 1 nil failed",
        "contract 4 set with 3",
        "10 bags: -100",
    ]
    assert notes_by_side(notes, sides) == [
        ["contract 5 made with 7"],
        ["seat 1 nil failed", "contract 4 set with 3", "10 bags: -100"],
    ]
    assert notes_by_side(["contract 5 made with 5", "contract 6 made with 8"], sides) == [
        ["contract 5 made with 5"],
        ["contract 6 made with 8"],
    ]


# ---------------------------------------------------------------- 6, 7: other people at the table


async def test_other_seats_clocks_tick_without_an_event(autojump_clock: trio.abc.Clock) -> None:
    """Item 6: another seat to act and no turn of ours: the screen is redrawn every second. (No
    server and no socket: the ticker's seconds are trio time, run by the autojump clock.)"""
    display = FakeDisplay()
    session = PlaySession(
        address=ServerAddress("127.0.0.1", 1),
        token=None,
        seating=Seating(Mode.CREATE, create=create_request("standard", {}, -1, False, 0)),
        display=display,
    )
    session.state = TableState(table="t1", seat=0)
    session.state.apply(
        m.Turn(table="t1", version=1, to_act=[3], deadline_ms=[30000], bank_ms=[0]),
        trio.current_time(),
    )
    session.redraw()
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(session._ticker)
            await wait_for(lambda: "◆ 28s" in display.screen, "East's clock to tick", 5.0)
            nursery.cancel_scope.cancel()


async def test_a_player_who_drops_and_comes_back_is_announced(
    server: Server, tmp_path: Path
) -> None:
    """Item 7: `seat_status` from the server; the others' screens say it, with the hold left."""
    address = ServerAddress("127.0.0.1", server.port)
    ada = await register(address, "ada")
    bea = await register(address, "bea")
    root = tmp_path / "history"
    request = create_request("standard", {}, 2, False, 0)  # bots at 1 and 2: seat 3 is free
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            host, host_display = start_session(
                address, ada.token, Seating(Mode.CREATE, create=request), root
            )
            nursery.start_soon(host.run)
            await wait_for(host.seated.is_set, "ada's table")
            table = host.state.table
            guest, _ = start_session(address, bea.token, Seating(Mode.JOIN, table=table), root)
            nursery.start_soon(guest.run)
            await wait_for(guest.seated.is_set, "bea at the table")
            (bea_session,) = [s for s in server.sessions if s.account and s.account.name == "bea"]
            guest.quit()  # bea's client stops: her connection drops
            await wait_for(
                lambda: "East (bea) disconnected (seat held for 2:00)." in host.state.log,
                "the drop",
            )
            assert 3 in host.state.away
            await wait_for(lambda: "away 1:5" in host_display.screen, "the hold on East's panel")
            del bea_session
            back, _ = start_session(address, bea.token, Seating(Mode.JOIN, table=table), root)
            nursery.start_soon(back.run)
            await wait_for(lambda: "East (bea) is back." in host.state.log, "the return")
            assert 3 not in host.state.away
            assert "disconnected (seat held" not in " ".join(
                back.state.log
            )  # told to the others only
            back.quit()
            host.quit()


# ---------------------------------------------------------------- 9, 10, 11: the command lines


async def test_register_shows_the_token_once_with_how_to_use_it(
    server: Server, client_dirs: Path
) -> None:
    await spades("connect", f"127.0.0.1:{server.port}")
    result = await spades("register", "ada")
    assert result.exit_code == 0, result.output
    token_file = next((client_dirs / "config" / "servers").glob("*.json"))
    token = json.loads(token_file.read_text())["token"]
    assert token in result.output
    assert "spades login --token TOKEN" in result.output and "spades connect" in result.output


async def test_a_private_tables_join_code_missing_or_wrong_is_told_apart(
    server: Server, client_dirs: Path
) -> None:
    await spades("connect", f"127.0.0.1:{server.port}")
    opened = await spades("create", "--bots", "2", "--no-sit", "--private")
    found = re.search(r"opened table (\w+) \(join code (\w+)\)", opened.output)
    assert found, opened.output
    table, code = found.groups()
    # As someone else would (this machine kept the code it opened the table with: client/codes.py).
    shutil.rmtree(client_dirs / "config" / "codes")
    missing = one_line_error(await spades("join", table, input="/quit\n"))
    assert "is private: add --code CODE" in missing, missing
    wrong = one_line_error(await spades("join", table, "--code", "WRONG1", input="/quit\n"))
    assert "the join code WRONG1 is wrong" in wrong, wrong
    right = await spades("join", table, "--code", code, input="/quit\n")
    assert right.exit_code == 0, right.output


async def test_export_takes_the_table_id_people_see(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from server.cli import app as server_app
    from tests.server.test_server_cli import _play_one_game

    db = tmp_path / "export.db"
    with trio.fail_after(60):
        game_id = await _play_one_game(db)
    import sqlite3

    with sqlite3.connect(db) as conn:
        (table,) = conn.execute("SELECT table_id FROM games WHERE id = ?", (game_id,)).fetchone()
    runner = CliRunner()
    by_table = runner.invoke(server_app, ["export", "--game", table, "--db", str(db)])
    by_number = runner.invoke(server_app, ["export", "--game", str(game_id), "--db", str(db)])
    assert by_table.exit_code == 0, by_table.output
    assert by_table.stdout == by_number.stdout and by_table.stdout.count("\n") >= 1
    unknown = runner.invoke(server_app, ["export", "--game", "K70VjVcR", "--db", str(db)])
    assert unknown.exit_code == 1
    assert "no game K70VjVcR" in unknown.output and "table id" in unknown.output
    assert "Traceback" not in unknown.output


# ---------------------------------------------------------------- 8, 13: make and the install


def _installed() -> bool:
    """The checkout's .venv is this interpreter's and up to date (make would not reinstall)."""
    make = shutil.which("make")
    venv = ROOT / ".venv"
    if make is None or Path(sys.prefix).resolve() != venv.resolve():
        return False
    return subprocess.run([make, "-q", ".venv/.installed"], cwd=ROOT, check=False).returncode == 0


@pytest.mark.skipif(not _installed(), reason="needs make and this checkout's own .venv, installed")
def test_make_install_puts_the_commands_on_a_path_and_play_takes_args(tmp_path: Path) -> None:
    bindir = tmp_path / "bin"
    done = subprocess.run(
        ["make", "install", f"BINDIR={bindir}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{bindir} is not on your PATH" in done.stdout
    for command in ("spades", "spades-server", "spades-bot"):
        assert (bindir / command).is_symlink()
    version = subprocess.run(
        ["spades", "version"],
        env={"PATH": f"{bindir}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert version.stdout.startswith("spades "), version.stdout + version.stderr
    dry = subprocess.run(
        ["make", "-n", "play", "ARGS=--preset hearts"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert ".venv/bin/spades play --preset hearts" in dry.stdout
    subprocess.run(["make", "uninstall", f"BINDIR={bindir}"], cwd=ROOT, timeout=30, check=True)
    assert not any(bindir.iterdir())
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    top = readme[: readme.index("## What works today")]
    assert "make install" in top and "ARGS=" in top


def test_the_editable_install_prints_no_warning_box(tmp_path: Path) -> None:
    """Item 13: setuptools warns on every editable install of a flat layout that does not name its
    package dir. The build backend runs here as pip runs it, without the network."""
    setuptools = pytest.importorskip("setuptools")
    major = int(setuptools.__version__.split(".")[0])
    if major < 77:
        pytest.skip(f"setuptools {setuptools.__version__} is older than the build needs (77)")
    script = (
        "import os, sys, warnings\n"
        "warnings.simplefilter('always')\n"
        "from setuptools import build_meta\n"
        f"print(build_meta.build_editable({str(tmp_path)!r}))\n"
    )
    with warnings.catch_warnings():
        done = subprocess.run(
            [sys.executable, "-c", script],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "Editable installation" not in done.stderr, done.stderr[-2000:]
    assert "Please be careful" not in done.stderr + done.stdout


# ---------------------------------------------------------------- 19, 20, 21, 22: the screen


def test_nothing_in_the_seat_panels_is_cut_at_either_size() -> None:
    table = EngineTable(Ruleset.from_preset("standard"))
    state = TableState(ruleset=table.ruleset)
    table.deal(b"panel-seed")
    feed(state, table)
    state.view["bids"] = [
        {"text": "blind nil"},
        {"text": "10"},
        {"text": "blind nil"},
        {"text": "13"},
    ]
    state.names = {1: "bot:heuristic", 2: "bot:heuristic", 3: "bot:heuristic"}
    state.apply(m.Turn(table="t1", version=1, to_act=[3], deadline_ms=[23000], bank_ms=[0]), 0.0)
    for size in ((80, 24), (120, 40)):
        shown = screen(state, *size)
        assert "…" not in shown, shown
        assert "bid 13 · won 0" in shown and "13 cards ◆ 23s" in shown and "bid blind nil" in shown


def test_three_handed_spades_without_bags_shows_none() -> None:
    state, _ = play_hand(Ruleset.from_preset("three-player"), b"three-seed")
    scores = next(line for line in screen(state).splitlines() if line.startswith("Scores"))
    assert "bags" not in scores, scores
    standard, _ = play_hand(Ruleset.from_preset("standard"), b"four-seed")
    assert "bags)" in next(line for line in screen(standard).splitlines() if "Scores" in line)


def test_bid_as_help_writes_it_and_only_the_bids_on_offer_are_listed() -> None:
    table = EngineTable(Ruleset.from_preset("standard"))
    state = TableState(ruleset=table.ruleset)
    table.deal(b"bid-seed")
    assert table.others_until_mine()
    feed(state, table)
    assert state.turn is not None and "bid" in state.turn.kinds()
    command = read_line("bid 2", state)
    assert isinstance(command, Act) and command.action.tricks == 2, command
    refused = read_line("bid lots", state)
    assert isinstance(refused, Problem)
    assert "blind nil" not in refused.message, refused.message  # not offered in this preset
    assert "nil" in refused.message and "1 to 13" in refused.message, refused.message
    assert "bid: 1 to 13, nil" in screen(state)


def test_a_spectator_sees_the_cards_left_in_every_hand() -> None:
    """Item 22: from the second hand on, a watcher saw `0 cards` for every seat: `hand_dealt`
    carries no cards for a spectator and the client kept the sizes the last hand ended with."""
    ruleset = Ruleset.from_preset("standard")
    table = EngineTable(ruleset, seat=None)
    state = TableState(ruleset=ruleset)
    for hand in range(2):
        table.deal(f"watch-{hand}".encode())
        feed(state, table)
        for _ in range(20):
            seat = table.game.to_act()[0]
            table._tell(table.game.apply(table.game.legal_actions(seat)[0]))
        feed(state, table)
        expected = table.game.spectator_view().to_dict()["hand_sizes"]
        assert state.view["hand_sizes"] == expected, (hand, state.view["hand_sizes"], expected)
        while table.game.phase.value not in ("dealing", "game_over"):
            seat = table.game.to_act()[0]
            table._tell(table.game.apply(table.game.legal_actions(seat)[0]))
        feed(state, table)


def ladder_match_at_80_columns(teams: list[list[str]], **fields: Any) -> str:
    """`spades ladder matches` of one two-half match of `teams`, printed 80 columns wide."""
    from client.lobby import matches_view
    from protocol.types import LadderHalf, LadderMatch, MatchStatus

    match = LadderMatch(
        match="m-12",
        status=MatchStatus.RATED,
        time=1_700_000_000,
        preset="standard",
        teams=teams,
        halves=[LadderHalf(game=3, points=[362, 21]), LadderHalf(game=4, points=[40, 300])],
        points=[402, 321],
        winner=0,
        **fields,
    )
    out = StringIO()
    Console(file=out, width=80).print(matches_view([match]))
    text = out.getvalue()
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= 80, text
    return text


def test_the_ladders_match_table_keeps_whole_team_names_at_80_columns() -> None:
    teams = [["deep-trick-search-v2", "heuristic-house"], ["random-house", "ada.lovelace-1815"]]
    text = ladder_match_at_80_columns(teams, forfeits=[])
    for index, team in ((2, teams[0]), (3, teams[1])):  # each team's cell, put back together
        column = table_column(text, index, 6)
        assert column.replace(" ", "") == "+".join(team), (column, text)


def test_the_ladders_match_table_loses_nothing_beside_a_forfeit() -> None:
    """A forfeit makes the result longer; at 80 columns nothing is cut off: the names wrap at
    the `+`s (a long one folds), and the halves wrap at their spaces."""
    teams = [["my-bot", "house:search,ms=5"], ["house:random", "ada-lovelace1"]]
    text = ladder_match_at_80_columns(
        teams, forfeits=["house:random"], bots=["my-bot", "house:search,ms=5", "house:random"]
    )
    assert "my-bot*" in text, text  # a short name is never folded
    team_a, team_b = (table_column(text, i, 6).replace(" ", "") for i in (2, 3))
    assert (team_a, team_b) == ("my-bot*+house:search,ms=5*", "house:random*+ada-lovelace1"), text
    assert table_column(text, 4, 6).split() == ["362:21", "40:300"], text
    assert "A won 402:321 (forfeit)" in text, text
