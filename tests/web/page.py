"""The steps the Chromium tests share, written once: launching the browser with the project's
flags, a page whose script errors are collected, registering, opening a table from the lobby's form
or through the page's own connection, the table's pace, and a hand played by clicks. Each test
module had its own copy of these; a change to the page (an id, a wait) is now made here."""

from __future__ import annotations

import math
import time
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from tests.web.browser import CHROMIUM, CHROMIUM_ARGS

WAIT_MS = 30_000

# What the page asks of its seated Spades player now (the facts a person reads off the screen).
STATE_JS = """() => {
  const over = document.getElementById('game-over');
  if (over && !over.hidden) return 'over';
  if (document.querySelector('#hand .card.legal')) return 'play';
  if (document.querySelector('#actions button.bid')) return 'bid';
  return '';
}"""

# A Spades table asked for through the page's own connection (the form has no field for some
# of these: the bots' seats as a list, options beyond the form's).
CREATE_JS = """(opts) => spadesApp.conn.request({ t: 'create_table', game: 'spades', preset: 'standard',
  options: opts.options, bots: opts.bots, private: opts.private, sit: 0 })"""


# How long the page still holds what it shows (a finished trick, a bot's card just played, a hand's
# result), in the page's time; 0 where nothing is held or the hold waits for its first frame.
HOLD_JS = """() => {
  const app = window.spadesApp, table = app && app.table;
  if (!table) return 0;
  const held = table.held && table.held.until !== null ? table.held.until : 0;
  return Math.max(0, Math.max(app.holdUntil, held) - performance.now());
}"""

# The pages on Playwright's fake clock (`fast_clock`): `wait_for` runs their holds at once.
_FAST: weakref.WeakSet[Any] = weakref.WeakSet()


def fast_clock(page: Any) -> Any:
    """Put `page` on Playwright's fake clock, before it loads, and return it: the browser tests'
    autojump clock. The clock flows with real time, except that `wait_for` (and the steps below
    built on it) runs it through each of the pace's holds at once while what the test waits for
    has not come. The pace (issue 39) holds every finished trick and spaces the bots' cards: about
    twenty seconds of real time a hand, which a test not about the pace only waited through. The
    holds still pass whole in the page's own time, frame by frame (test_table_pacing.py measures
    them so)."""
    page.clock.install()
    _FAST.add(page)
    return page


def wait_for(page: Any, js: str, arg: Any = None, *, timeout_ms: float = WAIT_MS) -> Any:
    """`page.wait_for_function(js, arg)`'s value (a truthy one), within `timeout_ms` of real time.
    On a page with a `fast_clock`, each hold the page is in while `js` is still falsy passes at
    once (its frames and timers run), as trio's autojump clock skips a sleep."""
    if page not in _FAST:
        return page.wait_for_function(js, arg=arg, timeout=timeout_ms).json_value()
    either = (
        f"(arg) => {{ const value = ({js})(arg); if (value) return {{ value }};"
        f" const hold = ({HOLD_JS})(); return hold > 0 ? {{ hold }} : null; }}"
    )
    deadline = time.monotonic() + timeout_ms / 1000
    for _ in range(1_000):  # a hold run through each time round: a game's worth and more
        left_ms = max(1.0, (deadline - time.monotonic()) * 1000)
        got = page.wait_for_function(either, arg=arg, timeout=left_ms).json_value()
        if "value" in got:
            return got["value"]
        # The hold's time passes at once, its timers and frames run in order (`run_for`, not a
        # jump that fires each due timer once): what the page draws meanwhile, it draws.
        page.clock.run_for(math.ceil(got["hold"]))
    raise AssertionError(f"the page held its pace 1,000 times waiting for {js}")


def next_frames(page: Any) -> None:
    """Return after the page has drawn two more frames: what a change of the viewport makes it
    redraw (its resize handler, then a frame) is on the screen."""
    page.evaluate("() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))")


def launch(pw: Any, *extra_args: str) -> Any:
    """Debian's Chromium (never a downloaded one) with the flags these machines need, and a test's
    own `extra_args`; the caller closes it."""
    return pw.chromium.launch(
        executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra_args], headless=True
    )


class _Shared:
    """One Playwright (its driver process) and one Chromium for all of `tests/web/`: launching them
    costs a second or more each (three at a load of 7), for every test that drives a page. Each
    test's pages are in contexts of their own (another person's storage, cookies and clock),
    closed when its `chromium()` ends; `close_shared` (tests/web/conftest.py, once the package's
    tests are done) stops both."""

    manager: Any = None
    playwright: Any = None
    browser: Any = None


def close_shared() -> None:
    """Close the shared Chromium and stop Playwright (if either was started)."""
    if _Shared.browser is not None and _Shared.browser.is_connected():
        _Shared.browser.close()
    if _Shared.manager is not None:
        _Shared.manager.__exit__(None, None, None)
    _Shared.manager = _Shared.playwright = _Shared.browser = None


@contextmanager
def chromium(*extra_args: str) -> Iterator[Any]:
    """A launched Chromium (see `launch`): the shared one, or with `extra_args` one of the test's
    own, closed after it. The contexts the test opened are closed however it ends. Call
    `need_browser()` first: it skips (or fails) without the browser."""
    if _Shared.playwright is None:
        from playwright.sync_api import sync_playwright

        _Shared.manager = sync_playwright()
        _Shared.playwright = _Shared.manager.__enter__()
    if extra_args:
        own = launch(_Shared.playwright, *extra_args)
        try:
            yield own
        finally:
            own.close()
        return
    if _Shared.browser is None or not _Shared.browser.is_connected():
        _Shared.browser = launch(_Shared.playwright)  # first use, or after a crash
    browser = _Shared.browser
    try:
        yield browser
    finally:
        for context in list(browser.contexts):
            context.close()


def collect_errors(page: Any, errors: list[str], label: str = "") -> None:
    """Every uncaught script error of `page` appended to `errors` (a test ends asserting it
    empty), prefixed with `label` where several pages share the list."""
    prefix = f"{label}: " if label else ""
    page.on("pageerror", lambda error: errors.append(f"{prefix}{error}"))


def open_page(
    browser: Any,
    errors: list[str],
    *,
    label: str = "",
    width: int = 1280,
    height: int = 800,
    **context: Any,
) -> Any:
    """A page in a context of its own (its own storage: another person), `width` x `height`,
    its script errors collected; `context`: Playwright's other context options (is_mobile...)."""
    page = browser.new_context(viewport={"width": width, "height": height}, **context).new_page()
    collect_errors(page, errors, label)
    return page


def open_phone(
    browser: Any,
    errors: list[str],
    *,
    label: str = "",
    width: int = 390,
    height: int = 844,
    **context: Any,
) -> Any:
    """`open_page` as a phone: a touch screen, `width` x `height` (390 x 844 unless told)."""
    return open_page(
        browser,
        errors,
        label=label,
        width=width,
        height=height,
        is_mobile=True,
        has_touch=True,
        **context,
    )


def register_as(page: Any, name: str) -> None:
    """On the login screen, register `name`, as a person does; returns at the lobby."""
    page.fill("#login-name", name)
    page.click("#register")
    page.wait_for_selector("#lobby-screen:not([hidden])", timeout=WAIT_MS)


def enter_as_guest(page: Any, name: str, *, touch: bool = False, at_lobby: bool = True) -> None:
    """On the login screen, enter as a guest named `name` (a tap with `touch`, else a click);
    with `at_lobby`, return at the lobby (a link to a table goes to the table instead)."""
    page.fill("#login-name", name)
    if touch:
        page.tap("#guest")
    else:
        page.click("#guest")
    if at_lobby:
        page.wait_for_selector("#lobby-screen:not([hidden])", timeout=WAIT_MS)


def register(page: Any, url: str, name: str) -> None:
    """Open the page and register `name`; returns at the lobby."""
    page.goto(url)
    register_as(page, name)


def open_table(page: Any, hands: int) -> None:
    """From the lobby's form, create a standard Spades table of `hands` hands and sit at it;
    returns once the dealt hand shows."""
    page.select_option("#create-preset", "standard")
    page.fill("#create-hands", str(hands))
    page.click("#create-submit")
    page.wait_for_selector("#table-screen:not([hidden]) #hand .card", timeout=WAIT_MS)


def register_and_open(page: Any, url: str, name: str, hands: int) -> None:
    """Register `name`, then open a standard Spades table of `hands` hands from the form."""
    register(page, url, name)
    open_table(page, hands)


def create_table(
    page: Any, *, options: dict[str, Any], bots: list[int], private: bool
) -> dict[str, Any]:
    """Create a standard Spades table through the page's connection, sitting at seat 0; the
    server's reply."""
    reply: dict[str, Any] = page.evaluate(
        CREATE_JS, {"options": options, "bots": bots, "private": private}
    )
    return reply


def set_pace(page: Any, pace: str) -> None:
    """As a person does: open the table's settings, choose the pace, close them."""
    page.click("#settings summary")
    page.select_option("#pace", pace)
    page.click("#settings summary")


def wait_state(page: Any, probe: str = STATE_JS) -> str:
    """Wait until the page asks something of its player, by `probe` (a function that returns
    what, or ''); what it asks."""
    return str(wait_for(page, probe))


def bid(page: Any, button: int) -> None:
    """Click the bid button at index `button` (0: the first offered) and wait until the bid is
    taken (the buttons gone)."""
    page.locator("#actions button.bid").nth(button).click()
    wait_for(page, "() => !document.querySelector('#actions button.bid')")


def play_first_legal(page: Any) -> None:
    """Click the first legal card of the hand and wait until it has left the hand."""
    card = page.locator("#hand .card.legal").first
    name = card.get_attribute("data-card")
    card.click()
    wait_for(page, "(name) => !document.querySelector(`#hand [data-card='${name}']`)", name)


def play_hand(page: Any) -> None:
    """Bid (the third button) and play the first legal card by clicks until the game is over
    (one hand: a bid and 13 cards)."""
    for _ in range(60):  # the bound is generous
        state = wait_state(page)
        if state == "over":
            return
        if state == "bid":
            bid(page, 2)
            continue
        play_first_legal(page)
    raise AssertionError("the game did not end")


# What an event's entrant is asked now: the event over (its banner), its table's bid or card, the
# game at its table over, or nothing yet (between rounds): at its table, what `STATE_JS` says.
EVENT_STATE_JS = (
    """() => {
  if (document.getElementById('event-banner-text')) return 'ended';
  if (document.body.dataset.screen !== 'table-screen') return '';
  return ("""
    + STATE_JS
    + """)();
}"""
)

# The round notice's sentence as it came ('' when the banner shows none).
BANNER_JS = """() => { const b = document.getElementById('event-banner');
  const said = b && !b.hidden ? b.querySelector('.sr-only') : null;
  return said ? said.textContent : ''; }"""


def open_event(page: Any, event: str) -> None:
    """From the lobby, open `event`'s screen by its link in the Events list."""
    page.click("#event-refresh")
    page.click(f"#event-list [data-event='{event}'] a", timeout=WAIT_MS)
    page.wait_for_selector(
        f"#event-screen:not([hidden]) #event-title:has-text('({event})')", timeout=WAIT_MS
    )


# The table on screen no longer offers a card (played, or the table gave way to another screen).
SHOWN_LEGAL_GONE = (
    "() => !document.querySelector(\"[data-screen='table-screen'] #hand .card.legal\")"
)

SHOWN_BID_GONE = (
    "() => !document.querySelector(\"[data-screen='table-screen'] #actions button.bid\")"
)
SHOWN_OVER_GONE = (
    "() => document.body.dataset.screen !== 'table-screen'"
    " || document.getElementById('game-over').hidden"
)

# What the page shows, for a failure's message: its screen, status, notice, prompt and banner.
SHOWN_JS = """() => ({ screen: document.body.dataset.screen,
  status: document.getElementById('status').textContent,
  notice: document.getElementById('notice').hidden ? '' : document.getElementById('notice').textContent,
  prompt: document.getElementById('prompt')?.textContent,
  banner: document.getElementById('event-banner').hidden ? '' : document.getElementById('event-banner').textContent,
  table: spadesApp.table && { table: spadesApp.table.table, seat: spadesApp.table.seat,
    turn: Boolean(spadesApp.table.turn) } })"""


def _until(page: Any, js: str, timeout: int, what: str) -> Any:
    """`wait_for(page, js)`'s value (a `fast_clock` page's holds run through); on a timeout, an
    AssertionError saying what the page showed instead."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        return wait_for(page, js, timeout_ms=timeout)
    except PlaywrightTimeout:
        raise AssertionError(
            f"{what}: not within {timeout} ms; {page.evaluate(SHOWN_JS)}"
        ) from None


def take_part_in_event(
    page: Any, event: str, *, between_rounds_ms: int = 120_000, max_steps: int = 2_000
) -> list[str]:
    """Take part in `event` from the page until it ends, as its player does: open the event, press
    *Play* (unless this tab is checked in already), then at each round's table (the server seats
    the player) bid the third button and play the first legal card by clicks, and at the end of each
    round's game press *Back to the event*. A tab checked in already (before a reload) goes on
    where it is. Returns the round notices the banner showed, in order;
    returns once the banner says the event is over. The page must be logged in and its account
    registered for `event`; `between_rounds_ms` bounds each wait for the next thing to do."""
    # A tab checked in already (before a reload too: the page keeps it for the tab) plays on.
    checked_in = page.evaluate("(e) => sessionStorage.getItem('spades.eventPlay') === e", event)
    if not checked_in:
        if page.evaluate("() => document.body.dataset.screen") != "event-screen":
            open_event(page, event)
        page.click("#event-play")
        page.wait_for_selector("#event-play", state="detached", timeout=WAIT_MS)
    notices: list[str] = []
    for _ in range(max_steps):  # a bound far above any event a test runs
        state = str(_until(page, EVENT_STATE_JS, between_rounds_ms, "something to do"))
        banner = str(page.evaluate(BANNER_JS))
        if banner and (not notices or notices[-1] != banner):
            notices.append(banner)
        if state == "ended":
            return notices
        if state == "bid":
            page.locator("#actions button.bid").nth(2).click()
            _until(page, SHOWN_BID_GONE, WAIT_MS, "the bid made")
        elif state == "play":
            # The card may leave with the table (the round over, the next one's snapshot): a
            # click that lands nowhere is not an error, the next state says what followed.
            page.evaluate(
                "() => { const c = document.querySelector(\"[data-screen='table-screen'] #hand .card.legal\");"
                " if (c) c.click(); }"
            )
            _until(page, SHOWN_LEGAL_GONE, WAIT_MS, "the card played")
        elif state == "over":
            # Back to the event, unless the next round's table took the screen meanwhile.
            page.evaluate(
                "() => { const d = document.getElementById('game-over');"
                " if (!d.hidden) document.getElementById('game-over-close').click(); }"
            )
            _until(page, SHOWN_OVER_GONE, WAIT_MS, "back to the event")
    raise AssertionError(f"event {event} did not end within {max_steps} steps")
