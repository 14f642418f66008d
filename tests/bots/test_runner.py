"""A remote bot through the SDK runner (and through `spades-bot run`) plays whole games on a real
server on 127.0.0.1, including after its connection is cut in the middle of a hand."""

import re
import sys
from pathlib import Path

import pytest
import trio

from bots.registry import make_bot
from bots.sdk.runner import BotRunner, RunnerConfig
from protocol.messages import CreateTable, Message, Register, Registered, TableCreated, YourTurn
from protocol.types import ClientKind, Game
from server.app import Server
from tests.server.wire_client import WireClient


async def bot_account_and_table(
    server: Server,
    name: str,
    game: Game,
    preset: str,
    options: dict[str, bool | int | str | list[str]],
) -> tuple[str, str]:
    """Register a bot account and open a table with built-in bots in every other seat."""
    client = await WireClient.connect(server.port)
    await client.hello(kind=ClientKind.BOT)
    registered = await client.request(Register(name=name))
    assert isinstance(registered, Registered), registered
    players = 2 if preset == "two-player" else 3 if preset == "three-player" else 4
    created = await client.request(
        CreateTable(game=game, preset=preset, options=options, bots=list(range(1, players)))
    )
    assert isinstance(created, TableCreated), created
    await client.aclose()
    return registered.token, created.table


@pytest.mark.parametrize(
    ("game", "preset", "options"),
    [
        (Game.HEARTS, "hearts", {"target_score": 30}),
        (Game.SPADES, "standard", {"target_score": 100}),
    ],
)
async def test_runner_plays_a_whole_game(
    server: Server, game: Game, preset: str, options: dict[str, bool | int | str | list[str]]
) -> None:
    with trio.fail_after(90):
        token, table = await bot_account_and_table(
            server, f"runner-{preset}", game, preset, options
        )
        config = RunnerConfig(host="127.0.0.1", port=server.port, token=token, table=table)
        stats = await BotRunner(make_bot("heuristic", seed=1), config).run()
    assert len(stats.games) == 1
    assert stats.games[0]["winners"]
    assert stats.decisions > 10
    assert stats.fallbacks == 0


async def test_runner_reconnects_after_a_forced_disconnect(server: Server) -> None:
    with trio.fail_after(90):
        token, table = await bot_account_and_table(
            # 250: no team can reach it in one hand, so the game surely has the second hand
            # that the second cut (your_turn 17: a hand is one bid and 13 plays) falls in.
            server,
            "runner-drop",
            Game.SPADES,
            "standard",
            {"target_score": 250},
        )
        config = RunnerConfig(
            host="127.0.0.1", port=server.port, token=token, table=table, backoff=(0.05, 0.2)
        )
        turns = 0

        def cut_the_line(message: Message) -> None:
            nonlocal turns
            if isinstance(message, YourTurn):
                turns += 1
                if turns in (3, 17):  # in the first hand and in the second
                    runner.disconnect()

        runner = BotRunner(make_bot("heuristic", seed=2), config, on_message=cut_the_line)
        stats = await runner.run()
    assert stats.connections >= 3
    assert len(stats.games) == 1
    assert stats.games[0]["winners"]


async def test_spades_bot_run_command(server: Server) -> None:
    with trio.fail_after(90):
        token, table = await bot_account_and_table(
            server, "runner-cli", Game.HEARTS, "hearts", {"target_score": 20}
        )
        bindir = Path(sys.executable).parent
        result = await trio.run_process(
            [
                str(bindir / "spades-bot"),
                "run",
                "random",
                "--server",
                f"127.0.0.1:{server.port}",
                "--token",
                token,
                "--table",
                table,
            ],
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    out, err = result.stdout.decode(), result.stderr.decode()
    assert result.returncode == 0, err[-2000:]
    # Which seat it took, and the winners by seat, with whether that was us (issue 41 item 1).
    assert f"took seat 0 (South) at table {table}" in err
    assert re.search(
        r"game over at table \w+: .+ won \(you (won|lost); you sat South, seat 0\)", out
    )
