"""docs/protocol.md's WebSocket section: its bytes are what the server sends and reads."""

from __future__ import annotations

import json
import re

import trio
import trio.testing
from wsproto import ConnectionType, WSConnection
from wsproto.events import AcceptConnection, BytesMessage, Request

from protocol.codec import pack_body
from protocol.docs import EXAMPLE, example_message, parse_hex
from protocol.framing import frame
from protocol.wire import to_wire
from server.web.websocket import TEXT_REFUSED, WebSocketStream
from tests.protocol.test_docs import TEXT

SECTION = TEXT.split("\n## WebSocket\n", 1)[1].split("\n## ", 1)[0]
JSON = re.search(r"The `ping` of \[Framing\]\(#framing\), `(\{.*?\})`", SECTION, re.S)
FRAMES = [parse_hex(block) for block in re.findall(r"```websocket\n(.*?)```", SECTION, re.S)]
MASK = bytes.fromhex("37fa213d")


def body_of_example() -> bytes:
    assert JSON is not None
    return pack_body(to_wire(example_message(JSON.group(1))))


def test_the_section_is_linked_and_says_the_prefix_is_not_sent() -> None:
    assert "- [WebSocket](#websocket)" in TEXT
    assert "4-byte length prefix of [Framing](#framing) is **not** sent" in " ".join(
        SECTION.split()
    )
    assert TEXT_REFUSED in SECTION
    assert len(FRAMES) == 2


def test_the_body_is_the_tcp_frames_body() -> None:
    # The Framing section's ping is the same message: its frame is the length prefix + this body.
    tcp = next(
        m for m in EXAMPLE.finditer(TEXT) if json.loads(m.group("json")) == {"t": "ping", "id": 1}
    )
    assert parse_hex(tcp.group("hex")) == frame(body_of_example())


async def test_the_server_frame_is_what_the_adapter_sends() -> None:
    server_end, client_end = trio.testing.memory_stream_pair()
    server = WSConnection(ConnectionType.SERVER)
    client = WSConnection(ConnectionType.CLIENT)
    server.receive_data(client.send(Request(host="x", target="/ws")))
    assert any(isinstance(e, Request) for e in server.events())
    client.receive_data(server.send(AcceptConnection()))
    assert any(isinstance(e, AcceptConnection) for e in client.events())
    stream = WebSocketStream(server_end, server, max_message_bytes=65536)
    with trio.fail_after(5):
        await stream.send_all(frame(body_of_example()))
        assert await client_end.receive_some() == FRAMES[0]


async def test_the_client_frame_is_read_as_the_same_message() -> None:
    body = body_of_example()
    masked = bytes(b ^ MASK[i % 4] for i, b in enumerate(body))
    assert FRAMES[1] == bytes([0x82, 0x80 | len(body)]) + MASK + masked
    server_end, client_end = trio.testing.memory_stream_pair()
    server = WSConnection(ConnectionType.SERVER)
    client = WSConnection(ConnectionType.CLIENT)
    server.receive_data(client.send(Request(host="x", target="/ws")))
    list(server.events())
    server.send(AcceptConnection())
    stream = WebSocketStream(server_end, server, max_message_bytes=65536)
    with trio.fail_after(5):
        await client_end.send_all(FRAMES[1])
        # The session reads the TCP framing: the prefix is added here.
        assert await stream.receive_some() == frame(body)
    # And wsproto, a WebSocket implementation of its own, reads the documented bytes the same way.
    reader = WSConnection(ConnectionType.SERVER)
    reader.receive_data(WSConnection(ConnectionType.CLIENT).send(Request(host="x", target="/ws")))
    list(reader.events())
    reader.send(AcceptConnection())
    reader.receive_data(FRAMES[1])
    assert [e.data for e in reader.events() if isinstance(e, BytesMessage)] == [body]
