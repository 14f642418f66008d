"""Issue 18 in tmux, at 80x24 and at 120x40: what a newcomer sees on the real client's screen.

`spades play` (its own server) through a crash of the client and a Ctrl-C; two people at one table
of a `spades-server serve` subprocess, one of whom drops and comes back; a spectator of four bots;
`make play` and Ctrl-C. Every wait polls the pane with a deadline (tests/client/test_tmux_e2e.py).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.client.test_newcomer import ROOT, _installed
from tests.client.test_tmux_e2e import BIN, TMUX, client_env, hand_and_numbers, server_port

__all__ = ["server_port"]  # the fixture, used by name below
pytestmark = pytest.mark.skipif(not Path(TMUX).exists(), reason="tmux is not installed")
SIZES = [(80, 24), (120, 40)]


class Pane:
    """One tmux session of a given size on a private socket, running `command` then `again`."""

    def __init__(self, command: str, env: dict[str, str], size: tuple[int, int], again: str = ""):
        self.socket = f"spades-nc-{uuid.uuid4().hex[:8]}"
        self.size = size
        exports = " ".join(f"{k}={v}" for k, v in env.items())
        runs = [f"env {exports} {command}; echo CLIENT-EXITED $?"]
        if again:
            runs.append(f"env {exports} {again}; echo AGAIN-EXITED $?")
        shell = "; ".join([*runs, "sleep 60"])
        width, height = size
        self.tmux("new-session", "-d", "-s", "nc", "-x", str(width), "-y", str(height), shell)

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            [TMUX, "-L", self.socket, *args],
            check=False,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", "nc")

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "nc", "-l", text)
        self.tmux("send-keys", "-t", "nc", "Enter")

    def key(self, name: str) -> None:
        self.tmux("send-keys", "-t", "nc", name)

    def wait(self, check: Callable[[str], bool], what: str, limit: float = 30.0) -> str:
        import time

        deadline = time.monotonic() + limit
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(0.05)  # the pace of polling, not synchronisation: the deadline bounds it
        raise AssertionError(f"timed out waiting for {what}; the screen was:\n{screen}")

    def client_pid(self) -> int:
        """The program the pane's shell runs now (its child), found by parent id in /proc."""
        shell = int(self.tmux("display-message", "-p", "-t", "nc", "#{pane_pid}").strip())
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    stat = (entry / "stat").read_text()
                except OSError:
                    continue
                if int(stat.rsplit(")", 1)[1].split()[1]) == shell:
                    return int(entry.name)
        raise AssertionError("the pane runs no program")

    def close(self) -> None:
        self.tmux("kill-server")


def fits(screen: str, size: tuple[int, int]) -> None:
    lines = screen.rstrip("\n").splitlines()
    assert len(lines) <= size[1] and all(len(line) <= size[0] for line in lines), screen
    assert not any("…" in line for line in lines[1:12]), screen  # no seat panel is cut


def move(pane: Pane, screen: str) -> None:
    """What a person does on their turn: bid 3 (as /help writes it), or the first legal card."""
    if "bid:" in screen:
        pane.type("bid 3")
        # Not `scored`: the last hand's result stays on screen while the next is bid, so it
        # said nothing of this bid, and the next turn was then taken before the bid was.
        pane.wait(lambda s: "You bid 3." in s or "bid:" not in s, "our bid")
        return
    hand, numbers = hand_and_numbers(screen)
    assert numbers, screen
    pane.type(numbers[0])
    # The hand line changed (not missing: a frame caught half drawn has none), or the turn passed.
    pane.wait(
        lambda s: hand_and_numbers(s)[0] not in ("", hand) or "YOUR TURN" not in s, "our card"
    )


def whole_turn(screen: str) -> bool:
    return "YOUR TURN" in screen and ("bid:" in screen or bool(hand_and_numbers(screen)[1]))


def play_until(pane: Pane, done: Callable[[str], bool], size: tuple[int, int]) -> str:
    for _ in range(80):
        screen = pane.wait(lambda s: "YOUR TURN" in s or done(s), "our turn", 60)
        if done(screen):
            return screen
        fits(screen, size)
        # A whole frame of our turn: the prompt and the numbers under the cards (a capture can
        # catch the prompt drawn before the line under the hand).
        move(pane, pane.wait(whole_turn, "our turn again"))
    raise AssertionError(f"never got there; the screen was:\n{pane.screen()}")


def tricks_won(screen: str) -> int:
    return sum(int(n) for n in re.findall(r"won (\d+)", "\n".join(screen.splitlines()[1:12])))


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_play_through_a_crash_the_result_the_scores_and_ctrl_c(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """Items 1, 2, 5, 12, 18, 19, 21: a hand, two tricks of the next, the client killed, `spades
    play` again: the scores keep hand 1, hand 2's record keeps every trick; Ctrl-C leaves quietly."""
    env = {
        "SPADES_CONFIG_DIR": str(tmp_path / "config"),
        "SPADES_DATA_DIR": str(tmp_path / "data"),
        "TERM": "xterm-256color",
    }
    play = f"{BIN / 'spades'} play"
    pane = Pane(play, env, size, again=play)
    try:
        screen = play_until(pane, lambda s: "hand 2" in s and "YOUR TURN" in s, size)
        # The hand's result stays while the next is bid, with names and sides (item 5).
        assert "Hand 1 scored: Us " in screen and "  Us: You " in screen, screen
        assert "seat " not in screen.split("Hand 1 scored")[1], screen
        if size == (120, 40):  # the room is used (item 18): the scores by hand, a longer log
            lines = screen.splitlines()
            side = "\n".join(line[82:] for line in lines[1:18])
            assert side.lstrip().startswith("Scores") and "Last trick" in side, side
            assert re.search(r"^\s+1\s+[+-]\d+ → -?\d+", side, re.M), side
            log = lines[17:38]  # between the hand and the notice line
            assert len(log) == 21 and sum(bool(line.strip()) for line in log) > 10, screen
        screen = play_until(pane, lambda s: "hand 2" in s and tricks_won(s) >= 2, size)
        os.kill(pane.client_pid(), signal.SIGKILL)  # the client crashes
        pane.wait(lambda s: "CLIENT-EXITED 137" in s or "Welcome back" in s, "the crash")
        screen = pane.wait(lambda s: "Welcome back" in s, "the game again")
        pane.type("/scores")
        screen = pane.wait(lambda s: re.search(r"^\s+1\s+[+-]\d+ → ", s, re.M) is not None, "1")
        pane.type("")
        play_until(pane, lambda s: "hand 3" in s, size)
        journal = next((tmp_path / "data" / "history").glob("local/*.jsonl"))
        records = [json.loads(line) for line in journal.read_text().splitlines()]
        assert [r["hand_number"] for r in records] == [1, 2]
        assert records[1]["missed_tricks"] == [] and len(records[1]["tricks_seen"]) == 13
        replay = subprocess.run(
            [str(BIN / "spades"), "replay", journal.stem, "--all"],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert replay.returncode == 0 and "not seen" not in replay.stdout, replay.stdout
        pane.key("C-c")  # item 12: a key, not a signal; a quiet goodbye
        screen = pane.wait(lambda s: "AGAIN-EXITED" in s, "the client to leave")
        assert "AGAIN-EXITED 0" in screen and "takes you back to it" in screen, screen
        assert "error" not in screen.split("Welcome back")[-1].lower(), screen
    finally:
        pane.close()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_another_players_clock_their_drop_and_their_return(
    server_port: int, tmp_path: Path, size: tuple[int, int]
) -> None:
    """Items 6 and 7: East is a person; their clock counts down on our screen; their client is
    killed: we read that East disconnected and how long the seat is held; they come back."""
    host_env = client_env(tmp_path / "ada", server_port)
    guest_env = client_env(tmp_path / "bea", server_port)
    registered = subprocess.run(
        [str(BIN / "spades"), "register", "bea"],
        env={**os.environ, **guest_env},
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    assert registered.returncode == 0, registered.stderr
    host = Pane(
        f"{BIN / 'spades'} create --bots 2 --name ada", host_env, size
    )  # seat 3 (East) stays free
    guest: Pane | None = None
    try:
        screen = host.wait(lambda s: " table " in s, "the table")
        table = re.search(r" table (\S+)", screen).group(1)  # type: ignore[union-attr]
        join = f"{BIN / 'spades'} join {table}"
        back = tmp_path / "come-back"  # bea comes back once we have read that she is away
        again = f"sh -c 'for i in $(seq 600); do [ -e {back} ] && break; sleep 0.1; done; {join}'"
        guest = Pane(join, guest_env, (80, 24), again=again)
        waiting = re.compile(r"Waiting for East ⏱ (\d+)s")
        for _ in range(40):
            screen = host.wait(
                lambda s: "YOUR TURN" in s or waiting.search(s) is not None, "a turn", 60
            )
            fits(screen, size)
            if "YOUR TURN" not in screen:
                break
            move(host, screen)
        found = waiting.search(screen)
        assert found is not None and "East (bea)" in screen, screen
        first = int(found.group(1))

        def later(s: str) -> bool:
            again = waiting.search(s)
            return again is not None and int(again.group(1)) <= first - 2 and "◆" in s

        screen = host.wait(later, "East's clock to count down on our screen", 10)  # item 6
        panel = "\n".join(screen.splitlines()[1:12])
        assert re.search(r"13 cards ◆ \d+s", panel), panel  # in East's panel too
        os.kill(guest.client_pid(), signal.SIGKILL)
        screen = host.wait(
            lambda s: "East (bea) disconnected (seat held for 2:00)." in s, "the drop"
        )
        host.wait(lambda s: re.search(r"away 1:[0-5]\d", s) is not None, "the hold ticking")
        back.touch()
        screen = host.wait(lambda s: "East (bea) is back." in s, "East back", 60)
        assert "away" not in "\n".join(screen.splitlines()[1:12]), screen
    finally:
        host.close()
        if guest is not None:
            guest.close()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_a_spectator_sees_the_cards_left_and_three_handed_shows_no_bags(
    server_port: int, tmp_path: Path, size: tuple[int, int]
) -> None:
    """Items 22 and 20: a spectator of a table where we play: in the second hand it still shows
    every seat's cards (it showed `0 cards` from the second hand on); three-handed: no bags."""
    env = client_env(tmp_path, server_port)
    host = Pane(f"{BIN / 'spades'} create --bots 3 --name cy", env, (80, 24))
    watcher: Pane | None = None
    try:
        screen = host.wait(lambda s: " table " in s, "the table")
        table = re.search(r" table (\S+)", screen).group(1)  # type: ignore[union-attr]
        watcher = Pane(f"{BIN / 'spades'} watch {table} --name wes", env, size)
        watcher.wait(lambda s: "watching" in s, "the watcher")
        play_until(host, lambda s: "hand 2" in s and "bid:" in s, (80, 24))
        screen = watcher.wait(
            lambda s: "hand 2" in s and len(re.findall(r"\b13 cards", s)) == 4,
            "every seat's 13 cards in hand 2 on the watcher's screen",
        )
        fits(screen, size)
        assert "South (" in screen and "Hand  " not in screen  # the table, less the hands
    finally:
        host.close()
        if watcher is not None:
            watcher.close()
    three = Pane(f"{BIN / 'spades'} create --preset three-player --bots 2 --name cy", env, size)
    try:
        screen = three.wait(lambda s: "YOUR TURN" in s, "the three-handed table")
        scores = next(line for line in screen.splitlines() if line.startswith("Scores"))
        assert "bags" not in scores and "Left" in screen and "Right" in screen, screen
        fits(screen, size)
    finally:
        three.close()


@pytest.mark.skipif(not _installed(), reason="needs make and this checkout's own .venv, installed")
def test_ctrl_c_under_make_play_leaves_quietly(tmp_path: Path) -> None:
    """Item 12 as reported: `make play`, Ctrl-C: no `error: interrupted`, no `make: *** Error`."""
    env = {
        "SPADES_CONFIG_DIR": str(tmp_path / "config"),
        "SPADES_DATA_DIR": str(tmp_path / "data"),
        "TERM": "xterm-256color",
    }
    pane = Pane(f"make -C {ROOT} play", env, (80, 24))
    try:
        pane.wait(lambda s: "YOUR TURN" in s, "the game", 60)
        pane.key("C-c")
        screen = pane.wait(lambda s: "CLIENT-EXITED" in s, "make to end")
        assert "CLIENT-EXITED 0" in screen and "takes you back to it" in screen, screen
        assert "Error" not in screen and "error:" not in screen, screen
    finally:
        pane.close()


@pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")
def test_help_leaves_the_table_and_the_clock_in_view(tmp_path: Path, size: tuple[int, int]) -> None:
    """Issue 41 item 3: `spades play` gives a person 90 s a decision against the bots (the server's
    30 s was too short for a first game), and /help no longer covers the table while it runs."""
    env = {
        "SPADES_CONFIG_DIR": str(tmp_path / "config"),
        "SPADES_DATA_DIR": str(tmp_path / "data"),
        "TERM": "xterm-256color",
    }
    pane = Pane(f"{BIN / 'spades'} play", env, size)
    try:
        screen = pane.wait(lambda s: "YOUR TURN" in s, "our first turn", 60)
        clock = re.search(r"YOUR TURN.*⏱ (\d+) s", screen)
        assert clock is not None and 60 < int(clock.group(1)) <= 90, screen
        pane.type("/help")
        screen = pane.wait(lambda s: "/verify" in s and "/code" in s, "the help")
        fits(screen, size)
        assert "YOUR TURN" in screen and "⏱" in screen, screen  # the clock, still in view
        assert all(f"{d} (heuristic)" in screen for d in ("West", "North", "East")), screen
        first = next(line for line in screen.splitlines() if line.startswith(("Cards:", "Type")))
        assert "…" not in first and first.rstrip().endswith(("nil", "3),")), first
        pane.type("")  # Enter on an empty line closes it
        pane.wait(lambda s: "/verify" not in s, "the help to close")
        pane.type("/quit")
        pane.wait(lambda s: "CLIENT-EXITED 0" in s, "the client to leave")
    finally:
        pane.close()


def test_another_preset_while_one_is_unfinished_is_a_question(tmp_path: Path) -> None:
    """Issue 41 item 3: the README's second line (`--preset hearts`) during an unfinished Spades
    game asks whether to start it, on a terminal, instead of refusing with a command to type."""
    env = {
        "SPADES_CONFIG_DIR": str(tmp_path / "config"),
        "SPADES_DATA_DIR": str(tmp_path / "data"),
        "TERM": "xterm-256color",
    }
    spades = BIN / "spades"
    pane = Pane(f"{spades} play", env, (80, 24), again=f"{spades} play --preset hearts")
    try:
        pane.wait(lambda s: "YOUR TURN" in s, "the Spades game", 60)
        pane.type("/quit")
        screen = pane.wait(lambda s: "Start the new game now? [y/N]" in s, "the question", 60)
        assert "your spades game (standard)" in screen and "is unfinished" in screen, screen
        pane.type("y")
        screen = pane.wait(lambda s: " Hearts " in s and "YOUR TURN" in s, "the Hearts game", 60)
        assert "Left your unfinished game" in screen, screen
        pane.type("/quit")
        pane.wait(lambda s: "AGAIN-EXITED 0" in s, "the client to leave")
    finally:
        pane.close()


def test_a_guest_is_asked_its_name_once(server_port: int, tmp_path: Path) -> None:
    """Issue 41 item 2: a guest on a terminal is asked the name to play under (the table showed
    `guest-6434047386`), once: the answer is kept for the next game."""
    env = client_env(tmp_path, server_port)
    spades = BIN / "spades"
    pane = Pane(f"{spades} create --bots 3", env, (80, 24), again=f"{spades} create --bots 3")
    try:
        pane.wait(lambda s: "Your name at the table" in s, "the question")
        pane.type("zed")
        screen = pane.wait(lambda s: "YOUR TURN" in s, "the table")
        first = re.search(r" table (\S+)", screen).group(1)  # type: ignore[union-attr]
        pane.type("/say hello")
        pane.wait(lambda s: re.search(r"<zed~\w+> hello", s) is not None, "our chat, by name")
        pane.type("/quit")
        screen = pane.wait(
            lambda s: "YOUR TURN" in s and f" table {first} " not in s, "the second table"
        )
        assert "Your name at the table" not in screen  # asked once
        pane.type("/say again")
        pane.wait(lambda s: re.search(r"<zed~\w+> again", s) is not None, "the kept name")
        pane.type("/quit")
        pane.wait(lambda s: "AGAIN-EXITED 0" in s, "the client to leave")
    finally:
        pane.close()
