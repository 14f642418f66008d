"""A bot author's whole path from the command line (issue 19, items 1-3): make a bot account with
`spades-bot register`, enter it with `spades-bot run --ladder --games 1`, find its matches with
`spades ladder matches --mine`, fetch a match's hands with `spades ladder records`, step through
them with `spades replay`, and see bots as bots and why a match was forfeited.

Before: no `spades-bot register` (a bot registered with `spades register` was listed
`my-bot (human)`), `--games 1` on the ladder never stopped, and there was no way to fetch a
ladder match's hands, list one's own matches, or see why a match was forfeited.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import trio

from client.lobby import match_result
from protocol.schema import from_map
from protocol.types import LadderMatch
from server.app import Server
from server.ladder.service import LadderService
from server.storage import Tx
from tests.client.helpers import table_column
from tests.client.test_cli import one_line_error, spades
from tests.client.test_ladder_cli import ladder_server  # noqa: F401 - the fixture
from tests.server.ladder.made import rated_match

BINDIR = Path(sys.executable).parent


async def spades_bot(*args: str) -> tuple[int, str, str]:
    done = await trio.run_process(
        [str(BINDIR / "spades-bot"), *args], capture_stdout=True, capture_stderr=True, check=False
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def test_a_bot_author_registers_enters_finds_fetches_and_replays_a_match(
    ladder_server: tuple[Server, LadderService],  # noqa: F811 - the fixture
    tmp_path: Path,
) -> None:
    server, service = ladder_server
    await service.add_house_bot("search,ms=5")  # the third house bot: a lone bot has a match
    address = f"127.0.0.1:{server.port}"
    with trio.fail_after(120):
        code, out, err = await spades_bot("register", "my-bot", "--server", address)
        assert code == 0, err
        assert "a bot account" in out and "5 s a decision" in out
        code, out, err = await spades_bot(
            "run", "heuristic", "--server", address, "--ladder", "--games", "1"
        )
        assert code == 0, err[-2000:]
        assert "match m-1 over" in out

        assert (await spades("connect", address)).exit_code == 0
        mine = await spades("ladder", "matches", "--mine", "--json")
        assert mine.exit_code == 0, mine.output
        (match,) = json.loads(mine.output)
        assert match["match"] == "m-1" and "my-bot" in match["bots"]
        assert set(match["bots"]) == {n for team in match["teams"] for n in team}
        table = await spades("ladder", "matches", "--mine")
        assert "Ladder matches of my-bot" in table.output, table.output
        teams = table_column(table.output, 2, 6) + table_column(table.output, 3, 6)
        assert "my-bot*" in teams.replace(" ", ""), table.output  # wrapped at 80 columns

        shown = await spades("ladder", "show", "my-bot")
        assert "my-bot (bot)" in shown.output, shown.output
        standings = await spades("ladder", "standings")
        (line,) = [x for x in standings.output.splitlines() if "my-bot" in x]
        assert " bot " in line

        path = tmp_path / "m-1.jsonl"
        fetched = await spades("ladder", "records", "m-1", "-o", str(path))
        assert fetched.exit_code == 0, fetched.output
        # A match is one table (hands=1 here): one game, no second half.
        assert f"wrote 1 hand records of match m-1 (1 game) to {path}" in fetched.output
        records = [json.loads(x) for x in path.read_text().splitlines()]
        assert [(r["ladder"]["half"], r["ladder"]["halves"]) for r in records] == [(1, 1)]
        assert all("my-bot" in r["names"] for r in records)
        printed = await spades("ladder", "records", "m-1")
        assert [json.loads(x) for x in printed.output.splitlines()] == records

        replayed = await spades("replay", str(path), "--all")
        assert replayed.exit_code == 0, replayed.output
        text = replayed.output
        assert "match m-1" in text and "half 1 of" not in text
        assert "time per decision: " in text and re.search(
            r"(South|West|North|East) \(my-bot\)\* \d", text
        )
        # The author's bot is marked wherever it sat (issue 41 item 1).
        assert "* marks yours (my-bot)" in text and all(r["yours"] == ["my-bot"] for r in records)
        assert text.count("verified: seed matches the commitment") == 1

        unknown = one_line_error(await spades("ladder", "records", "m-77"))
        assert "no_such_match" in unknown


async def test_why_a_match_was_forfeited_is_shown(
    ladder_server: tuple[Server, LadderService],  # noqa: F811 - the fixture
) -> None:
    server, _service = ladder_server

    def history(tx: Tx) -> str:
        four = ["slow-bot", "b2", "b3", "b4"]
        return rated_match(
            tx, four, [(50, 10)], forfeits=["slow-bot"], reasons={"slow-bot": "timeouts"}
        )

    with trio.fail_after(60):
        forfeited = await server.store.call(history)
        await spades("connect", f"127.0.0.1:{server.port}")
        listed = await spades("ladder", "matches")
        shown = await spades("ladder", "show", "slow-bot")
        as_json = json.loads((await spades("ladder", "matches", "--json")).output)
        none_mine = one_line_error(await spades("ladder", "matches", "--mine"))
    assert as_json[0]["forfeit_reasons"] == {"slow-bot": "timeouts"}
    match = from_map(LadderMatch, as_json[0])
    # A forfeit loses for its team, whatever the points said.
    assert match_result(match) == "B won 50:10 (forfeit)"
    said = f"{forfeited}: slow-bot forfeited: its clock ran out too often; its team lost the match"
    assert said in listed.output and said in shown.output
    assert "no account of yours" in none_mine and "spades-bot register NAME" in none_mine


async def test_the_ladder_commands_find_the_server_a_bot_was_registered_on(
    ladder_server: tuple[Server, LadderService],  # noqa: F811 - the fixture
) -> None:
    # A bot author who has run only `spades-bot register` (no `spades connect`) reads that
    # server's ladder; with bots kept for several servers, one line says to choose.
    from bots.sdk.credentials import BotCredentials, BotTokens

    server, _service = ladder_server
    address = f"127.0.0.1:{server.port}"
    with trio.fail_after(60):
        code, _, err = await spades_bot("register", "lone-bot", "--server", address)
        assert code == 0, err
        standings = await spades("ladder", "standings", "--json")
        assert standings.exit_code == 0, standings.output
        assert isinstance(json.loads(standings.stdout), list)
        assert f"the ladder of {address}" in standings.stderr
        mine = await spades("ladder", "matches", "--mine")
        assert mine.exit_code == 0, mine.output
        assert f"no ladder matches for lone-bot on {address} yet" in mine.stdout

        BotTokens().save("127.0.0.1:1", BotCredentials("far-bot", "1.x"))
        several = one_line_error(await spades("ladder", "standings"))
        assert address in several and "127.0.0.1:1" in several and "spades connect" in several

        assert (await spades("connect", address)).exit_code == 0
        chosen = await spades("ladder", "standings", "--json")
        assert chosen.exit_code == 0 and chosen.stderr == "", chosen.output
