"""A person taking part in an event through the real terminal client in tmux, for any test that
needs one (issue 43): a server subprocess that lets accounts announce events, and the steps that
play a seat of `spades event EVENT --play` until the event ends.

    with events_server(tmp_path) as port:
        env = client_env(tmp_path, port)                  # `spades connect` done, dirs of its own
        spades_cli(env, "register", "ada")
        ...                                               # announce, register, start the bots
        pane = event_pane(env, "E1")
        try:
            run = play_event_seat(pane)                   # bids 3, plays the first legal card
        finally:
            pane.close()
        assert run.exit_code == 0 and run.rounds == ["E1 round 1", "E1 round 2"]

The test drives keys as a person would: it reads the pane, bids when asked, types the number
under the first legal card when it is to play; every wait polls the pane with a deadline. A test
that kills the server mid-round starts it itself (`server_command`, and `test_tmux_e2e`'s
`listening_port` for its port) and again on the same database and port (`--port` in `extra`): the
client reconnects and checks in again by itself, and `play_event_seat` plays on through the
"reconnecting" screens.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path

from tests.client.test_tmux_e2e import Pane, card_left, hand_and_numbers, serving

BIN = Path(sys.executable).parent
EXITED = re.compile(r"CLIENT-EXITED (\d+)")
ROUND_LINE = re.compile(r"\b(E\d+ round \d+): table")


def server_command(db: Path, *extra: str) -> list[str]:
    """`spades-server serve --events-open` on 127.0.0.1, port 0, over `db` (a test that kills the
    server with -9 and starts it again on the same database runs this itself)."""
    return [
        str(BIN / "spades-server"),
        "serve",
        "--host",
        "127.0.0.1",
        "--port",
        "0",
        "--db",
        str(db),
        "--events-open",
        *extra,
    ]


def events_server(tmp_path: Path, *extra: str) -> AbstractContextManager[int]:
    """A server that lets any account announce events, for the test's length; yields its port."""
    return serving(server_command(tmp_path / "server.db", *extra))


def event_pane(env: dict[str, str], event: str) -> Pane:
    """`spades event EVENT --play` in an 80x24 tmux pane of its own (close it when done)."""
    return Pane(f"{BIN / 'spades'} event {event} --play", env)


def spades_cli(env: dict[str, str], *args: str, program: str = "spades") -> str:
    """Run `spades ARGS` (or `spades-bot`) with the test's dirs; its output, or fail with it."""
    done = subprocess.run(
        [str(BIN / program), *args],
        env={**os.environ, **env},
        check=False,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    return done.stdout


@dataclass
class EventRun:
    """What the pane showed while a seat of an event was played."""

    rounds: list[str] = field(default_factory=list)  # `E1 round 1`, ... in the order shown
    standings_shown: bool = False  # the standings in the table's place between rounds
    moves: int = 0  # bids and cards typed
    final: str = ""  # the last screen: the final standings printed, and the exit line
    exit_code: int | None = None


def play_event_seat(pane: Pane, limit: float = 120.0) -> EventRun:
    """Play the seat of `spades event EVENT --play` in `pane` until the client exits (the event
    over, or refused): bid 3 when asked, else the first legal card. Fails after `limit` seconds."""
    run = EventRun()
    deadline = time.monotonic() + limit

    def note(screen: str) -> None:
        for found in ROUND_LINE.findall(screen):
            if found not in run.rounds:
                run.rounds.append(found)
        run.standings_shown = run.standings_shown or "standings after round" in screen

    while time.monotonic() < deadline:
        screen = pane.screen()
        note(screen)
        ended = EXITED.search(screen)
        if ended:
            run.final, run.exit_code = screen, int(ended.group(1))
            return run
        if "YOUR TURN" not in screen:
            time.sleep(0.05)  # the pace of polling, not synchronisation: the deadline bounds it
            continue
        screen = pane.settled()
        note(screen)
        hand, numbers = hand_and_numbers(screen)
        if "YOUR TURN" in screen and "bid:" in screen:
            pane.type("3")
            pane.wait(lambda s: "bid:" not in s, "our bid to be taken")
        elif "YOUR TURN" in screen and numbers:
            pane.type(numbers[0])
            pane.wait(card_left(hand), "our card to leave the hand")
        else:
            continue  # a frame between two states: look again
        run.moves += 1
    raise AssertionError(
        f"the event did not end within {limit:.0f} s; the screen:\n{pane.screen()}"
    )
