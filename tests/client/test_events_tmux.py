"""End to end (issue 43): a person takes part in an event in the real terminal client in tmux, beside
bots. The server is `spades-server serve --events-open` (a subprocess, 127.0.0.1, port 0); ada
announces a Swiss by pairs of two rounds of one board from the command line, registers naming her
partner, a bot run by `spades-bot run --event` in another process; the server's house pair fills
the field. In an 80x24 pane `spades event E1 --play` shows each round's pairing, the table (ada
plays it by keys), the standings between rounds, and after the event's end the final standings,
then exits 0. The pane is driven by tests/client/tmux_event.py.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.client.test_tmux_e2e import TMUX, Pane, client_env
from tests.client.tmux_event import BIN, events_server, play_event_seat, spades_cli

pytestmark = pytest.mark.skipif(not Path(TMUX).exists(), reason="tmux is not installed")


def test_a_person_plays_an_event_in_tmux(tmp_path: Path) -> None:
    with events_server(tmp_path) as port:
        env = client_env(tmp_path, port)
        server = f"127.0.0.1:{port}"
        spades_cli(env, "register", "ada")
        spades_cli(env, "register", "ada-bot", "--server", server, program="spades-bot")
        made = spades_cli(
            env, "events", "create", "Tmux night", "--start", "+6s", "--format", "swiss_pairs",
            "--rounds", "2", "--boards", "1", "--round-gap", "1",
        )  # fmt: skip
        assert "announced E1" in made, made
        spades_cli(env, "event", "E1", "--register", "--partner", "ada-bot")
        command = [
            "run",
            "random",
            "--account",
            "ada-bot",
            "--event",
            "E1",
            "--partner",
            "ada",
            "--server",
        ]
        bot = subprocess.Popen(
            [str(BIN / "spades-bot"), *command, server],
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        pane = Pane(f"{BIN / 'spades'} event E1 --play", env)
        try:
            run = play_event_seat(pane, limit=90)
        finally:
            pane.close()
            try:
                out, _ = bot.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                bot.kill()
                out, _ = bot.communicate(timeout=5)
        assert run.exit_code == 0, run.final
        assert run.rounds == ["E1 round 1", "E1 round 2"], run
        assert run.standings_shown, run
        assert run.moves == 2 * 14, run  # each round's board: a bid and thirteen cards
        assert "Event E1 is over. Final standings" in run.final, run.final
        assert "ada & ada-bot" in run.final or "ada-bot & ada" in run.final, run.final
        assert bot.returncode == 0, out
        assert "E1 is over: place" in out, out
        shown = spades_cli(env, "event", "E1")
        assert "finished" in shown and "Final standings" in shown, shown
