"""Issue 41 item 3: the first run. `make play` installs what playing needs alone and says so; what the
game tells you to type next works where you started (`make play ARGS=...` under make, with no
`make: *** Error 1` after a refusal the game said itself); `--clock` for a person against bots.

The Makefile runs for real against a stand-in `.venv` (its `python` and `spades` are scripts that
write down how they were called), so no package is installed and no network is used."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from client.lobby import PLAY_CLOCK, create_request
from client.local import play_command
from client.session import _same_game, unfinished_game
from protocol.types import BotKind, Clock, Game, SeatInfo, TableInfo, TableStatus

ROOT = Path(__file__).resolve().parents[2]
MAKE = shutil.which("make")
pytestmark = pytest.mark.skipif(MAKE is None, reason="make is not installed")


def stand_in(tmp_path: Path, spades_exit: int) -> Path:
    """A checkout's Makefile and pyproject.toml beside a `.venv` of scripts."""
    shutil.copy(ROOT / "Makefile", tmp_path / "Makefile")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    log = tmp_path / "calls.log"
    (bin_dir / "python").write_text(f'#!/bin/sh\necho "python $*" >> {log}\n')
    (bin_dir / "spades").write_text(
        f'#!/bin/sh\necho "spades SPADES_VIA=$SPADES_VIA $*" >> {log}\n'
        f'echo "error: refused (as the game says it)" >&2\nexit {spades_exit}\n'
    )
    for script in bin_dir.iterdir():
        script.chmod(0o755)
    return log


def make(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert MAKE is not None
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MAKE", "MFLAGS"))}
    return subprocess.run(
        [MAKE, "-C", str(tmp_path), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env=env,
    )


def test_make_play_installs_only_what_playing_needs_and_says_so(tmp_path: Path) -> None:
    log = stand_in(tmp_path, spades_exit=0)
    done = make(tmp_path, "play", "ARGS=--preset hearts")
    assert done.returncode == 0, done.stdout + done.stderr
    calls = log.read_text().splitlines()
    assert "python -m pip install -q -e ." in calls, calls
    assert not any("[dev]" in call for call in calls), calls
    assert "installing what playing needs" in done.stdout and "installed in" in done.stdout
    assert calls[-1] == "spades SPADES_VIA=make play --preset hearts", calls
    # Once installed, the next `make play` starts at once; `make test`'s install is still [dev].
    again = make(tmp_path, "play")
    assert "installing" not in again.stdout, again.stdout
    assert ".[dev]" in make(tmp_path, "-n", "pytest").stdout


def test_a_refusal_the_game_said_is_not_makes_error_too(tmp_path: Path) -> None:
    stand_in(tmp_path, spades_exit=1)
    said = make(tmp_path, "play")
    assert said.returncode == 0 and "Error" not in said.stdout + said.stderr, said.stderr
    assert "refused (as the game says it)" in said.stderr
    (tmp_path / ".venv" / "bin" / "spades").write_text("#!/bin/sh\nexit 2\n")
    broken = make(tmp_path, "play")
    assert broken.returncode != 0  # anything else is still a failure


def test_messages_name_the_command_that_works_where_the_person_started(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    info = TableInfo(
        table="wuTiMiba",
        game=Game.SPADES,
        preset="standard",
        seats=[SeatInfo(seat=s) for s in range(4)],
        clock=Clock(turn_ms=30000, bank_ms=0),
        status=TableStatus.PLAYING,
    )
    wanted = create_request("hearts", {}, -1, False, 0)
    monkeypatch.delenv("SPADES_VIA", raising=False)
    assert play_command("--new") == "spades play --new"
    assert "`spades play --preset hearts --new` leaves it" in unfinished_game(info, wanted)
    monkeypatch.setenv("SPADES_VIA", "make")
    said = unfinished_game(info, wanted)
    assert '`make play ARGS="--preset hearts --new"` leaves it' in said, said
    assert "`make play` goes back to it" in said


def test_the_clock_of_a_game_against_bots() -> None:
    assert PLAY_CLOCK >= 60  # a person's first game, against bots that wait for nobody
    played = create_request("standard", {}, -1, False, 0, clock=PLAY_CLOCK)
    assert played.clock == Clock(turn_ms=PLAY_CLOCK * 1000, bank_ms=0)
    assert create_request("standard", {}, 3, False, 0).clock is None  # the server's default
    with pytest.raises(ValueError, match=r"--clock is 5\.\.3600 seconds"):
        create_request("standard", {}, 3, False, 0, clock=2)


def test_play_with_another_bot_is_another_game() -> None:
    """`spades play --bot search` during a game against heuristic bots asks first, as another
    preset would; the same kind (or none named) is the same game."""
    bots = [SeatInfo(seat=0, player="me")] + [
        SeatInfo(seat=s, player="bot:heuristic", bot=True, bot_kind=BotKind.HEURISTIC)
        for s in (1, 2, 3)
    ]
    info = TableInfo(
        table="wuTiMiba",
        game=Game.SPADES,
        preset="standard",
        seats=bots,
        clock=Clock(turn_ms=30000, bank_ms=0),
        status=TableStatus.PLAYING,
    )
    assert _same_game(info, create_request("standard", {}, -1, False, 0))
    assert _same_game(info, create_request("standard", {}, -1, False, 0, bot=BotKind.HEURISTIC))
    search = create_request("standard", {}, -1, False, 0, bot=BotKind.SEARCH)
    assert not _same_game(info, search)
    assert "--preset standard --bot search --new" in unfinished_game(info, search)
