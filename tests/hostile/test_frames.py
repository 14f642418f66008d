"""Garbage and malformed frames: each gets its documented `error`, the stream is closed when it can no
longer be trusted, the server goes on serving everyone else, and its memory stays bounded.

Codes and whether they close the connection come from `protocol.errors.ERROR_CODES`, the same table
docs/protocol.md (Errors) is generated from.
"""

from __future__ import annotations

import random
import struct

import msgpack
import trio

from protocol.codec import pack_body
from protocol.errors import ERROR_CODES, ErrorCode
from protocol.framing import frame
from protocol.messages import CreateTable, Error, Guest, Message, Spectate, TableCreated
from protocol.types import Game
from tests.hostile.peer import errors, round_trip, welcomed
from tests.hostile.proc import ServerProcess

FATAL = {code.value for code, info in ERROR_CODES.items() if info.closes}
MiB = 1024


async def fatal_reply(port: int, data: bytes, *, eof: bool = False) -> list[Message]:
    """After hello, send `data`; the server must answer and hang up. Returns what it sent."""
    peer = await welcomed(port)
    try:
        await peer.send_raw(data)
        if eof:
            await peer.stream.send_eof()
        return await peer.drain_until_closed()
    finally:
        await peer.aclose()


async def recoverable_reply(port: int, body: dict[str, object] | bytes) -> Error:
    """After hello, send one well-framed but refused message; the server answers `error` and the
    connection goes on (a ping after it is answered)."""
    peer = await welcomed(port)
    try:
        if isinstance(body, bytes):
            await peer.send_raw(frame(body))
        else:
            await peer.send_map(body)
        got = await round_trip(peer)
        found = errors(got)
        assert len(found) == 1, got
        assert found[0].code not in FATAL
        return found[0]
    finally:
        await peer.aclose()


def only_error(messages: list[Message], code: ErrorCode) -> Error:
    found = errors(messages)
    assert [e.code for e in found] == [code.value], messages
    assert found[0].id is None  # a fatal error answers the stream, not a request
    assert found[0].message
    return found[0]


async def test_giant_length_prefix_refused_from_the_prefix_alone(
    shared_server: ServerProcess,
) -> None:
    with trio.fail_after(20):
        for prefix in (2**32 - 1, 2**31, 64 * 1024 + 1):
            # Only the 4 bytes: the server must not wait for (or allocate) a body.
            got = await fatal_reply(shared_server.port, struct.pack(">I", prefix))
            only_error(got, ErrorCode.FRAME_TOO_LARGE)


async def test_zero_length_and_truncated_frames(shared_server: ServerProcess) -> None:
    with trio.fail_after(20):
        got = await fatal_reply(shared_server.port, struct.pack(">I", 0))
        only_error(got, ErrorCode.BAD_FRAME)
        # A frame announcing 100 bytes, 10 sent, then the client's end of stream.
        got = await fatal_reply(shared_server.port, struct.pack(">I", 100) + b"\x82" * 10, eof=True)
        only_error(got, ErrorCode.BAD_FRAME)
        # A length prefix cut short, then end of stream.
        got = await fatal_reply(shared_server.port, b"\x00\x00", eof=True)
        only_error(got, ErrorCode.BAD_FRAME)


async def test_msgpack_bombs_are_refused_and_memory_stays_bounded(
    shared_server: ServerProcess,
) -> None:
    bombs = {
        "deep nesting": b"\x91" * 60_000 + b"\x80",
        "nesting just past the limit": b"\x81\xa1x" * 17 + b"\xc0",
        "array of 4 billion": b"\xdd\xff\xff\xff\xff",
        "map of 4 billion": b"\xdf\xff\xff\xff\xff",
        "string of 4 GiB": b"\xdb\xff\xff\xff\xff",
        "binary of 4 GiB": b"\xc6\xff\xff\xff\xff",
        "huge array inside a map": b"\x82\xa1t\xa4ping\xa1x\xdd\x00\xff\xff\xff",
        "ext type": b"\x81\xa1t\xd4\x01\x00",
        "duplicate keys": b"\x82\xa1t\xa4ping\xa1t\xa4ping",
        "integer key": b"\x81\x01\x02",
        "trailing bytes": pack_body({"t": "ping"}) + b"\xc0",
        "not msgpack at all": b"\xc1" * 32,
    }
    with trio.fail_after(60):
        before = shared_server.rss_kib()
        for _round in range(5):
            for name, body in bombs.items():
                got = await fatal_reply(shared_server.port, frame(body))
                assert [e.code for e in errors(got)] == ["bad_msgpack"], (name, got)
        grown = shared_server.rss_kib() - before
        assert grown < 30 * MiB, f"the server grew by {grown} KiB over 60 msgpack bombs"


async def test_valid_msgpack_that_is_not_a_map(shared_server: ServerProcess) -> None:
    with trio.fail_after(20):
        for value in ([1, 2, 3], "ping", 42, None, True, b"\x00"):
            body: bytes = msgpack.packb(value, use_bin_type=True)
            error = await recoverable_reply(shared_server.port, body)
            assert error.code == "not_a_map", value


async def test_unknown_types_and_wrong_fields_are_refused_one_by_one(
    shared_server: ServerProcess,
) -> None:
    cases: list[tuple[dict[str, object], str | None, str | None, int | None]] = [
        ({"t": "launch_missiles", "id": 7}, "unknown_type", "launch_missiles", 7),
        ({"id": 8}, "missing_field", "t", 8),
        ({"t": 5, "id": 9}, "invalid_field", "t", 9),
        ({"t": "ping", "id": "ten"}, "invalid_field", "id", None),
        ({"t": "ping", "id": -1}, "invalid_field", "id", None),
        ({"t": "ping", "id": 2**32}, "invalid_field", "id", None),
        (
            {"t": "act", "id": 11, "table": "t1", "action": {"kind": "play"}},
            "missing_field",
            None,
            11,
        ),
        ({"t": "act", "id": 12, "table": 5, "version": 1, "action": {}}, None, None, 12),
        (
            {"t": "act", "id": 13, "table": "t1", "version": "1", "action": {"kind": "play"}},
            "invalid_field",
            "version",
            13,
        ),
        (
            {"t": "act", "id": 14, "table": "t1", "version": 1, "action": {"kind": "fold"}},
            "invalid_field",
            None,
            14,
        ),
        ({"t": "chat", "id": 15, "scope": "lobby", "text": "x" * 501}, "invalid_field", "text", 15),
        ({"t": "welcome", "id": 16}, "unexpected_message", None, 16),
        ({"t": "card_played", "id": 17}, "unexpected_message", None, 17),
        (
            {"t": "hello", "id": 18, "protocol": "1.0", "client": "x", "kind": "human"},
            "unexpected_message",
            None,
            18,
        ),
    ]
    with trio.fail_after(40):
        for body, code, detail, rid in cases:
            error = await recoverable_reply(shared_server.port, body)
            if code is not None:
                assert error.code == code, (body, error)
            else:
                assert error.code in {"invalid_field", "missing_field", "unexpected_message"}, error
            if detail is not None:
                assert error.detail == detail, (body, error)
            assert error.id == rid, (body, error)


async def test_random_garbage_gets_an_error_and_nobody_else_notices(
    shared_server: ServerProcess,
) -> None:
    """200 connections spray random bytes (seeded) while a bystander keeps talking to the server."""
    rng = random.Random(20261130)
    outcomes: dict[str, int] = {}
    with trio.fail_after(90):
        bystander = await welcomed(shared_server.port)
        before = shared_server.rss_kib()

        async def spray(seed: int) -> None:
            local = random.Random(seed)
            # At most one read of the server (16 KiB): bytes it leaves unread when it hangs up make
            # the kernel answer with a reset, which can overtake the error frame.
            size = local.choice([1, 3, 4, 5, 64, 1000, 12_000])
            data = local.randbytes(size)
            if local.random() < 0.5 and size > 8:
                # A plausible length prefix, so the body reaches the msgpack decoder.
                data = struct.pack(">I", size - 4) + data[4:]
            peer = await welcomed(shared_server.port)
            try:
                await peer.send_raw(data)
                await peer.stream.send_eof()
                got = await peer.drain_until_closed()
            finally:
                await peer.aclose()
            codes = [e.code for e in errors(got)]
            # Every sprayed connection ends with one fatal error; recoverable ones may precede it
            # (random bytes can form a well-framed message that is merely refused).
            assert codes, f"no error for {data[:16].hex()}..."
            assert codes[-1] in FATAL, codes
            assert all(code not in FATAL for code in codes[:-1]), codes
            outcomes[codes[-1]] = outcomes.get(codes[-1], 0) + 1

        for start in range(0, 200, 20):
            async with trio.open_nursery() as nursery:
                for i in range(start, start + 20):
                    nursery.start_soon(spray, rng.randrange(2**32) + i)
            # The bystander is answered between every wave, on the same connection.
            assert errors(await round_trip(bystander)) == []
        await bystander.aclose()
        grown = shared_server.rss_kib() - before
        assert grown < 30 * MiB, f"the server grew by {grown} KiB over 200 garbage connections"
    assert sum(outcomes.values()) == 200
    assert set(outcomes) <= FATAL


async def test_a_bad_frame_from_one_client_does_not_touch_a_game_in_progress(
    shared_server: ServerProcess, fresh_name: str
) -> None:
    """A spectator's connection stays open and in sequence while other clients send bombs."""
    with trio.fail_after(60):
        owner = await welcomed(shared_server.port, fresh_name)
        created = await owner.request(
            CreateTable(
                game=Game.HEARTS,
                preset="hearts",
                options={"max_hands": 1, "target_score": 0},
                bots=[0, 1, 2, 3],
            )
        )
        assert isinstance(created, TableCreated), created
        watcher = await welcomed(shared_server.port)
        await watcher.request(Guest())
        await watcher.request(Spectate(table=created.table))
        for _ in range(10):
            got = await fatal_reply(shared_server.port, frame(b"\xdd\xff\xff\xff\xff"))
            assert [e.code for e in errors(got)] == ["bad_msgpack"]
        assert errors(await round_trip(watcher)) == []
        await watcher.aclose()
        await owner.aclose()
