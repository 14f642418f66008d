"""One client's session: the trio side of one connection, around the protocol's own state machine.

The protocol's state (the phase, what may be sent when, the events' `seq`, which `act` answers which
`your_turn`) is `protocol.connection.Connection`'s, the same sans-IO object every client of the
project uses; this module only owns the IO around it. Its task group holds the reader (this task:
receive, decode, dispatch) and the writer (`server.connection.Outbox.run_writer`). Every wait is
inside a deadline: the handshake's until `hello`, the idle sweep's after it, the write timeout for a
peer that does not read.

Nothing a client sends is trusted: every message is validated by the protocol decoder, checked
against the phase, rate-limited, and handled by `server.requests` (the tables decide the rest). An
`error` answers every refusal; a fatal one closes the connection after it.
"""

from __future__ import annotations

import contextlib
import secrets
from collections import deque
from collections.abc import Awaitable, Callable

import structlog
import trio

from protocol.codec import DEFAULT_LIMITS
from protocol.connection import Connection, ConnectionClosed, Phase
from protocol.errors import ErrorCode, LocalProtocolError, ProtocolError, RemoteProtocolError
from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Act,
    Bye,
    Error,
    Event,
    Guest,
    Hello,
    Joined,
    Message,
    OperatorLogin,
    Register,
    SeatLost,
    Sender,
    ServicePaused,
    TableCreated,
    Welcome,
)
from protocol.types import ClientKind, ServerLimits
from protocol.wire import error_message
from server.accounts import Account, AccountError
from server.connection import FLUSH_TIMEOUT, Outbox
from server.peers import SharedEvent
from server.requests import (
    HANDLERS,
    Refused,
    SessionServices,
    TokenBucket,
    account_of_token,
    clock_of,
)
from server.storage import StorageError
from server.table_commands import LeaveCommand, LeaveReason, TableError
from server.table_seats import LOST_WHY, lost_seat_sentence

log = structlog.get_logger("server.session")

RECEIVE_CHUNK = 16 * 1024
LOST_SEATS_KEPT = 16  # tables whose seat_lost reason a session remembers for its late `act`s
MAX_LOGIN_PAUSE = 5.0  # seconds a connection is not read after a login refused rate_limited

__all__ = ["Session", "SessionServices"]


class Session:
    """The server side of one connection: a `Peer` of the tables it sits or watches at, and the
    `Requester` its requests are handled for (`server.requests`)."""

    def __init__(self, services: SessionServices, stream: trio.abc.Stream, peer: str) -> None:
        limits = services.config.limits
        self.services = services
        self.id = secrets.token_hex(4)
        self.peer = peer
        self.host = peer.rsplit(":", 1)[0]
        self.stream = stream
        self.proto = Connection(Sender.SERVER, max_frame_size=limits.max_frame_bytes)
        self.connection = Outbox(
            stream, outbox_size=limits.outbox_size, peer=peer, write_timeout=limits.write_timeout
        )
        self._pending: deque[Message | RemoteProtocolError] = deque()
        self.account: Account | None = None
        self.kind = ClientKind.HUMAN
        self.operator = False  # a good `operator_login` was sent (server.operator)
        self.opened = trio.current_time()
        # Where this connection sits and watches, as its tables told it: a routing cache (for
        # `already_seated` and for telling the tables when the connection drops). The tables alone
        # decide who holds a seat.
        self.seats: dict[str, int] = {}
        self.watching: set[str] = set()
        # Why this connection lost a seat it held (`seat_lost`), by table, for the refusal of its
        # later `act`s there: the last few only.
        self.lost_seats: dict[str, str] = {}
        self._requests = TokenBucket(limits.max_messages_per_second, limits.max_message_burst)
        # `act`s that answer no `your_turn` (`Connection.answers_turn`): each one a table might
        # have to handle, so fewer of them than of other messages.
        self._acts = TokenBucket(limits.act_per_second, limits.act_burst)
        self.chat = TokenBucket(limits.chat_per_second, limits.chat_burst)
        self.last_heard = trio.current_time()  # when the last whole message arrived
        self._waiting = False  # past hello and waiting for the next message
        self._idle_scope: trio.CancelScope | None = None  # what the idle sweep cancels
        self._background: trio.Nursery | None = None  # long requests' answers (`review`)
        self.log = log.bind(session=self.id, peer=peer)

    # ---------------------------------------------------------------- the peer

    @property
    def peer_id(self) -> str:
        return self.id

    @property
    def connected(self) -> bool:
        return self.connection.close_reason is None

    def deliver(self, message: Message) -> None:
        """Queue a message for the client (an event gets this connection's `seq`). Never blocks;
        a message the connection may no longer carry (it is closing) is dropped."""
        if not self.proto.can_send:
            return
        if isinstance(message, Event):
            if isinstance(message, SeatLost):
                self.seats.pop(message.table, None)
                self.lost_seats[message.table] = lost_seat_sentence(
                    message.seat, LOST_WHY[message.reason]
                )
                if len(self.lost_seats) > LOST_SEATS_KEPT:
                    del self.lost_seats[next(iter(self.lost_seats))]
        elif isinstance(message, Error):
            self.services.refused(message.code)
        elif isinstance(message, Joined | TableCreated) and message.table:
            if message.seat is not None:
                self.seats[message.table] = message.seat
                self.watching.discard(message.table)
                self.lost_seats.pop(message.table, None)
            elif isinstance(message, Joined):
                self.watching.add(message.table)
        try:
            data = self.proto.send(message)
        except LocalProtocolError as exc:  # a server bug: never let it take a table down
            self.log.error("not_sent", message=message.TYPE, error=exc.message)
            return
        self.connection.send_frame(data)

    def deliver_shared(self, shared: SharedEvent) -> None:
        """Queue an event other connections get too: its one encoding, with this `seq`."""
        if not self.proto.can_send:
            return
        try:
            data = self.proto.send_event(shared.frames())
        except LocalProtocolError as exc:
            self.log.error("not_sent", message=shared.kind.TYPE, error=exc.message)
            return
        self.connection.send_frame(data)

    async def logged_in(self, account: Account) -> None:
        """Now logged in: hear lobby chat, and get back the account's seats that no live
        connection holds (`joined`, a snapshot and `turn` for each; docs/protocol.md,
        "Accounts, connections and seats")."""
        self.services.lobby.enter(self)
        await self.services.lobby.resume(self, account)

    def say_bye(self, reason: str) -> None:
        """Tell the client we are closing, flush, hang up."""
        self.deliver(Bye(reason=reason))
        self.connection.finish(reason="bye")

    def _close_with(self, error: Error, reason: str) -> None:
        """Send a closing `error` (nothing can follow it), flush, hang up."""
        self.deliver(error)
        self.connection.finish(reason=reason)

    async def refuse_and_close(self, banned: str | None = None) -> None:
        """Answer a connection we cannot take (server full or stopping, or `banned` with that
        sentence: its address is) and close it."""
        stopping = self.services.is_stopping()
        code = ErrorCode.SHUTTING_DOWN if stopping else ErrorCode.SERVER_FULL
        text = (
            "the server is stopping" if stopping else "the server has no room for another session"
        )
        if banned is not None:
            code, text = ErrorCode.BANNED, banned
        self.services.refused(code.value)
        data = self.proto.send(Error(code=code.value, message=text))
        with trio.move_on_after(FLUSH_TIMEOUT):
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self.stream.send_all(data)
        await trio.aclose_forcefully(self.stream)

    # ---------------------------------------------------------------- the task

    async def run(self) -> None:
        """Serve the connection until either side closes it; then release what it held."""
        conn = self.connection
        self.log.info("connected")
        try:
            with conn.cancel_scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(conn.run_writer)
                    self._background = nursery
                    await self._serve()
                    conn.finish()
                    with trio.move_on_after(FLUSH_TIMEOUT):
                        await conn.closed.wait()
                    conn.abort(conn.close_reason or "closed")
        finally:
            self._detach()
            self.log.info("disconnected", reason=conn.close_reason, account=self._name())

    def _name(self) -> str | None:
        return self.account.name if self.account else None

    async def _receive(self) -> Message | RemoteProtocolError | None:
        """The next message or refusal; None when the client has closed its side (or after a
        fatal refusal, once it has been handed out)."""
        while not self._pending:
            if self.proto.error is not None or self.proto.phase is Phase.CLOSED:
                return None
            try:
                data = await self.stream.receive_some(RECEIVE_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return None
            self.proto.receive_data(data)
            while True:
                try:
                    event = self.proto.next_event()
                except RemoteProtocolError as exc:
                    self._pending.append(exc)
                    if exc.fatal:
                        break
                    continue
                if event is None or isinstance(event, ConnectionClosed):
                    break
                self._pending.append(event)
            if not data and not self._pending:
                return None
        return self._pending.popleft()

    async def _serve(self) -> None:
        deadline = trio.current_time() + self.services.config.limits.handshake_timeout
        if isinstance(self.stream, trio.SSLStream) and not await self._tls_handshake(deadline):
            return
        # One scope for the connection's life, cancelled only by the server's idle sweep
        # (`Server.reap_idle` -> `let_go_if_idle`) and only while this task waits for a message:
        # a cancelled receive has consumed nothing. (No timer per message: see `reap_idle`.)
        with trio.CancelScope() as self._idle_scope:
            await self._serve_messages(deadline)
        if self._idle_scope.cancelled_caught:
            idle = self.services.config.limits.idle_timeout
            message = f"idle for {idle:g} s (send ping to stay)"
            self._close_with(Error(code=ErrorCode.TIMEOUT.value, message=message), "idle_timeout")

    def tell_service(self, shared: SharedEvent) -> None:
        """The server-wide `service_paused` (to a connection past `welcome` only)."""
        if self._welcomed():
            self.deliver_shared(shared)

    def _welcomed(self) -> bool:
        return self.proto.phase not in (Phase.AWAITING_HELLO, Phase.AWAITING_WELCOME)

    @property
    def welcomed(self) -> bool:
        """Whether `welcome` was sent (events may be delivered)."""
        return self._welcomed()

    async def _serve_messages(self, deadline: float) -> None:
        # Bounded by the connection's life: each pass consumes one message (or the end of stream).
        while True:
            item: Message | RemoteProtocolError | None = None
            if self._welcomed():
                # Each whole message (a `ping` too) is activity; bytes that make no message are
                # not. A silent client, or one sending a frame a byte at a time, is let go.
                self._waiting = True
                item = await self._receive()
                self._waiting = False
            else:
                # Until `hello` is answered, the whole handshake must finish in time.
                with trio.move_on_at(deadline) as handshake:
                    item = await self._receive()
                if handshake.cancelled_caught:
                    no_hello = Error(code=ErrorCode.TIMEOUT.value, message="no hello in time")
                    self._close_with(no_hello, "handshake_timeout")
                    return
            if item is None:
                return
            self.last_heard = trio.current_time()
            # Backpressure for the client's own requests: while its outbox is half full, read
            # no more from it (pushes from tables still have the other half). Bounded: by the
            # handshake's deadline before `hello`, by the write timeout after.
            if self._welcomed():
                await self.connection.wait_for_room()
            else:
                with trio.move_on_at(deadline) as waiting:
                    await self.connection.wait_for_room()
                if waiting.cancelled_caught:
                    self.connection.abort("handshake_timeout")
                    return
            if not await self._dispatch(item):
                return

    async def _tls_handshake(self, deadline: float) -> bool:
        """The TLS handshake, within the same deadline as `hello`; False (and the connection
        dropped: nothing can be said to a peer that does not speak TLS) when it fails or stalls."""
        stream = self.stream
        assert isinstance(stream, trio.SSLStream)
        with trio.move_on_at(deadline):
            try:
                await stream.do_handshake()
            except trio.BrokenResourceError as exc:
                self.log.info("tls_failed", error=str(exc.__cause__ or exc))
                self.connection.abort("tls_failed")
                return False
            return True
        self.connection.abort("handshake_timeout")
        return False

    async def _dispatch(self, item: Message | RemoteProtocolError) -> bool:
        """Handle one message; False when the connection must close."""
        if isinstance(item, ProtocolError):
            if item.fatal:
                self._close_with(error_message(item), item.code.value)
                return False
            if not self._requests.take():  # refused messages count against the rate too
                self.deliver(self._rate_limited(item.request_id))
                return True
            self.deliver(error_message(item))
            return True
        if isinstance(item, Bye):
            self.connection.finish(reason="client_bye")
            return False
        rid = getattr(item, "id", None)
        answers_turn = self.proto.answers_turn(item)
        if not answers_turn and not self._requests.take():
            self.deliver(self._rate_limited(rid))
            return True
        if isinstance(item, Act) and not answers_turn and not self._acts.take():
            self.deliver(self._rate_limited(rid, self._acts, "too many acts that answer no turn"))
            return True
        try:
            if isinstance(item, Hello):
                await self._on_hello(item)
            else:
                handler = HANDLERS.get(type(item))
                if handler is None:
                    raise Refused(ErrorCode.UNEXPECTED_MESSAGE, f"a {item.TYPE} is not accepted")
                await handler(self, item)
        except Refused as exc:
            self.deliver(
                Error(
                    id=rid,
                    code=exc.code.value,
                    message=exc.message,
                    detail=exc.detail,
                    retry_ms=exc.retry_ms,
                )
            )
            if isinstance(item, Register | Guest | OperatorLogin):  # logins, or before one
                await self._hold_back(exc.code.value, exc.retry_ms)
        except TableError as exc:
            self.deliver(
                Error(
                    id=rid,
                    code=exc.code.value,
                    message=exc.message,
                    detail=exc.detail,
                    retry_ms=exc.retry_ms,
                )
            )
        except AccountError as exc:
            self.deliver(Error(id=rid, code=exc.code, message=exc.message, retry_ms=exc.retry_ms))
            await self._hold_back(exc.code, exc.retry_ms)
        except StorageError as exc:
            self.log.error("storage_failed", request=item.TYPE, error=str(exc))
            self.deliver(
                Error(
                    id=rid, code=ErrorCode.INTERNAL.value, message="the server could not save that"
                )
            )
        except Exception:
            # A bug in one handler must not take the session (or the server) down.
            self.log.exception("handler_failed", request=item.TYPE)
            self.deliver(
                Error(
                    id=rid, code=ErrorCode.INTERNAL.value, message="a server bug; not carried out"
                )
            )
        # A hello that was not answered with `welcome` ends the connection.
        return self.proto.can_send and self.proto.phase is not Phase.AWAITING_WELCOME

    def _rate_limited(
        self,
        request_id: int | None,
        bucket: TokenBucket | None = None,
        message: str = "too many messages",
    ) -> Error:
        return Error(
            id=request_id,
            code=ErrorCode.RATE_LIMITED.value,
            message=message,
            retry_ms=(bucket or self._requests).retry_ms(),
        )

    def start_background(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run `work` beside the reader, in the connection's task group: cancelled when the
        connection ends (a review's solver process is killed then). A bug in it is logged and
        costs only its own answer, never the connection."""

        async def guarded() -> None:
            try:
                await work()
            except Exception:
                self.log.exception("background_failed")

        if self._background is None:  # pragma: no cover - requests come only while it runs
            raise RuntimeError("the session is not running")
        self._background.start_soon(guarded)

    def why_not_seated(self, table_id: str) -> str:
        """The sentence refusing an `act` at a table where this connection holds no seat."""
        return self.lost_seats.get(table_id, "you hold no seat at this table")

    def let_go_if_idle(self, cutoff: float, idle: float) -> None:
        """End the wait for the next message if nothing whole was heard since `cutoff` (the
        session then answers `timeout` and closes). Only a session past `hello`, waiting to
        read, is let go; one busy with a request is not."""
        if self._waiting and self.last_heard <= cutoff and self._idle_scope is not None:
            self._idle_scope.cancel()

    def _detach(self) -> None:
        """The connection is gone: held seats wait for a reconnect, spectating ends."""
        lobby = self.services.lobby
        for table_id in {*self.seats, *self.watching}:
            with contextlib.suppress(TableError):
                table = lobby.get(table_id)
                lobby.submit_later(table, LeaveCommand(peer=self, reason=LeaveReason.DISCONNECTED))
        self.seats.clear()
        self.watching.clear()
        lobby.forget(self)
        self.services.ladder.connection_closed(self)
        if self.services.events is not None:
            self.services.events.connection_closed(self)

    # ---------------------------------------------------------------- the handshake

    async def _on_hello(self, hello: Hello) -> None:
        """`welcome` (then `bad_token` if the token was refused: docs/protocol.md, Handshake), and
        a returning account's held seats. A second hello, or one of another protocol version, was
        refused by the protocol's connection before it got here."""
        self.kind = hello.kind
        refused: AccountError | None = None
        if hello.token is not None:
            try:
                self.account = await account_of_token(self.services, self.host, hello.token)
            except AccountError as exc:
                refused = exc
        banned = self.services.bans.why(self.host, self.account.name if self.account else None)
        if banned is not None:
            self.account = None
        name = self.account.name if self.account is not None else None
        self.deliver(self._welcome(hello.id, name))
        if banned is not None:  # welcomed, then refused: the error closes the connection
            self._close_with(Error(code=ErrorCode.BANNED.value, message=banned), "banned")
            return
        health = self.services.store.health
        if not health.available:  # arrived during a pause: told at once, as everyone was
            self.deliver(service_notice(False, 0.0))
        if refused is not None:
            # Welcomed without a user; the client may log in, register or play as a guest next.
            error = Error(code=refused.code, message=refused.message, retry_ms=refused.retry_ms)
            self.deliver(error)
        self.log = self.log.bind(account=name)
        self.log.info("hello", client=hello.client, kind=hello.kind.value)
        if self.account is not None:
            await self.logged_in(self.account)
        if refused is not None:
            await self._hold_back(refused.code, refused.retry_ms)

    async def _hold_back(self, code: str, retry_ms: int | None) -> None:
        """After a login (an account's or the operator's, or a `register` or `guest`) refused
        `rate_limited`, read nothing more from this connection until its `retry_ms` has passed (at
        most `MAX_LOGIN_PAUSE` s). Answering at once would let a client that retries as soon as it
        is answered turn each of its connections into a flood of refusals that costs the event
        loop (and so the tables) as much as the logins would have; a client that honours
        `retry_ms` never notices. Its bytes wait in the socket."""
        if code == ErrorCode.RATE_LIMITED.value and retry_ms:
            await trio.sleep(min(retry_ms / 1000, MAX_LOGIN_PAUSE))

    def _welcome(self, request_id: int | None, name: str | None) -> Welcome:
        cfg = self.services.config
        limits = cfg.limits
        return Welcome(
            id=request_id,
            server=cfg.server_name,
            server_version=self.services.server_version,
            protocol=PROTOCOL_VERSION_TEXT,
            session=self.id,
            user=name,
            guests=cfg.allow_guests,
            limits=ServerLimits(
                max_frame_size=limits.max_frame_bytes,
                max_str_len=DEFAULT_LIMITS.max_str_len,
                max_array_len=DEFAULT_LIMITS.max_array_len,
                max_map_len=DEFAULT_LIMITS.max_map_len,
                max_depth=DEFAULT_LIMITS.max_depth,
                rate_per_second=int(limits.max_messages_per_second),
                rate_burst=limits.max_message_burst,
                handshake_timeout_ms=int(limits.handshake_timeout * 1000),
                idle_timeout_ms=int(limits.idle_timeout * 1000),
                # The clock of this connection's decisions: its account's kind decides it (a bot
                # account's is shorter); a connection not yet logged in is told a person's.
                clock=clock_of(cfg, self.account),
                chat_max_chars=limits.chat_max_chars,
                chat_burst=limits.chat_burst,
                chat_per_second=limits.chat_per_second,
                act_burst=limits.act_burst,
                act_per_second=limits.act_per_second,
                register_burst=limits.max_registrations_per_address,
                register_per_hour=limits.max_registrations_per_address,
            ),
        )


#: What a person is told while play is paused (`service_paused.reason`).
PAUSED_REASON = "the server cannot reach its database; play resumes by itself when it is back"


def service_notice(available: bool, lasted_s: float) -> ServicePaused:
    """`service_paused` for the store going down (`available` false) or coming back after
    `lasted_s` seconds."""
    if available:
        return ServicePaused(paused=False, paused_ms=min(2**31 - 1, round(lasted_s * 1000)))
    return ServicePaused(paused=True, reason=PAUSED_REASON)
