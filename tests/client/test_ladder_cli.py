"""`spades ladder ...` through typer's runner against a real in-process server with a ladder.

The history the listing commands show is written into the server's database as the ladder would
(tests/server/ladder/made.py); entering and leaving go through the server's real ladder.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from client.config import ServerAddress
from client.journal import Journal
from client.lobby import register
from client.session import Mode, PlaySession, Seating
from protocol.messages import LadderEnter, Ok
from protocol.types import ClientKind
from server.app import Server, local_config, running_server
from server.ladder.service import LadderService
from server.ladder.settings import LadderSettings
from server.storage import Tx
from tests.client.helpers import FakeDisplay, take_turn, wait_for
from tests.client.test_cli import one_line_error, spades
from tests.server.ladder.made import rated_match, void_match
from tests.server.wire_client import WireClient

SETTINGS = LadderSettings(hands=1, interval=0.05, seed=5)


@pytest.fixture
async def ladder_server(tmp_path: Path) -> AsyncIterator[tuple[Server, LadderService]]:
    """A server with a running ladder (two house bots: nobody gets a match with one person)."""
    config = local_config(tmp_path / "server.db", ladder=True, ladder_settings=SETTINGS)
    async with running_server(config) as server:
        service = server.ladder
        assert service is not None
        for spec in ("random", "heuristic"):
            await service.add_house_bot(spec)
        yield server, service


def token_of(client_dirs: Path) -> str:
    token_file = next((client_dirs / "config" / "servers").glob("*.json"))
    return str(json.loads(token_file.read_text())["token"])


async def test_a_person_enters_and_leaves_the_ladder(
    ladder_server: tuple[Server, LadderService], client_dirs: Path
) -> None:
    server, service = ladder_server
    with trio.fail_after(60):
        await spades("connect", f"127.0.0.1:{server.port}")
        # Without an account (a guest), one clear line.
        refused = one_line_error(await spades("ladder", "enter"))
        assert "guests cannot enter the ladder" in refused
        one_line_error(await spades("ladder", "leave"))
        assert (await spades("register", "ada")).exit_code == 0

        # `enter` stays on the ladder while its screen is up; /quit leaves.
        entered = await spades("ladder", "enter", input="/quit\n")
        assert entered.exit_code == 0, entered.output
        # Two house bots and ada: it says how many more a match needs.
        assert "ada is on the rated ladder." in entered.output
        assert (
            "Waiting for 1 more entrant: a match needs 4 and 2 others are on the" in entered.output
        )
        assert "Left the ladder" in entered.output

        # `leave` from another terminal, while ada's own connection holds the entry.
        holder = await WireClient.connect(server.port)
        await holder.hello(token=token_of(client_dirs), kind=ClientKind.HUMAN)
        assert isinstance(await holder.request(LadderEnter()), Ok)
        assert any(e.account.name == "ada" for e in service.entrants.values())
        left = await spades("ladder", "leave")
        assert left.exit_code == 0, left.output
        assert "ada leaves the ladder" in left.output
        assert not any(e.account.name == "ada" for e in service.entrants.values())
        again = one_line_error(await spades("ladder", "leave"))
        assert "not_on_ladder" in again
        await holder.aclose()


async def test_matches_and_show(
    ladder_server: tuple[Server, LadderService], client_dirs: Path
) -> None:
    server, _service = ladder_server
    four = ["ada", "bot-b", "bot-c", "bot-d"]

    def history(tx: Tx) -> list[str]:
        return [
            rated_match(tx, four, [(100, 40), (20, 60)], humans=["ada"]),
            void_match(tx, four),
            rated_match(tx, ["bot-b", "bot-c", "bot-d", "bot-e"], [(10, 90), (50, 30)]),
        ]

    with trio.fail_after(60):
        first, void, other = await server.store.call(history)
        await spades("connect", f"127.0.0.1:{server.port}")

        listed = await spades("ladder", "matches", "--json")
        assert listed.exit_code == 0, listed.output
        matches = json.loads(listed.output)
        assert [m["match"] for m in matches] == [other, void, first]
        assert matches[2]["teams"] == [["ada", "bot-c"], ["bot-b", "bot-d"]]
        assert [h["points"] for h in matches[2]["halves"]] == [[100, 40], [20, 60]]
        assert matches[2]["points"] == [120, 100] and matches[2]["winner"] == 0
        assert matches[1]["status"] == "void"

        mine = json.loads((await spades("ladder", "matches", "ada", "--json")).output)
        assert [m["match"] for m in mine] == [void, first]
        shown = await spades("ladder", "matches", "ada")
        assert shown.exit_code == 0, shown.output
        assert first in shown.output and "A won 120:100" in shown.output
        assert "void" in shown.output
        none = await spades("ladder", "matches", "nobody")
        assert none.exit_code == 0 and "no ladder matches for nobody" in none.output
        one_line_error(await spades("ladder", "matches", "--limit", "0"), code=2)

        detail = await spades("ladder", "show", "ada", "--json")
        assert detail.exit_code == 0, detail.output
        ada = json.loads(detail.output)
        assert ada["name"] == "ada" and ada["kind"] == "human" and ada["games"] == 1
        assert (ada["wins"], ada["draws"], ada["losses"], ada["forfeits"]) == (1, 0, 0, 0)
        assert [m["match"] for m in ada["recent"]] == [void, first]
        text = await spades("ladder", "show", "ada")
        assert text.exit_code == 0, text.output
        assert "ada (human)" in text.output and "1 won, 0 drawn, 0 lost" in text.output
        assert "Recent matches" in text.output
        bot = json.loads((await spades("ladder", "show", "bot-e", "--json")).output)
        assert bot["kind"] == "bot" and bot["games"] == 1
        unknown = one_line_error(await spades("ladder", "show", "nobody"))
        assert "no_such_entrant" in unknown

        standings = json.loads((await spades("ladder", "standings", "--json")).output)
        assert {line["name"] for line in standings} >= {"ada", "bot-e"}


async def test_the_ladder_screen_plays_a_match(
    ladder_server: tuple[Server, LadderService], tmp_path: Path
) -> None:
    server, service = ladder_server
    address = ServerAddress("127.0.0.1", server.port)
    with trio.fail_after(90):
        credentials = await register(address, "ada")
        display = FakeDisplay()
        session = PlaySession(
            address=address,
            token=credentials.token,
            seating=Seating(Mode.LADDER),
            display=display,
            journal=Journal(address.key, root=tmp_path / "history"),
        )

        def said(text: str) -> bool:
            return any(text in line for line in session.state.log)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(session.run)
            await wait_for(lambda: said("is on the rated ladder"), "the entry")
            assert said("Waiting for 1 more entrant")
            await service.add_house_bot("search,ms=5")  # the fourth: a match starts
            # Seen while it is on the screen: once the match is over the ladder may seat us in the
            # next one at once, and a new table keeps only the last few lines of the log.
            started_seen = False
            for _ in range(80):  # a match of one hand: some 15 decisions
                await wait_for(
                    lambda: session.state.turn is not None or said("over: your team"), "a turn"
                )
                started_seen = started_seen or said("Rated match")
                if said("over: your team"):
                    break
                await take_turn(session, display)
            assert said("over: your team"), session.state.log
            assert started_seen, session.state.log  # a fresh table for the match
            # The match is in the history: one table, one game (no deal is played twice).
            games = sorted((tmp_path / "history").glob("*/*.jsonl"))
            assert len(games) == 1, games
            await display.type("/quit")
        assert session.quitting
    await service.wait_rated(1)


@pytest.mark.parametrize("width", [80, 120])
def test_the_standings_fit_the_terminal_with_every_name_whole(width: int) -> None:
    """With the player statistics beside the ratings, the standings at 80 columns cut the names to
    "my-b…"; now every name is whole and every line fits, μ and σ shown from 100 columns."""
    from rich.console import Console

    from client.lobby import standings_view
    from protocol.types import Standing

    names = ["my-bot", "house-search-ms-200", "a-bot-with-a-long-name-24"]
    entries = [
        Standing(
            rank=i + 1,
            name=name,
            rating=12.345,
            mu=30.5,
            sigma=6.12,
            games=1234,
            bot=True,
            hands=56789,
            contracts=50000,
            contracts_made=41234,
            bags=60000,
            nil_tried=12,
            nil_made=9,
        )
        for i, name in enumerate(names)
    ]
    console = Console(width=width, record=True, highlight=False)
    console.print(standings_view(entries, console.width))
    text = console.export_text()
    lines = text.splitlines()
    assert all(len(line) <= width for line in lines), text
    for name in names:
        assert any(name in line for line in lines), text
    assert "…" not in text, text
    assert ("σ" in text) == (width >= 100), text
