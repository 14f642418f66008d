"""`spades-bot run` for a newcomer (issue 18, items 14-17, and issue 16's environment): one-line
usage errors, a refused token said once and plainly, a server that is not there given up on in
bounded time (unless `--retry-forever`), `HOST` alone meaning port 7777, and SPADES_SERVER,
SPADES_TOKEN and SPADES_TABLE standing in for the flags."""

import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest
import trio

import bots.sdk.runner as runner_module
import client.config
import server.config
from bots.cli import main
from bots.registry import make_bot
from bots.sdk.runner import (
    DEFAULT_PORT,
    BotRunner,
    RunnerConfig,
    RunnerError,
    RunStats,
    parse_address,
)
from protocol.types import Game
from server.app import Server, local_config, running_server
from tests.bots.test_runner import bot_account_and_table

BINDIR = Path(sys.executable).parent


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`spades-bot ARGS` in this process: its exit code, stdout and stderr."""
    with pytest.raises(SystemExit) as exit_info:
        main(args)
    out, err = capsys.readouterr()
    code = exit_info.value.code
    return (code if isinstance(code, int) else 1), out, err


def one_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    assert len(lines) == 1, text
    assert "Traceback" not in text and "╭" not in text and "│" not in text, text
    return lines[0]


# ---- item 14: usage errors are one line ---------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["run", "random"], "give exactly one of --table ID, --ladder and --event EVENT"),
        (["run", "random", "--ladder", "--event", "E1"], "give exactly one of --table ID"),
        (["run", "random", "--ladder", "--partner", "bo"], "--partner goes with --event"),
        (["run", "random", "--table", "t1"], "give --token (or set SPADES_TOKEN)"),
        (["run"], "Missing argument"),
        (["run", "random", "--bogus"], "No such option: --bogus"),
        (["run", "random", "--table", "t", "--token", "x", "--server", "h:99999"], "the port"),
        (["run", "no.such:Bot", "--table", "t", "--token", "x"], "no.such"),
        (["arena"], "Missing argument"),
        (["nonsense"], "No such command"),
    ],
)
def test_usage_errors_are_one_line(
    args: list[str], says: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SPADES_TOKEN", raising=False)
    code, out, err = run_main(args, capsys)
    assert code == 2
    line = one_line(err)
    assert line.startswith("error: ") and says in line, line
    assert line.endswith("--help)"), line
    assert out == ""


def test_the_installed_command_prints_the_same_line() -> None:
    done = subprocess.run(
        [str(BINDIR / "spades-bot"), "run", "random"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("SPADES_")},
    )
    assert done.returncode == 2
    assert one_line(done.stderr) == (
        "error: give exactly one of --table ID, --ladder and --event EVENT (see spades-bot run --help)"
    )


def test_no_arguments_show_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run_main([], capsys)
    assert code == 2 and "Usage" in out and "run" in out


# ---- item 15: a bad token ---------------------------------------------------------------------------


async def test_a_bad_token_is_refused_in_one_sentence_without_connecting_as_none(
    server: Server, caplog: pytest.LogCaptureFixture
) -> None:
    _, table = await bot_account_and_table(server, "token-owner", Game.HEARTS, "hearts", {})
    config = RunnerConfig(host="127.0.0.1", port=server.port, token="42.wrong", table=table)
    with trio.fail_after(20), pytest.raises(RunnerError) as refused:
        await BotRunner(make_bot("random", seed=1), config).run()
    assert "did not accept the token (bad_token" in str(refused.value)
    assert not refused.value.gave_up
    logged = caplog.text
    assert "as None" not in logged and "(None)" not in logged, logged


async def test_the_command_says_the_token_is_bad_and_nothing_else(server: Server) -> None:
    _, table = await bot_account_and_table(server, "token-owner-2", Game.HEARTS, "hearts", {})
    with trio.fail_after(60):
        done = await trio.run_process(
            [str(BINDIR / "spades-bot"), "run", "random", "--table", table, "--token", "42.nope"],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env={**os.environ, "SPADES_SERVER": f"127.0.0.1:{server.port}"},
        )
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert one_line(err).startswith("error: the server did not accept the token (bad_token"), err
    assert "None" not in err


# ---- item 16: a server that is not running -----------------------------------------------------------


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def unreachable(**overrides: Any) -> RunnerConfig:
    fields: dict[str, Any] = {
        "host": "127.0.0.1",
        "port": free_port(),
        "token": "t",
        "table": "t1",
        "backoff": (0.05, 0.1),
        "first_connect_for": 0.5,
    }
    return RunnerConfig(**{**fields, **overrides})


async def test_a_server_that_is_not_running_is_given_up_on_in_bounded_time() -> None:
    config = unreachable()
    with trio.fail_after(10), pytest.raises(RunnerError) as gave_up:
        await BotRunner(make_bot("random", seed=1), config).run()
    text = str(gave_up.value)
    assert gave_up.value.gave_up
    assert text.startswith(
        f"cannot reach the server at 127.0.0.1:{config.port} (connection refused"
    )
    assert "\n" not in text


async def test_retry_forever_keeps_trying() -> None:
    runner = BotRunner(make_bot("random", seed=1), unreachable(retry_forever=True))
    with trio.move_on_after(1.5) as still_trying:  # three times the bound, and more
        await runner.run()
    assert still_trying.cancelled_caught


def test_the_command_gives_up_in_one_line_and_names_the_flag(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    port = free_port()

    def quick(**fields: Any) -> RunnerConfig:
        return RunnerConfig(**{**fields, "backoff": (0.05, 0.1), "first_connect_for": 0.5})

    monkeypatch.setattr(runner_module, "RunnerConfig", quick)
    args = ["run", "random", "--server", f"127.0.0.1:{port}", "--token", "t", "--table", "t1"]
    code, _, err = run_main(args, capsys)
    assert code == 1
    line = one_line(err)
    assert line.startswith(f"error: cannot reach the server at 127.0.0.1:{port}"), line
    assert line.endswith("(--retry-forever keeps trying)"), line


# ---- item 17: HOST alone is port 7777 ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "address"),
    [
        ("127.0.0.1", ("127.0.0.1", 7777)),
        ("myhost", ("myhost", 7777)),
        ("myhost:7000", ("myhost", 7000)),
        ("[::1]", ("::1", 7777)),
        ("[::1]:7000", ("::1", 7000)),
        ("::1", ("::1", 7777)),
        (":7000", ("127.0.0.1", 7000)),
    ],
)
def test_an_address_without_a_port_means_7777(text: str, address: tuple[str, int]) -> None:
    assert parse_address(text) == address


@pytest.mark.parametrize("text", ["myhost:", "myhost:0", "myhost:x", "[::1", "[::1]x", "h:65536"])
def test_a_bad_port_is_refused_with_a_sentence(text: str) -> None:
    with pytest.raises(ValueError, match=r"HOST:PORT|port"):
        parse_address(text)


def test_the_default_port_is_the_servers_and_the_clients() -> None:
    assert DEFAULT_PORT == server.config.DEFAULT_PORT == client.config.DEFAULT_PORT


# ---- issue 16: the environment -------------------------------------------------------------------------


class Recorder:
    """Stands in for BotRunner: keeps the config the command built and plays nothing."""

    configs: ClassVar[list[RunnerConfig]] = []

    def __init__(self, bot: object, config: RunnerConfig) -> None:
        self.configs.append(config)

    async def run(self) -> RunStats:
        return RunStats()


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> list[RunnerConfig]:
    Recorder.configs = []
    monkeypatch.setattr(runner_module, "BotRunner", Recorder)
    for name in ("SPADES_SERVER", "SPADES_TOKEN", "SPADES_TABLE"):
        monkeypatch.delenv(name, raising=False)
    return Recorder.configs


def test_the_environment_stands_in_for_the_flags(
    recorded: list[RunnerConfig],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SPADES_SERVER", "10.1.2.3:7100")
    monkeypatch.setenv("SPADES_TOKEN", "env-token")
    monkeypatch.setenv("SPADES_TABLE", "envtable")
    code, _, err = run_main(["run", "random"], capsys)
    assert code == 0, err
    (config,) = recorded
    assert (config.host, config.port, config.token, config.table) == (
        "10.1.2.3",
        7100,
        "env-token",
        "envtable",
    )


def test_flags_win_over_the_environment(
    recorded: list[RunnerConfig],
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SPADES_SERVER", "10.1.2.3:7100")
    monkeypatch.setenv("SPADES_TOKEN", "env-token")
    monkeypatch.setenv("SPADES_TABLE", "envtable")
    args = ["run", "random", "--server", "otherhost", "--token", "flag-token", "--table", "t9"]
    assert run_main(args, capsys)[0] == 0
    assert run_main(["run", "random", "--ladder"], capsys)[0] == 0  # --ladder beats SPADES_TABLE
    flags, ladder = recorded
    assert (flags.host, flags.port, flags.token, flags.table) == (
        "otherhost",
        7777,
        "flag-token",
        "t9",
    )
    assert ladder.ladder and ladder.table is None and ladder.token == "env-token"


async def test_a_bot_plays_from_its_environment_alone(server: Server) -> None:
    token, table = await bot_account_and_table(
        server, "env-bot", Game.HEARTS, "hearts", {"target_score": 20}
    )
    env = {
        **os.environ,
        "SPADES_SERVER": f"127.0.0.1:{server.port}",
        "SPADES_TOKEN": token,
        "SPADES_TABLE": table,
    }
    with trio.fail_after(90):
        done = await trio.run_process(
            [str(BINDIR / "spades-bot"), "run", "random"],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=env,
        )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert "game over" in done.stdout.decode()


async def test_sigterm_ends_the_run_with_its_summary_and_exit_143(tmp_path: Path) -> None:
    # A service manager or `timeout` stops a bot with SIGTERM: the run ends as on Ctrl-C, with its
    # one-line summary, not killed mid-line by Python's default handler.
    async with running_server(local_config(tmp_path / "l.db", ladder=True)) as ladder_server:
        token, _ = await bot_account_and_table(ladder_server, "term-bot", Game.HEARTS, "hearts", {})
        err, code = await _terminated_run(ladder_server.port, token)
    assert code == 143, err
    assert "INFO done: 0 games, 0 decisions" in err and "Traceback" not in err, err


async def _terminated_run(port: int, token: str) -> tuple[str, int]:
    """`spades-bot run random --ladder` on a ladder with no one else: SIGTERM once it waits
    there; its stderr and exit code."""
    command = [str(BINDIR / "spades-bot"), "run", "random", "--ladder", "--token", token]
    env = {**os.environ, "SPADES_SERVER": f"127.0.0.1:{port}"}
    with trio.fail_after(60):
        process = await trio.lowlevel.open_process(command, stderr=subprocess.PIPE, env=env)
        assert process.stderr is not None
        seen = b""
        try:
            # Bounded by the deadline: the ladder has no other entrant, so the bot waits there.
            while b"entered the ladder" not in seen:
                chunk = await process.stderr.receive_some(4096)
                assert chunk, seen.decode() + f" (exit {await process.wait()})"
                seen += chunk
            process.terminate()
            while chunk := await process.stderr.receive_some(4096):
                seen += chunk
            await process.wait()
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()
    return seen.decode(), -1 if process.returncode is None else process.returncode
