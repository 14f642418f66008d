"""The steps the Chromium tests share, written once: launching the browser with the project's
flags, a page whose script errors are collected, registering, opening a table from the lobby's form
or through the page's own connection, the table's pace, and a hand played by clicks. Each test
module had its own copy of these; a change to the page (an id, a wait) is now made here."""

from __future__ import annotations

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


def launch(pw: Any, *extra_args: str) -> Any:
    """Debian's Chromium (never a downloaded one) with the flags these machines need, and a test's
    own `extra_args`; the caller closes it."""
    return pw.chromium.launch(
        executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, *extra_args], headless=True
    )


@contextmanager
def chromium(*extra_args: str) -> Iterator[Any]:
    """Playwright and a launched Chromium (see `launch`), closed however the test ends. Call
    `need_browser()` first: it skips (or fails) without the browser."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = launch(pw, *extra_args)
        try:
            yield browser
        finally:
            browser.close()


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
    return str(page.wait_for_function(probe, timeout=WAIT_MS).json_value())


def bid(page: Any, button: int) -> None:
    """Click the bid button at index `button` (0: the first offered) and wait until the bid is
    taken (the buttons gone)."""
    page.locator("#actions button.bid").nth(button).click()
    page.wait_for_selector("#actions button.bid", state="detached", timeout=WAIT_MS)


def play_first_legal(page: Any) -> None:
    """Click the first legal card of the hand and wait until it has left the hand."""
    card = page.locator("#hand .card.legal").first
    name = card.get_attribute("data-card")
    card.click()
    page.wait_for_selector(f"#hand [data-card='{name}']", state="detached", timeout=WAIT_MS)


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
