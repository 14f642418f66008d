"""One client's session: handshake, authentication, and a handler for every client message.

The session's task group holds the connection's reader (this task: decode, check, dispatch) and its
writer (`Connection.run_writer`). Nothing a client sends is trusted: every message is validated by
the protocol decoder, rate-limited, and checked against what this session holds (an `act` can only
be for the seat this session sits in). Errors are answered with `error` (a code and a sentence);
a fatal protocol error closes the connection after its `error`.
"""

from __future__ import annotations

import contextlib
import math
import secrets
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
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
    SeatLost,
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
from server.config import ServerConfig
from server.connection import FLUSH_TIMEOUT, Connection
from server.listing import LISTING_PAGE
from server.peers import SharedEvent
from server.ports import Client, LadderDesk, LobbyDesk
from server.quotas import AddressQuotas, network_of
from server.storage import StorageError
from server.table_commands import (
    ActCommand,
    ChatCommand,
    JoinCommand,
    LeaveCommand,
    LeaveReason,
    SpectateCommand,
    TableError,
)

if TYPE_CHECKING:
    from server.storage import Store

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

    def retry_ms(self) -> int:
        """How long until `take` would succeed (0 if it would now), in ms, rounded up."""
        missing = 1.0 - self.tokens
        if missing <= 0 or self.rate <= 0:
            return 0
        return max(1, math.ceil(missing / self.rate * 1000))


class Refused(Exception):
    """A request this session will not carry out; answered with `error`, nothing changed."""

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        detail: str | None = None,
        retry_ms: int | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.detail = detail
        self.retry_ms = retry_ms


Handler = Callable[[Any], Awaitable[None]]


@dataclass(frozen=True)
class SessionServices:
    """What a session is given by the composition root (`server.app`), and nothing more."""

    config: ServerConfig
    server_version: str
    store: Store
    lobby: LobbyDesk
    ladder: LadderDesk
    is_stopping: Callable[[], bool]
    # What one network address may do, all its connections together (guests, lobby chat).
    quotas: AddressQuotas


class Session:
    """The server side of one connection: a `Peer` of the tables it sits or watches at."""

    def __init__(self, services: SessionServices, stream: trio.abc.Stream, peer: str) -> None:
        limits = services.config.limits
        self.services = services
        self.id = secrets.token_hex(4)
        self.peer = peer
        self.host = peer.rsplit(":", 1)[0]
        self.connection = Connection(
            stream, outbox_size=limits.outbox_size, peer=peer, write_timeout=limits.write_timeout
        )
        self.decoder = MessageDecoder(Sender.CLIENT, max_frame_size=limits.max_frame_bytes)
        self._pending: deque[Message | ProtocolError] = deque()
        self.account: Account | None = None
        self.kind = ClientKind.HUMAN
        self.hello_done = False
        # Where this connection sits and watches, as its tables told it: a routing cache (for
        # `already_seated` and for telling the tables when the connection drops). The tables alone
        # decide who holds a seat.
        self.seats: dict[str, int] = {}
        self.watching: set[str] = set()
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

    # ---------------------------------------------------------------- the peer

    @property
    def peer_id(self) -> str:
        return self.id

    @property
    def connected(self) -> bool:
        return self.connection.close_reason is None

    def deliver(self, message: Message) -> None:
        """Queue a message for the client, stamping an event's per-connection `seq`."""
        if isinstance(message, Event):
            self._note_event(message)
            self._seq += 1
            self.connection.send_frame(EventFrames(message).frame(self._seq))
            return
        if isinstance(message, Joined | TableCreated) and message.table:
            if message.seat is not None:
                self.seats[message.table] = message.seat
                self.watching.discard(message.table)
            elif isinstance(message, Joined):
                self.watching.add(message.table)
        self.connection.send(to_wire(message))

    def deliver_shared(self, shared: SharedEvent) -> None:
        """Queue an event other connections get too: its one encoding, with this `seq`."""
        message = shared.message
        assert isinstance(message, Event)
        self._note_event(message)
        self._seq += 1
        self.connection.send_frame(shared.frames().frame(self._seq))

    def _note_event(self, message: Event) -> None:
        if isinstance(message, YourTurn):
            if self._turns_owed is None:
                self._turns_owed = {}
            self._turns_owed[message.table] = message.version
        elif isinstance(message, SeatLost):
            self.seats.pop(message.table, None)

    def say_bye(self, reason: str) -> None:
        """Tell the client we are closing, flush, hang up."""
        self.connection.finish(to_wire(Bye(reason=reason)), reason="bye")

    async def refuse_and_close(self) -> None:
        """Answer a connection we cannot take (server full or stopping) and close it."""
        stopping = self.services.is_stopping()
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
        deadline = trio.current_time() + self.services.config.limits.handshake_timeout
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
            idle = self.services.config.limits.idle_timeout
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
            # no more from it (pushes from tables still have the other half). Bounded: by the
            # handshake's deadline before `hello`, by the write timeout after.
            if self.hello_done:
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
                self.deliver(self._rate_limited(item.request_id))
                return True
            self.deliver(error_message(item))
            return True
        if isinstance(item, Bye):
            self.connection.finish(reason="client_bye")
            return False
        rid = getattr(item, "id", None)
        if not self._answers_turn(item) and not self._requests.take():
            self.deliver(self._rate_limited(rid))
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
            self.deliver(
                Error(
                    id=rid,
                    code=exc.code.value,
                    message=exc.message,
                    detail=exc.detail,
                    retry_ms=exc.retry_ms,
                )
            )
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
            self.deliver(Error(id=rid, code=exc.code, message=exc.message))
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

    def _rate_limited(self, request_id: int | None) -> Error:
        return Error(
            id=request_id,
            code=ErrorCode.RATE_LIMITED.value,
            message="too many messages",
            retry_ms=self._requests.retry_ms(),
        )

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
        lobby = self.services.lobby
        for table_id in {*self.seats, *self.watching}:
            with contextlib.suppress(TableError):
                table = lobby.get(table_id)
                lobby.submit_later(table, LeaveCommand(peer=self, reason=LeaveReason.DISCONNECTED))
        self.seats.clear()
        self.watching.clear()
        lobby.forget(self)
        self.services.ladder.connection_closed(self)

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
                self.account = await accounts.login(self.services.store, hello.token)
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
            await self._logged_in(self.account)

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
                clock=self._clock(self.account),
                chat_max_chars=limits.chat_max_chars,
                chat_burst=limits.chat_burst,
                chat_per_second=limits.chat_per_second,
            ),
        )

    def _clock(self, account: Account | None) -> Clock:
        cfg = self.services.config
        seconds = cfg.bot_clock if account is not None and account.is_bot else cfg.human_clock
        return Clock(turn_ms=int(seconds * 1000), bank_ms=0)

    async def _logged_in(self, account: Account) -> None:
        """Now logged in: hear lobby chat, and get back the account's seats that no live
        connection holds (`joined`, a snapshot and `turn` for each; docs/protocol.md,
        "Accounts, connections and seats")."""
        self.services.lobby.enter(self)
        await self.services.lobby.resume(self, account)

    def _not_logged_in(self) -> None:
        if self.account is not None:
            raise Refused(ErrorCode.ALREADY_AUTHENTICATED, "this session is already logged in")

    async def _on_register(self, request: Register) -> None:
        self._not_logged_in()
        account, token = await accounts.register(
            self.services.store, request.name, is_bot=self.kind is ClientKind.BOT
        )
        self.account = account
        self.log = self.log.bind(account=account.name)
        self.log.info("registered", bot=account.is_bot)
        self.deliver(
            Registered(
                id=request.id,
                name=account.name,
                token=token,
                bot=account.is_bot,
                clock=self._clock(account),
            )
        )
        self.services.lobby.enter(self)

    async def _on_login(self, request: Login) -> None:
        self._not_logged_in()
        account = await accounts.login(self.services.store, request.token)
        self.account = account
        self.log = self.log.bind(account=account.name)
        # A guest logs in again with its resume token (a guest session resumed): say so. The
        # token is not repeated: the client already has it.
        self.deliver(
            LoggedIn(
                id=request.id,
                name=account.name,
                guest=account.is_guest,
                bot=account.is_bot,
                clock=self._clock(account),
            )
        )
        await self._logged_in(account)

    async def _on_guest(self, request: Guest) -> None:
        self._not_logged_in()
        if not self.services.config.allow_guests:
            raise Refused(ErrorCode.GUESTS_DISABLED, "this server does not allow guests")
        wanted = None
        if request.name is not None:
            wanted = accounts.check_name(request.name[:18])
        # A guest account is one request away, so the accounts an address may make are counted
        # (before any is made: nothing is stored for a refused one).
        made = self.services.quotas.guests
        network = network_of(self.host)
        now = trio.current_time()
        if not made.take(network, now):
            raise Refused(
                ErrorCode.RATE_LIMITED,
                "this address has made too many guest accounts for now; register an account, "
                "or wait",
                retry_ms=made.retry_ms(network, now),
            )
        self.account, token = await accounts.guest(self.services.store, wanted)
        self.log = self.log.bind(account=self.account.name)
        # The resume token: with it (`login` or `hello.token`) the guest gets its seat back after a
        # dropped connection, as an account does with its own.
        self.deliver(
            LoggedIn(
                id=request.id,
                name=self.account.name,
                guest=True,
                token=token,
                clock=self._clock(self.account),
            )
        )
        self.services.lobby.enter(self)

    async def _on_list_tables(self, request: ListTables) -> None:
        lobby = self.services.lobby
        game = request.game.value if request.game is not None else None
        lobby.listen(self, game)
        infos, after = lobby.listing(
            game,
            request.status,
            request.open_seats,
            cursor=request.cursor,
            limit=request.limit if request.limit is not None else LISTING_PAGE,
        )
        self.deliver(Tables(id=request.id, tables=infos, next=after))

    def _seated_elsewhere(self, table_id: str | None) -> None:
        if any(t != table_id for t in self.seats):
            raise Refused(ErrorCode.ALREADY_SEATED, "you already have a seat at a table")

    async def _on_create_table(self, request: CreateTable) -> None:
        account = self._need_account()
        if request.sit is not None:
            self._seated_elsewhere(None)
        lobby = self.services.lobby
        table = await lobby.create(request, account, network_of(self.host))
        created = TableCreated(id=request.id, table=table.table_id, code=table.config.code)
        if request.sit is None:
            self.deliver(created)
            return
        await lobby.submit(
            table,
            JoinCommand(
                peer=self, account=account, seat=request.sit, request_id=request.id, created=created
            ),
        )

    async def _on_join(self, request: Join) -> None:
        account = self._need_account()
        self._seated_elsewhere(request.table)
        lobby = self.services.lobby
        table = lobby.find(request.table, request.code, network_of(self.host))
        await lobby.submit(
            table,
            JoinCommand(
                peer=self,
                account=account,
                seat=request.seat,
                request_id=request.id,
                takeover=request.takeover,
            ),
        )

    async def _on_spectate(self, request: Spectate) -> None:
        self._need_account()
        lobby = self.services.lobby
        table = lobby.find(request.table, request.code, network_of(self.host))
        await lobby.submit(table, SpectateCommand(peer=self, request_id=request.id))

    async def _on_leave(self, request: Leave) -> None:
        self._need_account()
        lobby = self.services.lobby
        table = lobby.get(request.table)
        self.seats.pop(request.table, None)
        self.watching.discard(request.table)
        await lobby.submit(table, LeaveCommand(peer=self, request_id=request.id))

    async def _on_chat(self, request: Chat) -> None:
        account = self._need_account()
        limits = self.services.config.limits
        text = request.text.strip()
        if not text or len(text) > limits.chat_max_chars:
            raise Refused(
                ErrorCode.INVALID_FIELD,
                f"a chat line is 1 to {limits.chat_max_chars} characters",
                detail="text",
            )
        lobby = self.services.lobby
        table = None
        if request.scope is ChatScope.TABLE:
            assert request.table is not None
            table = lobby.get(request.table)
        if not self._chat.take():
            raise Refused(
                ErrorCode.RATE_LIMITED, "you are chatting too fast", retry_ms=self._chat.retry_ms()
            )
        if table is None:
            # Everyone logged in hears the lobby: one address's connections share one limit, so
            # many of them cannot drown it out.
            shared = self.services.quotas.lobby_chat
            network = network_of(self.host)
            now = trio.current_time()
            if not shared.take(network, now):
                raise Refused(
                    ErrorCode.RATE_LIMITED,
                    "your address is chatting too fast in the lobby",
                    retry_ms=shared.retry_ms(network, now),
                )
            lobby.chat(account.name, text)
            self.deliver(Ok(id=request.id))
            return
        line = ChatMessage(
            scope=ChatScope.TABLE, table=table.table_id, name=account.name, text=text
        )
        # The table answers `ok`, then tells everyone at it (this connection too).
        await lobby.submit(table, ChatCommand(peer=self, message=line, request_id=request.id))

    async def _on_act(self, request: Act) -> None:
        self._need_account()
        lobby = self.services.lobby
        table = lobby.get(request.table)
        # The table checks that this connection holds a seat there and that it is its turn.
        await lobby.submit(
            table,
            ActCommand(
                peer=self,
                version=request.version,
                action=to_map(request.action),
                request_id=request.id,
            ),
        )

    async def _on_ladder(
        self, request: LadderEnter | LadderLeave | LadderStandings | LadderMatches | LadderShow
    ) -> None:
        # The ladder (server/ladder/) judges who may enter, accounts included.
        client = Client(peer=self, account=self.account, owner=self.host)
        self.deliver(await self.services.ladder.handle(client, request))

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
    LadderStandings: "_on_ladder",
    LadderMatches: "_on_ladder",
    LadderShow: "_on_ladder",
    Ping: "_on_ping",
    Pong: "_on_pong",
}
