"""The network runner: everything between a bot object and a table server (`spades-bot run`).

It connects, says `hello` with the account's token, takes a seat (`join`) or enters the ladder, keeps
the seat's view from the snapshot and the events (`ViewTracker`), and answers each `your_turn` before
its deadline: a bot that is too slow, raises, or answers something illegal is covered by a legal
fallback, and the log says so. When the connection drops it reconnects with backoff; the server gives a
returning account its seat back with a fresh snapshot, and play goes on. It gives up, in one sentence,
when it could not reach the server for `first_connect_for` seconds (a server that is not running, a
wrong address) or could not get a lost connection back within `reconnect_for` (the server holds a seat
120 s by default); `retry_forever` never gives up.

The protocol is `protocol.connection.Connection` (sans-IO); this module owns the socket and the clock.

Sync bots decide in a worker thread (`trio.to_thread`), so a long search never stops the connection
from reading; async bots are awaited. Either way the decision is cut at the deadline minus a margin.
"""

import logging
import os
import random
import socket
import ssl
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import trio

from bots.sdk.bot import AnyBot, AsyncBot, fallback_action
from bots.sdk.tracker import ViewTracker
from bots.sdk.view import BotView, HandMemory
from engine.actions import Action, action_to_dict
from engine.ruleset import Ruleset
from engine.version import project_version
from protocol.connection import CONNECTION_CLOSED, Connection
from protocol.errors import ProtocolError, RemoteProtocolError, closes_connection
from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Act,
    Bye,
    Error,
    GameEvent,
    GameOver,
    HandScored,
    Hello,
    Join,
    Joined,
    LadderEnter,
    MatchEnded,
    MatchStarted,
    Message,
    Ping,
    Pong,
    Request,
    Sender,
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
#: The port of `HOST` without `:PORT` (the server's default, as `spades connect` assumes).
DEFAULT_PORT: Final = 7777


class RunnerError(Exception):
    """The runner cannot go on (a refused token, a table that does not exist, a server it could
    not reach in time). `gave_up` is true when trying longer might have helped (`retry_forever`)."""

    def __init__(self, message: str, *, gave_up: bool = False) -> None:
        super().__init__(message)
        self.gave_up = gave_up


@dataclass(frozen=True, slots=True)
class RunnerConfig:
    """Where to play and how. Exactly one of `table` and `ladder` says what to do once connected."""

    host: str
    port: int
    token: str
    table: str | None = None
    seat: int | None = None
    ladder: bool = False
    games: int = 1  # stop after this many finished games (0: never, for the ladder)
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


@dataclass
class RunStats:
    """What happened, for the caller and the tests."""

    games: list[dict[str, Any]] = field(default_factory=list)  # each `game_over` as a map
    decisions: int = 0
    fallbacks: int = 0
    connections: int = 0


class _Connection:
    """One stream with the protocol's `Connection`: send messages, receive validated ones."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.protocol = Connection(Sender.CLIENT, max_frame_size=1 << 20)
        self.pending: deque[Message] = deque()

    async def send(self, message: Message) -> int | None:
        """Send `message` (a request is numbered: its id is returned). Raises `LocalProtocolError`
        when the protocol forbids it now (say, after the server's closing error)."""
        if isinstance(message, Request):
            message = self.protocol.numbered(message)
        await self.stream.send_all(self.protocol.send(message))
        return message.id if isinstance(message, Request) else None

    async def receive(self) -> Message | None:
        """The next message; None when the server closed the connection. Raises a fatal
        `RemoteProtocolError` when the server's bytes or events cannot be trusted."""
        while not self.pending:
            data = await self.stream.receive_some(65536)
            if not data:
                return None
            self.protocol.receive_data(data)
            while True:
                try:
                    message = self.protocol.next_event()
                except RemoteProtocolError as exc:
                    if exc.fatal:
                        raise
                    log.warning("skipped a message from the server: %s", exc)
                    continue
                if message is None or message is CONNECTION_CLOSED:
                    break
                assert isinstance(message, Message)
                self.pending.append(message)
        return self.pending.popleft()


class BotRunner:
    """Plays `bot` on a server until `config.games` games are over (or forever with `games=0`)."""

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

    # -- the outer loop: connect, play, reconnect ----------------------------------------------------
    async def run(self) -> RunStats:
        """Play until done. Raises RunnerError when the server refuses us, when it cannot be reached
        (or reached again) in time, or (with `tls`) its certificate is not trusted or the CA file
        cannot be read."""
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
                reason = _reason(exc)
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
                    await _tls_handshake(stream)
            self.stats.connections += 1
            return await self._converse(_Connection(stream))
        finally:
            self._stream = None
            await trio.aclose_forcefully(stream)

    async def _converse(self, conn: _Connection) -> bool:
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
        log.info("connected to %s as %s", welcome.server, welcome.user)
        if resuming:
            # The server gives a returning account its seat back by itself (joined, snapshot).
            pass
        elif cfg.ladder:
            await conn.send(LadderEnter())
        elif self.table is not None:
            await conn.send(Join(table=self.table, seat=self.seat))
        # A bot waiting for its turn (or for a ladder match) is silent on the wire: ping a few
        # times per idle timeout so the server does not take it for gone.
        idle_ms = welcome.limits.idle_timeout_ms
        ping_every = max(0.1, idle_ms / 3000) if idle_ms > 0 else float("inf")
        while True:
            with trio.move_on_after(ping_every) as quiet:
                message = await conn.receive()
            if quiet.cancelled_caught:
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

    async def _expect_welcome(self, conn: _Connection) -> Welcome:
        while True:
            message = await conn.receive()
            if message is None:
                raise trio.BrokenResourceError("closed during the handshake")
            if isinstance(message, Welcome):
                return message
            if isinstance(message, Error):
                raise RunnerError(f"the server refused us: {message.code}: {message.message}")
            self._early.append(message)

    async def _token_refused(self, conn: _Connection) -> None:
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
    async def _handle(self, conn: _Connection, message: Message) -> bool:
        if isinstance(message, Ping):
            await conn.send(Pong(id=message.id))
        elif isinstance(message, Error):
            return self._on_error(message)
        elif isinstance(message, Bye):
            raise trio.BrokenResourceError(f"the server said bye: {message.reason}")
        elif isinstance(message, Joined):
            if message.seat is not None:
                self.table, self.seat = message.table, message.seat
                if self.ruleset is None:
                    self._tables_request = await conn.send(ListTablesRequest())
        elif isinstance(message, MatchStarted):
            self.table, self.ruleset, self.tracker = message.table, None, None
        elif isinstance(message, Tables) and message.id == self._tables_request:
            self._learn_ruleset(message)
            early, self._early = self._early, []
            for held in early:
                if await self._handle(conn, held):
                    return True
        elif isinstance(message, MatchEnded):
            return bool(self.config.games) and len(self.stats.games) >= self.config.games
        elif isinstance(message, GameEvent | YourTurn | Snapshot):
            if self.tracker is None:
                self._early.append(message)
                return False
            return await self._on_game(conn, message)
        return False

    def _learn_ruleset(self, tables: Tables) -> None:
        for info in tables.tables:
            if info.table == self.table:
                options = dict(info.options)
                self.ruleset = Ruleset.from_preset(info.preset, **options)
                self.tracker = ViewTracker(self.ruleset)
                return
        raise RunnerError(f"table {self.table!r} is not listed by the server")

    def _on_error(self, error: Error) -> bool:
        if error.code == "stale_version":
            # Expected when several seats act at once (a Hearts pass): a fresh your_turn follows.
            log.debug("stale action: %s", error.message)
            return False
        detail = f" ({error.detail})" if error.detail else ""
        log.warning("server error %s: %s%s", error.code, error.message, detail)
        if error.code in FATAL_CODES:
            raise RunnerError(f"{error.code}: {error.message}")
        if closes_connection(error.code):  # nothing follows it: reconnect
            raise trio.BrokenResourceError(f"the server closed the connection: {error.code}")
        return False

    async def _on_game(self, conn: _Connection, message: Message) -> bool:
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
        event = to_wire(message)
        tracker.apply(event)
        event = {k: v for k, v in event.items() if k not in ("seq", "table")}
        self.bot.on_event(event)
        if isinstance(message, HandScored):
            self.bot.on_hand_end(event)
        elif isinstance(message, GameOver):
            self.bot.on_game_end(event)
            self.stats.games.append(event)
            log.info("game over: winners %s, scores %s", message.winners, message.scores)
            if not self.config.ladder:
                return bool(self.config.games) and len(self.stats.games) >= self.config.games
        return False

    async def _act(self, conn: _Connection, turn: YourTurn) -> None:
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
        log.debug("hand %d, %s: %s", view.hand_number, view.phase, action)
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


def client_tls_context(ca: str | None) -> ssl.SSLContext:
    """A context that checks the server's certificate and name (against `ca` alone when given).
    Raises RunnerError when the CA file cannot be used."""
    try:
        return ssl.create_default_context(cafile=ca)
    except (OSError, ssl.SSLError) as exc:
        raise RunnerError(f"cannot use the CA file {ca}: {exc}") from None


async def _tls_handshake(stream: trio.SSLStream[trio.SocketStream]) -> None:
    """The handshake; an untrusted certificate is a RunnerError (retrying cannot help), any
    other failure a lost connection (BrokenResourceError) like a dropped line."""
    try:
        await stream.do_handshake()
    except trio.BrokenResourceError as exc:
        if isinstance(exc.__cause__, ssl.SSLCertVerificationError):
            raise RunnerError(
                f"the server's TLS certificate is not trusted: {exc.__cause__.verify_message}"
                " (give its CA with --ca)"
            ) from None
        raise


def _plain(action: dict[str, Any]) -> dict[str, Any]:
    """A wire action as the engine's plain form (enums as their values, no empty fields)."""
    return {k: getattr(v, "value", v) for k, v in action.items() if v is not None}


def _reason(exc: BaseException) -> str:
    """A lost connection's cause in a few words ("connection refused", not trio's wrapping)."""
    if isinstance(exc, trio.TooSlowError):
        return "no answer in time"
    for cause in _causes(exc):
        if isinstance(cause, socket.gaierror) and cause.strerror:
            return cause.strerror.lower()
        if isinstance(cause, OSError) and cause.errno and cause.errno > 0:
            return os.strerror(cause.errno).lower()
    return str(exc) or type(exc).__name__


def _causes(exc: BaseException) -> list[BaseException]:
    """`exc`, then what it was raised from, and the errors inside exception groups on the way."""
    out: list[BaseException] = []
    todo = [exc]
    while todo and len(out) < 20:
        error = todo.pop(0)
        out.append(error)
        if isinstance(error, BaseExceptionGroup):
            todo.extend(error.exceptions)
        if error.__cause__ is not None:
            todo.append(error.__cause__)
    return out


def parse_address(text: str) -> tuple[str, int]:
    """`HOST[:PORT]` (or `[v6]:PORT`, or a bare v6 address) as a pair; the port is 7777 when not
    given, as `spades connect` assumes. Raises ValueError with a sentence."""
    text = text.strip()
    port_text: str | None = None
    if text.startswith("["):
        host, sep, rest = text[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError(f"{text!r}: write the server as HOST:PORT, e.g. [::1]:7777")
        port_text = rest[1:] if rest else None
    elif text.count(":") == 1:
        host, _, port_text = text.partition(":")
    else:  # a name, an IPv4 address, or a bare IPv6 one: the default port
        host = text
    if port_text is None:
        return host or "127.0.0.1", DEFAULT_PORT
    if not port_text.isdigit() or not 0 < int(port_text) < 65536:
        raise ValueError(f"{text!r}: the port must be a number from 1 to 65535 (or left out: 7777)")
    return host or "127.0.0.1", int(port_text)
