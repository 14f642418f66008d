"""The network runner: everything between a bot object and a table server (`spades-bot run`).

It connects, says `hello` with the account's token, takes a seat (`join`) or enters the ladder, keeps
the seat's view from the snapshot and the events (`ViewTracker`), and answers each `your_turn` before
its deadline: a bot that is too slow, raises, or answers something illegal is covered by a legal
fallback, and the log says so. When the connection drops it reconnects with backoff; the server gives a
returning account its seat back with a fresh snapshot, and play goes on (on the ladder, where a drop
forfeits the match under way, it enters the ladder again). It gives up, in one sentence,
when it could not reach the server for `first_connect_for` seconds (a server that is not running, a
wrong address) or could not get a lost connection back within `reconnect_for` (the server holds a seat
120 s by default); `retry_forever` never gives up.

The protocol is `protocol.connection.Connection` (sans-IO); this module owns the socket and the clock.
What it tells its log about matches, forfeits and clocks, and the counts, are `bots.sdk.runlog`'s.

Sync bots decide in a worker thread (`trio.to_thread`), so a long search never stops the connection
from reading; async bots are awaited. Either way the decision is cut at the deadline minus a margin.
"""

import dataclasses
import logging
import random
import signal
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import trio

from bots.sdk.bot import AnyBot, AsyncBot, fallback_action
from bots.sdk.network import (
    DEFAULT_PORT,
    RunnerError,
    ServerConnection,
    client_tls_context,
    parse_address,
    reason_of,
    tls_handshake,
)
from bots.sdk.runlog import (
    RunLog,
    RunStats,
    action_words,
    clock_text,
    event_end_line,
    game_over_line,
    seat_line,
)
from bots.sdk.tracker import ViewTracker
from bots.sdk.view import BotView, HandMemory
from engine.actions import Action, action_to_dict
from engine.ruleset import Ruleset
from engine.version import project_version
from protocol.errors import ProtocolError, closes_connection
from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Act,
    Bye,
    ClockExpired,
    Error,
    EventEnded,
    EventPlay,
    EventRegister,
    EventRoundPaired,
    GameEvent,
    GameOver,
    HandScored,
    Hello,
    Join,
    Joined,
    LadderEnter,
    LadderLeave,
    MatchEnded,
    MatchStarted,
    Message,
    Ok,
    Ping,
    Pong,
    SeatLost,
    Snapshot,
    Tables,
    Welcome,
    YourTurn,
)
from protocol.messages import ListTables as ListTablesRequest
from protocol.schema import from_map, to_map
from protocol.types import Action as WireAction
from protocol.types import ClientKind
from protocol.wire import to_wire

log = logging.getLogger("bots.runner")

#: Errors after which trying again cannot help.
FATAL_CODES = frozenset(
    {"bad_token", "unauthorized", "version_mismatch", "not_on_ladder", "no_such_table"}
)
#: A connection that lasted this long after its welcome worked: the count of drops starts again (a
#: server that lets us in and drops us at once is given up on after `max_reconnects` of those).
STEADY: Final = 10.0
#: After a drop the ladder may still hold our old entry while the match it forfeited is finished
#: without us (`already_on_ladder`): enter again after this wait, doubling up to the second.
ENTER_AGAIN: Final = (1.0, 15.0)

__all__ = [
    "DEFAULT_PORT",
    "BotRunner",
    "RunStats",
    "RunnerConfig",
    "RunnerError",
    "ServerConnection",
    "client_tls_context",
    "parse_address",
]


@dataclass(frozen=True, slots=True)
class RunnerConfig:
    """Where to play and how. Exactly one of `table`, `ladder` and `event` says what to do once
    connected."""

    host: str
    port: int
    token: str
    table: str | None = None
    seat: int | None = None
    ladder: bool = False
    event: str | None = None  # register for this event if need be, check in, play its rounds
    partner: str | None = None  # a pairs event: the partner named when registering
    games: int = 1  # stop after this many games at a table, or matches on the ladder (0: never)
    client: str = f"spades-bot/{project_version()}"
    margin: float = 0.25  # seconds kept back from each deadline for the network
    connect_timeout: float = 10.0
    max_reconnects: int = 30  # lost connections in a row (none welcomed) before giving up
    backoff: tuple[float, float] = (0.2, 5.0)  # first and longest wait between reconnects
    first_connect_for: float = 10.0  # give up if no connection was ever welcomed within this
    reconnect_for: float = 120.0  # give up if a lost connection is not back within this
    retry_forever: bool = False  # never give up on an unreachable server (an operator's choice)
    tls: bool = False  # speak TLS (a server started with --tls-cert/--tls-key)
    ca: str | None = None  # PEM file the server's certificate must chain to (default: system CAs)


class BotRunner:
    """Plays `bot` on a server until `config.games` games (on the ladder: matches) are over, or
    forever with `games=0`."""

    def __init__(
        self,
        bot: AnyBot,
        config: RunnerConfig,
        *,
        on_message: Callable[[Message], None] | None = None,
    ) -> None:
        self.bot = bot
        self.config = config
        self.on_message = on_message  # tests use it to watch (and to cut the line)
        self.stats = RunStats()
        self.runlog = RunLog(self.stats)
        self.rng = random.Random()
        self.table: str | None = config.table
        self.seat: int | None = config.seat
        self.ruleset: Ruleset | None = None
        self.tracker: ViewTracker | None = None
        self.memory = HandMemory()
        self._early: list[Message] = []  # game messages that came before the ruleset was known
        self._tables_request: int | None = None
        self._hand = 0
        self._stream: trio.SocketStream | None = None  # the TCP stream (under TLS, if any)
        self._tls: ssl.SSLContext | None = None
        self._welcomed_at: float | None = None  # when the connection in play got its welcome
        self._ever_welcomed = False
        self._enter_request: int | None = None  # the id of our last `ladder_enter`
        self._entered = False  # the ladder took us in once (a later refusal is our old entry)
        self._enter_again_at: float | None = None
        self._enter_wait = ENTER_AGAIN[0]
        self._register_request: int | None = None  # the id of our `event_register`
        self._play_request: int | None = None  # the id of our last `event_play`
        self._registered = False  # registered for the event (or found so), on any connection
        self._register_refusal = ""  # what `event_register` was answered, when refused

    # -- the outer loop: connect, play, reconnect ----------------------------------------------------
    async def run(self) -> RunStats:
        """Play until done. Raises RunnerError when the server refuses us, when it cannot be reached
        (or reached again) in time, or (with `tls`) its certificate is not trusted or the CA file
        cannot be read. Logs a one-line summary however it ends, once it was let in."""
        try:
            return await self._run()
        finally:
            if self._ever_welcomed:  # else the error says all there is to say
                log.info("%s", self.stats.summary())

    def _done(self) -> bool:
        """Whether the games (at a table) or matches (on the ladder) asked for are over; in an
        event, whether it has ended."""
        cfg = self.config
        if cfg.event is not None:
            return self.stats.event_end is not None
        played = len(self.stats.matches) if cfg.ladder else len(self.stats.games)
        return bool(cfg.games) and played >= cfg.games

    async def _run(self) -> RunStats:
        cfg = self.config
        if cfg.tls:
            self._tls = client_tls_context(cfg.ca)
        failures = 0  # lost connections in a row that were never welcomed
        delay = cfg.backoff[0]
        since = trio.current_time()  # when we last had a welcomed connection (or started)
        while True:
            self._welcomed_at = None
            try:
                if await self._session():
                    return self.stats
                reason = "the server closed the connection"
            except (
                OSError,
                trio.BrokenResourceError,
                trio.ClosedResourceError,
                trio.TooSlowError,
                ProtocolError,
            ) as exc:
                reason = reason_of(exc)
            self.runlog.connection_lost()  # a ladder match under way is forfeited
            if self._done():
                return self.stats
            now = trio.current_time()
            if self._welcomed_at is not None:
                since = now  # we were back: the time to give up counts from here
                if now - self._welcomed_at >= STEADY:  # and it held: start counting again
                    failures, delay = 0, cfg.backoff[0]
            failures += 1
            self._give_up_if_due(reason, now - since, failures)
            if self._ever_welcomed:
                log.warning("connection lost (%s); reconnecting in %.1f s", reason, delay)
            elif failures == 1:  # once, not at every attempt: the last word is the error's
                log.info(
                    "cannot reach %s:%s (%s); trying for up to %s",
                    cfg.host,
                    cfg.port,
                    reason,
                    "ever" if cfg.retry_forever else f"{cfg.first_connect_for:.0f} s",
                )
            else:
                log.debug("still cannot reach the server (%s); next try in %.1f s", reason, delay)
            await trio.sleep(delay)
            delay = min(delay * 2, cfg.backoff[1])

    def _give_up_if_due(self, reason: str, waited: float, failures: int) -> None:
        """Raise RunnerError (one sentence) when it is time to stop trying to reach the server."""
        cfg = self.config
        if cfg.retry_forever:
            return
        where = f"{cfg.host}:{cfg.port}"
        if not self._ever_welcomed:
            if waited >= cfg.first_connect_for or failures > cfg.max_reconnects:
                raise RunnerError(
                    f"cannot reach the server at {where} ({reason}, for {waited:.0f} s):"
                    " is it running, at that address?",
                    gave_up=True,
                )
        elif waited >= cfg.reconnect_for or failures > cfg.max_reconnects:
            raise RunnerError(
                f"lost the server at {where} and could not get back in {waited:.0f} s ({reason})",
                gave_up=True,
            )

    def disconnect(self) -> None:
        """Drop the connection now (for tests of reconnection); the runner reconnects."""
        if self._stream is not None:
            self._stream.socket.close()

    async def _session(self) -> bool:
        """One connection's life; True when the run is complete, False when the line dropped."""
        cfg = self.config
        with trio.fail_after(cfg.connect_timeout):
            tcp = await trio.open_tcp_stream(cfg.host, cfg.port)
        stream: trio.abc.Stream = tcp
        self._stream = tcp
        try:
            if self._tls is not None:
                stream = trio.SSLStream(tcp, self._tls, server_hostname=cfg.host)
                with trio.fail_after(cfg.connect_timeout):
                    await tls_handshake(stream)
            self.stats.connections += 1
            return await self._converse(ServerConnection(stream))
        finally:
            self._stream = None
            await trio.aclose_forcefully(stream)

    async def _converse(self, conn: ServerConnection) -> bool:
        cfg = self.config
        await conn.send(
            Hello(
                protocol=PROTOCOL_VERSION_TEXT,
                client=cfg.client,
                kind=ClientKind.BOT,
                token=cfg.token,
            )
        )
        resuming = self._ever_welcomed and self.table is not None and self.seat is not None
        with trio.fail_after(cfg.connect_timeout):
            welcome = await self._expect_welcome(conn)
            if welcome.user is None:
                await self._token_refused(conn)
        self._welcomed_at = trio.current_time()
        self._ever_welcomed = True
        self.runlog.user = welcome.user
        # The clock is the account's: a bot account's seats play on the server's bot clock.
        log.info(
            "connected to %s as %s; its seats play on a clock of %s",
            welcome.server,
            welcome.user,
            clock_text(welcome.limits.clock),
        )
        if cfg.event is not None:
            # Every connection checks in again (a check-in lasts while its connection does); the
            # server gives a seat held at a round's table back by itself (joined, snapshot).
            if self._registered:
                self._play_request = await conn.send(EventPlay(event=cfg.event))
            else:
                self._register_request = await conn.send(
                    EventRegister(event=cfg.event, partner=cfg.partner)
                )
        elif cfg.ladder:
            # Every connection enters: a drop ended the entry (and forfeited any match).
            self._enter_again_at = None
            self._enter_request = await conn.send(LadderEnter())
        elif resuming:
            # The server gives a returning account its seat back by itself (joined, snapshot).
            pass
        elif self.table is not None:
            await conn.send(Join(table=self.table, seat=self.seat))
        # A bot waiting for its turn (or for a ladder match) is silent on the wire: ping a few
        # times per idle timeout so the server does not take it for gone.
        idle_ms = welcome.limits.idle_timeout_ms
        ping_every = max(0.1, idle_ms / 3000) if idle_ms > 0 else float("inf")
        while True:
            wait = ping_every
            if self._enter_again_at is not None:
                wait = max(0.0, min(wait, self._enter_again_at - trio.current_time()))
            with trio.move_on_after(wait) as quiet:
                message = await conn.receive()
            if quiet.cancelled_caught:
                if self._enter_again_at is not None and trio.current_time() >= self._enter_again_at:
                    self._enter_again_at = None
                    self._enter_request = await conn.send(LadderEnter())
                else:
                    await conn.send(Ping())
                continue
            if message is None:
                return False
            if self.on_message is not None:
                self.on_message(message)
            done = await self._handle(conn, message)
            if done:
                await conn.send(Bye(reason="done"))
                return True

    async def _expect_welcome(self, conn: ServerConnection) -> Welcome:
        while True:
            message = await conn.receive()
            if message is None:
                raise trio.BrokenResourceError("closed during the handshake")
            if isinstance(message, Welcome):
                return message
            if isinstance(message, Error):
                raise RunnerError(f"the server refused us: {message.code}: {message.message}")
            self._early.append(message)

    async def _token_refused(self, conn: ServerConnection) -> None:
        """Welcomed without a user: the token logged nobody in. The server says why next
        (`bad_token`, docs/protocol.md, Handshake); raise RunnerError with its words."""
        while True:
            message = await conn.receive()
            if message is None:
                break
            if isinstance(message, Error):
                raise RunnerError(
                    f"the server did not accept the token ({message.code}: {message.message});"
                    " check --token (or SPADES_TOKEN)"
                )
        raise RunnerError(
            "the server did not log in with the token; check --token (or SPADES_TOKEN)"
        )

    # -- messages -------------------------------------------------------------------------------------
    async def _handle(self, conn: ServerConnection, message: Message) -> bool:
        if isinstance(message, Ping):
            await conn.send(Pong(id=message.id))
        elif isinstance(message, Error):
            if message.code == "rate_limited":
                await self._send_again(conn, message)
                return False
            if message.id is not None and self._event_reply(message):
                await self._check_in(conn)  # registered before: check in all the same
                return False
            return self._on_error(message)
        elif (
            isinstance(message, Ok) and message.id is not None and message.id == self._enter_request
        ):
            self._entered, self._enter_wait = True, ENTER_AGAIN[0]
            log.info("entered the ladder: %s", message.note or "waiting for a match")
        elif isinstance(message, Ok) and message.id is not None and self._event_reply(message):
            await self._check_in(conn)
        elif (
            isinstance(message, EventRoundPaired)
            and message.event == self.config.event
            and message.table == self.table
        ):
            pass  # told again (checked in anew after a drop): the table in hand is that round's
        elif isinstance(message, EventRoundPaired) and message.event == self.config.event:
            self.table, self.seat, self.ruleset, self.tracker = (
                message.table,
                message.seat,
                None,
                None,
            )
            self.stats.rounds.append(
                {
                    "event": message.event,
                    "round": message.round,
                    "table": message.table,
                    "seat": message.seat,
                }
            )
            log.info(
                "%s round %d: table %s, seat %d (%s); %d board%s, opens in %.0f s",
                message.event,
                message.round,
                message.table,
                message.seat,
                ", ".join(message.names),
                message.boards,
                "" if message.boards == 1 else "s",
                message.starts_in,
            )
        elif isinstance(message, EventEnded) and message.event == self.config.event:
            self.stats.event_end = {
                "event": message.event,
                "cancelled": message.cancelled,
                "standings": [to_map(line) for line in message.standings],
            }
            log.info("%s", event_end_line(self.stats.event_end, self.runlog.user))
            return True
        elif isinstance(message, SeatLost):
            self.runlog.seat_lost(message)
        elif isinstance(message, Bye):
            raise trio.BrokenResourceError(f"the server said bye: {message.reason}")
        elif isinstance(message, Joined):
            if message.seat is not None:
                if message.table != self.table:  # an event's table seated without its notice
                    self.ruleset, self.tracker = None, None
                self.table, self.seat = message.table, message.seat
                if self.ruleset is None:
                    self._tables_request = await conn.send(ListTablesRequest())
        elif isinstance(message, MatchStarted):
            self.table, self.ruleset, self.tracker = message.table, None, None
            self.runlog.match_started(message)
            if self._last_match_started(message):
                # Leave now, effective when this match ends: the ladder would seat us in the next
                # one at once, and quitting it would be a forfeit.
                await conn.send(LadderLeave())
                log.info("the last match asked for: leaving the ladder when it ends")
        elif isinstance(message, Tables) and message.id == self._tables_request:
            self._learn_ruleset(message)
            early, self._early = self._early, []
            for held in early:
                if await self._handle(conn, held):
                    return True
        elif isinstance(message, MatchEnded):
            self.runlog.match_ended(message)
            return self._done()
        elif isinstance(message, GameEvent | YourTurn | Snapshot):
            if self.tracker is None:
                self._early.append(message)
                return False
            return await self._on_game(conn, message)
        return False

    def _event_reply(self, reply: Ok | Error) -> bool:
        """Whether `reply` answers our `event_register` (True: check in now) or `event_play`
        (logged; False). An error that ends the run raises RunnerError."""
        event = self.config.event
        if reply.id == self._register_request:
            self._register_request = None
            if isinstance(reply, Error):
                # Registered before (a second run, a restart), or the start has closed
                # registration: checking in says whether this account is an entrant.
                if reply.code not in ("already_registered", "event_closed"):
                    raise RunnerError(f"cannot register for {event}: {reply.code}: {reply.message}")
                self._register_refusal = f"{reply.code}: {reply.message}"
                log.info("registering for %s: %s; checking in", event, self._register_refusal)
            else:
                log.info(
                    "registered for %s%s",
                    event,
                    f" with {self.config.partner}" if self.config.partner else "",
                )
            self._registered = True
            return True
        if reply.id == self._play_request:
            self._play_request = None
            if isinstance(reply, Error):
                # `already_registered` also names a partner taken by another pair: say so too.
                why = f" (registering was answered {self._register_refusal})" * bool(
                    self._register_refusal and reply.code == "not_registered"
                )
                raise RunnerError(f"cannot play in {event}: {reply.code}: {reply.message}{why}")
            log.info("checked in to %s: playing its rounds as they are paired", event)
        return False

    async def _check_in(self, conn: ServerConnection) -> None:
        self._play_request = await conn.send(EventPlay(event=self.config.event or ""))

    def _last_match_started(self, started: MatchStarted) -> bool:
        """Whether `started` starts the last match the run should play (an old ladder's second
        half starts none)."""
        games = self.config.games
        first_half = self.runlog.halves_started(started.match) == 1
        return bool(games) and first_half and len(self.stats.matches) + 1 >= games

    async def _send_again(self, conn: ServerConnection, error: Error) -> None:
        """A request refused `rate_limited` was not carried out: send it again once `retry_ms` has
        passed (docs/protocol.md, Limits and clocks). A stale `act` is not: a fresh `your_turn`
        comes if the seat is still to act."""
        request = conn.sent.pop(error.id, None) if error.id is not None else None
        if request is None or isinstance(request, Act):
            return
        wait = min(5.0, (error.retry_ms or 1000) / 1000)
        log.info("rate limited; sending %s again in %.2f s", request.TYPE, wait)
        await trio.sleep(wait)
        rid = await conn.send(dataclasses.replace(request, id=None))
        if request.id == self._tables_request:
            self._tables_request = rid

    def _learn_ruleset(self, tables: Tables) -> None:
        for info in tables.tables:
            if info.table == self.table:
                options = dict(info.options)
                self.ruleset = Ruleset.from_preset(info.preset, **options)
                self.tracker = ViewTracker(self.ruleset)
                self.runlog.players = self.ruleset.players
                if self.seat is not None:
                    log.info("%s", seat_line(info.table, self.seat, self.ruleset.players))
                return
        raise RunnerError(f"table {self.table!r} is not listed by the server")

    def _on_error(self, error: Error) -> bool:
        if error.code == "stale_version":
            # Expected when several seats act at once (a Hearts pass): a fresh your_turn follows.
            log.debug("stale action: %s", error.message)
            return False
        if error.code == "already_on_ladder" and error.id == self._enter_request:
            if not self._entered:  # another runner (or screen) of this account holds the entry
                raise RunnerError(
                    f"{error.code}: {error.message} (is another runner of this account on it?)"
                )
            # Our entry from before the drop, held until the match it forfeited is over.
            now = trio.current_time()
            self._enter_again_at = now + self._enter_wait
            log.info(
                "the ladder still holds our entry from before the drop; entering again in %.0f s",
                self._enter_wait,
            )
            self._enter_wait = min(self._enter_wait * 2, ENTER_AGAIN[1])
            return False
        detail = f" ({error.detail})" if error.detail else ""
        log.warning("server error %s: %s%s", error.code, error.message, detail)
        if error.code in FATAL_CODES:
            raise RunnerError(f"{error.code}: {error.message}")
        if closes_connection(error.code):  # nothing follows it: reconnect
            raise trio.BrokenResourceError(f"the server closed the connection: {error.code}")
        return False

    async def _on_game(self, conn: ServerConnection, message: Message) -> bool:
        tracker = self.tracker
        assert tracker is not None and self.ruleset is not None
        if getattr(message, "table", self.table) != self.table:
            return False
        if isinstance(message, Snapshot):
            if message.seat is not None:
                self.seat = message.seat
            tracker.snapshot(message.view)
            return False
        if isinstance(message, YourTurn):
            await self._act(conn, message)
            return False
        if isinstance(message, ClockExpired):
            self.runlog.clock_expired(message, self.seat)
        event = to_wire(message)
        tracker.apply(event)
        event = {k: v for k, v in event.items() if k not in ("seq", "table")}
        self.bot.on_event(event)
        if isinstance(message, HandScored):
            self.bot.on_hand_end(event)
        elif isinstance(message, GameOver):
            self.bot.on_game_end(event)
            # Which seat was ours and how the table sat, so the game is said by its sides.
            sides = tracker.view.get("sides")
            self.stats.games.append(
                {
                    **event,
                    "table": message.table,
                    "seat": self.seat,
                    "players": self.ruleset.players,
                    "sides": sides if isinstance(sides, list) else [],
                }
            )
            log.info("%s", game_over_line(self.stats.games[-1]))
            # On the ladder a match is what counts, in an event its end (`event_ended`).
            if not self.config.ladder and self.config.event is None:
                return self._done()
        return False

    async def _act(self, conn: ServerConnection, turn: YourTurn) -> None:
        assert self.tracker is not None and self.ruleset is not None
        legal = [_plain(to_map(action)) for action in turn.legal]
        budget = max(0.05, turn.deadline_ms / 1000 - self.config.margin)
        data = self.tracker.for_turn(turn.seat, turn.version, legal)
        view = BotView.from_dict(data, self.ruleset, deadline=budget, memory=self.memory)
        if view.hand_number != self._hand:
            self._hand = view.hand_number
            self.bot.on_hand_start(view)
        action = await self._decide(view, budget)
        self.stats.decisions += 1
        log.debug("hand %d, %s: %s", view.hand_number, view.phase, action_words(action))
        wire = from_map(WireAction, action_to_dict(action, with_seat=False))
        await conn.send(Act(table=turn.table, version=turn.version, action=wire))

    async def _decide(self, view: BotView, budget: float) -> Action:
        bot = self.bot
        with trio.move_on_after(budget):
            try:
                if isinstance(bot, AsyncBot):
                    return await bot.decide(view)
                return await trio.to_thread.run_sync(bot.decide, view, abandon_on_cancel=True)
            except Exception as exc:  # a bot's bug must not cost the seat
                log.warning("the bot failed (%s); playing a legal fallback", exc)
                self.stats.fallbacks += 1
                return fallback_action(view, self.rng)
        log.warning("the bot ran out of time (%.2f s); playing a legal fallback", budget)
        self.stats.fallbacks += 1
        return fallback_action(view, self.rng)


def _plain(action: dict[str, Any]) -> dict[str, Any]:
    """A wire action as the engine's plain form (enums as their values, no empty fields)."""
    return {k: getattr(v, "value", v) for k, v in action.items() if v is not None}


class Terminated(Exception):
    """The process was told to stop with SIGTERM (a service manager, `timeout`, `kill`)."""


async def run_until_terminated(runner: BotRunner) -> RunStats:
    """`runner.run()`, ended on SIGTERM as on Ctrl-C: the run is cancelled where it stands, its
    summary is logged, and Terminated is raised. Python's default for SIGTERM would end the
    process at once, without the summary a bot author run under systemd or `timeout` reads."""
    token = trio.lowlevel.current_trio_token()
    with trio.CancelScope() as scope:
        # The handler runs between bytecodes; the trio token hands the cancel to the run loop
        # (run_sync_soon is safe from a signal handler).
        previous = signal.signal(signal.SIGTERM, lambda *_: token.run_sync_soon(scope.cancel))
        try:
            return await runner.run()
        finally:
            signal.signal(signal.SIGTERM, previous)
    raise Terminated("terminated")
