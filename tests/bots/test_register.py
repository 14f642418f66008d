"""`spades-bot register` (issue 19, item 1): a bot account made from the command line, its token
shown once with how to use it, kept where `spades-bot run` finds it, and its clock said.

Before: there was no such command; docs/bots.md said to send `register` over the protocol, and a
newcomer used `spades register my-bot`, which makes a person's account (listed `my-bot (human)`,
on a person's 30 s clock).
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest
import trio

import bots.sdk.runner as runner_module
import client.config
from bots.sdk import credentials
from bots.sdk.credentials import BotCredentials, BotTokens, server_key
from protocol.messages import ListTables, LoggedIn, Login, TableChanged, Tables
from protocol.types import Game
from server.app import Server
from tests.bots.test_runner import bot_account_and_table
from tests.bots.test_runner_cli import Recorder, one_line, run_main
from tests.server.wire_client import WireClient

BINDIR = Path(sys.executable).parent


async def spades_bot(*args: str) -> tuple[int, str, str]:
    """The installed `spades-bot ARGS` (its own process: it runs trio itself)."""
    done = await trio.run_process(
        [str(BINDIR / "spades-bot"), *args], capture_stdout=True, capture_stderr=True, check=False
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def test_register_makes_a_bot_account_and_keeps_its_token(
    server: Server, config_dir: Path
) -> None:
    address = f"127.0.0.1:{server.port}"
    with trio.fail_after(60):
        code, out, err = await spades_bot("register", "my-bot", "--server", address)
        assert code == 0, err
        kept = BotTokens().find(server_key("127.0.0.1", server.port))
        assert kept is not None and kept.name == "my-bot"
        # The token is shown once, with how to use it, where it is kept, and the account's clock.
        assert out.count(kept.token) == 1, out
        assert f"registered my-bot on {address}: a bot account" in out
        assert "its seats play on the bot clock: 5 s a decision" in out
        path = BotTokens().path(server_key("127.0.0.1", server.port))
        assert str(path) in out and path.is_relative_to(config_dir)
        assert "--token TOKEN" in out and "SPADES_TOKEN" in out
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        # The server agrees: a bot account, on the bots' clock.
        check = await WireClient.connect(server.port)
        await check.hello()
        logged = await check.request(Login(token=kept.token))
        assert isinstance(logged, LoggedIn) and logged.bot, logged
        assert logged.clock is not None and logged.clock.turn_ms == 5000
        await check.aclose()
        # A name already taken is one line and exit 1; the kept token is left alone.
        again = await spades_bot("register", "my-bot", "--server", address)
        assert again[0] == 1
        assert "name_taken" in one_line(again[2]) and one_line(again[2]).startswith("error: ")
        assert BotTokens().find(server_key("127.0.0.1", server.port)) == kept


async def test_run_plays_as_the_kept_bot_and_the_lobby_shows_a_bot(server: Server) -> None:
    address = f"127.0.0.1:{server.port}"
    with trio.fail_after(90):
        assert (await spades_bot("register", "kept-bot", "--server", address))[0] == 0
        _, table = await bot_account_and_table(
            server, "table-host", Game.HEARTS, "hearts", {"target_score": 20}
        )
        # No --token, no SPADES_TOKEN: the kept one. The lobby lists the seat as a bot's.
        watcher = await WireClient.connect(server.port)
        await watcher.hello()
        assert isinstance(await watcher.request(ListTables()), Tables)  # and hear its changes
        async with trio.open_nursery() as nursery:
            result: list[tuple[int, str, str]] = []

            async def play() -> None:
                result.append(
                    await spades_bot("run", "random", "--server", address, "--table", table)
                )

            nursery.start_soon(play)
            seat = None
            for _ in range(1000):  # a change a seat taken or a state moved: a few dozen at most
                changed = await watcher.expect(TableChanged)
                if changed.table.table == table:
                    seat = next((s for s in changed.table.seats if s.player == "kept-bot"), None)
                if seat is not None:
                    break
        await watcher.aclose()
    code, out, err = result[0]
    assert code == 0, err
    assert "playing as kept-bot" in err and "game over" in out
    assert seat is not None and seat.bot


def test_the_token_flag_and_the_environment_win_over_the_kept_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    Recorder.configs = []
    monkeypatch.setattr(runner_module, "BotRunner", Recorder)
    for name in ("SPADES_SERVER", "SPADES_TOKEN", "SPADES_TABLE"):
        monkeypatch.delenv(name, raising=False)
    key = server_key("10.0.0.5", 7777)
    BotTokens().save(key, BotCredentials("first", "1.kept-first"))
    BotTokens().save(key, BotCredentials("second", "2.kept-second"))
    base = ["run", "random", "--server", "10.0.0.5", "--ladder"]
    assert run_main(base, capsys)[0] == 0  # the last registered is the default
    assert run_main([*base, "--account", "first"], capsys)[0] == 0
    assert run_main([*base, "--token", "9.flag"], capsys)[0] == 0
    monkeypatch.setenv("SPADES_TOKEN", "8.env")
    assert run_main(base, capsys)[0] == 0
    assert run_main([*base, "--account", "first"], capsys)[0] == 0  # a flag beats the env
    tokens = [config.token for config in Recorder.configs]
    assert tokens == ["2.kept-second", "1.kept-first", "9.flag", "8.env", "1.kept-first"]
    code, _, err = run_main([*base, "--account", "nobody"], capsys)
    assert code == 2 and "no bot 'nobody' was registered on 10.0.0.5:7777" in one_line(err)
    assert "first, second" in err
    monkeypatch.delenv("SPADES_TOKEN")
    code, _, err = run_main(["run", "random", "--server", "10.9.9.9", "--ladder"], capsys)
    assert code == 2 and "spades-bot register NAME --server 10.9.9.9:7777" in one_line(err)
    code, _, err = run_main([*base, "--account", "first", "--token", "9.flag"], capsys)
    assert code == 2 and "not both" in one_line(err)


def test_the_bots_tokens_sit_beside_the_clients_in_one_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert credentials.APP_NAME == client.config.APP_NAME
    assert credentials.ENV_CONFIG_DIR == client.config.ENV_CONFIG_DIR
    monkeypatch.delenv("SPADES_CONFIG_DIR")
    assert credentials.config_dir() == client.config.config_dir()
    # The client lists the bots kept for a server (`spades ladder matches --mine`).
    folder = tmp_path / "shared"
    key = server_key("::1", 7100)
    assert key == client.config.ServerAddress("::1", 7100).key
    BotTokens(folder).save(key, BotCredentials("v6-bot", "3.secret"))
    assert client.config.ClientConfig(folder).bot_names(key) == ["v6-bot"]
    assert os.listdir(folder) == ["bots"]


def test_a_server_that_is_not_there_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.bots.test_runner_cli import free_port

    port = free_port()
    code, _, err = run_main(["register", "lost-bot", "--server", f"127.0.0.1:{port}"], capsys)
    assert code == 1
    assert one_line(err) == (
        f"error: cannot reach the server at 127.0.0.1:{port} (connection refused):"
        " is it running, at that address?"
    )
    assert BotTokens().names(server_key("127.0.0.1", port)) == []
