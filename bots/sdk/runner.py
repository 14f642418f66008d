"""The network runner: everything between a bot object and a table server (`spades-bot run`).

It connects, says `hello` with the account's token, takes a seat (`join`) or enters the ladder, keeps
the seat's view from the snapshot and the events (`ViewTracker`), and answers each `your_turn` before
its deadline: a bot that is too slow, raises, or answers something illegal is covered by a legal
fallback, and the log says so. When the connection drops it reconnects with backoff; the server gives a
returning account its seat back with a fresh snapshot, and play goes on.

Sync bots decide in a worker thread (`trio.to_thread`), so a long search never stops the connection
from reading; async bots are awaited. Either way the decision is cut at the deadline minus a margin.
"""

import dataclasses
import logging
import random
import ssl
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import trio

from bots.sdk.bot import AnyBot, AsyncBot, fallback_action
from bots.sdk.tracker import ViewTracker
from bots.sdk.view import BotView, HandMemory
from engine.actions import Action, action_to_dict
from engine.ruleset import Ruleset
from engine.version import project_version
from protocol.errors import ProtocolError
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
from protocol.wire import MessageDecoder, encode, to_wire

log = logging.getLogger("bots.runner")

#: Errors after which trying again cannot help.
FATAL_CODES = frozenset(
    {"bad_token", "unauthorized", "version_mismatch", "not_on_ladder", "no_such_table"}
)


class RunnerError(Exception):
    """The runner cannot go on (a refused token, a table that does not exist, too many drops)."""


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
    max_reconnects: int = 30
    backoff: tuple[float, float] = (0.2, 5.0)  # first and longest wait between reconnects
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
    """One TCP connection with the protocol codec: send messages, receive validated ones."""

    def __init__(self, stream: trio.abc.Stream) -> None:
        self.stream = stream
        self.decoder = MessageDecoder(Sender.SERVER, max_frame_size=1 << 20)
        self.next_id = 1
        self.pending: list[Message] = []

    async def send(self, message: Message) -> int | None:
        if isinstance(message, Request) and message.id is None:
            message = dataclasses.replace(message, id=self.next_id)
            self.next_id += 1
        await self.stream.send_all(encode(message))
        return getattr(message, "id", None)

    async def receive(self) -> Message | None:
        """The next message; None when the server closed the connection."""
        while not self.pending:
            data = await self.stream.receive_some(65536)
            if not data:
                return None
            self.decoder.receive_data(data)
            while (message := self.decoder.next_message()) is not None:
                self.pending.append(message)
        return self.pending.pop(0)


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

    # -- the outer loop: connect, play, reconnect ----------------------------------------------------
    async def run(self) -> RunStats:
        """Play until done. Raises RunnerError when the server refuses us or keeps dropping, or
        (with `tls`) its certificate is not trusted or the CA file cannot be read."""
        if self.config.tls:
            self._tls = client_tls_context(self.config.ca)
        drops = 0
        delay = self.config.backoff[0]
        while True:
            try:
                finished = await self._session()
            except (
                OSError,
                trio.BrokenResourceError,
                trio.ClosedResourceError,
                ProtocolError,
            ) as exc:
                drops += 1
                log.warning("connection lost (%s); reconnecting in %.1f s", exc, delay)
                if drops > self.config.max_reconnects:
                    raise RunnerError(f"gave up after {drops} lost connections") from exc
                await trio.sleep(delay)
                delay = min(delay * 2, self.config.backoff[1])
                continue
            if finished:
                return self.stats
            drops += 1
            if drops > self.config.max_reconnects:
                raise RunnerError(f"gave up after {drops} lost connections")
            await trio.sleep(delay)
            delay = min(delay * 2, self.config.backoff[1])

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
        resuming = self.stats.connections > 1 and self.table is not None and self.seat is not None
        with trio.fail_after(cfg.connect_timeout):
            welcome = await self._expect_welcome(conn)
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
        log.warning("server error %s: %s (%s)", error.code, error.message, error.detail)
        if error.code in FATAL_CODES:
            raise RunnerError(f"{error.code}: {error.message}")
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


def parse_address(text: str) -> tuple[str, int]:
    """`HOST:PORT` (or `[v6]:PORT`) as a pair. Raises ValueError with a sentence."""
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit():
        raise ValueError(f"{text!r}: write the server as HOST:PORT")
    return host.strip("[]") or "127.0.0.1", int(port)
