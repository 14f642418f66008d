"""Issue 43's "Done when", end to end on a real server process (`spades-server serve`, 127.0.0.1,
ports 0): a 16-player individual Swiss of 4 rounds through a `kill -9` in round 2, and an 8-pair
knockout run to its champion; bots and people mixed in both.

- The bots are `spades-bot run random --event E1` processes, the bot author's path; the server's
  house bots fill the field to its size (16 players, 8 pairs), as the rules say.
- ada plays by keys in the terminal client in tmux (`spades event E1 --play`, driven by
  tests/client/tmux_event.py); bea clicks in the web page in Chromium (tests/web/page.py's
  `take_part_in_event`). In the Swiss their partners rotate (bots, the house, each other); in the
  knockout they are each other's partner.

The Swiss's server is killed with SIGKILL while round 2 is in play (three tables done, ada's
waiting for her: her client is stopped from the pairing until the restart, a player away from her
keyboard) and started again on the same database and ports: every process and the page reconnect
and check in again by themselves. The round plans stored before the kill are the ones after it
(and `spades event E1 --json` shows the same tables), the hands stored before it are kept, the
event finishes, and the standings `spades event E1 --json` shows are the ones `spades-server events
export` rebuilds from the stored boards, every entrant placed, nobody forfeited. The knockout's
bracket, on the page and as `spades event E1` draws it, ends at the champion the export names.

Every wait reads a screen, a page, a stored row or a process's exit, with a deadline.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import trio

from bots.sdk.register import register_bot
from client.config import ServerAddress
from client.events import create_event, event_request
from protocol import messages as m
from protocol.event_messages import EventFormat
from server.cli import main as server_main
from tests.client.test_tmux_e2e import TMUX, Pane, client_env
from tests.client.tmux_event import BIN, EventRun, event_pane, play_event_seat, spades_cli
from tests.hostile.proc import ServerProcess
from tests.web.browser import need_browser
from tests.web.page import (
    WAIT_MS,
    chromium,
    close_shared,
    open_event,
    open_page,
    register,
    take_part_in_event,
)

pytestmark = pytest.mark.skipif(not Path(TMUX).exists(), reason="tmux is not installed")

#: Seconds each round's pairing is shown before its tables open.
ROUND_GAP = 1.0
#: Seconds from the announcement to the start: the registrations over the wire come first, then
#: the page's (the event opened from the lobby's list, Register pressed).
LEAD = 8.0
#: How long one whole event may take here (a loaded 2-core machine), start to end (pytest-timeout
#: stops a test at 120 s).
EVENT_LIMIT = 100.0
WEB_LINE = re.compile(rb"web page: open (http://\S+)")


@pytest.fixture(scope="module", autouse=True)
def one_chromium() -> Iterator[None]:
    """The Chromium `tests.web.page.chromium()` shares, closed after this module's tests."""
    yield
    close_shared()


def wait_until(check: Callable[[], Any], what: str, limit: float = 60.0) -> Any:
    """Poll `check` until it returns something truthy (returned); fail after `limit` seconds."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        got = check()
        if got:
            return got
        time.sleep(0.05)  # the pace of polling, not synchronisation: the deadline bounds it
    raise AssertionError(f"timed out after {limit:.0f} s waiting for {what}")


class EventServer:
    """`spades-server serve --events-open` as a process (tests/hostile/proc.py's), its web port on
    too; `crash_and_restart` kills it with SIGKILL and starts it on the same database and ports."""

    def __init__(self, tmp_path: Path) -> None:
        self.db = tmp_path / "server.db"
        self.proc = ServerProcess(
            self.db,
            "--events-open",
            "--no-ladder",
            "--no-hand-analysis",
            "--web-port",
            "0",
            workdir=tmp_path,
        )
        self.port = 0
        self.url = ""

    def start(self) -> None:
        self.proc.start()
        self.port = self.proc.port
        found = wait_until(
            lambda: WEB_LINE.search(self.proc.stdout_path.read_bytes()), "the web address", 20
        )
        self.url = found.group(1).decode()

    def crash_and_restart(self) -> None:
        self.proc.kill9()
        web_port = self.url.rstrip("/").rsplit(":", 1)[1]
        # The last --port and --web-port given win over the 0s the helper puts first.
        self.proc.extra = (*self.proc.extra, "--port", str(self.port), "--web-port", web_port)
        before = self.url
        self.start()
        assert self.url == before, (self.url, before)

    def stop(self) -> None:
        assert self.proc.stop() == 0, self.proc.log_tail()

    def rows(self, sql: str, *args: object) -> list[tuple[Any, ...]]:
        """Rows of the server's SQLite file, read as it runs (a reader never blocks the writer)."""
        conn = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=5)
        try:
            return list(conn.execute(sql, args))
        finally:
            conn.close()


@contextmanager
def event_server(tmp_path: Path) -> Iterator[EventServer]:
    server = EventServer(tmp_path)
    server.start()
    try:
        yield server
    finally:
        server.proc.kill()


@dataclass
class Field:
    """The accounts of an event's test: the host, the people and the bots, with their tokens."""

    address: ServerAddress
    tokens: dict[str, str] = field(default_factory=dict)
    bots: list[subprocess.Popen[str]] = field(default_factory=list)
    bot_names: list[str] = field(default_factory=list)


def person(tmp_path: Path, port: int, name: str) -> tuple[dict[str, str], str]:
    """`spades register NAME` in a terminal of its own: its client dirs, and the token it kept."""
    env = client_env(tmp_path / name, port)
    spades_cli(env, "register", name)
    kept = next((tmp_path / name / "config" / "servers").glob("*.json"))
    return env, str(json.loads(kept.read_text())["token"])


def announce_and_register(
    fld: Field,
    host: str,
    request: m.EventCreate,
    bots: list[str],
    entrants: list[tuple[str, str | None]],
) -> str:
    """Make the bot accounts, announce the event as `host`, register each (name, partner)."""

    async def run() -> str:
        for name in bots:
            made = await register_bot(fld.address.host, fld.address.port, name)
            fld.tokens[name] = made.token
        info = await create_event(fld.address, fld.tokens[host], request)
        event = info.summary.event
        for name, partner in entrants:
            register = m.EventRegister(event=event, partner=partner)
            await event_request(fld.address, fld.tokens[name], register)
        return event

    return trio.run(run)


def start_bots(fld: Field, tmp_path: Path, event: str) -> None:
    """`spades-bot run random --event EVENT` for each bot account, a process each."""
    for name in fld.bot_names:
        log = (tmp_path / f"{name}.out").open("w")
        command = [str(BIN / "spades-bot"), "run", "random", "--token", fld.tokens[name]]
        server = f"{fld.address.host}:{fld.address.port}"
        fld.bots.append(
            subprocess.Popen(
                [*command, "--event", event, "--server", server, "--seed", "7"],
                stdout=log,
                stderr=subprocess.STDOUT,
                text=True,
                env={**os.environ, "SPADES_CONFIG_DIR": str(tmp_path / "botcfg")},
            )
        )
        log.close()


def finish_bots(fld: Field, tmp_path: Path, limit: float = 60.0) -> list[str]:
    """Each bot run's output once it has exited (every one must exit 0); kills stragglers."""
    deadline = time.monotonic() + limit
    outputs = []
    try:
        for name, bot in zip(fld.bot_names, fld.bots, strict=True):
            code = bot.wait(timeout=max(0.1, deadline - time.monotonic()))
            out = (tmp_path / f"{name}.out").read_text()
            assert code == 0, (name, out)
            outputs.append(out)
    finally:
        for bot in fld.bots:
            if bot.poll() is None:
                bot.kill()
                bot.wait(timeout=10)
    return outputs


def round_2_boards(server: EventServer) -> list[int]:
    """The boards stored for each table of round 2 whose game has begun, fewest first (a table's
    game is found by its table id: the event's row names the game once it is over)."""
    return sorted(
        n
        for (n,) in server.rows(
            "SELECT COUNT(h.hand_no) FROM event_tables t JOIN games g ON g.table_id = t.table_id"
            " LEFT JOIN hand_records h ON h.game_id = g.id WHERE t.round = 2 GROUP BY t.table_no"
        )
    )


def page_person(browser: Any, errors: list[str], url: str, name: str) -> Any:
    """A person on the web page: registered from its login screen, at the lobby; its page plays at
    the fastest pace (a trick held 0.8 s), as tests/web/test_events.py's does."""
    page = open_page(browser, errors, label=name)
    page.add_init_script("localStorage.setItem('spades.pace', 'fast')")
    register(page, url, name)
    return page


def register_on_page(page: Any, event: str, partner: str | None = None) -> None:
    """As a person does: open the event from the lobby's list, name a partner, press Register."""
    open_event(page, event)
    if partner is not None:
        page.fill("#event-partner", partner)
    page.click("#event-register")
    page.wait_for_selector("#event-play", timeout=WAIT_MS)


def ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def pane_client(pane: Pane) -> int:
    """The pid of the client a pane runs (the pane's shell's one child: `env` execs it)."""
    shell = int(pane.tmux("display-message", "-p", "-t", "e2e", "#{pane_pid}").strip())
    children = Path(f"/proc/{shell}/task/{shell}/children").read_text().split()
    assert len(children) == 1, children
    return int(children[0])


def event_json(env: dict[str, str], event: str) -> dict[str, Any]:
    shown: dict[str, Any] = json.loads(spades_cli(env, "event", event, "--json"))
    return shown


def export(db: Path, event: str, out: Path) -> dict[str, Any]:
    """`spades-server events export EVENT --out OUT --db DB`: its standings.json."""
    try:
        server_main(["events", "export", event, "--out", str(out), "--db", str(db)])
    except SystemExit as exit_:
        assert not exit_.code, exit_.code
    written: dict[str, Any] = json.loads((out / "standings.json").read_text(encoding="utf-8"))
    return written


def standing_rows(lines: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (s["place"], s["key"], s["names"], s["percent"], s["boards"], s["margin"], s["forfeits"])
        for s in lines
    ]


def seats_of(shown: dict[str, Any], rounds: int) -> list[list[tuple[int, list[str]]]]:
    """The pairing of the first `rounds` rounds: each table's number and its names by seat."""
    return [[(t["table_no"], t["seats"]) for t in r["tables"]] for r in shown["rounds"][:rounds]]


class Background:
    """A thread whose failure is the test's: `join` re-raises what it raised."""

    def __init__(self, target: Callable[[], Any]) -> None:
        self.result: Any = None
        self.error: BaseException | None = None

        def body() -> None:
            try:
                self.result = target()
            except BaseException as error:  # handed to the test's thread by `join`
                self.error = error

        self.thread = threading.Thread(target=body, daemon=True)
        self.thread.start()

    def join(self, limit: float) -> Any:
        self.thread.join(timeout=limit)
        assert not self.thread.is_alive(), "a background step did not end in time"
        if self.error is not None:
            raise self.error
        return self.result


@dataclass
class Crash:
    """What the stored rows and `spades event E1 --json` said at the kill."""

    shown: dict[str, Any]  # `spades event E1 --json` once round 2 was paired
    plans: list[tuple[Any, ...]]  # the stored rounds' plans
    records: list[tuple[Any, ...]]  # every hand record stored


def crash_in_round_2(server: EventServer, pane: Pane, env: dict[str, str], event: str) -> Crash:
    """Once round 2 is paired (its tables open ROUND_GAP later), ada steps away from her keyboard
    (her client stopped), so her table of round 2 waits for her while the other three end; then the
    server is killed with SIGKILL, started again on the same database and ports, and ada is back
    (her client goes on, reconnects and checks in again by itself)."""
    wait_until(
        lambda: server.rows("SELECT 1 FROM event_rounds WHERE round = 2"),
        "round 2's pairing",
        EVENT_LIMIT,
    )
    client = pane_client(pane)
    os.kill(client, signal.SIGSTOP)
    try:
        shown = event_json(env, event)
        wait_until(
            lambda: round_2_boards(server) == [0, 1, 1, 1],
            "round 2's other tables to end",
            EVENT_LIMIT,
        )
        server.proc.kill9()
        crash = Crash(
            shown,
            server.rows("SELECT round, plan FROM event_rounds ORDER BY round"),
            server.rows("SELECT game_id, hand_no, record FROM hand_records"),
        )
        # Killed in round 2, ada's board still in play.
        assert [r for r, _p in crash.plans] == [1, 2], crash.plans
        assert round_2_boards(server) == [0, 1, 1, 1], round_2_boards(server)
        server.crash_and_restart()
    finally:
        os.kill(client, signal.SIGCONT)
    return crash


@pytest.mark.timeout(300)
def test_a_16_player_individual_swiss_of_4_rounds_through_a_kill_9(tmp_path: Path) -> None:
    need_browser()
    errors: list[str] = []
    with event_server(tmp_path) as server, chromium() as browser:
        fld = Field(ServerAddress("127.0.0.1", server.port))
        env, fld.tokens["ada"] = person(tmp_path, server.port, "ada")
        page = page_person(browser, errors, server.url, "bea")
        fld.bot_names = [f"sw{i:02d}-bot" for i in range(13)]
        request = m.EventCreate(
            name="Done when Swiss",
            format=EventFormat.SWISS_INDIVIDUAL,
            rounds=4,
            boards=1,
            starts_at=time.time() + LEAD,
            max_entrants=16,
            bot_turn_ms=2000,
            round_gap=ROUND_GAP,
        )
        entrants: list[tuple[str, str | None]] = [(n, None) for n in ["ada", *fld.bot_names]]
        event = announce_and_register(fld, "ada", request, fld.bot_names, entrants)
        assert event == "E1"
        register_on_page(page, event)
        start_bots(fld, tmp_path, event)
        pane = event_pane(env, event)
        try:
            playing = Background(lambda: play_event_seat(pane, limit=EVENT_LIMIT))
            crashing = Background(lambda: crash_in_round_2(server, pane, env, event))
            notices = take_part_in_event(page, event, between_rounds_ms=int(EVENT_LIMIT * 1000))
            crash: Crash = crashing.join(EVENT_LIMIT)
            run: EventRun = playing.join(EVENT_LIMIT)
        finally:
            pane.close()
            outputs = finish_bots(fld, tmp_path)
        ended = page.inner_text("#event-banner-text")
        after = event_json(env, event)
        server.stop()
    assert errors == []
    assert server.proc.starts == 2  # killed once, started again once
    # ada in tmux and bea on the page played every round, through the restart, to the end.
    assert run.exit_code == 0, run.final
    assert run.rounds == [f"E1 round {n}" for n in range(1, 5)], run
    assert "Event E1 is over. Final standings" in run.final, run.final
    told = {int(n.split(":")[0].split()[1]) for n in notices if n.startswith("Round ")}
    assert told == {1, 2, 3, 4}, notices
    assert ended.startswith("Event E1 is over: you placed "), ended
    assert all("E1 is over: place" in out for out in outputs), outputs
    # The same plans before and after the kill, and every hand stored before it kept as it was.
    plans_after = server.rows("SELECT round, plan FROM event_rounds ORDER BY round")
    assert plans_after[:2] == crash.plans and len(plans_after) == 4
    assert seats_of(after, 2) == seats_of(crash.shown, 2)
    assert after["rounds"][0] == crash.shown["rounds"][0]  # round 1, played before the kill
    records = server.rows("SELECT game_id, hand_no, record FROM hand_records")
    assert set(crash.records) <= set(records)
    # Finished: 16 entrants (two people, 13 bots, one house bot), 4 rounds of 4 tables of 1 board.
    assert after["summary"]["status"] == "finished" and after["summary"]["round"] == 4
    assert len(after["entrants"]) == 16
    assert sum(e["house"] for e in after["entrants"]) == 1
    assert [len(r["tables"]) for r in after["rounds"]] == [4, 4, 4, 4]
    assert all(len(t["boards"]) == 1 for r in after["rounds"] for t in r["tables"])
    # Every entrant placed, nobody forfeited; the export rebuilds the same standings.
    lines = after["standings"]
    assert [s["place"] for s in lines] == list(range(1, 17))
    assert all(s["boards"] == 4 and s["forfeits"] == 0 for s in lines), lines
    bea = next(s["place"] for s in lines if s["names"] == ["bea"])
    assert ended.startswith(f"Event E1 is over: you placed {ordinal(bea)} "), ended
    written = export(server.db, event, tmp_path / "export")
    assert written["status"] == "finished"
    assert standing_rows(written["standings"]) == standing_rows(lines)


@pytest.mark.timeout(300)
def test_an_8_pair_knockout_runs_to_its_champion(tmp_path: Path) -> None:
    need_browser()
    errors: list[str] = []
    with event_server(tmp_path) as server, chromium() as browser:
        fld = Field(ServerAddress("127.0.0.1", server.port))
        env, fld.tokens["ada"] = person(tmp_path, server.port, "ada")
        page = page_person(browser, errors, server.url, "bea")
        fld.bot_names = [f"k{i}" for i in range(8)]
        request = m.EventCreate(
            name="Done when knockout",
            format=EventFormat.KNOCKOUT_PAIRS,
            rounds=0,
            boards=1,
            starts_at=time.time() + LEAD,
            max_entrants=8,
            bot_turn_ms=2000,
            round_gap=ROUND_GAP,
        )
        # Four pairs of bots, each pair whole, then ada naming bea, who registers on the page.
        entrants: list[tuple[str, str | None]] = []
        for one, other in ((f"k{2 * i}", f"k{2 * i + 1}") for i in range(4)):
            entrants += [(one, other), (other, one)]
        event = announce_and_register(
            fld, "ada", request, fld.bot_names, [*entrants, ("ada", "bea")]
        )
        register_on_page(page, event, partner="ada")
        start_bots(fld, tmp_path, event)
        pane = event_pane(env, event)
        try:
            playing = Background(lambda: play_event_seat(pane, limit=EVENT_LIMIT))
            notices = take_part_in_event(page, event, between_rounds_ms=int(EVENT_LIMIT * 1000))
            run: EventRun = playing.join(EVENT_LIMIT)
        finally:
            pane.close()
            outputs = finish_bots(fld, tmp_path)
        # The page's bracket, once the event is over.
        page.click("#event-banner-standings")
        page.wait_for_function(
            "() => document.getElementById('event-standings-title')?.textContent"
            " === 'Final standings'",
            timeout=WAIT_MS,
        )
        on_page = page.locator("[data-round='3'] .bracket-side.winner").get_attribute(
            "data-entrant"
        )
        shown = event_json(env, event)
        drawn = spades_cli({**env, "COLUMNS": "80"}, "event", event)
        server.stop()
    assert errors == []
    assert run.exit_code == 0, run.final
    assert run.rounds and run.rounds[0] == "E1 round 1", run
    assert notices and notices[0].startswith("Round 1: table "), notices
    assert all("E1 is over: place" in out for out in outputs), outputs
    # 8 pairs (ada & bea, four of bots, three of the house), 3 rounds of 4, 2 and 1 matches.
    assert shown["summary"]["status"] == "finished"
    assert len(shown["entrants"]) == 8 and sum(e["house"] for e in shown["entrants"]) == 3
    assert ["ada", "bea"] in [e["names"] for e in shown["entrants"]]
    matches = shown["matches"]
    assert [x["round"] for x in matches] == [1, 1, 1, 1, 2, 2, 3], matches
    assert all(x["winner"] in (x["a"], x["b"]) for x in matches)
    assert all(s["forfeits"] == 0 for s in shown["standings"]), shown["standings"]
    champion = matches[-1]["winner"]
    names = next(" & ".join(e["names"]) for e in shown["entrants"] if e["key"] == champion)
    # The export names the same champion, first in the same standings.
    written = export(server.db, event, tmp_path / "export")
    assert written["standings"][0]["key"] == champion
    assert standing_rows(written["standings"]) == standing_rows(shown["standings"])
    assert [x["winner"] for x in written["matches"]] == [x["winner"] for x in matches]
    # The page's bracket ends at the same champion, and so does `spades event E1`'s Winner column.
    assert on_page == champion, (on_page, champion)
    lines = drawn.splitlines()
    header = next(i for i, line in enumerate(lines) if line.split()[-1:] == ["Winner"])
    assert lines[header].split() == ["Round", "1", "Round", "2", "Final", "Winner"], drawn
    shown_name = names if len(names) <= 17 else names[:16] + "…"  # cut to the column's width
    assert lines[header + 8].rstrip().endswith(f"├─{shown_name}"), drawn
