"""One client's session: handshake, authentication, and a handler for every client message.

The session's task group holds the connection's reader (this task: decode, check, dispatch) and its
writer (`Connection.run_writer`). Nothing a client sends is trusted: every message is validated by
the protocol decoder, rate-limited, and checked against what this session holds (an `act` can only
be for the seat this session sits in). Errors are answered with `error` (a code and a sentence);
a fatal protocol error closes the connection after its `error`.
"""

from __future__ import annotations

import contextlib
import secrets
from collections import deque
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import structlog
import trio

from protocol.codec import DEFAULT_LIMITS
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Act,
    Bye,
    Chat,
    ChatMessage,
    CreateTable,
    Error,
    Event,
    Guest,
    Hello,
    Join,
    Joined,
    LadderEnter,
    LadderLeave,
    LadderMatches,
    LadderShow,
    LadderStandings,
    Leave,
    ListTables,
    LoggedIn,
    Login,
    Message,
    Ok,
    Ping,
    Pong,
    Register,
    Registered,
    Sender,
    Spectate,
    TableCreated,
    Tables,
    Welcome,
    YourTurn,
)
from protocol.schema import to_map
from protocol.types import ChatScope, ClientKind, Clock, ServerLimits
from protocol.wire import (
    EventFrames,
    MessageDecoder,
    check_version,
    encode,
    error_message,
    to_wire,
)
from server import accounts
from server.accounts import Account, AccountError
from server.connection import FLUSH_TIMEOUT, Connection
from server.ladder import hooks as ladder_hooks
from server.seats import ActCommand
from server.storage import StorageError
from server.table import ChatCommand, JoinCommand, LeaveCommand, SpectateCommand, TableError

if TYPE_CHECKING:
    from server.app import Server

log = structlog.get_logger("server.session")

RECEIVE_CHUNK = 16 * 1024


class TokenBucket:
    """`burst` messages at once, refilled at `rate` per second (trio's clock, so tests can jump)."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate = rate
        self.burst = float(burst)
        self.tokens = float(burst)
        self.stamp = trio.current_time()

    def take(self) -> bool:
        now = trio.current_time()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


class Refused(Exception):
    """A request this session will not carry out; answered with `error`, nothing changed."""

    def __init__(self, code: ErrorCode, message: str, detail: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = detail


Handler = Callable[[Any], Awaitable[None]]

# Events just encoded, by the identity of the message object. A table hands the same event object
# to every recipient who may see the same thing (and `_tell_same` one object to all), one
# recipient after another, so each is packed once and only its `seq` is stamped per connection
# (`EventFrames`). Holding the message keeps its id from being reused while it is in here.
_RECENT_LIMIT = 64
_recent: dict[int, EventFrames] = {}


def event_frames(message: Event) -> EventFrames:
    """The shared encoding of `message` (made on its first recipient)."""
    found = _recent.get(id(message))
    if found is not None and found.message is message:
        return found
    frames = EventFrames(message)
    if len(_recent) >= _RECENT_LIMIT:
        del _recent[next(iter(_recent))]  # the oldest (dicts keep insertion order)
    _recent[id(message)] = frames
    return frames


class Session:
    """The server side of one connection."""

    def __init__(self, server: Server, stream: trio.abc.Stream, peer: str) -> None:
        limits = server.config.limits
        self.server = server
        self.id = secrets.token_hex(4)
        self.peer = peer
        self.host = peer.rsplit(":", 1)[0]
        self.connection = Connection(
            stream,
            outbox_size=limits.outbox_size,
            peer=peer,
        )
        self.decoder = MessageDecoder(Sender.CLIENT, max_frame_size=limits.max_frame_bytes)
        self._pending: deque[Message | ProtocolError] = deque()
        self.account: Account | None = None
        self.kind = ClientKind.HUMAN
        self.hello_done = False
        self.seats: dict[str, int] = {}
        self.watching: set[str] = set()
        self.watching_lobby = False
        self._seq = 0
        self._requests = TokenBucket(limits.max_messages_per_second, limits.max_message_burst)
        # table -> the version of the last `your_turn` sent and not yet answered: one `act` for
        # it is free of the rate limit (made on first use; most connections never sit).
        self._turns_owed: dict[str, int] | None = None
        self.last_heard = trio.current_time()  # when the last whole message arrived
        self._waiting = False  # past hello and waiting for the next message
        self._idle_scope: trio.CancelScope | None = None  # what the idle sweep cancels
        self._chat = TokenBucket(limits.chat_per_second, limits.chat_burst)
        self.log = log.bind(session=self.id, peer=peer)

    # ---------------------------------------------------------------- sending

    def deliver(self, message: Message) -> None:
        """Queue a message for the client, stamping an event's per-connection `seq`."""
        if isinstance(message, Event):
            if isinstance(message, YourTurn):
                if self._turns_owed is None:
                    self._turns_owed = {}
                self._turns_owed[message.table] = message.version
            self._seq += 1
            self.connection.send_frame(event_frames(message).frame(self._seq))
            return
        if isinstance(message, Joined | TableCreated) and message.table:
            if message.seat is not None:
                self.seats[message.table] = message.seat
                self.watching.discard(message.table)
            elif isinstance(message, Joined):
                self.watching.add(message.table)
        self.connection.send(to_wire(message))

    def release_seat(self, table_id: str) -> None:
        """Forget the seat held at `table_id` (its table has let the seat go, as a ladder match
        does when it ends). Nothing is sent to the client or the table; unknown tables are ignored."""
        self.seats.pop(table_id, None)

    def say_bye(self, reason: str) -> None:
        """Tell the client we are closing, flush, hang up."""
        self.connection.finish(to_wire(Bye(reason=reason)), reason="bye")

    async def refuse_and_close(self) -> None:
        """Answer a connection we cannot take (server full or stopping) and close it."""
        stopping = self.server.stopping
        code = ErrorCode.SHUTTING_DOWN if stopping else ErrorCode.SERVER_FULL
        text = (
            "the server is stopping" if stopping else "the server has no room for another session"
        )
        with trio.move_on_after(FLUSH_TIMEOUT):
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self.connection.stream.send_all(encode(Error(code=code.value, message=text)))
        await trio.aclose_forcefully(self.connection.stream)

    # ---------------------------------------------------------------- the task

    async def run(self) -> None:
        """Serve the connection until either side closes it; then release what it held."""
        conn = self.connection
        self.log.info("connected")
        try:
            with conn.cancel_scope:
                async with trio.open_nursery() as nursery:
                    nursery.start_soon(conn.run_writer)
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

    async def _receive(self) -> Message | ProtocolError | None:
        """The next message or refusal; None when the client has closed its side."""
        while not self._pending:
            if self.decoder.error is not None:
                return None
            try:
                data = await self.connection.stream.receive_some(RECEIVE_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return None
            self.decoder.receive_data(data)
            while True:
                try:
                    message = self.decoder.next_message()
                except ProtocolError as exc:
                    self._pending.append(exc)
                    if exc.fatal:
                        break
                    continue
                if message is None:
                    break
                self._pending.append(message)
            if not data and not self._pending:
                return None
        return self._pending.popleft()

    async def _serve(self) -> None:
        deadline = trio.current_time() + self.server.config.limits.handshake_timeout
        if isinstance(self.connection.stream, trio.SSLStream) and not await self._tls_handshake(
            deadline
        ):
            return
        # One scope for the connection's life, cancelled only by the server's idle sweep
        # (`Server.reap_idle` -> `let_go_if_idle`) and only while this task waits for a message:
        # a cancelled receive has consumed nothing. (No timer per message: see `reap_idle`.)
        with trio.CancelScope() as self._idle_scope:
            await self._serve_messages(deadline)
        if self._idle_scope.cancelled_caught:
            idle = self.server.config.limits.idle_timeout
            self.connection.finish(
                to_wire(
                    Error(
                        code=ErrorCode.TIMEOUT.value,
                        message=f"idle for {idle:g} s (send ping to stay)",
                    )
                ),
                reason="idle_timeout",
            )

    async def _serve_messages(self, deadline: float) -> None:
        # Bounded by the connection's life: each pass consumes one message (or the end of stream).
        while True:
            item: Message | ProtocolError | None = None
            if self.hello_done:
                # Each whole message (a `ping` too) is activity; bytes that make no message are
                # not. A silent client, or one sending a frame a byte at a time, is let go.
                self._waiting = True
                item = await self._receive()
                self._waiting = False
            else:
                # Until `hello`, everything else is refused (the connection goes on), and the
                # whole handshake must finish in time.
                with trio.move_on_at(deadline) as handshake:
                    item = await self._receive()
                if handshake.cancelled_caught:
                    self.connection.finish(
                        to_wire(Error(code=ErrorCode.TIMEOUT.value, message="no hello in time")),
                        reason="handshake_timeout",
                    )
                    return
            if item is None:
                return
            self.last_heard = trio.current_time()
            # Backpressure for the client's own requests: while its outbox is half full, read
            # no more from it (pushes from tables still have the other half).
            await self.connection.wait_for_room()
            if not await self._dispatch(item):
                return

    async def _tls_handshake(self, deadline: float) -> bool:
        """The TLS handshake, within the same deadline as `hello`; False (and the connection
        dropped: nothing can be said to a peer that does not speak TLS) when it fails or stalls."""
        stream = self.connection.stream
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

    async def _dispatch(self, item: Message | ProtocolError) -> bool:
        """Handle one message; False when the connection must close."""
        if isinstance(item, ProtocolError):
            if item.fatal:
                self.deliver(error_message(item))
                self.connection.finish(reason=item.code.value)
                return False
            if not self._requests.take():  # malformed messages count against the rate too
                item = ProtocolError(
                    ErrorCode.RATE_LIMITED, "too many messages", request_id=item.request_id
                )
            self.deliver(error_message(item))
            return True
        if isinstance(item, Bye):
            self.connection.finish(reason="client_bye")
            return False
        rid = getattr(item, "id", None)
        if not self._answers_turn(item) and not self._requests.take():
            self.deliver(
                Error(id=rid, code=ErrorCode.RATE_LIMITED.value, message="too many messages")
            )
            return True
        name = HANDLERS.get(type(item))
        try:
            if name is None:
                raise Refused(ErrorCode.UNEXPECTED_MESSAGE, f"a {item.TYPE} is not accepted here")
            if not isinstance(item, Hello | Ping | Pong) and not self.hello_done:
                raise Refused(ErrorCode.UNEXPECTED_MESSAGE, "send hello first")
            handler: Handler = getattr(self, name)
            await handler(item)
        except Refused as exc:
            self.deliver(Error(id=rid, code=exc.code.value, message=exc.message, detail=exc.detail))
        except (TableError, AccountError) as exc:
            self.deliver(Error(id=rid, code=str(exc.code), message=exc.message))
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
        # A refused hello ends the connection.
        return not (isinstance(item, Hello) and not self.hello_done)

    def let_go_if_idle(self, cutoff: float, idle: float) -> None:
        """End the wait for the next message if nothing whole was heard since `cutoff` (the
        session then answers `timeout` and closes). Only a session past `hello`, waiting to
        read, is let go; one busy with a request is not."""
        if self._waiting and self.last_heard <= cutoff and self._idle_scope is not None:
            self._idle_scope.cancel()

    def _answers_turn(self, item: Message) -> bool:
        """Whether `item` is the first `act` for the version of the last `your_turn` this
        session was sent at that table: such an act is not charged to the rate limit (the server
        set its pace; only one can be applied). Any other act, a stale or repeated one included,
        is charged like every other message."""
        owed = self._turns_owed
        if not owed or not isinstance(item, Act) or owed.get(item.table) != item.version:
            return False
        del owed[item.table]
        return True

    def _detach(self) -> None:
        """The connection is gone: held seats wait for a reconnect, spectating ends."""
        lobby = self.server.lobby
        for table_id in list(self.seats) + list(self.watching):
            table = lobby.tables.get(table_id)
            if table is not None:
                lobby.submit_later(table, LeaveCommand(occupant=self, disconnected=True))
        self.seats.clear()
        self.watching.clear()
        ladder_hooks.on_session_closed(self)

    # ---------------------------------------------------------------- handlers

    def _need_account(self) -> Account:
        if self.account is None:
            raise Refused(ErrorCode.NOT_AUTHENTICATED, "log in, register or play as a guest first")
        return self.account

    async def _on_hello(self, hello: Hello) -> None:
        if self.hello_done:
            raise Refused(ErrorCode.UNEXPECTED_MESSAGE, "hello was already sent")
        refusal = check_version(hello.protocol)
        if refusal is not None:
            self.connection.finish(to_wire(error_message(refusal)), reason="version_mismatch")
            return
        self.kind = hello.kind
        name = None
        refused: AccountError | None = None
        if hello.token is not None:
            try:
                self.account = await accounts.login(self.server.store, hello.token)
                name = self.account.name
            except AccountError as exc:
                refused = exc
        self.hello_done = True
        self.deliver(self._welcome(hello.id, name))
        if refused is not None:
            # Welcomed without a user (docs/protocol.md, Handshake); the client may log in,
            # register or play as a guest next.
            self.deliver(Error(code=refused.code, message=refused.message))
        self.log = self.log.bind(account=name)
        self.log.info("hello", client=hello.client, kind=hello.kind.value)
        if self.account is not None:
            await self._resume_seats()

    def _welcome(self, request_id: int | None, name: str | None) -> Welcome:
        cfg = self.server.config
        limits = cfg.limits
        return Welcome(
            id=request_id,
            server=cfg.server_name,
            server_version=self.server.server_version,
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
                clock=Clock(turn_ms=int(cfg.human_clock * 1000), bank_ms=0),
                chat_max_chars=limits.chat_max_chars,
                chat_burst=limits.chat_burst,
                chat_per_second=limits.chat_per_second,
            ),
        )

    async def _resume_seats(self) -> None:
        """A returning account gets back the seats it holds: `joined`, then a full snapshot."""
        assert self.account is not None
        lobby = self.server.lobby
        for table in lobby.tables_held_by(self.account.id):
            await lobby.submit(
                table,
                JoinCommand(
                    account=self.account,
                    occupant=self,
                    seat=None,
                    reply=self.deliver,
                    reattach=True,
                ),
            )

    def _not_logged_in(self) -> None:
        if self.account is not None:
            raise Refused(ErrorCode.ALREADY_AUTHENTICATED, "this session is already logged in")

    async def _on_register(self, request: Register) -> None:
        self._not_logged_in()
        account, token = await accounts.register(
            self.server.store, request.name, is_bot=self.kind is ClientKind.BOT
        )
        self.account = account
        self.log = self.log.bind(account=account.name)
        self.log.info("registered", bot=account.is_bot)
        self.deliver(Registered(id=request.id, name=account.name, token=token))

    async def _on_login(self, request: Login) -> None:
        self._not_logged_in()
        self.account = await accounts.login(self.server.store, request.token)
        self.log = self.log.bind(account=self.account.name)
        # A guest logs in again with its resume token (a guest session resumed): say so. The
        # token is not repeated: the client already has it.
        self.deliver(LoggedIn(id=request.id, name=self.account.name, guest=self.account.is_guest))
        await self._resume_seats()

    async def _on_guest(self, request: Guest) -> None:
        self._not_logged_in()
        if not self.server.config.allow_guests:
            raise Refused(ErrorCode.GUESTS_DISABLED, "this server does not allow guests")
        wanted = None
        if request.name is not None:
            wanted = accounts.check_name(request.name[:18])
        self.account, token = await accounts.guest(self.server.store, wanted)
        self.log = self.log.bind(account=self.account.name)
        # The resume token: with it (`login` or `hello.token`) the guest gets its seat back after a
        # dropped connection, as an account does with its own.
        self.deliver(LoggedIn(id=request.id, name=self.account.name, guest=True, token=token))

    async def _on_list_tables(self, request: ListTables) -> None:
        self.watching_lobby = True
        game = request.game.value if request.game is not None else None
        infos = self.server.lobby.listing(game, request.status, request.open_seats)
        self.deliver(Tables(id=request.id, tables=infos))

    async def _on_create_table(self, request: CreateTable) -> None:
        account = self._need_account()
        if request.sit is not None and self.seats:
            raise Refused(ErrorCode.ALREADY_SEATED, "you already have a seat at a table")
        lobby = self.server.lobby
        table = await lobby.create(request, account)
        created = TableCreated(id=request.id, table=table.table_id, code=table.config.code)
        if request.sit is None:
            self.deliver(created)
            return
        await lobby.submit(
            table,
            JoinCommand(
                account=account,
                occupant=self,
                seat=request.sit,
                reply=self.deliver,
                request_id=request.id,
                created=created,
            ),
        )

    async def _on_join(self, request: Join) -> None:
        account = self._need_account()
        if request.table not in self.seats and self.seats:
            raise Refused(ErrorCode.ALREADY_SEATED, "you already have a seat at a table")
        lobby = self.server.lobby
        table = lobby.find(request.table, request.code)
        await lobby.submit(
            table,
            JoinCommand(
                account=account,
                occupant=self,
                seat=request.seat,
                reply=self.deliver,
                request_id=request.id,
            ),
        )

    async def _on_spectate(self, request: Spectate) -> None:
        self._need_account()
        if request.table in self.seats:
            raise Refused(ErrorCode.ALREADY_SEATED, "you are seated at this table")
        lobby = self.server.lobby
        table = lobby.find(request.table, request.code)
        await lobby.submit(
            table, SpectateCommand(occupant=self, reply=self.deliver, request_id=request.id)
        )

    async def _on_leave(self, request: Leave) -> None:
        self._need_account()
        if request.table not in self.seats and request.table not in self.watching:
            raise Refused(ErrorCode.NOT_SEATED, "you are not at this table")
        self.seats.pop(request.table, None)
        self.watching.discard(request.table)
        table = self.server.lobby.tables.get(request.table)
        if table is None:
            raise Refused(ErrorCode.NO_SUCH_TABLE, f"no table {request.table!r}")
        await self.server.lobby.submit(
            table, LeaveCommand(occupant=self, reply=self.deliver, request_id=request.id)
        )

    async def _on_chat(self, request: Chat) -> None:
        account = self._need_account()
        limits = self.server.config.limits
        text = request.text.strip()
        if not text or len(text) > limits.chat_max_chars:
            raise Refused(
                ErrorCode.INVALID_FIELD,
                f"a chat line is 1 to {limits.chat_max_chars} characters",
                detail="text",
            )
        lobby = self.server.lobby
        table = None
        if request.scope is ChatScope.TABLE:
            assert request.table is not None
            if request.table not in self.seats and request.table not in self.watching:
                raise Refused(ErrorCode.NOT_SEATED, "you are not at this table")
            table = lobby.tables.get(request.table)
            if table is None:
                raise Refused(ErrorCode.NO_SUCH_TABLE, f"no table {request.table!r}")
        if not self._chat.take():
            raise Refused(ErrorCode.RATE_LIMITED, "you are chatting too fast")
        if table is None:
            lobby.chat(self, text)
        else:
            await lobby.submit(
                table,
                ChatCommand(
                    ChatMessage(
                        scope=ChatScope.TABLE, table=table.table_id, name=account.name, text=text
                    )
                ),
            )
        self.deliver(Ok(id=request.id))

    async def _on_act(self, request: Act) -> None:
        self._need_account()
        seat = self.seats.get(request.table)
        if seat is None:
            raise Refused(ErrorCode.NOT_SEATED, "you hold no seat at this table")
        table = self.server.lobby.tables.get(request.table)
        if table is None:
            raise Refused(ErrorCode.NO_SUCH_TABLE, f"no table {request.table!r}")
        await self.server.lobby.submit(
            table,
            ActCommand(
                seat=seat,
                version=request.version,
                action=to_map(request.action),
                reply=self.deliver,
                request_id=request.id,
            ),
        )

    async def _on_ladder(self, request: LadderEnter | LadderLeave) -> None:
        # The ladder (server/ladder/) judges who may enter, accounts included.
        await ladder_hooks.on_ladder_request(self, request)

    async def _on_standings(self, request: LadderStandings) -> None:
        await ladder_hooks.on_ladder_request(self, request)

    async def _on_ping(self, request: Ping) -> None:
        self.deliver(Pong(id=request.id))

    async def _on_pong(self, request: Pong) -> None:
        return None


# What each client message is handled by: one table for every session, naming the method (looked
# up per message, so a session holds no bound handlers of its own).
HANDLERS: dict[type[Message], str] = {
    Hello: "_on_hello",
    Register: "_on_register",
    Login: "_on_login",
    Guest: "_on_guest",
    ListTables: "_on_list_tables",
    CreateTable: "_on_create_table",
    Join: "_on_join",
    Spectate: "_on_spectate",
    Leave: "_on_leave",
    Chat: "_on_chat",
    Act: "_on_act",
    LadderEnter: "_on_ladder",
    LadderLeave: "_on_ladder",
    LadderStandings: "_on_standings",
    LadderMatches: "_on_standings",
    LadderShow: "_on_standings",
    Ping: "_on_ping",
    Pong: "_on_pong",
}
