"""The JavaScript example bot (bots/examples/js), written from docs/protocol.md alone, plays a whole
game against a real server: the proof that the document is enough for a third party."""

import shutil
import subprocess
from pathlib import Path

import pytest
import trio

from protocol.types import Game
from server.app import Server
from tests.bots.test_runner import bot_account_and_table

EXAMPLE = Path(__file__).resolve().parents[2] / "bots" / "examples" / "js"


def node_ready() -> str | None:
    """Why the example cannot run here, or None. Installs its one dependency when missing."""
    if shutil.which("node") is None:
        return "node is not installed"
    if not (EXAMPLE / "node_modules" / "@msgpack" / "msgpack").exists():
        npm = shutil.which("npm")
        if npm is None:
            return "npm is not installed"
        done = subprocess.run(
            [npm, "ci", "--no-audit", "--no-fund"],
            cwd=EXAMPLE,
            capture_output=True,
            text=True,
            timeout=100,
            check=False,
        )
        if done.returncode != 0:
            return f"npm ci failed: {done.stderr[-300:]}"
    return None


@pytest.mark.parametrize(
    ("game", "preset", "target"), [(Game.SPADES, "standard", 100), (Game.HEARTS, "hearts", 20)]
)
async def test_js_bot_plays_a_whole_game(
    server: Server, game: Game, preset: str, target: int
) -> None:
    reason = node_ready()
    if reason is not None:
        pytest.skip(f"the JavaScript example needs Node.js: {reason}")
    node = shutil.which("node")
    assert node is not None
    with trio.fail_after(90):
        token, table = await bot_account_and_table(
            server, f"js-{preset}", game, preset, {"target_score": target}
        )
        result = await trio.run_process(
            [
                node,
                "bot.js",
                "--server",
                f"127.0.0.1:{server.port}",
                "--token",
                token,
                "--table",
                table,
            ],
            cwd=EXAMPLE,
            capture_stdout=True,
            capture_stderr=True,
            check=False,
        )
    out, err = result.stdout.decode(), result.stderr.decode()
    assert result.returncode == 0, err[-2000:]
    assert "game over" in out
    assert "error" not in err, err[-2000:]
