"""`spades events` and `spades event EVENT` against a real server in this process (127.0.0.1, port 0)
with its events service (issue 43): announce, list, show, register, withdraw, cancel, each failure
one line; and `--play`'s session: a person checked in beside bots, playing every round's table on
the play screen, the standings between rounds, the final standings at the end.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from bots.registry import make_bot
from bots.sdk.register import register_bot
from bots.sdk.runner import BotRunner, RunnerConfig
from client.config import Credentials, ServerAddress
from client.events import create_event, event_request
from client.journal import Journal
from client.lobby import register
from client.session import Mode, PlaySession, Seating
from protocol import messages as m
from protocol.event_messages import EventFormat
from server.app import Server, local_config, running_server
from server.operator import new_token
from tests.client.helpers import FakeDisplay, take_turn, wait_for
from tests.client.test_cli import one_line_error, spades
from tests.client.test_tmux_e2e import listening_port
from tests.client.tmux_event import server_command


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async with running_server(local_config(tmp_path / "server.db", events_open=True)) as srv:
        yield srv


async def test_announce_list_show_register_withdraw_cancel(server: Server) -> None:
    with trio.fail_after(60):
        assert (await spades("connect", f"127.0.0.1:{server.port}")).exit_code == 0
        none = await spades("events")
        assert none.exit_code == 0 and "no events on" in none.output, none.output
        # Guests take no part: one line each.
        assert "guests cannot announce" in one_line_error(
            await spades("events", "create", "Club night", "--start", "+10m", "--rounds", "2")
        )
        assert "guests cannot take part" in one_line_error(
            await spades("event", "E1", "--register")
        )
        assert (await spades("register", "ada")).exit_code == 0

        made = await spades(
            "events", "create", "Club night", "--start", "+10m", "--format", "swiss_pairs",
            "--rounds", "2", "--boards", "3", "--round-gap", "1",
        )  # fmt: skip
        assert made.exit_code == 0, made.output
        assert "announced E1" in made.output
        assert "registering: starts" in made.output and "(in 10 min)" in made.output
        listed = await spades("events")
        assert listed.exit_code == 0, listed.output
        assert "E1" in listed.output and "Club night" in listed.output
        assert "Swiss pairs" in listed.output and "registering" in listed.output
        rows = json.loads((await spades("events", "--json")).output)
        assert [(r["event"], r["status"], r["rounds"], r["boards"]) for r in rows] == [
            ("E1", "registering", 2, 3)
        ]
        assert json.loads((await spades("events", "--status", "finished", "--json")).output) == []

        await register(ServerAddress("127.0.0.1", server.port), "bob")  # the partner's account
        entered = await spades("event", "E1", "--register", "--partner", "bob")
        assert entered.exit_code == 0, entered.output
        assert "ada: registered for E1 with bob (once bob names you too)" in entered.output
        assert "already_registered" in one_line_error(await spades("event", "E1", "--register"))
        shown = await spades("event", "E1")
        assert shown.exit_code == 0, shown.output
        assert "E1 · Club night · Swiss pairs · 2 rounds of 3 boards" in shown.output
        assert "Entrants (1): ada" in shown.output
        detail = json.loads((await spades("event", "E1", "--json")).output)
        assert detail["summary"]["event"] == "E1" and detail["entrants"][0]["names"] == ["ada"]

        left = await spades("event", "E1", "--withdraw")
        assert left.exit_code == 0 and "ada: withdrawn from E1" in left.output, left.output
        refused = one_line_error(await spades("event", "E1", "--play"))
        assert "ada is not an entrant of E1: `spades event E1 --register` first" in refused
        assert "no_such_event" in one_line_error(await spades("event", "E9"))
        assert "no_such_event" in one_line_error(await spades("event", "E9", "--register"))
        # Mistakes in the command line: exit 2, before any connection.
        one_line_error(await spades("event", "E1", "--play", "--withdraw"), code=2)
        one_line_error(await spades("event", "E1", "--partner", "bob"), code=2)
        one_line_error(await spades("events", "create", "X", "--start", "soon"), code=2)
        one_line_error(
            await spades("events", "create", "X", "--start", "+1m", "--format", "swiss_pairs"),
            code=2,
        )  # a Swiss needs --rounds

        cancelled = await spades("event", "E1", "--cancel")
        assert cancelled.exit_code == 0 and "E1 is cancelled" in cancelled.output
        assert "cancelled" in (await spades("event", "E1")).output


async def solo_swiss(
    address: ServerAddress, name: str, *, rounds: int, starts_in: float
) -> tuple[Credentials, str]:
    """ada's account, and an individual Swiss of one board a round that she announced and is
    registered for (the house bots fill her tables); her credentials and the event's id."""
    ada = await register(address, "ada")
    announce = m.EventCreate(
        name=name,
        format=EventFormat.SWISS_INDIVIDUAL,
        rounds=rounds,
        boards=1,
        starts_at=time.time() + starts_in,
        round_gap=0.5,
    )
    event = (await create_event(address, ada.token, announce)).summary.event
    await event_request(address, ada.token, m.EventRegister(event=event))
    return ada, event


def event_screen(
    address: ServerAddress, token: str, event: str, display: FakeDisplay, tmp_path: Path
) -> PlaySession:
    """`spades event EVENT --play`'s play screen on `display`, its history under `tmp_path`."""
    return PlaySession(
        address=address,
        token=token,
        seating=Seating(Mode.EVENT, event=event),
        display=display,
        journal=Journal(address.key, root=tmp_path / "history"),
    )


async def test_a_person_plays_an_event_with_a_bot_partner(server: Server, tmp_path: Path) -> None:
    """ada (the play screen) and her partner, a bot of the SDK, against the server's house pair:
    two rounds of one board; each round's notice, the table, the standings between rounds, the
    final standings and the end."""
    address = ServerAddress("127.0.0.1", server.port)
    with trio.fail_after(120):
        ada = await register(address, "ada")
        partner = await register_bot("127.0.0.1", server.port, "ada-bot")
        announce = m.EventCreate(
            name="Pairs night",
            format=EventFormat.SWISS_PAIRS,
            rounds=2,
            boards=1,
            starts_at=time.time() + 2,
            round_gap=1.0,
        )
        event = (await create_event(address, ada.token, announce)).summary.event
        await event_request(address, ada.token, m.EventRegister(event=event, partner="ada-bot"))
        bot = BotRunner(
            make_bot("random", 3),
            RunnerConfig(
                host="127.0.0.1",
                port=server.port,
                token=partner.token,
                event=event,
                partner="ada",
                games=0,
            ),
        )
        display = FakeDisplay()
        session = event_screen(address, ada.token, event, display, tmp_path)

        def said(text: str) -> bool:
            return any(text in line for line in session.state.log)

        rounds_seen: set[str] = set()
        standings_seen = False
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bot.run)
            nursery.start_soon(session.run)
            await wait_for(lambda: said(f"checked in to event {event}"), "the check-in")
            for _ in range(200):  # two boards: some 30 decisions of ours
                await wait_for(
                    lambda: session.state.turn is not None or session.ended is not None,
                    "a turn or the end",
                    limit=60,
                )
                rounds_seen |= {
                    line.split(":")[0]
                    for line in session.state.log
                    if line.startswith(f"{event} round ")
                }
                # Round 2's notice put the standings after round 1 in the table's place (until
                # that round's table opened: they stay in the panel /standings shows).
                panel = session.screen.panel
                standings_seen = standings_seen or bool(
                    panel and "standings after round 1" in panel[0]
                )
                if session.ended is not None:
                    break
                await take_turn(session, display)
        assert session.ended is not None and session.ended.event == event
        assert rounds_seen == {f"{event} round 1", f"{event} round 2"}, rounds_seen
        assert standings_seen, session.screen.panel
        names = {tuple(sorted(s.names)) for s in session.ended.standings}
        assert ("ada", "ada-bot") in names and len(names) == 2
        assert bot.stats.event_end is not None
        # Both rounds' tables are in ada's history, a game each.
        assert len(sorted((tmp_path / "history").glob("*/*.jsonl"))) == 2


async def play_moves(session: PlaySession, display: FakeDisplay, moves: int = 1000) -> int:
    """Play `session`'s seat (a bid of 3, the first legal card) until the event ends or `moves`
    were made; how many were."""
    made = 0
    while made < moves:
        await wait_for(
            lambda: session.state.turn is not None or session.ended is not None,
            "a turn or the end",
            limit=60,
        )
        if session.ended is not None:
            break
        await take_turn(session, display)
        made += 1
    return made


async def test_a_person_who_quits_mid_round_comes_back_to_her_seat(
    server: Server, tmp_path: Path
) -> None:
    """An individual Swiss, ada and three house bots: /quit in the middle of the board, then
    `spades event E1 --play` again, within the seat's hold: the same table, her seat, and the
    event played to its end with nothing forfeited."""
    address = ServerAddress("127.0.0.1", server.port)
    with trio.fail_after(120):
        ada, event = await solo_swiss(address, "Solo night", rounds=1, starts_in=1.0)
        first_display = FakeDisplay()
        first = event_screen(address, ada.token, event, first_display, tmp_path)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(first.run)
            assert await play_moves(first, first_display, moves=3) == 3
            table = first.state.table
            # /standings in the table's place, whenever asked (none yet: round 1 is not over).
            await first_display.type("/standings")
            await wait_for(lambda: "No round has finished yet." in first_display.screen, "them")
            assert "Solo night: standings of 1 round (Enter closes)" in first_display.screen
            await first_display.type("")
            await wait_for(lambda: first.screen.overlay == "", "Enter to close them")
            await first_display.type("/quit")
        assert first.quitting and first.ended is None

        again_display = FakeDisplay()
        again = event_screen(address, ada.token, event, again_display, tmp_path)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(again.run)
            await wait_for(lambda: again.state.table == table, "the same table")
            assert any("round 1 of 1 is under way" in line for line in again.state.log)
            await play_moves(again, again_display)
        assert again.ended is not None
        standing = next(s for s in again.ended.standings if s.names == ["ada"])
        assert standing.forfeits == 0 and standing.boards == 1

        # The event's board, as hand records a replay steps through.
        assert (await spades("connect", f"127.0.0.1:{server.port}")).exit_code == 0
        path = tmp_path / "e1.jsonl"
        wrote = await spades("event", event, "--records", "-o", str(path))
        assert wrote.exit_code == 0 and f"wrote 1 board of {event}" in wrote.output, wrote.output
        (record,) = [json.loads(line) for line in path.read_text().splitlines()]
        assert record["format"] == "spades-hand/1", record
        assert record["event"] == f"{event}/r1/t1" and record["board"] == 1, record
        printed = await spades("event", event, "--records")
        assert json.loads(printed.output) == record
        replayed = await spades("replay", str(path), "--all")
        assert replayed.exit_code == 0 and "Spades · game 1 · hand 1" in replayed.output
        one_line_error(await spades("event", event, "-o", str(path)), code=2)


async def test_the_play_screen_rides_out_a_server_crash(tmp_path: Path) -> None:
    """`spades-server serve` killed with -9 in the middle of round 1 and started again on the same
    database and port: ada's screen reconnects and checks in by itself, gets her seat back at the
    same table, and the event is played to its end (an individual Swiss with house bots)."""
    db = tmp_path / "crash.db"

    def start(*extra: str) -> tuple[subprocess.Popen[str], int]:
        proc = subprocess.Popen(
            server_command(db, *extra),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        return proc, listening_port(proc)

    proc, port = await trio.to_thread.run_sync(start)
    address = ServerAddress("127.0.0.1", port)
    try:
        with trio.fail_after(120):
            ada, event = await solo_swiss(address, "Crash night", rounds=2, starts_in=1.5)
            display = FakeDisplay()
            session = event_screen(address, ada.token, event, display, tmp_path)
            async with trio.open_nursery() as nursery:
                nursery.start_soon(session.run)
                assert await play_moves(session, display, moves=3) == 3
                table = session.state.table
                proc.kill()  # -9: nothing is flushed, nothing said
                await trio.to_thread.run_sync(proc.wait)
                assert proc.stdout is not None
                proc.stdout.close()
                proc, _ = await trio.to_thread.run_sync(start, "--port", str(port))
                # The screen reconnects by itself (its backoff), and the turns come back.
                await play_moves(session, display)
            assert session.reconnects >= 1
            assert session.ended is not None, session.state.log
            assert table.startswith(f"{event}-r1-")
            mine = next(s for s in session.ended.standings if s.names == ["ada"])
            assert mine.boards == 2 and mine.forfeits == 0, mine
    finally:
        proc.kill()
        await trio.to_thread.run_sync(proc.wait)
        if proc.stdout is not None:
            proc.stdout.close()


async def test_the_operator_announces_and_cancels_where_accounts_may_not(
    tmp_path: Path, client_dirs: Path
) -> None:
    """Without `events_open` an account's announcement is refused in one line; with the operator's
    token (`spades-server admin token`) it is made, and cancelled, from the terminal."""
    async with running_server(local_config(tmp_path / "closed.db")) as closed:
        with trio.fail_after(60):
            token, digest = new_token()
            await closed.store.call(lambda tx: tx.add_operator_token(digest))
            token_file = tmp_path / "operator-token"
            token_file.write_text(token + "\n", encoding="utf-8")
            assert (await spades("connect", f"127.0.0.1:{closed.port}")).exit_code == 0
            assert (await spades("register", "ada")).exit_code == 0
            create = ["events", "create", "Club night", "--start", "+10m", "--rounds", "2"]
            assert "not_allowed" in one_line_error(await spades(*create))
            made = await spades(*create, "--operator-token-file", str(token_file))
            assert made.exit_code == 0 and "announced E1" in made.output, made.output
            assert "ada: registered for E1" in (await spades("event", "E1", "--register")).output
            # Announced on ada's connection: the operator's event, with ada as its host.
            assert "host ada" in made.output, made.output
            usage = await spades("event", "E1", "--withdraw", "--operator-token-file", "x")
            one_line_error(usage, code=2)
            gone = await spades("event", "E1", "--cancel", "--operator-token-file", str(token_file))
            assert gone.exit_code == 0 and "E1 is cancelled" in gone.output, gone.output
            empty = tmp_path / "empty"
            empty.write_text("", encoding="utf-8")
            assert "is empty" in one_line_error(
                await spades(*create, "--operator-token-file", str(empty)), code=2
            )
