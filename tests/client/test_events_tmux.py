"""End to end (issue 43): a person takes part in an event in the real terminal client in tmux, beside
bots. The server is `spades-server serve --events-open` (a subprocess, 127.0.0.1, port 0). ada
(`spades register`) announces a Swiss by pairs of two rounds of one board and registers for it with
her partner, a bot account that `spades-bot run --event` plays in another process; the server's
house pair fills the field. In an 80x24 pane `spades event E1 --play` shows each round's pairing,
the table (ada plays it by keys), the standings between rounds, and after the event's end the final
standings, then exits 0. The pane is driven by tests/client/tmux_event.py.

The bot's account and the announcement are made over the wire, not by two more commands: each
command is a Python process that takes a second or more to start on a busy machine.
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
import trio

from bots.sdk.register import register_bot
from client.config import ServerAddress
from client.events import create_event, event_request
from protocol import messages as m
from protocol.event_messages import EventFormat
from tests.client.test_tmux_e2e import TMUX, client_env
from tests.client.tmux_event import BIN, event_pane, events_server, play_event_seat, spades_cli

pytestmark = pytest.mark.skipif(not Path(TMUX).exists(), reason="tmux is not installed")

#: Seconds from the announcement to the start: both check-ins come first (each a process to
#: start, a second or two on a busy machine), so both get round 1's notice.
LEAD = 6.0


def test_a_person_plays_an_event_in_tmux(tmp_path: Path) -> None:
    with events_server(tmp_path) as port:
        env = client_env(tmp_path, port)
        server = f"127.0.0.1:{port}"
        spades_cli(env, "register", "ada")
        token_file = next((tmp_path / "config" / "servers").glob("*.json"))
        ada = str(json.loads(token_file.read_text())["token"])

        async def announce() -> str:
            bot = await register_bot("127.0.0.1", port, "ada-bot")
            address = ServerAddress("127.0.0.1", port)
            request = m.EventCreate(
                name="Tmux night",
                format=EventFormat.SWISS_PAIRS,
                rounds=2,
                boards=1,
                starts_at=time.time() + LEAD,
                round_gap=1.0,
            )
            info = await create_event(address, ada, request)
            event = info.summary.event
            await event_request(address, ada, m.EventRegister(event=event, partner="ada-bot"))
            await event_request(address, bot.token, m.EventRegister(event=event, partner="ada"))
            return bot.token

        bot_token = trio.run(announce)  # `spades event E1 --register`: tests/client/test_events_cli
        command = ["run", "random", "--token", bot_token, "--event", "E1", "--server", server]
        bot = subprocess.Popen(
            [str(BIN / "spades-bot"), *command],
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        pane = event_pane(env, "E1")
        try:
            checked_in = pane.wait(lambda s: "checked in to event E1" in s, "the check-in")
            assert "E1 Tmux night starts" in checked_in, checked_in  # before round 1
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
        assert "ada & ada-bot" in run.final, run.final  # ada registered first
        assert bot.returncode == 0, out
        assert "E1 is over: place" in out, out
        shown = spades_cli(env, "event", "E1")
        assert "finished" in shown and "Final standings" in shown, shown
        assert "ada & ada-bot" in shown and "(house)" in shown, shown
