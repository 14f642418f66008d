"""The scenarios' scripts: what the kit does to a bot during its game (through the proxy's hooks and
its own seats), and what it checks beyond the rules every scenario applies
(`server.conformance.rules`). `server.conformance.scenarios` puts them together with their tables."""

from __future__ import annotations

import trio

from bots.conformance import claims
from bots.conformance.report import Failed, Findings
from protocol.messages import (
    Act,
    Bye,
    ClockExpired,
    Error,
    Guest,
    Hello,
    Joined,
    Login,
    Message,
    Ok,
    Ping,
    Register,
    Reply,
    Request,
    YourTurn,
)
from protocol.types import ActionKind
from server.conformance.proxy import Entry, Link, Source
from server.conformance.rules import kinds_met
from server.conformance.run import BotRun, Script, finish
from server.conformance.seats import Pause

#: Ids of the kit's own requests on a bot's connection: far above what a bot numbers.
KIT_IDS = 4_000_000_000
#: A bot given a token it cannot use has this long to stop, or to log in another way.
GIVE_UP_WITHIN = 15.0
#: A bot that lost its connection has this long to come back.
COME_BACK_WITHIN = 20.0
#: The idle scenario's server lets a silent connection go after this; the kit's seat thinks longer.
IDLE_TIMEOUT = 2.0
PAUSE = 3.5
#: The rate scenario's server: messages a second, and at once.
RATE_PER_SECOND = 2.0
RATE_BURST = 4


async def play(run: BotRun, findings: Findings) -> None:
    await finish(run, findings)


def check_kinds(run: BotRun, findings: Findings, kinds: frozenset[str]) -> None:
    met = kinds_met(run.seen())
    for kind in sorted(kinds - met):
        findings(f"the bot was never offered a {kind} decision (the kit could not arrange it)")


async def with_token(run: BotRun, findings: Findings) -> None:
    await finish(run, findings)
    hellos = [m for m in run.messages_from_bot() if isinstance(m, Hello)]
    logins = [m for m in run.messages_from_bot() if isinstance(m, Login)]
    findings.expect(hellos, "the bot never said hello", claims.HANDSHAKE)
    if hellos and hellos[0].token != run.token:
        findings.expect(
            any(m.token == run.token for m in logins),
            "the bot logged in with neither hello.token nor login with SPADES_TOKEN",
            claims.HANDSHAKE,
        )
        findings("the bot logged in with `login` after hello (hello.token does it at once)")
    joined = [
        e.message
        for e in run.timeline.entries
        if e.source is Source.SERVER
        and isinstance(e.message, Joined)
        and e.message.seat is not None
    ]
    findings.expect(
        any(m.table == run.table for m in joined),
        f"the bot did not join SPADES_TABLE ({run.table})",
        claims.JOIN,
    )


async def without_usable_token(run: BotRun, findings: Findings) -> None:
    """No SPADES_TOKEN, or one no account has: stop with a non-zero exit (saying why), or play by
    another way (a guest, a new account); never a hello with an empty token, never a loop."""

    def seated() -> bool:
        return any(
            e.source is Source.SERVER
            and isinstance(e.message, Joined)
            and e.message.table == run.table
            for e in run.timeline.entries
        )

    with trio.move_on_after(GIVE_UP_WITHIN):
        await run.timeline.until(lambda: run.exited.is_set() or seated())
    connections = len(run.proxy.links)
    findings.expect(
        connections <= 3,
        f"the bot connected {connections} times in {GIVE_UP_WITHIN:g} s with a token that cannot "
        "work: stop, or log in another way",
        claims.HANDSHAKE,
    )
    if seated():
        findings("the bot played without the token (as a guest or a new account)")
        await finish(run, findings)
        return
    if not run.exited.is_set():
        raise Failed(
            f"after {GIVE_UP_WITHIN:g} s the bot had neither stopped nor taken its seat another way",
            claims.HANDSHAKE,
        )
    findings.expect(
        run.returncode != 0,
        "the bot exited 0 without playing: a token it cannot use is a failure to report",
        claims.HANDSHAKE,
    )
    findings(f"the bot stopped: {run.exit_words()}")
    asked = [m for m in run.messages_from_bot() if isinstance(m, Guest | Register | Login)]
    if asked:
        findings(f"it tried {', '.join(sorted({m.TYPE for m in asked}))} first")


def hold_pass_until_others_passed(run: BotRun) -> None:
    """Deliver the bot its pass `your_turn` only once the kit's seats have passed (and been
    answered `ok`): the bot's pass then carries a version the game has moved past."""
    released = False

    async def on_server(link: Link, message: Message) -> bool:
        nonlocal released
        if (
            not released
            and isinstance(message, YourTurn)
            and any(a.kind is ActionKind.PASS for a in message.legal)
        ):
            released = True
            with trio.move_on_after(20):
                while waiting := [seat for seat in run.seats if seat.applied < 1]:
                    await waiting[0].changed.wait()
        return True

    run.proxy.on_server = on_server


async def hearts_pass(run: BotRun, findings: Findings) -> None:
    hold_pass_until_others_passed(run)
    await finish(run, findings)
    passes = [
        m
        for m in run.messages_from_bot()
        if isinstance(m, Act) and m.action.kind is ActionKind.PASS
    ]
    findings.expect(passes, "the bot never passed", claims.ACT)
    findings.expect(
        len(passes) <= 1,
        f"the bot sent {len(passes)} passes for one pass decision: answer each decision once",
        claims.DECISIONS,
    )


async def stale_turn(run: BotRun, findings: Findings) -> None:
    """The bot's first act is held until the server's clock has played for its seat: it arrives
    stale. The bot must take the refusal, not send it again, and go on with the next your_turn."""
    held: list[Act] = []
    expired = trio.Event()

    async def on_server(link: Link, message: Message) -> bool:
        if isinstance(message, ClockExpired) and message.table == run.table:
            expired.set()
        return True

    async def on_bot(link: Link, message: Message) -> bool:
        if isinstance(message, Act) and not held:
            held.append(message)
            with trio.move_on_after(30):
                await expired.wait()
        return True

    run.proxy.on_server = on_server
    run.proxy.on_bot = on_bot
    await finish(run, findings)
    check_stale(run, findings, held)


def check_stale(run: BotRun, findings: Findings, held: list[Act]) -> None:
    if not held:
        raise Failed("the bot never acted", claims.ACT)
    act = held[0]
    replies = [
        e.message
        for e in run.timeline.entries
        if e.source is Source.SERVER and isinstance(e.message, Reply) and e.message.id == act.id
    ]
    if not replies or not isinstance(replies[0], Error):
        findings("the held act was not refused (the server's clock had not moved the game on)")
        return
    again = [
        m
        for m in run.messages_from_bot()
        if isinstance(m, Act)
        and m is not act
        and m.version == act.version
        and m.action == act.action
    ]
    findings.expect(
        not again,
        f"after its act was refused {replies[0].code}, the bot sent it again: wait for the next "
        "your_turn",
        claims.ACT_ORDER,
    )
    later = [m for m in run.messages_from_bot() if isinstance(m, Act) and m.version > act.version]
    findings.expect(
        later, "the bot did not act again after its stale act was refused", claims.YOUR_TURN
    )


async def drop_and_resume(run: BotRun, findings: Findings) -> None:
    """The bot's connection is cut as its third act arrives (the act is lost): it must come back
    with its token, get its seat back, and finish the game."""
    acts = 0

    async def on_bot(link: Link, message: Message) -> bool:
        nonlocal acts
        if isinstance(message, Act) and link.index == 0:
            acts += 1
            if acts == 3:
                await link.cut("the kit dropped the bot's connection")
                return False
        return True

    run.proxy.on_bot = on_bot
    await run.until(lambda: acts >= 3, 60, "the bot did not act three times", claims.PLAYING)
    await run.until(
        lambda: len(run.proxy.links) > 1,
        COME_BACK_WITHIN,
        "the bot did not reconnect after its connection dropped",
        claims.HANDSHAKE,
    )
    await finish(run, findings)
    seen = run.seen()
    back = [e.message for e in seen.from_bot(1) if isinstance(e.message, Hello | Login)]
    findings.expect(
        any(getattr(m, "token", None) == run.token for m in back),
        "the bot came back without its token (hello.token or login)",
        claims.HANDSHAKE,
    )
    resumed = [
        e
        for link in list(seen.links)[1:]
        for e in seen.from_bot(link)
        if isinstance(e.message, Act)
    ]
    findings.expect(resumed, "the bot did not act after it came back", claims.HANDSHAKE)


def first_pause(seconds: float, started: trio.Event) -> Pause:
    paused = False

    def pause(turn: YourTurn) -> float:
        nonlocal paused
        if paused:
            return 0.0
        paused = True
        started.set()
        return seconds

    return pause


async def idle_ping(run: BotRun, findings: Findings, started: trio.Event) -> None:
    """While the kit's seat thinks longer than the idle timeout, the bot must keep its connection
    alive (a `ping`), and answer the kit's own `ping` with `pong`."""
    await run.until(started.is_set, 60, "the kit's seat never came to act", claims.PLAYING)
    began = trio.current_time()
    link = run.proxy.links[-1]
    await link.to_bot(Ping(id=KIT_IDS + 7))
    await finish(run, findings)
    quiet = [
        e
        for e in run.timeline.entries
        if e.source is Source.BOT and e.message is not None and began < e.at < began + PAUSE
    ]
    findings.expect(
        quiet,
        f"the bot sent nothing while it waited {PAUSE:g} s for another seat (idle timeout "
        f"{IDLE_TIMEOUT:g} s): send ping when idle",
        claims.TIME,
    )
    findings.expect(
        len(run.proxy.links) == 1,
        "the bot's connection did not last through the wait",
        claims.TIME,
    )


async def rate_limited(run: BotRun, findings: Findings) -> None:
    """The server's rate bucket is emptied just before the bot's first request after hello: the
    bot is answered `rate_limited` with `retry_ms`, and must send it again, no sooner."""
    limited: list[Request] = []

    async def on_bot(link: Link, message: Message) -> bool:
        if not limited and isinstance(message, Request) and not isinstance(message, Hello | Ping):
            limited.append(message)
            for n in range(RATE_BURST + 2):
                await link.to_server(Ping(id=KIT_IDS + n))
        return True

    async def on_server(link: Link, message: Message) -> bool:
        return not (isinstance(message, Reply) and message.id is not None and message.id >= KIT_IDS)

    run.proxy.on_bot = on_bot
    run.proxy.on_server = on_server
    await run.until(
        lambda: bool(limited), 30, "the bot sent no request after hello", claims.HANDSHAKE
    )
    first = limited[0]

    def answer() -> Entry | None:
        return next(
            (
                e
                for e in run.timeline.entries
                if e.source is Source.SERVER
                and isinstance(e.message, Reply)
                and e.message.id == first.id
            ),
            None,
        )

    await run.until(
        lambda: answer() is not None, 10, f"no answer to the bot's {first.TYPE}", claims.RATE
    )
    got = answer()
    assert got is not None
    error = got.message
    if not (isinstance(error, Error) and error.code == "rate_limited"):
        findings(
            f"the server did not rate-limit the bot's {first.TYPE} (the kit could not arrange it)"
        )
        await finish(run, findings)
        return
    wait_ms = error.retry_ms or 0

    def again() -> list[Entry]:
        return [
            e
            for e in run.timeline.entries
            if e.source is Source.BOT and type(e.message) is type(first) and e.at > got.at
        ]

    await run.until(
        lambda: bool(again()),
        wait_ms / 1000 + 5,
        f"the bot did not send its {first.TYPE} again after rate_limited (retry_ms {wait_ms}): the "
        "refused request was not carried out",
        claims.RATE,
    )
    waited = (again()[0].at - got.at) * 1000
    findings.expect(
        waited >= wait_ms - 50,
        f"the bot sent its {first.TYPE} again {waited:.0f} ms after rate_limited; retry_ms said "
        f"{wait_ms}",
        claims.RATE,
    )
    await finish(run, findings)


async def server_bye(run: BotRun, findings: Findings) -> None:
    """After the bot's second act is answered, the server (the kit, as it) says `bye` and hangs
    up: the bot sends nothing more on that connection, closes it, and (the kit's server still
    being up) may come back and finish."""
    acts: set[int] = set()
    said: list[float] = []

    async def on_bot(link: Link, message: Message) -> bool:
        if link.muted:
            return False  # the "server" has said bye: what the bot sends after it goes nowhere
        if isinstance(message, Act) and message.id is not None and link.index == 0:
            acts.add(message.id)
        return True

    async def after_server(link: Link, message: Message) -> bool:
        if (
            not said
            and link.index == 0
            and isinstance(message, Ok)
            and message.id in acts
            and len(acts) >= 2
        ):
            link.muted = True
            await link.to_bot(Bye(reason="the server is shutting down"))
            said.append(trio.current_time())
        return True

    run.proxy.on_bot = on_bot
    run.proxy.after_server = after_server
    await run.until(lambda: bool(said), 60, "the bot did not act twice", claims.PLAYING)
    first = run.proxy.links[0]
    try:
        # The bot's side stays open meanwhile, so what it sends after the bye is seen.
        await run.until(
            lambda: first.bot_closed,
            5,
            "the bot did not close its connection after the server's bye",
            claims.BYE,
        )
    finally:
        await first.close_server_side("after the kit's bye")
    with trio.move_on_after(COME_BACK_WITHIN):
        await run.timeline.until(lambda: len(run.proxy.links) > 1 or run.exited.is_set())
    if len(run.proxy.links) > 1:
        await finish(run, findings)
    else:
        findings("the bot did not come back after the server's bye (fine for a real shutdown)")


def with_kinds(script: Script, kinds: frozenset[str]) -> Script:
    """`script`, then a note for each decision kind the bot was never offered."""

    async def run(run: BotRun, findings: Findings) -> None:
        await script(run, findings)
        check_kinds(run, findings, kinds)

    return run
