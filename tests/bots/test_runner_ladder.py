"""The runner on the ladder does what it says (issue 19, item 2): `--games N` counts ladder matches,
and its log says, at info level, every match start and end, every forfeit with its reason, every
clock expiry naming its seat, and a one-line summary at exit.

Before: `spades-bot run --ladder --games 1` played on forever (six matches in two minutes), a
`RunnerConfig(games=N)` counted the halves' games, and the log said nothing when a bot lost
matches by forfeit.
"""

from __future__ import annotations

import dataclasses
import logging
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

import bots.sdk.runner as runner_module
from bots.registry import make_bot
from bots.sdk.bot import AsyncBot
from bots.sdk.runner import BotRunner, RunnerConfig
from bots.sdk.view import BotView
from engine.actions import Action
from protocol.messages import Message, YourTurn
from server.app import Server, local_config, running_server
from server.ladder.settings import LadderSettings
from tests.bots.test_runner_cli import Recorder, run_main
from tests.server.ladder.test_service import register_bot

BINDIR = Path(sys.executable).parent
SETTINGS = LadderSettings(hands=1, interval=0.05, seed=4)


async def house_bots(server: Server) -> None:
    """Three house bots: a lone runner always has a match."""
    assert server.ladder is not None
    for spec in ("random", "heuristic", "search,ms=5"):
        await server.ladder.add_house_bot(spec)


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    config = local_config(tmp_path / "ladder.db", ladder=True, ladder_settings=SETTINGS)
    async with running_server(config) as running:
        await house_bots(running)
        yield running


def config_for(server: Server, token: str, **fields: Any) -> RunnerConfig:
    return RunnerConfig(
        host="127.0.0.1",
        port=server.port,
        token=token,
        ladder=True,
        backoff=(0.05, 0.2),
        **fields,
    )


def lines(caplog: pytest.LogCaptureFixture, level: int = logging.INFO) -> list[str]:
    """What the runner logged at `level` or above, in order."""
    return [
        r.getMessage() for r in caplog.records if r.levelno >= level and r.name == "bots.runner"
    ]


async def test_games_counts_ladder_matches_and_the_log_says_each(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bots.runner")
    token = await register_bot(server, "counted")
    with trio.fail_after(90):
        stats = await BotRunner(
            make_bot("heuristic", seed=1), config_for(server, token, games=2)
        ).run()
    # Two matches, each one table: two games.
    assert [m["match"] for m in stats.matches] == ["m-1", "m-2"]
    assert len(stats.games) == 2 and stats.forfeits == []
    said = lines(caplog)
    # With the three house bots a match can start at once, and the log says so.
    assert "entered the ladder: waiting for a match; 3 other entrants are on the ladder" in said
    for match in ("m-1", "m-2"):
        (start,) = [x for x in said if x.startswith(f"match {match} started")]
        assert start.startswith(f"match {match} started at table L")
        (ended,) = [x for x in said if x.startswith(f"match {match} over: our team placed")]
        assert "rating" in ended
    assert "its seats play on a clock of 5 s a decision" in said[0]
    assert said[-1] == stats.summary()
    assert said[-1].startswith("done: 2 ladder matches, 2 games, ")


def test_the_command_counts_matches_on_the_ladder(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    Recorder.configs = []
    monkeypatch.setattr(runner_module, "BotRunner", Recorder)
    base = ["run", "random", "--token", "1.t"]
    for args in (
        ["--ladder", "--games", "1"],
        ["--ladder"],
        ["--table", "t1"],
        ["--ladder", "--games", "3"],
    ):
        assert run_main([*base, *args], capsys)[0] == 0
    assert [c.games for c in Recorder.configs] == [1, 0, 1, 3]


async def test_spades_bot_run_ladder_games_1_stops_after_one_match(server: Server) -> None:
    token = await register_bot(server, "one-match")
    with trio.fail_after(90):
        done = await trio.run_process(
            [
                str(BINDIR / "spades-bot"),
                "run",
                "heuristic",
                "--server",
                f"127.0.0.1:{server.port}",
                "--token",
                token,
                "--ladder",
                "--games",
                "1",
            ],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    out, err = done.stdout.decode(), done.stderr.decode()
    assert done.returncode == 0, err[-2000:]
    assert out.count("match m-") == 1 and "match m-1 over: place" in out
    assert out.strip().splitlines()[-1].startswith("done: 1 ladder match, 1 game, ")
    assert "INFO match m-1 started at table L" in err and "INFO match m-1 over" in err


class Stalling(AsyncBot):
    """Thinks past the server's clock every time: the server's fallback acts for it."""

    async def decide(self, view: BotView) -> Action:
        await trio.sleep_forever()
        raise AssertionError("unreachable")


async def test_a_forfeit_by_timeouts_and_each_clock_expiry_are_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bots.runner")
    settings = dataclasses.replace(SETTINGS, max_timeouts=2, cooldown=0.0)
    config = local_config(
        tmp_path / "slow.db", ladder=True, ladder_settings=settings, bot_clock=0.3
    )
    with trio.fail_after(90):
        async with running_server(config) as server:
            await house_bots(server)
            token = await register_bot(server, "staller")
            # A negative margin: the runner waits past the deadline, so the server acts first.
            runner = BotRunner(Stalling(), config_for(server, token, games=1, margin=-2.0))
            stats = await runner.run()
    assert stats.clock_expiries == 2
    assert stats.forfeits == [
        {"match": "m-1", "table": stats.forfeits[0]["table"], "reason": "timeouts"}
    ]
    assert stats.matches == [{**stats.matches[0], "match": "m-1", "forfeited": "timeouts"}]
    said = lines(caplog)
    expired = [x for x in said if x.startswith("clock expired for our seat")]
    assert len(expired) == 2 and "(1 this match, m-1" in expired[0]
    (forfeit,) = [x for x in said if x.startswith("forfeited match m-1")]
    assert "our clock ran out 2 times this match" in forfeit
    assert any(x.startswith("match m-1 over") and "(forfeited: timeouts)" in x for x in said)
    # No game_over reaches a seat given up: the forfeited match's game is not a game of ours.
    assert said[-1].startswith("done: 1 ladder match (1 forfeited: timeouts), 0 games, ")


async def test_a_drop_mid_match_is_a_forfeit_and_the_runner_enters_again(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bots.runner")
    token = await register_bot(server, "dropper")
    turns = 0

    def drop_on_the_second_turn(message: Message) -> None:
        nonlocal turns
        if isinstance(message, YourTurn):
            turns += 1
            if turns == 2:
                runner.disconnect()

    runner = BotRunner(
        make_bot("heuristic", seed=3),
        config_for(server, token, games=2),
        on_message=drop_on_the_second_turn,
    )
    with trio.fail_after(90):
        stats = await runner.run()
    assert [f["reason"] for f in stats.forfeits] == ["disconnected"]
    # The forfeited match (over for us at the drop) and the next one, played in full.
    assert stats.matches[0] == {"match": "m-1", "forfeited": "disconnected"}
    assert stats.matches[1]["match"] == "m-2" and "forfeited" not in stats.matches[1]
    said = lines(caplog)
    (forfeit,) = [x for x in said if x.startswith("forfeited match m-1")]
    assert "our connection dropped during it" in forfeit
    assert sum(x.startswith("entered the ladder") for x in said) == 2
    assert said[-1].startswith("done: 2 ladder matches (1 forfeited: disconnected), ")
