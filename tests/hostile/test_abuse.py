"""Abusive clients: idle connections by the thousand, a byte a second, a client that never reads,
floods of chat and requests. Each is cut off or refused by a documented limit; nobody else notices.

The limits are the server's defaults (`spades-server serve` has no flags for the outbox or the rate
limits), so the tests read them from `welcome.limits`.
"""

from __future__ import annotations

import resource
from pathlib import Path

import msgpack
import pytest
import trio

from protocol.framing import frame
from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Act,
    Chat,
    CreateTable,
    Error,
    GameOver,
    Guest,
    Hello,
    Join,
    Joined,
    Leave,
    ListTables,
    Ok,
    Ping,
    Pong,
    Spectate,
    TableCreated,
    Welcome,
    YourTurn,
)
from protocol.types import ChatScope, ClientKind, Game
from protocol.wire import encode
from tests.hostile.peer import Peer, errors, round_trip, welcomed
from tests.hostile.proc import ServerProcess

MiB = 1024


async def limits_of(port: int) -> Welcome:
    async with await welcomed(port) as peer:
        return peer.welcome


def enough_file_descriptors(count: int) -> None:
    """Raise our soft descriptor limit (the server subprocess inherits it) or skip the test."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft >= count:
        return
    if hard != resource.RLIM_INFINITY and hard < count:
        pytest.skip(f"needs {count} file descriptors, the hard limit is {hard}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (count, hard))


async def test_a_thousand_silent_connections_are_closed_by_the_handshake_timeout(
    tmp_path: Path,
) -> None:
    """1,000 connections that never say hello: each is refused (`server_full`) or timed out
    (`timeout`) within the advertised handshake timeout; then the server welcomes again, with its
    memory and file descriptors back where they were."""
    enough_file_descriptors(2048)
    # A 3 s handshake timeout (the default is 10 s): the same limit, in a third of the time.
    with ServerProcess(tmp_path / "s.db", "--handshake-timeout", "3") as server:
        welcome = await limits_of(server.port)
        handshake_s = welcome.limits.handshake_timeout_ms / 1000
        rss_before = server.rss_kib()
        fds_before = server.open_fds()
        codes: dict[str, int] = {}
        closed_by_server = 0
        with trio.fail_after(handshake_s + 60):
            start = trio.current_time()

            async def idle() -> None:
                nonlocal closed_by_server
                peer = await Peer.connect(server.port)
                try:
                    got = await peer.drain_until_closed(limit=10)
                finally:
                    await peer.aclose()
                closed_by_server += 1
                found = [e.code for e in errors(got)]
                assert len(found) == 1, got
                codes[found[0]] = codes.get(found[0], 0) + 1

            async with trio.open_nursery() as nursery:
                for _ in range(1000):
                    nursery.start_soon(idle)
            took = trio.current_time() - start
        assert closed_by_server == 1000
        assert set(codes) <= {"timeout", "server_full"}, codes
        assert codes.get("timeout", 0) > 0, codes
        # Nobody is held longer than the handshake timeout (plus scheduling slack on 2 cores).
        assert took < handshake_s + 15, took
        with trio.fail_after(20):
            after = await welcomed(server.port)
            assert errors(await round_trip(after)) == []
            await after.aclose()
        assert server.rss_kib() - rss_before < 40 * MiB
        # Every socket of the thousand was released (a few may still be closing).
        assert server.open_fds() <= fds_before + 10


async def test_one_address_cannot_take_every_connection(tmp_path: Path) -> None:
    """Idle connections from one address must not lock out a client on another address.

    Both addresses are loopback (127.0.0.0/8): the test never leaves the machine."""
    enough_file_descriptors(1024)
    with ServerProcess(tmp_path / "s.db") as server, trio.fail_after(60):
        hogs: list[Peer] = []
        try:
            for _ in range(300):
                hogs.append(await Peer.connect(server.port))
            # Make sure the server has taken them all in (a ping on the last one is not possible
            # before hello; a hello on it proves the accept loop reached it).
            last = hogs[-1]
            await last.send(
                Hello(protocol=PROTOCOL_VERSION_TEXT, client="hog", kind=ClientKind.HUMAN)
            )
            await last.receive()
            other = await Peer.connect(server.port, source="127.0.0.2")
            try:
                reply = await other.request(
                    Hello(protocol=PROTOCOL_VERSION_TEXT, client="neighbour", kind=ClientKind.HUMAN)
                )
                assert isinstance(reply, Welcome), reply
            finally:
                await other.aclose()
        finally:
            for hog in hogs:
                await hog.aclose()


async def test_a_byte_a_second_handshake_is_cut_off_and_others_are_served(
    tmp_path: Path,
) -> None:
    # A server of its own with a 3 s handshake timeout (the default is 10 s): the same limit, cut
    # after three bytes instead of ten.
    with ServerProcess(tmp_path / "s.db", "--handshake-timeout", "3") as server:
        await _a_byte_a_second(server.port)


async def _a_byte_a_second(port: int) -> None:
    welcome = await limits_of(port)
    handshake_s = welcome.limits.handshake_timeout_ms / 1000
    hello = encode(Hello(protocol=PROTOCOL_VERSION_TEXT, client="slowloris", kind=ClientKind.HUMAN))
    # The whole hello would take longer than the timeout at one byte a second.
    assert len(hello) > handshake_s + 5
    with trio.fail_after(handshake_s + 20):
        bystander = await welcomed(port)
        slow = await Peer.connect(port)
        start = trio.current_time()
        cut_off_after: float | None = None
        try:
            for byte in hello:
                try:
                    await slow.send_raw(bytes([byte]))
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    break
                # The server keeps serving others while the slow client dribbles.
                with trio.fail_after(2):
                    assert errors(await round_trip(bystander)) == []
                await trio.sleep(1)  # pacing the attack, not waiting for the server
                if trio.current_time() - start > handshake_s + 5:
                    break
            got = await slow.drain_until_closed(limit=10)
            cut_off_after = trio.current_time() - start
        finally:
            await slow.aclose()
            await bystander.aclose()
        assert [e.code for e in errors(got)] == ["timeout"], got
        assert not any(isinstance(m, Welcome) for m in got)
        assert cut_off_after is not None and cut_off_after < handshake_s + 8


async def test_a_client_that_never_reads_is_dropped_and_its_table_plays_on(
    tmp_path: Path,
) -> None:
    """B sits at A's table and watches six busy bot tables, and never reads a byte: the events
    pushed to it fill its outgoing queue, the server drops it (`slow_consumer` in the log), and
    A's game still finishes (B's turns are played by the clock's fallback)."""
    with (
        ServerProcess(
            tmp_path / "s.db", "--human-clock", "0.5", "--reconnect-grace", "0"
        ) as server,
        trio.fail_after(100),
    ):
        a = await welcomed(server.port, "reader")
        created = await a.request(
            CreateTable(
                game=Game.HEARTS,
                preset="hearts",
                options={"max_hands": 1, "target_score": 0, "hearts_pass_cycle": ["none"]},
                bots=[2, 3],
                sit=0,
            )
        )
        assert isinstance(created, TableCreated), created
        table = created.table
        busy = []
        for _ in range(6):
            reply = await a.request(
                CreateTable(
                    game=Game.SPADES,
                    preset="standard",
                    options={"target_score": 500},
                    bots=[0, 1, 2, 3],
                )
            )
            assert isinstance(reply, TableCreated), reply
            busy.append(reply.table)
        b = await Peer.connect(server.port, rcvbuf=4096)
        await b.hello()
        await b.register("never-reads")
        joined = await b.request(Join(table=table, seat=1))
        assert isinstance(joined, Joined), joined
        rss_before = server.rss_kib()
        # From here on B only writes: six spectate requests, then nothing, and never reads.
        for watched in busy:
            await b.send(Spectate(table=watched))

        async def play_a() -> GameOver:
            while True:
                message = await a.receive()
                assert message is not None, "A was disconnected"
                if isinstance(message, GameOver) and message.table == table:
                    return message
                if isinstance(message, YourTurn) and message.table == table:
                    await a.send(Act(table=table, version=message.version, action=message.legal[0]))
                elif isinstance(message, Error):
                    assert message.code == "stale_version", message

        def b_dropped() -> bool:
            return '"slow_consumer"' in server.logs()  # B is the only client that does not read

        over = await play_a()
        assert over.table == table
        for _ in range(600):  # up to 30 s for the pushes to overflow B's queue
            if b_dropped():
                break
            await trio.sleep(0.05)
        assert b_dropped(), "the server kept a client that never reads"
        # B's end: everything it had not read, then the end of the stream.
        got = await b.drain_until_closed()
        assert b.closed and len(got) < 100_000
        assert server.rss_kib() - rss_before < 60 * MiB
        assert errors(await round_trip(a)) == []
        await a.aclose()


async def test_chat_flood_is_rate_limited(shared_server: ServerProcess, fresh_name: str) -> None:
    with trio.fail_after(30):
        talker = await welcomed(shared_server.port, fresh_name)
        start = trio.current_time()
        ids = []
        for i in range(40):
            ids.append(await talker.send(Chat(scope=ChatScope.LOBBY, text=f"spam {i}")))
        replies = [await talker.reply_to(rid) for rid in ids]
        took = trio.current_time() - start
        oks = [r for r in replies if isinstance(r, Ok)]
        limited = [r for r in replies if isinstance(r, Error) and r.code == "rate_limited"]
        assert len(oks) + len(limited) == 40, replies
        # A burst of 5, then 1 a second (server defaults).
        assert len(oks) <= 5 + took * 1 + 1, (len(oks), took)
        assert len(limited) >= 40 - (5 + took + 1)
        # The connection goes on (its refusals were answered; nothing else is pending).
        assert errors(await round_trip(talker)) == []
        await talker.aclose()


async def test_request_flood_is_rate_limited_and_every_request_answered_once(
    shared_server: ServerProcess,
) -> None:
    with trio.fail_after(30):
        async with await welcomed(shared_server.port) as peer:
            await _flood_pings(peer, count=250)


async def _flood_pings(peer: Peer, count: int) -> None:
    """Send `count` pings in one write, then read: one reply each, in order, the excess limited."""
    if True:
        rate, burst = peer.welcome.limits.rate_per_second, peer.welcome.limits.rate_burst
        assert count > burst
        start = trio.current_time()
        await peer.send_raw(b"".join(encode(Ping(id=i)) for i in range(count)))
        answered: list[int] = []
        limited = 0
        for _ in range(count):
            message = await peer.receive()
            assert message is not None
            if isinstance(message, Pong):
                assert message.id is not None
                answered.append(message.id)
            elif isinstance(message, Error):
                assert message.code == "rate_limited", message
                assert message.id is not None
                answered.append(message.id)
                limited += 1
        took = trio.current_time() - start
        # Exactly one reply per request, in the order sent.
        assert answered == list(range(count))
        assert count - limited <= burst + rate * took + 2, (count - limited, took)
        assert limited > 0


async def test_pipelined_requests_beyond_the_outbox_are_not_a_slow_consumer(
    shared_server: ServerProcess,
) -> None:
    with trio.fail_after(30):
        async with await welcomed(shared_server.port) as peer:
            await _flood_pings(peer, count=400)


async def test_a_flood_of_malformed_messages_is_rate_limited_too(
    shared_server: ServerProcess,
) -> None:
    """docs/protocol.md (Limits, Rate): a message above the rate is answered `rate_limited`,
    a malformed one too; each frame still gets exactly one answer, in order."""
    with trio.fail_after(30):
        async with await welcomed(shared_server.port) as peer:
            rate, burst = peer.welcome.limits.rate_per_second, peer.welcome.limits.rate_burst
            count = 250  # under the outbox size, so only the rate limit is tested
            assert count > burst
            start = trio.current_time()
            await peer.send_raw(
                b"".join(frame(msgpack.packb({"t": "nope", "id": i})) for i in range(count))
            )
            replies = [await peer.receive() for _ in range(count)]
            took = trio.current_time() - start
        found = errors([m for m in replies if m is not None])
        assert [e.id for e in found] == list(range(count))
        codes = [e.code for e in found]
        assert set(codes) <= {"unknown_type", "rate_limited"}, set(codes)
        assert codes.count("unknown_type") <= burst + rate * took + 2, (
            codes.count("unknown_type"),
            took,
        )
        assert "rate_limited" in codes


async def test_a_request_before_hello_is_refused_and_the_connection_goes_on(
    shared_server: ServerProcess,
) -> None:
    with trio.fail_after(20):
        peer = await Peer.connect(shared_server.port)
        try:
            reply = await peer.request(ListTables())
            assert isinstance(reply, Error) and reply.code == "unexpected_message", reply
            welcome = await peer.request(
                Hello(protocol=PROTOCOL_VERSION_TEXT, client="late", kind=ClientKind.HUMAN)
            )
            assert isinstance(welcome, Welcome), welcome
        finally:
            await peer.aclose()


async def test_another_major_version_is_refused_and_closed(shared_server: ServerProcess) -> None:
    with trio.fail_after(20):
        peer = await Peer.connect(shared_server.port)
        try:
            await peer.send(Hello(id=1, protocol="2.0", client="future", kind=ClientKind.BOT))
            got = await peer.drain_until_closed(limit=10)
        finally:
            await peer.aclose()
        assert [(e.code, e.detail) for e in errors(got)] == [("version_mismatch", "1.0")], got


async def test_one_account_cannot_open_every_table_and_others_still_can(tmp_path: Path) -> None:
    """Tables cost the server a task each: one account may keep 64 open (default), no more,
    from however many addresses (each may open 16: the account connects from four, then a fifth)."""
    with ServerProcess(tmp_path / "s.db") as server, trio.fail_after(60):
        first = await welcomed(server.port)
        token = await first.register("table-hog")
        hogs = [first]
        for number in range(2, 6):
            hog = await Peer.connect(server.port, source=f"127.0.0.{number}")
            assert (await hog.hello(token=token)).user == "table-hog"
            hogs.append(hog)
        waiting = CreateTable(game=Game.SPADES, preset="standard")  # nobody sits: it stays open
        for hog in hogs[:4]:
            for _ in range(16):
                assert isinstance(await hog.request(waiting), TableCreated)
        refused = await hogs[4].request(waiting)
        assert isinstance(refused, Error) and refused.code == "rate_limited", refused
        assert "you already have 64 open tables" in refused.message, refused
        other = await welcomed(server.port, "someone-else", source="127.0.0.6")
        assert isinstance(await other.request(waiting), TableCreated)
        assert errors(await round_trip(hogs[4])) == []


async def test_a_table_takes_only_so_many_spectators(tmp_path: Path) -> None:
    """Spectators cost the table a copy of every event: 64 per table (default), then table_full."""
    with ServerProcess(tmp_path / "s.db") as server, trio.fail_after(60):
        owner = await welcomed(server.port, "owner")
        created = await owner.request(CreateTable(game=Game.SPADES, preset="standard"))
        assert isinstance(created, TableCreated)
        watchers: list[Peer] = []
        for number in range(64):
            # Several loopback addresses: the server allows 64 connections per address.
            watcher = await welcomed(server.port, source=f"127.0.1.{1 + number % 8}")
            await watcher.request(Guest())
            reply = await watcher.request(Spectate(table=created.table))
            assert isinstance(reply, Joined), reply
            watchers.append(watcher)
        late = await welcomed(server.port, source="127.0.2.1")
        await late.request(Guest())
        reply = await late.request(Spectate(table=created.table))
        assert isinstance(reply, Error) and reply.code == "table_full", reply
        # The table still takes players, and one spectator leaving makes room.
        await watchers[0].request(Leave(table=created.table))
        assert isinstance(await late.request(Spectate(table=created.table)), Joined)
