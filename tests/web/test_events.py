"""Issue 43 on the web page, in Chromium against a real `spades-server serve`: a person announces an
event from the lobby's form, registers, checks in with *Play* and plays each round's table beside
the server's house bots, seated by the server after the `event_round` banner; the page reloaded
mid-round comes back to its table and the event; at the end the banner gives the place and the
event's screen the final standings, the same as the server's. A knockout on a 390 px phone shows
its bracket scrolling inside its own box while the standings fit; a reload comes back to the
event's screen, Escape goes back to the lobby. axe-core finds nothing serious on the event's
screens."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import trio

from protocol.messages import EventEnded
from tests.server.events.players import check_in, enter, play_until_ended
from tests.server.events.players import register as register_for
from tests.server.wire_client import WireClient
from tests.web.browser import need_browser, served, served_ports
from tests.web.page import (
    EVENT_STATE_JS,
    WAIT_MS,
    chromium,
    fast_clock,
    open_event,
    open_page,
    open_phone,
    register,
    take_part_in_event,
)
from tests.web.test_accessibility import axe_problems, need_axe

pytestmark = pytest.mark.timeout(300)

# The server: anyone may announce (`events_open`), bots that act at once.
SERVER = ("--events-open", "--bot-clock", "1")


def announce(
    page: Any, *, name: str, format: str, rounds: int, boards: int, start_in: float
) -> str:
    """As a host does: open *Announce an event*, fill the form (the start `start_in` seconds from
    now, in the browser's local time) and press *Announce*; the new event's id, its screen open."""
    page.click("#event-announce summary")
    page.fill("#event-name", name)
    page.select_option("#event-format", format)
    page.fill("#event-rounds", str(rounds))
    page.fill("#event-boards", str(boards))
    page.select_option("#event-preset", "standard")
    page.evaluate(
        "async (s) => { const m = await import('./js/events.js');"
        " document.getElementById('event-start').value = m.localInputValue(Date.now() + s * 1000); }",
        start_in,
    )
    page.click("#event-submit")
    page.wait_for_selector("#event-screen:not([hidden]) #event-title", timeout=WAIT_MS)
    title = str(page.inner_text("#event-title"))
    assert title.startswith(f"{name} (E"), title
    return title.rsplit("(", 1)[1].rstrip(")")


def ordinal(n: int) -> str:
    suffix = "th" if 11 <= n % 100 <= 13 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def standings_shown(page: Any) -> list[list[str]]:
    rows = page.locator("#event-standings tbody tr")
    return [
        [cell.strip() for cell in rows.nth(i).locator("td, th").all_inner_texts()]
        for i in range(rows.count())
    ]


def standings_of_server(page: Any, event: str) -> list[dict[str, Any]]:
    reply: dict[str, Any] = page.evaluate(
        "(e) => spadesApp.conn.request({ t: 'event_show', event: e })", event
    )
    assert reply["t"] == "event_info", reply
    return list(reply["standings"])


def test_a_person_plays_a_swiss_from_the_page_through_a_reload(tmp_path: Path) -> None:
    need_browser()
    need_axe()

    errors: list[str] = []
    problems: list[str] = []
    with served(tmp_path / "server.db", *SERVER) as url, chromium() as browser:
        page = fast_clock(open_page(browser, errors, bypass_csp=True))
        register(page, url, "ada")
        # The form says what is wrong before sending anything.
        page.click("#event-announce summary")
        page.fill("#event-name", "Too late")
        page.evaluate("document.getElementById('event-start').value = '2020-01-01T10:00:00'")
        page.click("#event-submit")
        assert (
            page.inner_text("#event-form-error") == "The start time has passed: choose a later one."
        )
        page.click("#event-announce summary")  # closed again: announce() opens it

        event = announce(
            page,
            name="Morning individual",
            format="swiss_individual",
            rounds=2,
            boards=1,
            start_in=8,
        )
        assert page.evaluate("location.hash") == f"#event/{event}"
        assert "registration open, starts in" in page.inner_text("#event-summary")
        page.click("#event-register")
        page.wait_for_selector("#event-play", timeout=WAIT_MS)
        assert page.inner_text("#event-me").startswith("You are entered")
        problems += axe_problems(page, "the event, registering")
        page.click("#event-play")
        page.wait_for_selector("#event-play", state="detached", timeout=WAIT_MS)

        # Round 1: the banner says where and with whom, then the server seats ada.
        page.wait_for_function(
            "() => /^Round 1: table \\S+, partner \\S+/"
            ".test(document.querySelector('#event-banner .sr-only')?.textContent ?? '')",
            timeout=WAIT_MS,
        )
        page.wait_for_function(
            "() => ['bid', 'play'].includes((" + EVENT_STATE_JS + ")())", timeout=WAIT_MS
        )
        table = page.evaluate("spadesApp.table.table")
        page.reload()
        # Back at the same table, seated, and the event's address kept.
        page.wait_for_function(
            "(t) => spadesApp.table && spadesApp.table.table === t && spadesApp.table.seat !== null"
            " && document.body.dataset.screen === 'table-screen'",
            arg=table,
            timeout=WAIT_MS,
        )
        assert page.evaluate("location.hash") == f"#event/{event}"

        notices = take_part_in_event(page, event)
        assert any(n.startswith("Round 2: table ") and ", partner " in n for n in notices), notices
        ended = page.inner_text("#event-banner-text")
        assert ended.startswith(f"Event {event} is over: you placed "), ended

        page.click("#event-banner-standings")
        page.wait_for_selector("#event-screen:not([hidden]) #event-standings", timeout=WAIT_MS)
        page.wait_for_function(
            "() => document.getElementById('event-standings-title').textContent === 'Final standings'",
            timeout=WAIT_MS,
        )
        shown = standings_shown(page)
        server = standings_of_server(page, event)
        assert [row[0] for row in shown] == [str(line["place"]) for line in server]
        assert [row[2] for row in shown] == [f"{line['percent']:.1f}%" for line in server]
        assert [row[3] for row in shown] == [str(line["boards"]) for line in server]
        assert len(shown) == 4 and all(
            line["boards"] == 2 for line in server
        )  # ada and 3 house bots
        assert sum("(house)" in row[1] for row in shown) == 3
        mine = page.locator("#event-standings tr.mine")
        assert mine.count() == 1 and "ada" in mine.inner_text()
        place = next(line["place"] for line in server if "ada" in line["names"])
        assert ended.startswith(f"Event {event} is over: you placed {ordinal(place)} with "), ended
        rounds = page.locator("#event-screen .event-round summary").all_inner_texts()
        assert rounds == ["Round 2 · finished", "Round 1 · finished"], rounds
        assert page.locator("#event-play, #event-register, #event-withdraw").count() == 0
        problems += axe_problems(page, "the event, finished")
    assert errors == []
    assert problems == []


class BotPairs:
    """Pairs of bot accounts over the protocol, beside the browser, in a thread of their own: each
    makes its account, registers naming its partner, checks in and plays every seat it is given
    (the first legal action) until `event_ended`."""

    def __init__(self, port: int, event: str, pairs: list[tuple[str, str]]) -> None:
        self.port, self.event, self.pairs = port, event, pairs
        self.registered = threading.Event()
        self.ended: list[EventEnded] = []
        self.failure: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:
            self.failure = exc
            self.registered.set()

    async def _main(self) -> None:
        # The first of each pair, then the second: a pair forms once both have named each other.
        names = [(a, b) for a, b in self.pairs] + [(b, a) for a, b in self.pairs]
        clients = {}
        with trio.fail_after(240):
            for name, _partner in names:
                clients[name] = await WireClient.connect(self.port)
                await enter(clients[name], name)
            for name, partner in names:
                await register_for(clients[name], self.event, partner)
                await check_in(clients[name], self.event)
            self.registered.set()
            async with trio.open_nursery() as nursery:
                for client in clients.values():
                    nursery.start_soon(self._play, client)

    async def _play(self, client: WireClient) -> None:
        self.ended.append(await play_until_ended(client))
        await client.aclose()

    def __enter__(self) -> BotPairs:
        self.thread.start()
        assert self.registered.wait(60), "the bots did not register"
        if self.failure is not None:
            raise self.failure
        return self

    def __exit__(self, *exc: object) -> None:
        self.thread.join(120)
        if self.failure is not None and exc[0] is None:
            raise self.failure


def test_a_knockout_on_a_phone_shows_its_bracket(tmp_path: Path) -> None:
    need_browser()
    need_axe()

    errors: list[str] = []
    problems: list[str] = []
    with served_ports(tmp_path / "server.db", *SERVER) as (url, port), chromium() as browser:
        page = fast_clock(open_phone(browser, errors, bypass_csp=True))
        register(page, url, "ada")
        # Announced through the page's connection: the form is the Swiss test's, and this one
        # wants a short gap between rounds.
        reply = page.evaluate(
            "(s) => spadesApp.conn.request({ t: 'event_create', name: 'Phone knockout',"
            " format: 'knockout_pairs', rounds: 0, boards: 1, starts_at: Date.now() / 1000 + s,"
            " round_gap: 3 })",
            8,
        )
        assert reply["t"] == "event_info", reply
        event = reply["summary"]["event"]
        with BotPairs(port, event, [("kb-1", "kb-2"), ("kb-3", "kb-4")]) as bots:
            open_event(page, event)
            page.click("#event-register")  # alone: the server gives ada a house partner
            page.wait_for_selector("#event-play", timeout=WAIT_MS)
            notices = take_part_in_event(page, event)
        assert bots.failure is None and len(bots.ended) == 4
        assert notices and notices[0].startswith("Round 1: table "), notices

        page.click("#event-banner-standings")
        page.wait_for_function(
            "() => document.getElementById('event-standings-title')?.textContent"
            " === 'Final standings'",
            timeout=WAIT_MS,
        )
        # Three pairs and a house pair to make four: semi-finals, then the final.
        columns = page.locator("#event-bracket .bracket-round")
        assert columns.count() == 2
        assert page.locator("#event-bracket .bracket-title").all_inner_texts() == [
            "Semi-finals",
            "Final",
        ]
        assert page.locator("#event-bracket .bracket-match.decided").count() == 3
        assert page.locator("#event-bracket .bracket-side.winner").count() == 3
        # The final's winner heads the standings.
        champion = page.locator("[data-round='2'] .bracket-side.winner").get_attribute(
            "data-entrant"
        )
        first = page.locator("#event-standings tbody tr").first.get_attribute("data-entrant")
        assert champion == first, (champion, first)
        server = standings_of_server(page, event)
        assert [row[0] for row in standings_shown(page)] == [str(line["place"]) for line in server]

        # At 390 px: nothing sideways on the page; the standings fit; the bracket scrolls inside
        # its own box, by the keys once it has the focus.
        sizes = page.evaluate(
            "() => { const b = document.getElementById('event-bracket');"
            " return { page: document.documentElement.scrollWidth, width: innerWidth,"
            " box: b.getBoundingClientRect().right, inner: b.scrollWidth, shown: b.clientWidth,"
            " table: document.getElementById('event-standings').getBoundingClientRect().right }; }"
        )
        assert sizes["page"] <= sizes["width"] == 390, sizes
        assert sizes["box"] <= 390 and sizes["table"] <= 390, sizes
        if sizes["inner"] > sizes["shown"]:
            page.focus("#event-bracket")
            page.keyboard.press("ArrowRight")
            page.wait_for_function(
                "() => document.getElementById('event-bracket').scrollLeft > 0", timeout=WAIT_MS
            )
        problems += axe_problems(page, "the knockout, finished, at 390 px")

        # The event's address brings a reload back to it; Escape goes back to the lobby.
        page.reload()
        page.wait_for_selector(
            f"#event-screen:not([hidden]) #event-title:has-text('({event})')", timeout=WAIT_MS
        )
        page.wait_for_selector("#event-bracket .bracket-match.decided", timeout=WAIT_MS)
        page.keyboard.press("Escape")
        page.wait_for_selector("#lobby-screen:not([hidden])", timeout=WAIT_MS)
        assert page.evaluate("location.hash") == ""
        page.wait_for_selector(f"#event-list [data-event='{event}']", timeout=WAIT_MS)
        assert "finished" in page.inner_text(f"#event-list [data-event='{event}']")
    assert errors == []
    assert problems == []
