"""The protocol over WebSocket: the same sessions, messages, limits and errors as over TCP."""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio
import trio.testing
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, Request

from protocol.errors import ErrorCode
from protocol.messages import (
    Act,
    Bye,
    CreateTable,
    Error,
    GameOver,
    HandDealt,
    Register,
    Registered,
    Snapshot,
    TableCreated,
    Welcome,
    YourTurn,
)
from protocol.types import Game
from server.app import Server, local_config, running_server
from server.config import Limits
from server.connection import Outbox
from server.web.websocket import WebSocketStream
from tests.server.wire_client import WireClient
from tests.tls_certs import make_certificate
from tests.web.ws_client import Rejected, WSClient

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def clients() -> AsyncIterator[list[WSClient]]:
    """Every WebSocket client a test opens, closed when it ends."""
    opened: list[WSClient] = []
    yield opened
    for client in opened:
        await client.aclose()


async def test_a_whole_game_over_websocket(web_server: Server, clients: list[WSClient]) -> None:
    """Register, open a one-hand table with three bots and play it out, all over the web port."""
    with trio.fail_after(30):
        client = await WSClient.connect(web_server.web_port or 0)
        clients.append(client)
        assert isinstance(await client.hello(), Welcome)
        await client.send(Register(name="wsplayer"))
        assert isinstance(await client.receive(), Registered)
        await client.send(
            CreateTable(
                game=Game.SPADES,
                preset="standard",
                options={"max_hands": 1},
                bots=[1, 2, 3],
                sit=0,
            )
        )
        assert isinstance(await client.expect(TableCreated), TableCreated)
        assert (await client.expect(Snapshot)).seat == 0
        assert len((await client.expect(HandDealt)).cards or []) == 13
        for _ in range(1000):  # every event of a hand, with room to spare
            message = await client.receive()
            assert message is not None
            if isinstance(message, GameOver):
                break
            if isinstance(message, YourTurn):
                await client.send(
                    Act(table=message.table, version=message.version, action=message.legal[0])
                )
        else:
            raise AssertionError("the game did not end")


async def test_the_session_knows_the_real_peer_address(
    web_server: Server, clients: list[WSClient]
) -> None:
    with trio.fail_after(10):
        client = await WSClient.connect(web_server.web_port or 0)
        clients.append(client)
        welcome = await client.hello()
        assert isinstance(welcome, Welcome)
        local_port = client.stream.socket.getsockname()[1]  # type: ignore[attr-defined]
        peers = {s.peer for s in web_server.sessions if s.id == welcome.session}
        assert peers == {f"127.0.0.1:{local_port}"}


async def test_a_message_above_the_frame_limit_is_refused_as_over_tcp(
    web_server: Server, clients: list[WSClient]
) -> None:
    limit = web_server.config.limits.max_frame_bytes
    with trio.fail_after(10):
        client = await WSClient.connect(web_server.web_port or 0)
        clients.append(client)
        await client.hello()
        await client.send_body(b"\x80" + b"x" * limit)  # one byte over, never a valid map
        error = await client.expect(Error)
        assert error.code == ErrorCode.FRAME_TOO_LARGE.value
        assert await client.receive() is None
        assert client.close is not None and client.close.code == 1009  # message too big


async def test_an_empty_message_is_a_bad_frame(web_server: Server, clients: list[WSClient]) -> None:
    with trio.fail_after(10):
        client = await WSClient.connect(web_server.web_port or 0)
        clients.append(client)
        await client.hello()
        await client.send_body(b"")
        error = await client.expect(Error)
        assert error.code == ErrorCode.BAD_FRAME.value
        assert await client.receive() is None


async def test_a_body_that_is_not_a_map_is_answered_and_the_session_goes_on(
    web_server: Server, clients: list[WSClient]
) -> None:
    with trio.fail_after(10):
        client = await WSClient.connect(web_server.web_port or 0)
        clients.append(client)
        await client.hello()
        await client.send_body(b"\x01")  # msgpack 1: not a map, a recoverable error
        error = await client.expect(Error)
        assert error.code == ErrorCode.NOT_A_MAP.value
        await client.send(Register(name="stillhere"))
        assert isinstance(await client.receive(), Registered)


async def test_text_messages_are_refused_with_a_close_code_and_a_sentence(
    web_server: Server, clients: list[WSClient]
) -> None:
    with trio.fail_after(10):
        client = await WSClient.connect(web_server.web_port or 0)
        clients.append(client)
        await client.send_text('{"t": "hello"}')
        assert await client.receive() is None
        assert client.close is not None and client.close.code == 1003
        assert "binary messages only" in (client.close.reason or "")


async def test_websocket_pings_are_answered(web_server: Server, clients: list[WSClient]) -> None:
    with trio.fail_after(10):
        client = await WSClient.connect(web_server.web_port or 0)
        clients.append(client)
        await client.send_ping(b"are you there")
        await client.hello()  # the pong comes before the welcome: the ping was read first
        assert client.pongs == [b"are you there"]


async def test_a_browser_from_another_site_is_refused(
    web_server: Server, clients: list[WSClient]
) -> None:
    port = web_server.web_port or 0
    with trio.fail_after(10):
        with pytest.raises(Rejected) as refused:
            await WSClient.connect(port, origin="http://evil.example")
        assert refused.value.status == 403
        client = await WSClient.connect(port, origin=f"http://127.0.0.1:{port}")
        clients.append(client)
        assert isinstance(await client.hello(), Welcome)


async def test_no_hello_in_time_over_websocket(tmp_path: Path, clients: list[WSClient]) -> None:
    config = local_config(tmp_path / "s.db", web_port=0, limits=Limits(handshake_timeout=0.3))
    async with running_server(config) as server:
        with trio.fail_after(10):
            client = await WSClient.connect(server.web_port or 0)
            clients.append(client)
            error = await client.expect(Error)
            assert error.code == ErrorCode.TIMEOUT.value
            assert await client.receive() is None


async def test_idle_sessions_are_let_go_over_websocket(
    tmp_path: Path, clients: list[WSClient]
) -> None:
    config = local_config(tmp_path / "s.db", web_port=0, limits=Limits(idle_timeout=0.3))
    async with running_server(config) as server:
        with trio.fail_after(10):
            client = await WSClient.connect(server.web_port or 0)
            clients.append(client)
            await client.hello()
            error = await client.expect(Error)
            assert error.code == ErrorCode.TIMEOUT.value
            assert await client.receive() is None


async def test_websocket_sessions_count_in_the_same_per_address_limit(
    tmp_path: Path, clients: list[WSClient]
) -> None:
    config = local_config(
        tmp_path / "s.db", web_port=0, limits=Limits(max_connections_per_address=1)
    )
    async with running_server(config) as server:
        with trio.fail_after(10):
            tcp = await WireClient.connect(server.port)
            await tcp.hello()
            client = await WSClient.connect(server.web_port or 0)
            clients.append(client)
            error = await client.expect(Error)
            assert error.code == ErrorCode.SERVER_FULL.value
            assert await client.receive() is None
            await tcp.stream.aclose()


async def test_stopping_the_server_says_bye_over_websocket(
    tmp_path: Path, clients: list[WSClient]
) -> None:
    async with running_server(local_config(tmp_path / "s.db", web_port=0)) as server:
        with trio.fail_after(10):
            client = await WSClient.connect(server.web_port or 0)
            clients.append(client)
            await client.hello()
            server.request_stop()
            assert isinstance(await client.expect(Bye), Bye)
            assert await client.receive() is None


async def test_wss_and_https_with_the_servers_certificate(
    tmp_path: Path, clients: list[WSClient]
) -> None:
    import ssl

    cert, key = make_certificate(tmp_path)
    config = local_config(tmp_path / "s.db", web_port=0, tls_cert=cert, tls_key=key)
    trust = ssl.create_default_context(cafile=str(cert))
    async with running_server(config) as server:
        with trio.fail_after(10):
            client = await WSClient.connect(server.web_port or 0, tls=trust)
            clients.append(client)
            assert isinstance(await client.hello(), Welcome)
            tcp = await trio.open_tcp_stream("127.0.0.1", server.web_port or 0)
            stream = trio.SSLStream(tcp, trust, server_hostname="127.0.0.1")
            await stream.send_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            assert (await stream.receive_some(100)).startswith(b"HTTP/1.1 200")
            await stream.aclose()


async def test_a_busy_default_web_port_is_not_fatal_but_a_chosen_one_is(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        busy = taken.getsockname()[1]
        relaxed = local_config(tmp_path / "a.db", web_port=busy, web_port_optional=True)
        async with running_server(relaxed) as server:
            assert server.web_port is None and server.port
        with pytest.raises(BaseExceptionGroup) as failed:  # trio's nurseries wrap it
            async with running_server(local_config(tmp_path / "b.db", web_port=busy)):
                pass  # pragma: no cover
        assert failed.group_contains(OSError, match=f"web port {busy}", depth=None)


# ---- the adapter alone, over memory streams ------------------------------------------------------


async def accepted_pair(**kwargs: int) -> tuple[WebSocketStream, trio.abc.Stream, WSConnection]:
    """A server-side WebSocketStream over a lockstep stream pair (send_all waits for the reader)
    and the client's end with its wsproto connection, handshake done."""
    server_end, client_end = trio.testing.lockstep_stream_pair()
    client = WSConnection(ConnectionType.CLIENT)
    server = WSConnection(ConnectionType.SERVER)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(client_end.send_all, client.send(Request(host="x", target="/ws")))
        server.receive_data(bytes(await server_end.receive_some()))
    assert any(isinstance(event, Request) for event in server.events())
    async with trio.open_nursery() as nursery:
        nursery.start_soon(server_end.send_all, server.send(AcceptConnection()))
        client.receive_data(bytes(await client_end.receive_some()))
    assert any(isinstance(event, AcceptConnection) for event in client.events())
    return (
        WebSocketStream(server_end, server, max_message_bytes=kwargs.get("max", 1024)),
        client_end,
        client,
    )


async def test_a_reader_that_never_reads_is_a_slow_consumer() -> None:
    """The outbox, not the WebSocket, bounds what waits for a stalled browser: once it is full the
    connection is dropped (reason slow_consumer), exactly as over TCP."""
    ws_stream, _client_end, _client = await accepted_pair()
    connection = Outbox(ws_stream, outbox_size=4, peer="test")
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(connection.run_writer)
            await trio.testing.wait_all_tasks_blocked()
            sent = [connection.send({"t": "pong", "id": i}) for i in range(10)]
            assert not all(sent)
            assert connection.close_reason == ErrorCode.SLOW_CONSUMER
            nursery.cancel_scope.cancel()
