"""What each client request does: one handler per message type, in one table (`HANDLERS`).

A handler gets the connection it serves (`Requester`: the session, seen through the few things a
request may use) and the validated request, and answers by delivering a reply or raising `Refused`
(answered with `error`, nothing changed). Anything about a table goes to that table's task as a command
(`server.table_commands`), which answers there: the table alone decides who holds a seat and whether
an `act` is that seat's. The handshake (`hello`) is the session's own (`server.session`).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

import trio

from protocol.errors import ErrorCode
from protocol.messages import (
    Act,
    Announce,
    Ban,
    Chat,
    ChatMessage,
    CloseTable,
    CreateTable,
    Error,
    EventCancel,
    EventCreate,
    EventPlay,
    EventRecords,
    EventRegister,
    Events,
    EventShow,
    EventWithdraw,
    Guest,
    Join,
    Kick,
    LadderEnter,
    LadderLeave,
    LadderMatches,
    LadderRecords,
    LadderShow,
    LadderStandings,
    Leave,
    ListBans,
    ListSessions,
    ListTables,
    LoggedIn,
    Login,
    Message,
    Ok,
    OperatorLogin,
    Ping,
    Pong,
    Register,
    Registered,
    Review,
    Spectate,
    Stats,
    TableCreated,
    Tables,
    Unban,
)
from protocol.types import ChatScope, ClientKind, Clock
from server import accounts
from server.accounts import Account
from server.bans import BanList
from server.config import ServerConfig
from server.hashing import Hashers
from server.listing import LISTING_PAGE
from server.lobby import normal_code
from server.peers import Peer
from server.ports import (
    Client,
    EventDesk,
    EventRequest,
    LadderDesk,
    LadderRequest,
    LobbyDesk,
    OperatorDesk,
)
from server.quotas import AddressQuotas, TokenGuard, network_of
from server.reviews import ReviewRefused, Reviews
from server.stats import player_stats
from server.table_commands import (
    ActCommand,
    ChatCommand,
    JoinCommand,
    LeaveCommand,
    SpectateCommand,
)

if TYPE_CHECKING:
    from server.storage import Store


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
    # Wrong tokens per address and per account, and the threads that check old slow hashes.
    tokens: TokenGuard
    hashers: Hashers
    # Told the code of every `error` a session sends (the server's metrics count refusals).
    refused: Callable[[str], None] = lambda code: None
    # Who is banned (server.bans), and the operator's requests (server.operator), if served.
    bans: BanList = field(default_factory=BanList)
    operator: OperatorDesk | None = None
    # The events (server/events/); None: this server runs none (a cluster's servers, for now).
    events: EventDesk | None = None
    # Hand reviews (server.reviews): their bounds, shared by every connection; None: none served.
    reviews: Reviews | None = None


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


class Requester(Peer, Protocol):
    """The connection a request came from, as its handler may use it."""

    services: SessionServices
    account: Account | None
    kind: ClientKind
    host: str  # the peer's network address: ladder entrants of one address count together
    seats: dict[str, int]  # the routing cache: where the tables said this connection sits
    watching: set[str]
    chat: TokenBucket
    log: Any
    operator: bool  # a good `operator_login` was sent on this connection

    def why_not_seated(self, table_id: str) -> str:
        """The sentence refusing an `act` at a table where this connection holds no seat (the
        reason `seat_lost` gave, if it lost one there)."""
        ...

    async def logged_in(self, account: Account) -> None:
        """The connection is now `account`'s: it hears lobby chat and gets its held seats back."""
        ...

    def start_background(self, work: Callable[[], Awaitable[None]]) -> None:
        """Run `work` beside the connection's reader (cancelled when the connection ends), for a
        request whose answer takes long: the reader goes on reading (pings, acts) meanwhile."""
        ...


def clock_of(config: ServerConfig, account: Account | None) -> Clock:
    """The clock this account's seats play on: a bot account's is the bot clock."""
    seconds = config.bot_clock if account is not None and account.is_bot else config.human_clock
    return Clock(turn_ms=int(seconds * 1000), bank_ms=0)


def need_account(who: Requester) -> Account:
    if who.account is None:
        raise Refused(ErrorCode.NOT_AUTHENTICATED, "log in, register or play as a guest first")
    return who.account


def _not_logged_in(who: Requester) -> None:
    if who.account is not None:
        raise Refused(ErrorCode.ALREADY_AUTHENTICATED, "this session is already logged in")


def not_banned(services: SessionServices, host: str, name: str | None = None) -> None:
    """Refuse (`banned`, which closes the connection) a peer at a banned address, or logging in
    to a banned account."""
    why = services.bans.why(host, name)
    if why is not None:
        raise Refused(ErrorCode.BANNED, why)


def _now_as(who: Requester, account: Account) -> None:
    who.account = account
    who.log = who.log.bind(account=account.name)


# ---------------------------------------------------------------- accounts


async def account_of_token(services: SessionServices, host: str, token: str) -> Account:
    """The account of a `login` or `hello.token` from `host`, behind the server's wrong-token
    limits and its hashing threads (`accounts.login`); raises `AccountError` (`bad_token`, or
    `rate_limited` with `retry_ms`)."""
    return await accounts.login(
        services.store,
        token,
        guard=services.tokens,
        hashers=services.hashers,
        network=network_of(host),
    )


async def register(who: Requester, request: Register) -> None:
    _not_logged_in(who)
    not_banned(who.services, who.host)
    accounts.check_name(request.name)  # a bad name costs nothing from the quota below
    # An account is one request away and stays for good (its name taken, one more id to guess
    # tokens at), so the attempts an address may make are counted, as guests' are.
    made = who.services.quotas.registrations
    network = network_of(who.host)
    now = trio.current_time()
    if not made.take(network, now):
        raise Refused(
            ErrorCode.RATE_LIMITED,
            "this address has registered too many accounts for now; wait",
            retry_ms=made.retry_ms(network, now),
        )
    account, token = await accounts.register(
        who.services.store, request.name, is_bot=who.kind is ClientKind.BOT
    )
    _now_as(who, account)
    who.log.info("registered", bot=account.is_bot)
    clock = clock_of(who.services.config, account)
    who.deliver(
        Registered(id=request.id, name=account.name, token=token, bot=account.is_bot, clock=clock)
    )
    await who.logged_in(account)


async def login(who: Requester, request: Login) -> None:
    _not_logged_in(who)
    not_banned(who.services, who.host)
    account = await account_of_token(who.services, who.host, request.token)
    not_banned(who.services, who.host, account.name)
    _now_as(who, account)
    # A guest logs in again with its resume token (a guest session resumed): say so. The token is
    # not repeated: the client already has it.
    who.deliver(
        LoggedIn(
            id=request.id,
            name=account.name,
            guest=account.is_guest,
            bot=account.is_bot,
            clock=clock_of(who.services.config, account),
        )
    )
    await who.logged_in(account)


async def guest(who: Requester, request: Guest) -> None:
    _not_logged_in(who)
    if not who.services.config.allow_guests:
        raise Refused(ErrorCode.GUESTS_DISABLED, "this server does not allow guests")
    not_banned(who.services, who.host)
    wanted = accounts.check_name(request.name[:18]) if request.name is not None else None
    # A guest account is one request away, so the accounts an address may make are counted
    # (before any is made: nothing is stored for a refused one).
    made = who.services.quotas.guests
    network = network_of(who.host)
    now = trio.current_time()
    if not made.take(network, now):
        raise Refused(
            ErrorCode.RATE_LIMITED,
            "this address has made too many guest accounts for now; register an account, or wait",
            retry_ms=made.retry_ms(network, now),
        )
    account, token = await accounts.guest(who.services.store, wanted)
    _now_as(who, account)
    # The resume token: with it (`login` or `hello.token`) the guest gets its seat back after a
    # dropped connection, as an account does with its own.
    who.deliver(
        LoggedIn(
            id=request.id,
            name=account.name,
            guest=True,
            token=token,
            clock=clock_of(who.services.config, account),
        )
    )
    await who.logged_in(account)


# ---------------------------------------------------------------- the lobby and its tables


async def list_tables(who: Requester, request: ListTables) -> None:
    lobby = who.services.lobby
    game = request.game.value if request.game is not None else None
    lobby.listen(who, game)
    infos, after = lobby.listing(
        game,
        request.status,
        request.open_seats,
        cursor=request.cursor,
        limit=request.limit if request.limit is not None else LISTING_PAGE,
    )
    who.deliver(Tables(id=request.id, tables=infos, next=after))


def _seated_elsewhere(who: Requester, table_id: str | None) -> None:
    if any(t != table_id for t in who.seats):
        raise Refused(ErrorCode.ALREADY_SEATED, "you already have a seat at a table")


async def create_table(who: Requester, request: CreateTable) -> None:
    account = need_account(who)
    if request.sit is not None:
        _seated_elsewhere(who, None)
    lobby = who.services.lobby
    table = await lobby.create(request, account, network_of(who.host))
    created = TableCreated(id=request.id, table=table.table_id, code=table.config.code)
    if request.sit is None:
        who.deliver(created)
        return
    command = JoinCommand(
        peer=who, account=account, seat=request.sit, request_id=request.id, created=created
    )
    await lobby.submit(table, command)


async def join(who: Requester, request: Join) -> None:
    account = need_account(who)
    lobby = who.services.lobby
    # docs/protocol.md `join`: no_such_table and private_table come before already_seated.
    # The holder of a seat there comes back without the code (docs/protocol.md `join`).
    code = normal_code(request.code)
    table = lobby.find(request.table, code, network_of(who.host), account_id=account.id)
    _seated_elsewhere(who, request.table)
    command = JoinCommand(
        peer=who,
        account=account,
        seat=request.seat,
        request_id=request.id,
        takeover=request.takeover,
    )
    await lobby.submit(table, command)


async def spectate(who: Requester, request: Spectate) -> None:
    need_account(who)
    lobby = who.services.lobby
    table = lobby.find(request.table, normal_code(request.code), network_of(who.host))
    await lobby.submit(table, SpectateCommand(peer=who, request_id=request.id))


async def leave(who: Requester, request: Leave) -> None:
    need_account(who)
    lobby = who.services.lobby
    table = lobby.get(request.table)
    who.seats.pop(request.table, None)
    who.watching.discard(request.table)
    await lobby.submit(table, LeaveCommand(peer=who, request_id=request.id))


async def chat(who: Requester, request: Chat) -> None:
    account = need_account(who)
    limits = who.services.config.limits
    text = request.text.strip()
    if not text or len(text) > limits.chat_max_chars:
        raise Refused(
            ErrorCode.INVALID_FIELD,
            f"a chat line is 1 to {limits.chat_max_chars} characters",
            detail="text",
        )
    lobby = who.services.lobby
    table = None
    if request.scope is ChatScope.TABLE:
        assert request.table is not None
        table = lobby.get(request.table)
    if not who.chat.take():
        raise Refused(
            ErrorCode.RATE_LIMITED, "you are chatting too fast", retry_ms=who.chat.retry_ms()
        )
    if table is None:
        # Everyone logged in hears the lobby: one address's connections share one limit, so many
        # of them cannot drown it out.
        shared = who.services.quotas.lobby_chat
        network = network_of(who.host)
        now = trio.current_time()
        if not shared.take(network, now):
            raise Refused(
                ErrorCode.RATE_LIMITED,
                "your address is chatting too fast in the lobby",
                retry_ms=shared.retry_ms(network, now),
            )
        # Answered `ok`, then everyone hears it (this connection too), as at a table.
        who.deliver(Ok(id=request.id))
        lobby.chat(account.name, text)
        return
    line = ChatMessage(scope=ChatScope.TABLE, table=table.table_id, name=account.name, text=text)
    # The table answers `ok`, then tells everyone at it (this connection too).
    await lobby.submit(table, ChatCommand(peer=who, message=line, request_id=request.id))


async def act(who: Requester, request: Act) -> None:
    need_account(who)
    lobby = who.services.lobby
    table = lobby.get(request.table)
    if request.table not in who.seats:
        # No seat here, by what the tables told this connection (`joined`, `table_created`,
        # `seat_lost`, its own `leave`): refused here, so a spectator's (or a stranger's) acts
        # never cost the table a place in its inbox (docs/protocol.md, Which refusal wins).
        raise Refused(ErrorCode.NOT_SEATED, who.why_not_seated(request.table))
    # The table checks that this connection still holds the seat and that it is its turn: the
    # map above is a cache, the table decides. The action was checked once, as it was decoded; it
    # becomes the engine's here and is not checked again before the rules judge it.
    action = request.action.engine_action(who.seats[request.table])
    command = ActCommand(peer=who, version=request.version, action=action, request_id=request.id)
    await lobby.submit(table, command)


# ---------------------------------------------------------------- the ladder, and the line itself


async def ladder(who: Requester, request: LadderRequest) -> None:
    # The ladder (server/ladder/) judges who may enter, accounts included.
    client = Client(peer=who, account=who.account, owner=who.host)
    who.deliver(await who.services.ladder.handle(client, request))


async def events(who: Requester, request: EventRequest) -> None:
    # The events service (server/events/) judges who may announce, register and play.
    desk = who.services.events
    if desk is None:
        raise Refused(ErrorCode.NO_SUCH_EVENT, "this server runs no events")
    client = Client(peer=who, account=who.account, owner=who.host)
    who.deliver(await desk.handle(client, request, operator=who.operator))


async def stats(who: Requester, request: Stats) -> None:
    """An account's statistics (server.stats): read in one store call, from the counters the
    statistics' job keeps and the games' results."""
    name = need_account(who).name if request.name is None else request.name
    found = await who.services.store.call(lambda tx: player_stats(tx, name))
    if found is None:
        raise Refused(ErrorCode.NO_SUCH_ACCOUNT, f"no account is named {name!r}")
    who.deliver(replace(found, id=request.id))


async def review(who: Requester, request: Review) -> None:
    """A finished hand's double-dummy review (server.reviews): admitted or refused at once, then
    answered from the background when the solver's process has done, the reader going on."""
    reviews = who.services.reviews
    if reviews is None:
        raise Refused(ErrorCode.NOT_REVIEWABLE, "this server reviews no hands")
    try:
        slot = reviews.admit(who, network_of(who.host), request.hand)
    except ReviewRefused as exc:
        raise Refused(exc.code, exc.message, retry_ms=exc.retry_ms) from None

    async def answer() -> None:
        try:
            who.deliver(await reviews.review(slot, request.id, request.hand))
        except ReviewRefused as exc:
            who.deliver(
                Error(
                    id=request.id, code=exc.code.value, message=exc.message, retry_ms=exc.retry_ms
                )
            )
        except Exception:
            # A bug in one review must not take the connection down: that request is answered.
            who.log.exception("review_failed")
            message = "a server bug; not carried out"
            who.deliver(Error(id=request.id, code=ErrorCode.INTERNAL.value, message=message))

    who.start_background(answer)


async def operator(who: Requester, request: Message) -> None:
    # The operator's requests (server.operator) judge whether this connection is the operator's.
    desk = who.services.operator
    if desk is None:
        raise Refused(ErrorCode.NOT_OPERATOR, "this server takes no operator requests")
    await desk.handle(who, request)


async def ping(who: Requester, request: Ping) -> None:
    who.deliver(Pong(id=request.id))


async def pong(who: Requester, request: Pong) -> None:
    return None


Handler = Callable[[Requester, Any], Awaitable[None]]

# What each client message after `hello` is handled by: one table, covering every request.
HANDLERS: dict[type[Message], Handler] = {
    Register: register,
    Login: login,
    Guest: guest,
    ListTables: list_tables,
    CreateTable: create_table,
    Join: join,
    Spectate: spectate,
    Leave: leave,
    Chat: chat,
    Act: act,
    LadderEnter: ladder,
    LadderLeave: ladder,
    LadderStandings: ladder,
    LadderMatches: ladder,
    LadderShow: ladder,
    LadderRecords: ladder,
    EventCreate: events,
    Events: events,
    EventShow: events,
    EventRegister: events,
    EventWithdraw: events,
    EventPlay: events,
    EventCancel: events,
    EventRecords: events,
    Stats: stats,
    Review: review,
    OperatorLogin: operator,
    Announce: operator,
    ListSessions: operator,
    Kick: operator,
    Ban: operator,
    Unban: operator,
    ListBans: operator,
    CloseTable: operator,
    Ping: ping,
    Pong: pong,
}
