"""The bot kit (`spades-server conformance -- COMMAND...`): the SDK's sample bots and the JavaScript
example pass it, and a bot that breaks a rule is told which, with the section to read."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from bots.conformance.report import Outcome, Verdict
from server.cli import app as server_app
from server.conformance.kit import check_bot
from server.conformance.scenarios import scenarios_for
from tests.bots.test_js_example import EXAMPLE, node_ready

BINDIR = Path(sys.executable).parent
SPADES_BOT = str(BINDIR / "spades-bot")
ROGUE = str(Path(__file__).with_name("rogue_bot.py"))
# The scenarios where a bot's own decisions matter (the rest are the runner's, shared by every
# sample bot, and run in full with the heuristic).
DECISIONS = ["play-hearts", "blind-nil"]


def failures(outcomes: list[Outcome]) -> list[str]:
    return [f"{o.name}: {p.text} ({p.section})" for o in outcomes for p in o.failures] + [
        f"{o.name}: {o.verdict.value}" for o in outcomes if o.verdict is Verdict.SKIP
    ]


@pytest.mark.timeout(400)
async def test_the_sdk_runner_passes_every_scenario(tmp_path: Path) -> None:
    with trio.fail_after(380):
        outcomes = await check_bot([SPADES_BOT, "run", "heuristic"], workdir=tmp_path)
    assert [o.name for o in outcomes] == [s.name for s in scenarios_for(["standard", "hearts"])]
    assert failures(outcomes) == []


@pytest.mark.timeout(300)
@pytest.mark.parametrize("bot", ["random", "search,ms=20"])
async def test_every_sample_bot_answers_every_decision(bot: str, tmp_path: Path) -> None:
    with trio.fail_after(280):
        outcomes = await check_bot([SPADES_BOT, "run", bot], only=DECISIONS, workdir=tmp_path)
    assert failures(outcomes) == []


@pytest.mark.timeout(300)
async def test_the_javascript_example_passes_every_scenario(tmp_path: Path) -> None:
    reason = node_ready()
    if reason is not None:
        pytest.skip(f"the JavaScript example needs Node.js: {reason}")
    with trio.fail_after(280):
        outcomes = await check_bot(["node", str(EXAMPLE / "bot.js")], workdir=tmp_path)
    assert failures(outcomes) == []


@pytest.mark.timeout(200)
async def test_the_command_works_as_written(tmp_path: Path) -> None:
    # `spades-server conformance -- spades-bot run heuristic`, with both on the PATH.
    env = {**os.environ, "PATH": f"{BINDIR}{os.pathsep}{os.environ.get('PATH', '')}"}
    with trio.fail_after(180):
        done = await trio.run_process(
            [
                "spades-server",
                "conformance",
                "--only",
                "handshake-token",
                "--keep",
                str(tmp_path),
                "--",
                "spades-bot",
                "run",
                "heuristic",
            ],
            env=env,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()[-2000:]
    assert "handshake-token  pass" in out and "1 passed, 0 failed" in out
    transcript = (tmp_path / "handshake-token" / "transcript.txt").read_text()
    assert "bot>" in transcript and '"t":"game_over"' in transcript


@pytest.mark.timeout(200)
@pytest.mark.parametrize(
    ("mode", "scenario", "said", "section"),
    [
        (
            "join-first",
            "handshake-token",
            "the bot's first message was join, not hello",
            "#handshake",
        ),
        (
            "wrong-version",
            "handshake-token",
            "which no your_turn it was sent on that connection named",
            "#your_turn",
        ),
        ("illegal", "handshake-token", "which is not in its your_turn's legal", "#act"),
        ("silent", "idle-ping", "the server refused the bot: timeout", "#limits-and-clocks"),
        (
            "no-retry",
            "rate-limited",
            "the bot did not send its join again after rate_limited",
            "#limits-and-clocks",
        ),
        ("talks-after-bye", "bye", "after the server's bye: nothing follows a bye", "#connection"),
    ],
)
async def test_a_bot_that_breaks_a_rule_is_told_which_and_where_to_read(
    mode: str,
    scenario: str,
    said: str,
    section: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ROGUE", mode)  # the kit hands its environment on to the bot
    with trio.fail_after(180):
        outcomes = await check_bot([sys.executable, ROGUE], only=[scenario], workdir=tmp_path)
    (outcome,) = outcomes
    assert outcome.verdict is Verdict.FAIL
    matching = [p for p in outcome.failures if said in p.text]
    assert matching, failures(outcomes)
    assert section in str(matching[0].section)


@pytest.mark.timeout(200)
async def test_a_failing_bot_makes_the_command_exit_1(tmp_path: Path) -> None:
    env = {**os.environ, "ROGUE": "join-first"}
    with trio.fail_after(180):
        done = await trio.run_process(
            [
                str(BINDIR / "spades-server"),
                "conformance",
                "--only",
                "handshake-token",
                "--",
                sys.executable,
                ROGUE,
            ],
            env=env,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    out = done.stdout.decode()
    assert done.returncode == 1, out
    assert "handshake-token  FAIL" in out
    assert "read: docs/protocol.md#handshake" in out


def test_usage_mistakes_exit_2() -> None:
    runner = CliRunner()
    for args, words in (
        ([], "give the bot's command after --"),
        (["--preset", "nope", "--", "true"], "no preset nope"),
        (["--only", "nope", "--", "true"], "no scenario nope"),
        (["--", "no-such-program-here"], "is not a program on PATH"),
    ):
        result = runner.invoke(server_app, ["conformance", *args])
        assert result.exit_code == 2, (args, result.output)
        assert words in result.output


def test_the_scenarios_are_listed() -> None:
    result = CliRunner().invoke(server_app, ["conformance", "--list", "--preset", "hearts"])
    assert result.exit_code == 0
    names = [line.split()[0] for line in result.output.splitlines()]
    assert names == [s.name for s in scenarios_for(["hearts"])]
    assert "blind-nil" not in names  # a Hearts-only bot is not put through Spades' scenarios
