"""The web port's HTTP slots shared between addresses (issue 37, item 7): slow connections from a
few addresses (127.0.0.2, 127.0.0.3...: the client socket bound to each) no longer fill every slot;
an address holds at most its share, and a newcomer finds room."""

from __future__ import annotations

import contextlib
import ssl
from functools import partial
from pathlib import Path

import pytest
import trio
import trio.testing

from protocol.messages import Welcome
from server.app import Server
from server.tls import server_context
from server.web import WebLimits, serve_web
from server.web.http import HttpConnection
from server.web.slots import HttpSlots, Refusal, Slot
from server.web.static_files import load_site
from tests.tls_certs import make_certificate
from tests.web.test_web_doors import read_all
from tests.web.test_web_port import HEADERS_END, get, no_session, parse_headers, web_port
from tests.web.ws_client import WSClient

pytestmark = pytest.mark.timeout(60)


async def hold(port: int, source: str, *, partial: bool = True) -> trio.SocketStream:
    """A connection from `source` that is surely counted (one request answered on it), then left
    idle between requests (`partial=False`) or in the middle of its next request's head (as a
    slow client would)."""
    stream = await trio.open_tcp_stream("127.0.0.1", port, local_address=source)
    await stream.send_all(get("/icon.svg"))
    data = b""
    while b"</svg>" not in data:  # the whole answer (the icon ends so)
        chunk = await stream.receive_some(65536)
        assert chunk, "closed before answering"
        data += chunk
    assert data.startswith(b"HTTP/1.1 200")
    if partial:
        await stream.send_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    return stream


async def page_from(port: int, source: str) -> tuple[int, dict[str, str]]:
    stream = await trio.open_tcp_stream("127.0.0.1", port, local_address=source)
    async with stream:
        await stream.send_all(get("/", "Connection: close\r\n"))
        answer = await read_all(stream)
    head = answer.partition(HEADERS_END)[0]
    return int(head.split()[1]), parse_headers(head)


async def test_one_address_holds_at_most_its_share_and_others_are_served() -> None:
    limits = WebLimits(max_connections=32, request_timeout=30)
    assert limits.per_address == 4  # max(4, 32 // 8)
    async with web_port(limits) as port:
        with trio.fail_after(20):
            held = [await hold(port, "127.0.0.2") for _ in range(limits.per_address)]
            status, headers = await page_from(port, "127.0.0.2")
            assert status == 503 and int(headers["retry-after"]) > 0
            assert (await page_from(port, "127.0.0.3"))[0] == 200
            for stream in held:
                await stream.aclose()


async def try_hold(port: int, source: str) -> trio.SocketStream | None:
    """`hold`, or None (the connection closed) if the server refused it 503."""
    stream = await trio.open_tcp_stream("127.0.0.1", port, local_address=source)
    await stream.send_all(get("/icon.svg"))
    data = b""
    while b"</svg>" not in data and not data.startswith(b"HTTP/1.1 503"):
        chunk = await stream.receive_some(65536)
        assert chunk, "closed before answering"
        data += chunk
    if data.startswith(b"HTTP/1.1 503"):
        await stream.aclose()
        return None
    await stream.send_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    return stream


@pytest.mark.parametrize("addresses", [5, 10])
async def test_slow_connections_from_many_addresses_leave_room_for_everyone_else(
    web_server: Server, addresses: int
) -> None:
    """The issue's attack with the default limits: 127.0.0.2, .3, ... each open as many slow
    connections as they may (five used to fill all 128 slots); the page and a WebSocket are still
    served to 127.0.0.100 and to 127.0.0.1, and no address got more than its share."""
    port = web_server.web_port or 0
    limits = WebLimits()
    share = limits.per_address
    held: list[trio.SocketStream] = []
    try:
        with trio.fail_after(40):
            for n in range(2, 2 + addresses):
                got = 0
                for _ in range(64):
                    stream = await try_hold(port, f"127.0.0.{n}")
                    if stream is None:
                        break
                    held.append(stream)
                    got += 1
                # Never more than its share; and an address that comes when every slot is
                # taken still gets its part of them (the others' oldest are closed for it).
                assert min(share, limits.max_connections // addresses) <= got <= share, n
            for source in ("127.0.0.100", "127.0.0.1"):
                assert (await page_from(port, source))[0] == 200, source
            client = await WSClient.connect(port)
            async with client:
                assert isinstance(await client.hello(), Welcome)
    finally:
        for stream in held:
            await trio.aclose_forcefully(stream)


async def test_when_every_slot_is_taken_a_newcomer_takes_one_from_the_biggest_holder() -> None:
    """Enough addresses to fill every slot: a new address is still served, by closing the oldest
    waiting connection of the address that holds the most; an address holding no more than the
    newcomer would after is not robbed."""
    limits = WebLimits(max_connections=4, max_connections_per_address=2, request_timeout=30)
    async with web_port(limits) as port:
        with trio.fail_after(20):
            first = [await hold(port, "127.0.0.2", partial=False) for _ in range(2)]
            second = [await hold(port, "127.0.0.3") for _ in range(2)]
            assert (await page_from(port, "127.0.0.4"))[0] == 200
            # The oldest of the biggest holders' waiting connections (127.0.0.2's first, idle
            # between requests) was closed to make room, without a word.
            assert await read_all(first[0]) == b""
            third = await hold(port, "127.0.0.4")
            # Full again: 127.0.0.2 holds 1, 127.0.0.3 holds 2. A second from .2 would leave .3
            # with no more than .2: refused, and nobody's connection is touched.
            assert (await page_from(port, "127.0.0.2"))[0] == 503
            # A newcomer takes .3's oldest, which had begun a request: told 503 if the server
            # had read those bytes yet, else simply closed.
            assert (await page_from(port, "127.0.0.5"))[0] == 200
            answer = await read_all(second[0])
            assert answer == b"" or answer.startswith(b"HTTP/1.1 503"), answer
            for stream in (*first, *second, third):
                await stream.aclose()


async def test_a_tls_handshake_never_finished_gives_its_slot_to_a_newcomer(tmp_path: Path) -> None:
    """Connections that never start TLS wait in the handshake: a newcomer takes one back."""
    cert, key = make_certificate(tmp_path)
    limits = WebLimits(max_connections=2, max_connections_per_address=2, request_timeout=30)
    trust = ssl.create_default_context(cafile=str(cert))
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(
                serve_web,
                no_session,
                host="127.0.0.1",
                port=0,
                tls=server_context(cert, key),
                max_message_bytes=65536,
                session_nursery=nursery,
                limits=limits,
            )
        )
        with trio.fail_after(20):
            silent = [
                await trio.open_tcp_stream("127.0.0.1", port, local_address="127.0.0.2")
                for _ in range(2)
            ]
            tcp = await trio.open_tcp_stream("127.0.0.1", port, local_address="127.0.0.3")
            stream = trio.SSLStream(tcp, trust, server_hostname="127.0.0.1")
            async with stream:
                await stream.send_all(get("/", "Connection: close\r\n"))
                assert (await stream.receive_some(100)).startswith(b"HTTP/1.1 200")
            # One of the two silent ones was closed for it (the first, unless the server took
            # 127.0.0.3's slot before it had counted them, when the second was refused instead),
            # long before the 30 s handshake deadline.
            closed = trio.Event()

            async def watch(stream: trio.SocketStream) -> None:
                if await stream.receive_some(100) == b"":
                    closed.set()

            with trio.move_on_after(5):
                async with trio.open_nursery() as watchers:
                    for one in silent:
                        watchers.start_soon(watch, one)
                    await closed.wait()
                    watchers.cancel_scope.cancel()
            assert closed.is_set()
            for one in silent:
                await one.aclose()
        nursery.cancel_scope.cancel()


# ---- the slots alone ------------------------------------------------------------------------------


async def test_an_ipv6_64_counts_as_one_address_and_ipv4_mapped_as_its_ipv4() -> None:
    slots = HttpSlots(total=100, per_address=2)
    assert isinstance(slots.take("2001:db8:1:2::1"), Slot)
    assert isinstance(slots.take("2001:db8:1:2:ffff::9"), Slot)
    assert slots.take("2001:db8:1:2::77") is Refusal.ADDRESS_FULL
    assert isinstance(slots.take("2001:db8:1:3::1"), Slot)  # another /64
    assert isinstance(slots.take("192.0.2.1"), Slot)
    assert isinstance(slots.take("::ffff:192.0.2.1"), Slot)
    assert slots.take("192.0.2.1") is Refusal.ADDRESS_FULL
    assert slots.open == 5


async def test_release_is_idempotent_and_frees_the_address() -> None:
    slots = HttpSlots(total=2, per_address=2)
    first = slots.take("192.0.2.1")
    assert isinstance(first, Slot)
    slots.release(first)
    slots.release(first)
    assert slots.open == 0 and slots.held_by("192.0.2.1") == 0


async def test_only_a_waiting_slot_of_a_bigger_holder_is_taken_back() -> None:
    slots = HttpSlots(total=3, per_address=3)
    held = [slots.take("192.0.2.1") for _ in range(3)]
    assert all(isinstance(slot, Slot) for slot in held)
    # Nobody waits (all are being answered): the newcomer is refused, nothing is cut.
    assert slots.take("192.0.2.2") is Refusal.PORT_FULL
    assert not any(isinstance(slot, Slot) and slot.evicted for slot in held)
    second, third = held[1], held[2]
    assert isinstance(second, Slot) and isinstance(third, Slot)
    with third.waiting(60) as third_scope, second.waiting(60) as second_scope:
        newcomer = slots.take("192.0.2.2")
        assert isinstance(newcomer, Slot)
        # The oldest of the waiting ones, cancelled and counted out at once.
        assert second.evicted and second_scope.cancel_called
        assert not third.evicted and not third_scope.cancel_called
        assert slots.held_by("192.0.2.1") == 2 and slots.open == 3
        # 192.0.2.1 now holds 2, the newcomer 1: a second newcomer slot would leave them even,
        # which is not worth cutting a connection for.
        assert slots.take("192.0.2.2") is Refusal.PORT_FULL
        assert not third.evicted


async def test_the_biggest_holder_gives_first() -> None:
    slots = HttpSlots(total=5, per_address=4)
    small = [slots.take("192.0.2.1")]
    big = [slots.take("192.0.2.9") for _ in range(4)]
    waiting = [slot for slot in (*small, *big) if isinstance(slot, Slot)]
    with contextlib.ExitStack() as stack:
        for slot in waiting:
            stack.enter_context(slot.waiting(60))
        assert isinstance(slots.take("192.0.2.5"), Slot)
        assert [slot.evicted for slot in waiting] == [False, True, False, False, False]


async def test_an_address_holding_nothing_gets_a_slot_when_every_address_holds_one() -> None:
    """Many addresses with one connection each lock nobody out: a newcomer takes the oldest
    waiting one; a second connection of the newcomer's is then refused (it holds one already)."""
    slots = HttpSlots(total=4, per_address=4)
    held = [slots.take(f"192.0.2.{n}") for n in range(1, 5)]
    waiting = [slot for slot in held if isinstance(slot, Slot)]
    with contextlib.ExitStack() as stack:
        for slot in waiting:
            stack.enter_context(slot.waiting(60))
        assert isinstance(slots.take("192.0.2.9"), Slot)
        assert [slot.evicted for slot in waiting] == [True, False, False, False]
        assert slots.take("192.0.2.9") is Refusal.PORT_FULL
        assert slots.open == 4


async def test_a_peer_that_does_not_read_its_answer_gives_its_slot_to_a_newcomer() -> None:
    """Waiting for a peer to read is waiting too: the answer is cut and the slot given back long
    before the send timeout."""
    server_end, client_end = trio.testing.lockstep_stream_pair()  # send_all waits for a reader
    slots = HttpSlots(total=1, per_address=1)
    slot = slots.take("192.0.2.1")
    assert isinstance(slot, Slot)
    connection = HttpConnection(
        server_end,
        "192.0.2.1:1000",
        load_site(),
        WebLimits(send_timeout=60, request_timeout=60),
        slot=slot,
        max_message_bytes=1024,
    )
    served: list[object] = []

    async def serve() -> None:
        served.append(await connection.serve())

    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(serve)
            await client_end.send_all(get("/"))
            await trio.testing.wait_all_tasks_blocked()  # the answer waits for a reader
            assert not served
            assert isinstance(slots.take("192.0.2.2"), Slot)
    assert slot.evicted and served == [None]
