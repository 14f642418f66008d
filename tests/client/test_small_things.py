"""Issue 41 item 4: the small things people noticed, each with its test.

The server stopping (tests/client/test_session.py), `-v`'s `play Q♠`, `(1 bag)` and `North: North
took 18 points` (tests/client/test_seat_names.py) and /help at 80 columns
(tests/client/test_tmux_newcomer.py) are tested beside what they touch; the rest are here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from bots.registry import BotSpecError, resolve
from client.lobby import STANDINGS_FOOTER, create_request, free_seats_line
from client.replay import hand_intro, to_hand
from client.results import meanwhile
from protocol.messages import TableCreated
from server.app import Server
from tests.client.test_cli import one_line_error, spades, write_server_export
from tests.client.test_tmux_e2e import TMUX
from tests.client.test_tmux_newcomer import Pane

BIN = Path(sys.executable).parent


def test_a_typo_in_a_bots_class_name_names_what_the_module_has() -> None:
    with pytest.raises(BotSpecError) as refused:
        resolve("bots.samples.heuristic:HeuristicBott")
    assert str(refused.value) == "bots.samples.heuristic has no HeuristicBott (it has HeuristicBot)"
    with pytest.raises(BotSpecError, match="is not a Bot or AsyncBot subclass"):
        resolve("bots.registry:BotSpecError")  # there, but not a bot


def test_hearts_passes_in_a_replay_show_the_cards_as_everywhere_else(tmp_path: Path) -> None:
    records = write_server_export(tmp_path / "hands.jsonl")
    text = "\n".join(str(line) for line in hand_intro(to_hand(records[0])))
    passes = [line for line in text.splitlines() if " passed " in line]
    assert len(passes) == 4, text
    for line in passes:
        assert re.search(r"passed (?:(?:10|[2-9JQKA])[♣♦♥♠] ?){3} to ", line), line


def test_counts_say_one_card_not_one_cards() -> None:
    before = {"hand_number": 1, "played": [], "tricks": [0, 0, 0, 0], "bids": [None] * 4}
    after = {"hand_number": 1, "played": ["QS"], "tricks": [0, 0, 0, 0], "bids": [{"text": "3"}]}
    lines = meanwhile(before, after, None, name=str, side_name=str)
    assert lines == ["While you were away: 1 bid, 1 card played, 0 tricks won."], lines


def test_create_no_sit_says_which_seat_is_free_and_how_to_fill_it() -> None:
    created = TableCreated(id=1, table="t8", code=None)
    one = create_request("standard", {}, 3, False, 0, sit=False)
    assert free_seats_line(one, created) == "seat 0 (South) is free: `spades join t8` sits there"
    two = create_request("standard", {}, 2, False, 0, sit=False)
    assert free_seats_line(two, TableCreated(id=1, table="t8", code="K4P9QZ7M")) == (
        "seats 0, 3 are free: `spades join t8 --code K4P9QZ7M` takes one (`--seat 0` for a given one)"
    )
    bots = create_request("standard", {}, 4, False, 0, sit=False)
    assert "every seat is a bot's: `spades watch t8`" in free_seats_line(bots, created)


async def test_create_no_sit_prints_it(server: Server) -> None:
    await spades("connect", f"127.0.0.1:{server.port}")
    opened = await spades("create", "--bots", "3", "--no-sit")
    assert opened.exit_code == 0, opened.output
    assert re.search(r"seat 0 \(South\) is free: `spades join \w+` sits there", opened.output)


async def test_a_wrong_port_gets_a_hint() -> None:
    line = one_line_error(await spades("connect", "127.0.0.1:1"))
    assert "cannot reach 127.0.0.1:1" in line and "spades-server serve" in line, line
    assert "7777" in line


@pytest.mark.parametrize(
    ("command", "typo", "says"),
    [
        (
            "spades",
            "tabels",
            "error: No such command 'tabels'. Did you mean 'tables'? (see spades --help)",
        ),
        ("spades", "join", "error: Missing argument 'table'. (see spades join --help)"),
        (
            "spades-server",
            "serv",
            "error: No such command 'serv'. Did you mean 'serve'? (see spades-server --help)",
        ),
    ],
)
def test_a_typo_is_one_error_line_not_a_box(command: str, typo: str, says: str) -> None:
    done = subprocess.run(
        [str(BIN / command), typo],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
        env={k: v for k, v in os.environ.items() if not k.startswith("SPADES_")},
    )
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert lines == [says], done.stderr
    assert done.stdout == ""


def test_the_standings_footer_is_one_line_of_its_own() -> None:
    assert len(STANDINGS_FOOTER) <= 80


@pytest.mark.skipif(not Path(TMUX).exists(), reason="tmux is not installed")
@pytest.mark.parametrize("size", [(80, 24), (120, 40)], ids=lambda s: f"{s[0]}x{s[1]}")
def test_the_replays_q_needs_no_enter(tmp_path: Path, size: tuple[int, int]) -> None:
    write_server_export(tmp_path / "hands.jsonl")
    env = {
        "SPADES_CONFIG_DIR": str(tmp_path / "config"),
        "SPADES_DATA_DIR": str(tmp_path / "data"),
        "TERM": "xterm-256color",
    }
    pane = Pane(f"{BIN / 'spades'} replay {tmp_path / 'hands.jsonl'}", env, size)
    try:
        pane.wait(lambda s: "trick  1:" in s and "q quit" in s, "the first trick")
        pane.key("Space")  # any key: the next trick, no Enter
        pane.wait(lambda s: "trick  2:" in s, "the second trick")
        pane.key("q")
        screen = pane.wait(lambda s: "CLIENT-EXITED" in s, "the replay to stop")
        assert "CLIENT-EXITED 0" in screen and "trick  3:" not in screen, screen
    finally:
        pane.close()
