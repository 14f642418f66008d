"""End to end: the real terminal client in tmux plays a whole hand against a server subprocess.

The server is `spades-server serve` on 127.0.0.1, port 0; the client is `spades create --bots 3` in an
80x24 tmux pane (its own tmux socket). The test reads the pane like a person would: it bids when
asked, types the number shown under a legal card when it is to play, and checks what the screen shows
(the hand by suit, the trick in the middle, the scores) until the first hand is scored and verified.
Every wait polls the pane with a deadline.
"""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

TMUX = shutil.which("tmux") or "/usr/bin/tmux"
BIN = Path(sys.executable).parent
pytestmark = pytest.mark.skipif(not Path(TMUX).exists(), reason="tmux is not installed")


def listening_port(proc: subprocess.Popen[str], limit: float = 20.0) -> int:
    """The port a `spades-server serve` child (stdout piped, text) says it listens on."""
    assert proc.stdout is not None
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        line = proc.stdout.readline()
        if not line:
            break
        found = re.search(r"listening.*:(\d+)\s*$", line)
        if found:
            return int(found.group(1))
    raise AssertionError("the server did not say where it listens")


@contextmanager
def serving(command: list[str]) -> Iterator[int]:
    """A server child process run from `command` for the block's length; yields its port."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        yield listening_port(proc)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=5)
        if proc.stdout is not None:
            proc.stdout.close()


@pytest.fixture
def server_port(tmp_path: Path) -> Iterator[int]:
    db = tmp_path / "server.db"
    with serving(
        [str(BIN / "spades-server"), "serve", "--host", "127.0.0.1", "--port", "0", "--db", str(db)]
    ) as port:
        yield port


class Pane:
    """One tmux session on a private socket."""

    def __init__(self, command: str, env: dict[str, str]) -> None:
        self.socket = f"spades-e2e-{uuid.uuid4().hex[:8]}"
        exports = " ".join(f"{k}={v}" for k, v in env.items())
        shell = f"env {exports} {command}; echo CLIENT-EXITED $?; sleep 30"
        self.tmux("new-session", "-d", "-s", "e2e", "-x", "80", "-y", "24", shell)

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            [TMUX, "-L", self.socket, *args],
            check=False,
            capture_output=True,
            text=True,
            timeout=10,
        )
        return done.stdout

    def screen(self, *, styles: bool = False) -> str:
        return self.tmux("capture-pane", "-p", *(["-e"] if styles else []), "-t", "e2e")

    def type(self, text: str) -> None:
        self.tmux("send-keys", "-t", "e2e", "-l", text)
        self.tmux("send-keys", "-t", "e2e", "Enter")

    def wait(
        self, check: Callable[[str], bool], what: str, limit: float = 30.0, *, styles: bool = False
    ) -> str:
        deadline = time.monotonic() + limit
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen(styles=styles)
            if check(screen):
                return screen
            time.sleep(0.05)  # the pace of polling, not synchronisation: the deadline bounds it
        raise AssertionError(f"timed out waiting for {what}; the screen was:\n{screen}")

    def settled(self, limit: float = 10.0) -> str:
        """A screen seen twice in a row: never a frame caught half drawn."""
        deadline = time.monotonic() + limit
        previous = self.screen()
        while time.monotonic() < deadline:
            time.sleep(0.05)
            current = self.screen()
            if current == previous:
                return current
            previous = current
        return previous

    def close(self) -> None:
        self.tmux("kill-server")


def hand_and_numbers(screen: str) -> tuple[str, list[str]]:
    lines = screen.splitlines()
    at = next((i for i, line in enumerate(lines) if line.startswith("Hand  ")), None)
    if at is None:
        return "", []  # no cards left
    numbers = re.findall(r"\d+", lines[at + 1]) if at + 1 < len(lines) else []
    return lines[at], numbers


def card_left(hand: str) -> Callable[[str], bool]:
    """Our card left the hand, or the move was refused (the line above the prompt says why)."""

    def check(screen: str) -> bool:
        lines = screen.rstrip("\n").splitlines()
        refused = len(lines) >= 2 and lines[-1].strip() == ">" and lines[-2].strip() != ""
        return "hand 2" in screen or hand_and_numbers(screen)[0] != hand or refused

    return check


def client_env(tmp_path: Path, port: int, **extra: str) -> dict[str, str]:
    """Config and data dirs of its own, and the server remembered (`spades connect`)."""
    env = {
        "SPADES_CONFIG_DIR": str(tmp_path / "config"),
        "SPADES_DATA_DIR": str(tmp_path / "data"),
        "TERM": "xterm-256color",
        **extra,
    }
    connected = subprocess.run(
        [str(BIN / "spades"), "connect", f"127.0.0.1:{port}"],
        env={**os.environ, **env},
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert connected.returncode == 0, connected.stderr
    return env


def test_no_color_means_no_colour(server_port: int, tmp_path: Path) -> None:
    env = client_env(tmp_path, server_port, NO_COLOR="1")
    pane = Pane(f"{BIN / 'spades'} create --preset hearts --bots 3 --name ann", env)
    try:
        # A capture can catch a frame half drawn, so wait for a whole one, then look at its styles.
        styled = pane.wait(lambda s: "pass 3 cards" in s, "the pass", styles=True)
        assert "\x1b[" not in styled, styled
        assert re.search(r"[♣♦♥♠]", styled)
        pane.type("/quit")
        pane.wait(lambda s: "CLIENT-EXITED 0" in s, "the client to exit cleanly")
    finally:
        pane.close()


def test_a_whole_hand_in_tmux(server_port: int, tmp_path: Path) -> None:
    env = client_env(tmp_path, server_port)
    pane = Pane(f"{BIN / 'spades'} create --preset standard --bots 3 --name ann", env)
    try:
        pane.wait(lambda s: "YOUR TURN" in s and "\x1b[" in s, "a styled first turn", styles=True)
        # Each bot by its seat and kind (issue 41 item 1), never the account `bot:heuristic`.
        first = pane.settled()
        assert all(f"{d} (heuristic)" in first for d in ("West", "North", "East")), first
        assert "bot:heuristic" not in first
        saw_trick = saw_suits = False
        for _ in range(40):
            screen = pane.wait(
                lambda s: "YOUR TURN" in s or "hand 2" in s, "our turn or the next hand"
            )
            if "hand 2" in screen:
                break
            screen = pane.settled()
            assert len(screen.splitlines()) <= 24
            assert all(len(line) <= 80 for line in screen.splitlines())
            hand, numbers = hand_and_numbers(screen)
            saw_suits = saw_suits or bool(re.search(r"[♣♦♥♠]", hand))
            saw_trick = saw_trick or bool(re.search(r"\[(10|[2-9JQKA])[♣♦♥♠]\]", screen))
            if "bid:" in screen:
                pane.type("3")
                pane.wait(lambda s: "You bid 3." in s, "our bid on the table")
                continue
            assert numbers, f"no legal card numbered on:\n{screen}"
            pane.type(numbers[0])
            pane.wait(card_left(hand), "our card to leave the hand")
        else:
            raise AssertionError("the hand did not finish")
        assert saw_suits and saw_trick
        screen = pane.wait(lambda s: "hand 2" in s, "the second hand")
        scores = next(line for line in screen.splitlines() if line.startswith("Scores"))
        assert re.search(r"Us -?\d+ \(\d+ bags?\)\s+Them -?\d+ \(\d+ bags?\)", scores), scores
        assert "Us 0 (0 bags)   Them 0 (0 bags)" not in scores
        pane.type("/verify")
        pane.wait(lambda s: "Hand 1: verified" in s, "the deal check of hand 1")
        pane.type("/scores")
        pane.wait(lambda s: re.search(r"^\s+1\s+[+-]\d+ → -?\d+", s, re.M) is not None, "/scores")
        pane.type("/quit")
        pane.wait(lambda s: "CLIENT-EXITED 0" in s, "the client to exit cleanly")
    finally:
        pane.close()
