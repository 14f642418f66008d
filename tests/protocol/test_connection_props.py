"""Property tests of `Connection`: any split of the bytes reads the same, and two honest ends that
send only what the phase table allows never refuse each other and agree on the phase."""

import dataclasses
import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.connection import CONNECTION_CLOSED, Connection
from protocol.errors import LocalProtocolError, closes_connection
from protocol.messages import (
    MESSAGE_TYPES,
    Bye,
    Error,
    Event,
    Hello,
    Message,
    Ping,
    Pong,
    Reply,
    Request,
    Sender,
    Welcome,
)
from protocol.phases import Phase
from protocol.wire import EventFrames
from tests.protocol.strategies import struct_strategy
from tests.protocol.test_connection import HELLO, WELCOME, in_phase

CLIENT, SERVER = Sender.CLIENT, Sender.SERVER


def _open_kinds(side: Sender) -> list[type[Message]]:
    """What a side sends while open, less what would end or restart the conversation."""
    return [
        cls
        for cls in MESSAGE_TYPES.values()
        if cls.SENDER in (side, Sender.EITHER) and cls not in (Hello, Welcome, Bye)
    ]


def _plain(message: Message) -> Message:
    """As an honest sender would hand it to its connection: requests unnumbered, replies unsolicited
    (their requests are not in this conversation), errors that do not close."""
    if isinstance(message, Request | Reply):
        message = dataclasses.replace(message, id=None)
    if isinstance(message, Error) and closes_connection(message.code):
        message = dataclasses.replace(message, code="illegal_action")
    return message


def traffic(side: Sender) -> st.SearchStrategy[list[Message]]:
    kinds = _open_kinds(side)
    return st.lists(st.one_of([struct_strategy(cls) for cls in kinds]).map(_plain), max_size=12)


def cut(data: bytes, points: list[int]) -> list[bytes]:
    edges = sorted({min(p, len(data)) for p in points} | {0, len(data)})
    return [data[a:b] for a, b in itertools.pairwise(edges)]


def read_everything(conn: Connection, pieces: list[bytes]) -> list[Message]:
    out: list[Message] = []
    for piece in [*pieces, b""]:
        conn.receive_data(piece)
        while (event := conn.next_event()) is not None and event is not CONNECTION_CLOSED:
            assert isinstance(event, Message)
            out.append(event)
    assert conn.next_event() is CONNECTION_CLOSED
    return out


@settings(max_examples=150, deadline=None)
@given(messages=traffic(SERVER), points=st.lists(st.integers(0, 20_000), max_size=30))
def test_the_server_to_client_stream_reads_the_same_in_any_split(
    messages: list[Message], points: list[int]
) -> None:
    server, client = in_phase(SERVER, Phase.OPEN), in_phase(CLIENT, Phase.OPEN)
    data = b""
    expected: list[Message] = []
    for i, given_message in enumerate(messages):
        message = (
            server.numbered(given_message) if isinstance(given_message, Request) else given_message
        )
        if isinstance(message, Event) and i % 2:
            data += server.send_event(EventFrames(message))  # the encode-once path, as a table uses
        else:
            data += server.send(message)
        if isinstance(message, Event):
            message = dataclasses.replace(message, seq=server.seq)
        expected.append(message)
    assert read_everything(client, cut(data, points)) == expected
    assert client.seq == server.seq
    assert client.phase is Phase.CLOSED


@settings(max_examples=150, deadline=None)
@given(messages=traffic(CLIENT), points=st.lists(st.integers(0, 20_000), max_size=30))
def test_the_client_to_server_stream_reads_the_same_in_any_split(
    messages: list[Message], points: list[int]
) -> None:
    client, server = in_phase(CLIENT, Phase.OPEN), in_phase(SERVER, Phase.OPEN)
    data = b""
    expected: list[Message] = []
    for given_message in messages:
        message = (
            client.numbered(given_message) if isinstance(given_message, Request) else given_message
        )
        data += client.send(message)
        expected.append(message)
    assert read_everything(server, cut(data, points)) == expected
    assert sorted(client.pending) == [m.id for m in expected if isinstance(m, Request)]


# ---- two honest ends, any interleaving --------------------------------------------------------------

# What each end may try, whatever the phase: the connection says whether it may (and must refuse
# exactly what the table refuses). Replies answer the oldest ping the end has received.
OPENING = ["client hello", "server welcome"]
TALK = [
    "client ping",
    "client request",
    "client pong",
    "server event",
    "server reply",
    "server ping",
    "server pong",
    "server refusal",
]
ENDING = ["client bye", "server closing error", "server bye"]
# The ending is rare (it ends the conversation), the opening frequent (nothing much happens before).
ACTIONS = st.sampled_from(OPENING * 4 + TALK * 2 + ENDING)


class End:
    def __init__(self, role: Sender) -> None:
        self.conn = Connection(role)
        self.outbox = b""
        self.pings: list[int] = []  # pings received, to answer
        self.hello_id: int | None = None  # the hello received, to answer
        self.answered: set[int] = set()  # the pings it answered

    def attempt(self, message: Message) -> None:
        allowed = self.conn.may_send(type(message))
        try:
            self.outbox += self.conn.send(message)
        except LocalProtocolError:
            assert not allowed, message
            return
        assert allowed, message
        if isinstance(message, Pong) and message.id is not None:
            self.pings.remove(message.id)
            self.answered.add(message.id)

    def take(self, data: bytes) -> list[Message]:
        if data:  # (b"" would say the stream ended)
            self.conn.receive_data(data)
        got: list[Message] = []
        while (event := self.conn.next_event()) is not None:
            assert isinstance(event, Message)
            if isinstance(event, Ping) and event.id is not None:
                self.pings.append(event.id)
            if isinstance(event, Hello):
                self.hello_id = event.id
            got.append(event)
        return got


def _build(action: str, end: End) -> Message:
    from protocol.messages import CardPlayed, ListTables, Ok

    pong_id = end.pings[0] if end.pings and action.endswith("pong") else None
    built: dict[str, Message] = {
        "client hello": dataclasses.replace(HELLO, id=None),
        "client ping": Ping(),
        "client request": ListTables(),
        "client pong": Pong(id=pong_id),
        "client bye": Bye(),
        "server welcome": dataclasses.replace(WELCOME, id=end.hello_id),
        "server event": CardPlayed(table="t7", version=1, seat=0, card="QS", trick_number=1),
        "server reply": Ok(),
        "server ping": Ping(),
        "server pong": Pong(id=pong_id),
        "server refusal": Error(code="rate_limited", message="slow down"),
        "server closing error": Error(code="timeout", message="idle"),
        "server bye": Bye(reason="stopping"),
    }
    return built[action]


@settings(max_examples=400, deadline=None)
@given(
    script=st.lists(
        st.tuples(ACTIONS, st.sampled_from([0, 0, 1, 7, 40, 1000]), st.sampled_from([0, 5, 1000])),
        max_size=40,
    )
)
def test_two_honest_ends_never_refuse_each_other_and_agree_on_the_phase(
    script: list[tuple[str, int, int]],
) -> None:
    client, server = End(CLIENT), End(SERVER)
    for action, to_server, to_client in script:
        end = client if action.startswith("client") else server
        end.attempt(_build(action, end))
        # Then some bytes travel each way (none: the next messages cross these).
        piece, client.outbox = client.outbox[:to_server], client.outbox[to_server:]
        server.take(piece)  # an honest peer is never refused: no RemoteProtocolError
        piece, server.outbox = server.outbox[:to_client], server.outbox[to_client:]
        client.take(piece)
    # Deliver whatever is still on the way; then both ends agree.
    for _ in range(2):
        server.take(client.outbox)
        client.outbox = b""
        client.take(server.outbox)
        server.outbox = b""
    assert client.conn.phase is server.conn.phase
    assert client.conn.seq == server.conn.seq
    # Every answer was matched to its question, on both sides.
    assert not client.conn.pending.keys() & server.answered
    assert not server.conn.pending.keys() & client.answered
