"""Server scenarios about the connection itself: the handshake, accounts, guests, limits, clocks,
`bye`. Each is `async def name(target, notes)` and raises `Failed` at the first broken promise."""

from __future__ import annotations

import re

import trio

from bots.conformance import claims
from bots.conformance.report import Failed, Findings, check
from bots.conformance.target import Target, Visit, fresh_name, shown
from bots.conformance.wire import KitClient, ServerSilent
from protocol.codec import pack_body
from protocol.errors import ErrorCode
from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Bye,
    Chat,
    CreateTable,
    Error,
    Guest,
    Hello,
    ListTables,
    LoggedIn,
    Login,
    Message,
    Ping,
    Pong,
    Register,
    Registered,
    Reply,
    Welcome,
)
from protocol.types import ChatScope, ClientKind, Game

VERSION = re.compile(r"\d+\.\d+")


async def _reply(client: KitClient, rid: int | None, what: str, section: claims.Section) -> Reply:
    try:
        return await client.reply_to(rid)
    except ServerSilent as exc:
        raise Failed(f"{what}: {exc}", section) from None


async def _closes(client: KitClient, what: str, section: claims.Section) -> list[Message]:
    """Read to the end of the stream: the server must close after a closing error."""
    seen: list[Message] = []
    with trio.move_on_after(10):
        while (message := await client.receive()) is not None:
            seen.append(message)
        return seen
    raise Failed(f"{what}: the server did not close the connection within 10 s", section)


async def handshake(target: Target, notes: Findings) -> None:
    """A ping before hello is answered; anything else is refused and the connection goes on; hello
    is answered welcome with its id; a second hello is refused; pings after it are answered."""
    async with target.session() as visit:
        client = await visit.connect()
        rid = await client.send(Ping(id=41))
        reply = await _reply(client, rid, "ping before hello", claims.HANDSHAKE)
        check(
            isinstance(reply, Pong) and reply.id == 41,
            f"a ping before hello was answered {shown(reply)}, not pong with its id",
            claims.HANDSHAKE,
        )
        rid = await client.send(ListTables(id=42))
        reply = await _reply(client, rid, "list_tables before hello", claims.HANDSHAKE)
        check(
            isinstance(reply, Error) and reply.code == ErrorCode.UNEXPECTED_MESSAGE,
            f"list_tables before hello was answered {shown(reply)}, not unexpected_message",
            claims.HANDSHAKE,
        )
        assert isinstance(reply, Error)
        notes.expect(
            reply.detail == "list_tables",
            f"unexpected_message before hello has detail {reply.detail!r}, not the refused type",
            claims.HANDSHAKE,
        )
        hello = Hello(
            protocol=PROTOCOL_VERSION_TEXT, client="spades-conformance", kind=ClientKind.HUMAN
        )
        rid = await client.send(hello)
        reply = await _reply(client, rid, "hello after a refusal", claims.HANDSHAKE)
        check(
            isinstance(reply, Welcome),
            f"hello (after a refused request) was answered {shown(reply)}, not welcome: "
            "the connection should go on",
            claims.HANDSHAKE,
        )
        assert isinstance(reply, Welcome)
        check(
            reply.user is None, "a hello without a token was welcomed as a user", claims.HANDSHAKE
        )
        check(
            VERSION.fullmatch(reply.protocol) is not None
            and reply.protocol.split(".")[0] == PROTOCOL_VERSION_TEXT.split(".")[0],
            f"welcome.protocol is {reply.protocol!r}",
            claims.VERSIONING,
        )
        limits = reply.limits
        check(
            limits.max_frame_size >= 16 and limits.clock.turn_ms > 0,
            f"welcome.limits look wrong: {limits}",
            claims.LIMITS,
        )
        rid = await client.send(
            Hello(
                protocol=PROTOCOL_VERSION_TEXT, client="spades-conformance", kind=ClientKind.HUMAN
            )
        )
        reply = await _reply(client, rid, "a second hello", claims.HANDSHAKE)
        check(
            isinstance(reply, Error) and reply.code == ErrorCode.UNEXPECTED_MESSAGE,
            f"a second hello was answered {shown(reply)}, not unexpected_message",
            claims.HANDSHAKE,
        )
        reply = await _reply(client, await client.send(Ping()), "ping", claims.PING)
        check(isinstance(reply, Pong), f"ping was answered {shown(reply)}", claims.PING)
        check(not client.problems, "; ".join(client.problems), claims.REQUESTS)


async def version_mismatch(target: Target, notes: Findings) -> None:
    """A hello of another major version: `version_mismatch` with the hello's id and the server's
    version in `detail`, then the connection closes."""
    async with target.session() as visit:
        client = await visit.connect()
        rid = await client.send(
            Hello(protocol="99.0", client="spades-conformance", kind=ClientKind.HUMAN)
        )
        reply: Message
        try:
            reply = await client.reply_to(rid)
        except ServerSilent as exc:
            without = [m for m in client.before if isinstance(m, Error) and m.id is None]
            if not without:
                raise Failed(f"hello 99.0: {exc}", claims.HANDSHAKE) from None
            reply = without[0]
            client.pending.remove(reply)
            notes.expect(
                False,
                f"hello with protocol 99.0 was answered {shown(reply)} without the hello's id",
                claims.HANDSHAKE,
            )
        check(
            isinstance(reply, Error) and reply.code == ErrorCode.VERSION_MISMATCH,
            f"hello with protocol 99.0 was answered {shown(reply)}, not version_mismatch",
            claims.HANDSHAKE,
        )
        assert isinstance(reply, Error)
        check(
            reply.detail is not None and VERSION.fullmatch(reply.detail) is not None,
            f"version_mismatch's detail is {reply.detail!r}, not the server's version",
            claims.ERRORS,
        )
        after = await _closes(client, "after version_mismatch", claims.ERRORS)
        check(
            not after,
            f"the server sent {[m.TYPE for m in after]} after version_mismatch: nothing follows it",
            claims.CONNECTION,
        )


async def bad_token(target: Target, notes: Findings) -> None:
    """A token matching no account: welcome without a user, then `bad_token` without an id; the
    session goes on and may register."""
    async with target.session() as visit:
        owner = await visit.player()
        head, _, secret = owner.token.rpartition(".")
        forged = (
            f"{head}.{secret[:-1]}{'A' if secret[-1:] != 'A' else 'B'}"
            if head
            else owner.token[:-1] + ("A" if owner.token[-1:] != "A" else "B")
        )
        client, welcome = await visit.welcomed(forged)
        check(
            welcome.user is None,
            f"a wrong token was welcomed as {welcome.user!r}",
            claims.HANDSHAKE,
        )
        try:
            error = await client.expect(Error)
        except ServerSilent as exc:
            raise Failed(f"no bad_token after the welcome: {exc}", claims.HANDSHAKE) from None
        check(
            error.code == ErrorCode.BAD_TOKEN and error.id is None,
            f"after welcome came {shown(error)} with id {error.id}, not bad_token without an id",
            claims.HANDSHAKE,
        )
        reply = await _reply(
            client, await client.send(Register(name=fresh_name())), "register", claims.HANDSHAKE
        )
        check(
            isinstance(reply, Registered),
            f"register after bad_token was answered {shown(reply)}: the session should go on",
            claims.HANDSHAKE,
        )


async def accounts(target: Target, notes: Findings) -> None:
    """register, login by token on another connection, already_authenticated, name_taken, and
    not_authenticated before logging in."""
    async with target.session() as visit:
        anon, _ = await visit.welcomed()
        reply = await _reply(
            anon,
            await anon.send(CreateTable(game=Game.SPADES, preset="standard")),
            "create_table before logging in",
            claims.ACCOUNTS,
        )
        check(
            isinstance(reply, Error) and reply.code == ErrorCode.NOT_AUTHENTICATED,
            f"create_table before logging in was answered {shown(reply)}, not not_authenticated",
            claims.ACCOUNTS,
        )
        player = await visit.player()
        assert player.registered is not None
        check(
            player.registered.bot is False,
            "an account registered after hello.kind human says bot",
            claims.WHOSE_CLOCK,
        )
        reply = await player.request(Register(name=fresh_name()))
        check(
            isinstance(reply, Error) and reply.code == ErrorCode.ALREADY_AUTHENTICATED,
            f"a second register was answered {shown(reply)}, not already_authenticated",
            claims.ACCOUNTS,
        )
        other, _ = await visit.welcomed()
        reply = await _reply(
            other, await other.send(Login(token=player.token)), "login", claims.ACCOUNTS
        )
        check(
            isinstance(reply, LoggedIn) and reply.name == player.name and not reply.guest,
            f"login with {player.name}'s token was answered {shown(reply)}",
            claims.ACCOUNTS,
        )
        third, _ = await visit.welcomed()
        reply = await _reply(
            third, await third.send(Register(name=player.name)), "register", claims.ACCOUNTS
        )
        check(
            isinstance(reply, Error) and reply.code == ErrorCode.NAME_TAKEN,
            f"registering a taken name was answered {shown(reply)}, not name_taken",
            claims.ACCOUNTS,
        )


async def guests(target: Target, notes: Findings) -> None:
    """A guest's name is the asked one with `~` and four hex digits (`guest-` and ten without one);
    its resume token logs it in again, by `hello.token` and by `login`."""
    async with target.session() as visit:
        client, welcome = await visit.welcomed()
        reply = await _reply(
            client, await client.send(Guest(name="kitguest")), "guest", claims.GUEST
        )
        if not welcome.guests:
            check(
                isinstance(reply, Error) and reply.code == ErrorCode.GUESTS_DISABLED,
                f"guest on a server without guests was answered {shown(reply)}",
                claims.ACCOUNTS,
            )
            notes("the server allows no guests (welcome.guests false): only the refusal checked")
            return
        check(isinstance(reply, LoggedIn), f"guest was answered {shown(reply)}", claims.GUEST)
        assert isinstance(reply, LoggedIn)
        check(
            re.fullmatch(r"kitguest~[0-9a-f]{4}", reply.name) is not None,
            f"a guest asking for 'kitguest' was named {reply.name!r}, not kitguest~ and 4 hex "
            "digits",
            claims.GUEST,
        )
        check(
            reply.guest and reply.token is not None,
            "the guest's logged_in carries no resume token",
            claims.ACCOUNTS,
        )
        assert reply.token is not None
        anonymous, _ = await visit.welcomed()
        named = await _reply(anonymous, await anonymous.send(Guest()), "guest", claims.GUEST)
        check(
            isinstance(named, LoggedIn) and re.fullmatch(r"guest-[0-9a-f]{10}", named.name),
            f"a guest without a name was answered {shown(named)} "
            f"({getattr(named, 'name', '')!r}), not guest- and 10 hex digits",
            claims.GUEST,
        )
        _, again = await visit.welcomed(reply.token)
        check(
            again.user == reply.name,
            f"hello with the guest's resume token was welcomed as {again.user!r}",
            claims.ACCOUNTS,
        )
        third, _ = await visit.welcomed()
        back = await _reply(
            third, await third.send(Login(token=reply.token)), "login", claims.GUEST
        )
        check(
            isinstance(back, LoggedIn) and back.guest and back.token is None,
            f"login with a guest's token was answered {shown(back)}: guest true, no token",
            claims.ACCOUNTS,
        )


async def clocks(target: Target, notes: Findings) -> None:
    """The clock a rule gives an account is announced: `registered.clock`, `logged_in.clock`, and
    `welcome.limits.clock` for the account a `hello.token` logged in; a later connection's
    `hello.kind` does not change the account's kind."""
    async with target.session() as visit:
        bot = await visit.player(ClientKind.BOT, prefix="ckb")
        person = await visit.player(ClientKind.HUMAN)
        assert bot.registered is not None and person.registered is not None
        check(
            bot.registered.bot,
            "an account registered after hello.kind bot says bot false",
            claims.WHOSE_CLOCK,
        )
        if bot.registered.clock is None or person.registered.clock is None:
            raise Failed("registered carries no clock", claims.WHOSE_CLOCK)
        check(
            person.registered.clock == person.welcome.limits.clock,
            f"a person's registered.clock {person.registered.clock} is not welcome.limits.clock "
            f"{person.welcome.limits.clock} (a person's when no token logged in)",
            claims.WHOSE_CLOCK,
        )
        as_person = await visit.again(bot, ClientKind.HUMAN)
        check(
            as_person.welcome.limits.clock == bot.registered.clock,
            f"welcome.limits.clock for a bot account's token is {as_person.welcome.limits.clock}, "
            f"not its registered.clock {bot.registered.clock}",
            claims.WHOSE_CLOCK,
        )
        client, _ = await visit.welcomed()
        reply = await _reply(
            client, await client.send(Login(token=bot.token)), "login", claims.ACCOUNTS
        )
        check(
            isinstance(reply, LoggedIn) and reply.bot and reply.clock == bot.registered.clock,
            f"login (hello.kind human) with a bot account's token was answered {shown(reply)}: "
            "the account's kind and clock should not change",
            claims.WHOSE_CLOCK,
        )
        if bot.registered.clock == person.registered.clock:
            notes("this server gives bot accounts the same clock as people")


async def limits(target: Target, notes: Findings) -> None:
    """Bad frames close with their code; a bad message is refused and the connection goes on (with
    `detail` where the table says); messages above the rate are answered `rate_limited` with
    `retry_ms`; a chat line above `chat_max_chars` is invalid_field."""
    async with target.session() as visit:
        client, welcome = await visit.welcomed()
        limit = welcome.limits.max_frame_size
        await client.send_raw((limit + 1).to_bytes(4, "big"))  # the length alone: no body follows
        await _expect_closing(client, ErrorCode.FRAME_TOO_LARGE, "a frame above max_frame_size")

        client, _ = await visit.welcomed()
        await client.send_raw(b"\x00\x00\x00\x00")
        await _expect_closing(client, ErrorCode.BAD_FRAME, "a frame of length 0")

        client, _ = await visit.welcomed()
        body = b"\x07"  # a msgpack value (the integer 7) that is not a map
        await client.send_raw(len(body).to_bytes(4, "big") + body)
        await _expect_refusal(client, ErrorCode.NOT_A_MAP, None, "a frame holding 7")
        await _raw_map(client, {"t": "frobnicate", "id": 9001})
        await _expect_refusal(
            client, ErrorCode.UNKNOWN_TYPE, "frobnicate", "a message of type frobnicate", 9001
        )
        await _raw_map(client, {"t": "join", "id": 9002})
        await _expect_refusal(client, ErrorCode.MISSING_FIELD, "table", "join without table", 9002)
        await _raw_map(
            client,
            {"t": "act", "id": 9003, "table": "t1", "version": "one", "action": {"kind": "look"}},
        )
        await _expect_refusal(
            client, ErrorCode.INVALID_FIELD, "version", "act with version 'one'", 9003
        )
        reply = await _reply(
            client, await client.send(Ping()), "ping after refusals", claims.ERRORS
        )
        check(
            isinstance(reply, Pong),
            "the connection did not go on after refused messages",
            claims.ERRORS,
        )

        await _rate(visit, welcome, notes)
        await _chat_length(visit, welcome, notes)
        idle = welcome.limits.idle_timeout_ms
        if 0 < idle <= 3000:
            quiet, _ = await visit.welcomed()
            await _expect_closing(
                quiet, ErrorCode.TIMEOUT, f"silence for {idle} ms", wait=idle / 1000 + 5
            )
        else:
            notes(f"idle timeout not waited for ({idle} ms)")


async def _raw_map(client: KitClient, value: dict[str, object]) -> None:
    body = pack_body(value)
    await client.send_raw(len(body).to_bytes(4, "big") + body)


async def _expect_closing(client: KitClient, code: ErrorCode, what: str, wait: float = 10) -> None:
    try:
        message = await client.next_message(wait)
    except ServerSilent:
        raise Failed(f"{what}: no answer within {wait:g} s", claims.ERRORS) from None
    check(
        isinstance(message, Error) and message.code == code,
        f"{what} was answered {shown(message) if message else 'by closing without an error'}, "
        f"not {code.value}",
        claims.ERRORS,
    )
    after = await _closes(client, what, claims.ERRORS)
    check(
        not after,
        f"{what}: the server sent {[m.TYPE for m in after]} after {code.value}",
        claims.ERRORS,
    )


async def _expect_refusal(
    client: KitClient, code: ErrorCode, detail: str | None, what: str, rid: int | None = None
) -> None:
    try:
        message = await client.next_message()
    except ServerSilent as exc:
        raise Failed(f"{what}: {exc}", claims.ERRORS) from None
    check(
        isinstance(message, Error) and message.code == code,
        f"{what} was answered {shown(message) if message else 'by closing'}, not {code.value}",
        claims.ERRORS,
    )
    assert isinstance(message, Error)
    check(
        message.id == rid,
        f"{what}: the {code.value} error carries id {message.id}, not {rid}",
        claims.ERRORS,
    )
    if detail is not None:
        check(
            message.detail == detail,
            f"{what}: {code.value}'s detail is {message.detail!r}, not {detail!r}",
            claims.ERRORS,
        )


async def _rate(visit: Visit, welcome: Welcome, notes: Findings) -> None:
    client, _ = await visit.welcomed()
    count = min(2000, 2 * welcome.limits.rate_burst + 10)
    data = b"".join(client.conn.send(Ping()) for _ in range(count))
    await client.send_raw(data)
    answers: list[Message] = []
    try:
        while len(answers) < count:
            message = await client.next_message()
            if message is None:
                break
            answers.append(message)
    except ServerSilent:
        pass
    check(
        len(answers) == count,
        f"{count} pings sent at once got {len(answers)} answers: each message gets one",
        claims.RATE,
    )
    limited = [m for m in answers if isinstance(m, Error) and m.code == ErrorCode.RATE_LIMITED]
    check(
        limited,
        f"{count} pings at once (rate_burst {welcome.limits.rate_burst}) were never rate_limited",
        claims.RATE,
    )
    check(
        all(m.retry_ms is not None and m.retry_ms > 0 for m in limited),
        "rate_limited carries no retry_ms",
        claims.RATE,
    )
    check(
        all(m.id is not None for m in limited),
        "rate_limited does not carry the refused request's id",
        claims.ERRORS,
    )


async def _chat_length(visit: Visit, welcome: Welcome, notes: Findings) -> None:
    most = welcome.limits.chat_max_chars
    if most is None:
        notes("chat_max_chars is not announced: chat length not checked")
        return
    player = await visit.player()
    reply = await player.request(Chat(scope=ChatScope.LOBBY, text="x" * (most + 1)))
    check(
        isinstance(reply, Error) and reply.code == ErrorCode.INVALID_FIELD,
        f"a chat line of {most + 1} characters (chat_max_chars {most}) was answered {shown(reply)}",
        claims.RATE,
    )


async def bye(target: Target, notes: Findings) -> None:
    """A client's `bye` ends the connection: the server closes it and sends nothing after."""
    async with target.session() as visit:
        client, _ = await visit.welcomed()
        await client.send(Bye(reason="conformance"))
        after = await _closes(client, "after the client's bye", claims.BYE)
        check(
            not after,
            f"the server sent {[m.TYPE for m in after]} after the client's bye",
            claims.CONNECTION,
        )
