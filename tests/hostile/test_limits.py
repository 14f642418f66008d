"""Limits that end in a refusal the client can live with, and limits that end the connection: the
server's table cap, the idle timeout, the limits `welcome` announces, and a fatal error that must
reach a client which is still sending."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import trio

from bots.registry import make_bot
from bots.sdk.runner import BotRunner, RunnerConfig
from client.config import ServerAddress
from client.connection import open_connection
from protocol.framing import frame
from protocol.messages import Chat, CreateTable, Error, Ok, Ping, Pong, TableCreated
from protocol.types import ChatScope, Game
from protocol.wire import encode
from tests.hostile.peer import Peer, errors, round_trip, welcomed
from tests.hostile.proc import ServerProcess


async def test_a_full_lobby_refuses_a_table_without_hanging_up(tmp_path: Path) -> None:
    """With every table of the server taken (`--max-tables 3` here; 256 by default),
    `create_table` is refused `table_limit`, a code that does not close, and the connection goes
    on; another account is refused the same way."""
    with (
        ServerProcess(tmp_path / "s.db", "--no-ladder", "--max-tables", "3") as server,
        trio.fail_after(30),
    ):
        waiting = CreateTable(game=Game.SPADES, preset="standard")  # nobody sits: it stays open
        hog = await welcomed(server.port, "lobby-hog")
        for _ in range(3):
            assert isinstance(await hog.request(waiting), TableCreated)
        for peer in (hog, await welcomed(server.port, "latecomer")):
            refused = await peer.request(waiting)
            assert isinstance(refused, Error) and refused.code == "table_limit", refused
            # Still connected and answered.
            assert errors(await round_trip(peer)) == []


async def test_a_fatal_error_reaches_a_client_that_keeps_sending(
    shared_server: ServerProcess,
) -> None:
    """After a fatal error the server stops reading messages, sends `error`, half-closes and
    drains what the client still sends (up to 1 s or 64 KiB) before it closes: a client that goes
    on sending garbage reads the error, then the end of the stream, and its sends meanwhile are
    not met by a reset (which can overtake the error on a real network)."""
    rng = random.Random(7)
    for _ in range(3):
        with trio.fail_after(10):
            peer = await Peer.connect(shared_server.port)
            got: list[object] = []
            ended = trio.Event()
            refused_after_end = 0

            async def read(
                peer: Peer = peer, got: list[object] = got, ended: trio.Event = ended
            ) -> None:
                while (message := await peer.receive()) is not None:
                    got.append(message)
                ended.set()

            async with trio.open_nursery() as nursery:
                nursery.start_soon(read)
                # A zero length prefix is `bad_frame`; garbage follows in the same write and after.
                await peer.send_raw(struct.pack(">I", 0) + rng.randbytes(8192))
                after_end = 0
                for _ in range(200):  # bounded: at most ~1 s of 1 KiB every 5 ms
                    try:
                        await peer.send_raw(rng.randbytes(1024))
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        refused_after_end += 1
                        break
                    if ended.is_set():
                        after_end += 1
                        if after_end == 20:  # 20 KiB sent after the end: drained, not reset
                            break
                    await trio.sleep(0.005)
                await ended.wait()
            await peer.aclose()
            assert [type(m).__name__ for m in got] == ["Error"], got
            assert isinstance(got[0], Error) and got[0].code == "bad_frame", got
            assert refused_after_end == 0 and after_end == 20


async def test_an_idle_connection_is_let_go_and_a_pinging_one_is_kept(tmp_path: Path) -> None:
    """After `hello`, a client that sends no whole message for the idle timeout (`--idle-timeout`,
    announced in `welcome.limits.idle_timeout_ms`) is closed with `timeout`: a silent one, and one
    sending a `ping` a byte at a time. A client that pings meanwhile stays. (`--handshake-timeout`
    is a flag too: a connection that never says `hello` is closed with `timeout` after it.)"""
    args = ("--no-ladder", "--idle-timeout", "1", "--handshake-timeout", "1")
    with ServerProcess(tmp_path / "s.db", *args) as server:
        with trio.fail_after(15):
            mute = await Peer.connect(server.port)  # never says hello: the handshake timeout
            silent = await welcomed(server.port)
            assert silent.welcome.limits.idle_timeout_ms == 1000
            assert silent.welcome.limits.handshake_timeout_ms == 1000
            dribbler = await welcomed(server.port)
            pinger = await welcomed(server.port)
            started = trio.current_time()

            async def dribble() -> None:
                data = frame(encode(Ping(id=1))[4:]) * 3
                for byte in data:  # bounded: a few dozen bytes, one every 0.2 s
                    if dribbler.closed:
                        return
                    try:
                        await dribbler.send_raw(bytes([byte]))
                    except (trio.BrokenResourceError, trio.ClosedResourceError):
                        return
                    await trio.sleep(0.2)

            async def keep_pinging() -> None:
                for _ in range(10):  # 3 s, three idle timeouts, a ping every 0.3 s: kept
                    assert errors(await round_trip(pinger)) == []
                    await trio.sleep(0.3)

            async with trio.open_nursery() as nursery:
                nursery.start_soon(dribble)
                nursery.start_soon(keep_pinging)
                for peer in (mute, silent, dribbler):
                    got = await peer.drain_until_closed(limit=10)
                    assert [(type(m).__name__, getattr(m, "code", None)) for m in got][-1:] == [
                        ("Error", "timeout")
                    ], got
                    assert trio.current_time() - started < 4
                    assert not [m for m in got if isinstance(m, Pong)], got
            assert errors(await round_trip(pinger)) == []


async def test_idle_players_and_bots_ping_and_are_kept(tmp_path: Path) -> None:
    """A person waiting at a table (the client library) and a bot waiting for players (the SDK's
    runner) are silent on the wire but ping on their own, so a short idle timeout keeps them."""
    with ServerProcess(tmp_path / "s.db", "--no-ladder", "--idle-timeout", "1") as server:
        with trio.fail_after(15):
            owner = await welcomed(server.port, "idle-owner")
            created = await owner.request(CreateTable(game=Game.SPADES, preset="standard"))
            assert isinstance(created, TableCreated)
            bot_peer = await welcomed(server.port)
            token = await bot_peer.register("idle-bot")
            await bot_peer.aclose()
            runner = BotRunner(
                make_bot("heuristic", seed=1),
                RunnerConfig(host="127.0.0.1", port=server.port, token=token, table=created.table),
            )
            address = ServerAddress(host="127.0.0.1", port=server.port)
            async with open_connection(address) as person, trio.open_nursery() as nursery:
                nursery.start_soon(runner.run)
                await trio.sleep(3)  # three idle timeouts
                assert not person.closed.is_set(), person.close_reason
                assert runner.stats.connections == 1
                nursery.cancel_scope.cancel()


async def test_welcome_announces_the_chat_limits_the_server_enforces(
    shared_server: ServerProcess, fresh_name: str
) -> None:
    """`welcome.limits` carries the chat limits (and the idle timeout); a line of
    `chat_max_chars` is taken, one character more is refused, and `chat_burst` lines at once are
    taken before `rate_limited`."""
    with trio.fail_after(10):
        peer = await welcomed(shared_server.port, fresh_name)
        limits = peer.welcome.limits
        assert (limits.chat_max_chars, limits.chat_burst, limits.chat_per_second) == (300, 5, 1.0)
        assert limits.idle_timeout_ms == 300_000
        longest = await peer.request(Chat(scope=ChatScope.LOBBY, text="x" * 300))
        assert isinstance(longest, Ok), longest
        too_long = await peer.request(Chat(scope=ChatScope.LOBBY, text="x" * 301))
        assert isinstance(too_long, Error) and too_long.code == "invalid_field", too_long
        started = trio.current_time()
        replies = [
            await peer.request(Chat(scope=ChatScope.LOBBY, text=f"line {n}")) for n in range(8)
        ]
        elapsed = trio.current_time() - started
        codes = [getattr(reply, "code", "ok") for reply in replies]
        # The longest line took one of the burst; the rest of the burst (and what the rate refills
        # meanwhile) is taken, the others are refused.
        assert codes[:4] == ["ok"] * 4, codes
        assert set(codes) <= {"ok", "rate_limited"}, codes
        assert codes.count("ok") <= 4 + int(elapsed) + 1, (codes, elapsed)
