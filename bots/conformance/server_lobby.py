"""Server scenarios about the lobby: listing and opening tables, who hears lobby notices, chat,
`join`'s refusals in the document's order, and a second connection of a seated account (the
ladder's queries are in `server_ladder`)."""

from __future__ import annotations

import secrets
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from bots.conformance import claims
from bots.conformance.report import Failed, Findings, check
from bots.conformance.target import Player, Target, shown
from bots.conformance.wire import KitClient, ServerSilent
from protocol.errors import ErrorCode
from protocol.messages import (
    Act,
    Chat,
    ChatMessage,
    CreateTable,
    Error,
    Join,
    Joined,
    Leave,
    ListTables,
    Message,
    Ok,
    Reply,
    SeatLost,
    Snapshot,
    Spectate,
    TableChanged,
    TableClosed,
    Tables,
)
from protocol.types import ChatScope, Game, TableInfo, TableStatus


def missing_table() -> str:
    return f"zz{secrets.token_hex(6)}"


async def _listing(player: Player, request: ListTables) -> list[TableInfo]:
    reply = await player.request(request)
    check(isinstance(reply, Tables), f"list_tables was answered {shown(reply)}", claims.LIST_TABLES)
    assert isinstance(reply, Tables)
    return reply.tables


async def lobby(target: Target, notes: Findings) -> None:
    """create_table (and bad_options naming the option), list_tables and its filters, spectate,
    leave, and private tables with their join code."""
    async with target.session() as visit:
        host = await visit.player()
        created = await host.create(Game.SPADES, "standard", {"target_score": 200}, bots=[1, 3])
        stray = host.client.drain()
        check(
            not any(isinstance(m, Snapshot) for m in stray),
            "create_table without sit was followed by a snapshot",
            claims.CREATE_TABLE,
        )
        listed = await _listing(host, ListTables(game=Game.SPADES))
        mine = [info for info in listed if info.table == created.table]
        check(mine, f"table {created.table} is not in list_tables game=spades", claims.LIST_TABLES)
        info = mine[0]
        check(
            info.preset == "standard"
            and info.status is TableStatus.WAITING
            and [s.bot for s in info.seats] == [False, True, False, True],
            f"the listing of a new standard table with bots at 1 and 3 reads {info}",
            claims.LIST_TABLES,
        )
        for request, what in (
            (ListTables(game=Game.HEARTS), "game=hearts"),
            (ListTables(status=TableStatus.PLAYING), "status=playing"),
        ):
            others = await _listing(host, request)
            check(
                all(t.table != created.table for t in others),
                f"a waiting Spades table is listed by list_tables {what}",
                claims.LIST_TABLES,
            )
        open_seats = await _listing(host, ListTables(open_seats=True))
        check(
            any(t.table == created.table for t in open_seats),
            "a table with free seats is not listed by open_seats",
            claims.LIST_TABLES,
        )
        for options, preset, named in (
            ({"no_such_option": 1}, "standard", "no_such_option"),
            ({}, "no-such-preset", None),
        ):
            reply = await host.request(
                CreateTable(game=Game.SPADES, preset=preset, options=dict(options))
            )
            check(
                isinstance(reply, Error) and reply.code == ErrorCode.BAD_OPTIONS,
                f"create_table with preset {preset!r} options {options} was answered "
                f"{shown(reply)}, not bad_options",
                claims.LOBBY,
            )
            assert isinstance(reply, Error)
            if named is not None:
                check(
                    reply.detail == named,
                    f"bad_options' detail is {reply.detail!r}, not the option {named!r}",
                    claims.LOBBY,
                )
        watcher = await visit.player()
        reply = await watcher.request(Spectate(table=created.table))
        check(
            isinstance(reply, Joined) and reply.seat is None,
            f"spectate was answered {shown(reply)}, not joined without a seat",
            claims.SPECTATE,
        )
        snapshot = await watcher.snapshot(created.table)
        check(
            snapshot.seat is None and "hand" not in snapshot.view,
            "a spectator's snapshot carries a seat or a hand",
            claims.SPECTATE,
        )
        await watcher.expect_ok(Leave(table=created.table), claims.LEAVE)
        sitter = await visit.player()
        await sitter.join(created.table, seat=2)
        seated = await sitter.snapshot(created.table)
        check(
            seated.seat == 2,
            f"the snapshot after joining seat 2 is for seat {seated.seat}",
            claims.JOIN,
        )
        await sitter.expect_ok(Leave(table=created.table), claims.LEAVE)

        private = await host.create(Game.HEARTS, "hearts", bots=[1], private=True)
        check(
            private.code is not None,
            "table_created of a private table has no join code",
            claims.CREATE_TABLE,
        )
        assert private.code is not None
        guest = await visit.player()
        reply = await guest.request(Join(table=private.table))
        check(
            isinstance(reply, Error) and reply.code == ErrorCode.PRIVATE_TABLE,
            f"join of a private table without its code was answered {shown(reply)}",
            claims.JOIN,
        )
        await guest.join(private.table, code=private.code)
        listed = await _listing(guest, ListTables(game=Game.HEARTS))
        check(
            any(t.table == private.table and t.private for t in listed),
            "a private table is not listed, marked private",
            claims.LIST_TABLES,
        )


async def _heard(client: KitClient, table: str) -> list[Message]:
    """The lobby notices about `table` this connection had been sent (up to a ping's pong)."""
    try:
        seen = await client.barrier()
    except ServerSilent as exc:
        raise Failed(str(exc), claims.PING) from None
    return [
        m
        for m in seen
        if (isinstance(m, TableChanged) and m.table.table == table)
        or (isinstance(m, TableClosed) and m.table == table)
    ]


async def lobby_notices(target: Target, notes: Findings) -> None:
    """`table_changed` and `table_closed` go to the connections that have listed, for the game
    their last `list_tables` named (its other filters shape only that listing); a connection
    that never listed hears none of them, not even about its own table."""
    section = claims.LOBBY_NOTICES
    async with target.session() as visit:
        everyone, hearts, never, host, joiner = [await visit.player() for _ in range(5)]
        await _listing(everyone, ListTables())
        await _listing(hearts, ListTables(game=Game.HEARTS))
        table = (await host.create(Game.SPADES, "standard", bots=[1, 2])).table
        check(
            await _heard(everyone.client, table),
            "a connection that listed every game heard no table_changed for a new table",
            section,
        )
        check(
            not await _heard(hearts.client, table),
            "a connection whose list_tables named hearts heard of a new Spades table",
            section,
        )
        check(
            not await _heard(never.client, table),
            "a connection that never listed heard of a new table",
            section,
        )
        check(
            not await _heard(host.client, table),
            "the creator, who never listed, heard table_changed for its own table",
            section,
        )
        listed = await _listing(hearts, ListTables(game=Game.SPADES, status=TableStatus.FINISHED))
        check(
            all(t.table != table for t in listed),
            "list_tables status=finished listed a waiting table",
            claims.LIST_TABLES,
        )
        await joiner.join(table)
        for client, who in (
            (everyone, "listed every game"),
            (hearts, "last listed spades, finished"),
        ):
            changed = await _heard(client.client, table)
            check(
                any(
                    isinstance(m, TableChanged)
                    and any(s.player == joiner.name for s in m.table.seats)
                    for m in changed
                ),
                f"a connection that {who} did not hear table_changed when a seat was taken "
                "(status and open_seats shape only the listing)",
                section,
            )
        check(
            not await _heard(never.client, table),
            "a connection that never listed heard a seat taken",
            section,
        )
        await _listing(everyone, ListTables(game=Game.HEARTS))
        await joiner.expect_ok(Leave(table=table), claims.LEAVE)
        check(
            await _heard(hearts.client, table),
            "a connection listening for spades did not hear a seat freed",
            section,
        )
        check(
            not await _heard(everyone.client, table),
            "a connection whose last list_tables named hearts still heard a Spades table change",
            section,
        )
        # A table of built-in bots only: it plays its one hand and closes (no person there).
        bots_only = await host.create(
            Game.HEARTS,
            "hearts",
            {"max_hands": 1, "target_score": 0},
            bots=[0, 1, 2, 3],
        )
        try:
            await everyone.client.wait_for(
                lambda m: isinstance(m, TableClosed) and m.table == bots_only.table,
                f"table_closed for a finished table of built-in bots ({bots_only.table})",
                within=30,
            )
        except ServerSilent as exc:
            raise Failed(str(exc), claims.TABLE_CLOSES) from None
        check(
            not await _heard(hearts.client, bots_only.table),
            "a connection listening for spades heard of a Hearts table",
            section,
        )
        check(
            not await _heard(never.client, bots_only.table),
            "a connection that never listed heard table_closed of a table it was not at",
            section,
        )
        notes(
            "table_closed to those at a closing table is not checked (it needs a closing rule "
            "that is quick to reach on this server)"
        )


async def chat(target: Target, notes: Findings) -> None:
    """A table chat is answered `ok`, then `chat_message` goes to everyone at the table (the
    speaker included) and nobody else; lobby chat reaches logged-in connections; `leave` and a
    table `chat` refuse an unknown table with no_such_table and one not joined with not_seated."""
    async with target.session() as visit:
        speaker, partner, watcher, outsider = [await visit.player() for _ in range(4)]
        table = (await speaker.create(Game.SPADES, "standard", sit=0)).table
        await partner.join(table, seat=2)
        reply = await watcher.request(Spectate(table=table))
        check(isinstance(reply, Joined), f"spectate was answered {shown(reply)}", claims.SPECTATE)
        speaker.client.drain()
        rid = await speaker.client.send(Chat(scope=ChatScope.TABLE, table=table, text="good luck"))
        try:
            reply = await speaker.client.reply_to(rid)
        except ServerSilent as exc:
            raise Failed(f"table chat: {exc}", claims.CHAT) from None
        before = [m for m in speaker.client.before if isinstance(m, ChatMessage)]
        check(
            isinstance(reply, Ok) and not before,
            f"a table chat's chat_message came before its {shown(reply)}: the document says "
            "ok, then everyone gets chat_message",
            claims.CHAT,
        )
        for who in (speaker, partner, watcher):
            lines = [m for m in await who.client.barrier() if isinstance(m, ChatMessage)]
            check(
                any(
                    m.scope is ChatScope.TABLE and m.table == table and m.text == "good luck"
                    for m in lines
                ),
                f"{'the speaker' if who is speaker else 'someone at the table'} got no chat_message",
                claims.CHAT,
            )
        lines = [m for m in await outsider.client.barrier() if isinstance(m, ChatMessage)]
        check(not lines, "a connection not at the table heard its chat", claims.CHAT)
        await speaker.expect_ok(Chat(scope=ChatScope.LOBBY, text="hello lobby"), claims.CHAT)
        try:
            await outsider.client.wait_for(
                lambda m: isinstance(m, ChatMessage) and m.scope is ChatScope.LOBBY,
                "lobby chat_message",
            )
        except ServerSilent as exc:
            raise Failed(
                f"a logged-in connection heard no lobby chat: {exc}", claims.CHAT
            ) from None
        unknown = missing_table()
        for request, expected, what in (
            (Leave(table=unknown), ErrorCode.NO_SUCH_TABLE, "leave of a table that does not exist"),
            (Leave(table=table), ErrorCode.NOT_SEATED, "leave of a table not joined"),
            (
                Chat(scope=ChatScope.TABLE, table=unknown, text="hi"),
                ErrorCode.NO_SUCH_TABLE,
                "chat at a table that does not exist",
            ),
            (
                Chat(scope=ChatScope.TABLE, table=table, text="hi"),
                ErrorCode.NOT_SEATED,
                "chat at a table not joined",
            ),
        ):
            reply = await outsider.request(request)
            check(
                isinstance(reply, Error) and reply.code == expected,
                f"{what} was answered {shown(reply)}, not {expected.value}",
                claims.ACT_ORDER,
            )


@dataclass(frozen=True)
class Situation:
    """A `join` to which several refusals apply at once, and how to send it."""

    applies: frozenset[str]
    what: str
    send: Callable[[], Awaitable[Reply]]


async def join_refusals(
    target: Target, notes: Findings, order: Sequence[str] = claims.JOIN_REFUSALS
) -> None:
    """Each `join` to which several refusals apply is answered with the one `order` (the
    document's list) names first; a connection's repeated join of its own table is a resync."""
    async with target.session() as visit:
        y, z, x, n, r, q = [await visit.player() for _ in range(6)]
        waiting = (await y.create(Game.SPADES, "standard", sit=0)).table
        await z.join(waiting, seat=1)
        x2 = await visit.again(x)
        await x2.join(waiting, seat=2)  # the waiting table keeps seat 3 free
        full = (await x.create(Game.SPADES, "standard", bots=[1, 2, 3], sit=0)).table
        x3 = await visit.again(x)
        private = await r.create(Game.SPADES, "standard", sit=0, private=True)
        private_full = await q.create(Game.SPADES, "standard", bots=[1, 2, 3], sit=0, private=True)
        q2 = await visit.again(q)
        assert private.code is not None and private_full.code is not None
        wrong = "WRONG" + secrets.token_hex(2).upper()
        unknown = missing_table()

        def join(
            who: Player, table: str, seat: int | None = None, code: str | None = None
        ) -> Callable[[], Awaitable[Reply]]:
            return lambda: who.request(Join(table=table, seat=seat, code=code))

        situations = [
            Situation(
                frozenset({"no_such_table"}), "a table that does not exist", join(n, unknown)
            ),
            Situation(
                frozenset({"private_table"}),
                "a private table, wrong code",
                join(n, private.table, code=wrong),
            ),
            Situation(
                frozenset({"already_seated"}),
                "seated elsewhere, a private table with its code",
                join(z, private.table, code=private.code),
            ),
            Situation(frozenset({"table_full"}), "a full table", join(n, full)),
            Situation(
                frozenset({"seat_taken"}),
                "an occupied seat of a waiting table",
                join(n, waiting, seat=0),
            ),
            Situation(
                frozenset({"no_such_table", "already_seated"}),
                "seated elsewhere, a table that does not exist",
                join(z, unknown),
            ),
            Situation(
                frozenset({"private_table", "already_seated"}),
                "seated elsewhere, a private table with a wrong code",
                join(z, private.table, code=wrong),
            ),
            Situation(
                frozenset({"private_table", "table_full"}),
                "a full private table, wrong code",
                join(n, private_full.table, code=wrong),
            ),
            Situation(
                frozenset({"private_table", "seat_taken"}),
                "an occupied seat of a private table, wrong code",
                join(n, private.table, seat=0, code=wrong),
            ),
            Situation(
                # No private_table: the account holds a seat there, so its code is not asked.
                frozenset({"seat_held", "table_full"}),
                "a full private table where another connection of the account sits, wrong code",
                join(q2, private_full.table, code=wrong),
            ),
            Situation(
                frozenset({"already_seated", "seat_held", "table_full"}),
                "seated elsewhere, a full table where another connection of the account sits",
                join(x2, full),
            ),
            Situation(
                frozenset({"already_seated", "table_full", "seat_taken"}),
                "seated elsewhere, an occupied seat of a full table",
                join(z, full, seat=1),
            ),
            Situation(
                frozenset({"seat_held", "table_full"}),
                "a full table where another connection of the account sits",
                join(x3, full),
            ),
            Situation(
                frozenset({"seat_held", "table_full", "seat_taken"}),
                "an occupied seat of a full table where another connection of the account sits",
                join(x3, full, seat=1),
            ),
            Situation(
                frozenset({"table_full", "seat_taken"}),
                "an occupied seat of a full table",
                join(n, full, seat=1),
            ),
        ]
        for situation in situations:
            expected = next(code for code in order if code in situation.applies)
            reply = await situation.send()
            got = reply.code if isinstance(reply, Error) else reply.TYPE
            held = notes.expect(
                got == expected,
                f"join of {situation.what} ({' and '.join(c for c in order if c in situation.applies)}"
                f" apply) was answered {shown(reply)}; the document's order says {expected}",
                claims.JOIN,
            )
            if held and expected == "seat_taken":
                assert isinstance(reply, Error)
                notes.expect(
                    "3" in reply.message,
                    f"seat_taken's message does not list the free seat 3: {reply.message!r}",
                    claims.JOIN,
                )
        z.client.drain()
        again = await z.request(Join(table=waiting))
        check(
            isinstance(again, Joined) and again.seat == 1,
            f"a connection's repeated join of its own table was answered {shown(again)}, not "
            "joined with its seat (a resync)",
            claims.SEATS,
        )
        await z.snapshot(waiting)


async def second_connection(target: Target, notes: Findings) -> None:
    """A second connection of a seated account does not take the seat: logging in, listing and
    watching leave it alone, its `act` is not_seated, its `join` is seat_held; with `takeover` it
    gets the seat and the first connection is told `seat_lost` (taken_over)."""
    async with target.session() as visit:
        owner = await visit.player()
        table = (
            await owner.create(Game.SPADES, "standard", {"first_dealer": 3}, bots=[1, 2, 3], sit=0)
        ).table
        turn = await owner.turn(table)
        other = await visit.again(owner)
        resumed = [m for m in await other.client.barrier() if isinstance(m, Joined | Snapshot)]
        check(
            not resumed,
            "a second connection that logged in (hello.token) was given the seat a live "
            "connection holds",
            claims.SEATS,
        )
        await _listing(other, ListTables())
        reply = await other.request(Spectate(table=table))
        check(
            isinstance(reply, Joined) and reply.seat is None,
            f"spectate was answered {shown(reply)}",
            claims.SEATS,
        )
        reply = await other.request(Act(table=table, version=turn.version, action=turn.legal[0]))
        check(
            isinstance(reply, Error) and reply.code == ErrorCode.NOT_SEATED,
            f"an act from a second connection of the seated account was answered {shown(reply)}, "
            "not not_seated",
            claims.SEATS,
        )
        await other.expect_ok(Leave(table=table), claims.LEAVE)
        reply = await other.request(Join(table=table))
        check(
            isinstance(reply, Error) and reply.code == ErrorCode.SEAT_HELD,
            f"join without takeover, while another live connection holds the seat, was answered "
            f"{shown(reply)}, not seat_held",
            claims.SEATS,
        )
        still = await owner.request(Join(table=table))
        check(
            isinstance(still, Joined) and still.seat == 0,
            "after the second connection listed, watched and asked, the first no longer holds its seat",
            claims.SEATS,
        )
        taken = await other.join(table, takeover=True)
        check(taken.seat == 0, f"join with takeover gave seat {taken.seat}", claims.SEATS)
        try:
            lost = await owner.client.expect(SeatLost)
        except ServerSilent as exc:
            raise Failed(f"the old holder was not told: {exc}", claims.SEAT_LOST) from None
        check(
            lost.reason == "taken_over" and lost.seat == 0,
            f"seat_lost reads {lost}",
            claims.SEAT_LOST,
        )
        fresh = await other.turn(table)
        reply = await owner.request(Act(table=table, version=fresh.version, action=fresh.legal[0]))
        check(
            isinstance(reply, Error) and reply.code == ErrorCode.NOT_SEATED,
            f"the old holder's act after seat_lost was answered {shown(reply)}, not not_seated",
            claims.SEATS,
        )
        reply = await other.act(fresh)
        check(
            isinstance(reply, Ok), f"the new holder's act was answered {shown(reply)}", claims.SEATS
        )
