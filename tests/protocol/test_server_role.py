"""The server's side of `Connection`, driven the way a session drives it (docs for the port of
server/session.py, as a test): answer what it refuses, take the hello, welcome, stamp events from a
shared `EventFrames`, let a turn's `act` off the rate limit, and stop at `bye` or a fatal error."""

import dataclasses
from dataclasses import dataclass, field

from protocol.connection import CONNECTION_CLOSED, Connection
from protocol.errors import RemoteProtocolError
from protocol.messages import (
    Act,
    Bye,
    CardPlayed,
    Error,
    Hello,
    ListTables,
    Message,
    Ok,
    Ping,
    Pong,
    Sender,
    Tables,
    Welcome,
    YourTurn,
)
from protocol.phases import Phase
from protocol.types import Action, ActionKind, ClientKind
from protocol.wire import EventFrames, MessageDecoder, encode, error_message
from tests.protocol.test_connection import WELCOME, phase_of

PLAY = Action(kind=ActionKind.PLAY, card="QS")


@dataclass
class Session:
    """A session's protocol half: `feed` is the reader task's body, `deliver` what tables call."""

    conn: Connection = field(default_factory=lambda: Connection(Sender.SERVER))
    outbox: list[bytes] = field(default_factory=list)
    rate_tokens: int = 3  # the token bucket's, frozen: the clock is the session's business
    closed: bool = False

    def deliver(self, message: Message) -> None:
        if self.conn.can_send:  # a table may still push to a session that is closing
            self.outbox.append(self.conn.send(message))

    def deliver_shared(self, frames: EventFrames) -> None:
        if self.conn.can_send:
            self.outbox.append(self.conn.send_event(frames))

    def charge(self, message: Message | RemoteProtocolError) -> bool:
        if isinstance(message, Message) and self.conn.answers_turn(message):
            return True  # the act the server asked for: free
        if self.rate_tokens == 0:
            return False
        self.rate_tokens -= 1
        return True

    @staticmethod
    def too_fast(rid: int | None) -> Error:
        return Error(id=rid, code="rate_limited", message="too many messages")

    def feed(self, data: bytes) -> None:
        self.conn.receive_data(data)
        while not self.closed:
            try:
                message = self.conn.next_event()
            except RemoteProtocolError as refused:
                if refused.fatal:  # say why, then hang up (the outbox is flushed, then closed)
                    self.deliver(error_message(refused))
                    self.closed = True
                elif self.charge(refused):  # a refused message counts against the rate too
                    self.deliver(error_message(refused))
                else:
                    self.deliver(self.too_fast(refused.request_id))
                continue
            if message is None:
                return
            if message is CONNECTION_CLOSED or isinstance(message, Bye):
                self.closed = True
                return
            assert isinstance(message, Message)
            if not self.charge(message):
                self.deliver(self.too_fast(getattr(message, "id", None)))
            elif isinstance(message, Hello):
                self.deliver(dataclasses.replace(WELCOME, id=message.id))
            elif isinstance(message, Ping):
                self.deliver(Pong(id=message.id))
            elif isinstance(message, ListTables):
                self.deliver(Tables(id=message.id, tables=[]))
            elif isinstance(message, Act):
                self.deliver(Ok(id=message.id))


def read(client: Connection, data: list[bytes]) -> list[Message]:
    client.receive_data(b"".join(data))
    data.clear()
    out = []
    while (message := client.next_event()) is not None:
        assert isinstance(message, Message)
        out.append(message)
    return out


def test_a_session_from_first_byte_to_bye() -> None:
    session, client = Session(rate_tokens=10), Connection(Sender.CLIENT)
    # Before hello: a request refused (the connection goes on), a ping answered.
    session.feed(encode(ListTables(id=7)) + encode(Ping(id=8)))
    early = MessageDecoder(Sender.SERVER)
    early.receive_data(b"".join(session.outbox))
    refused, pong = list(early)
    assert isinstance(refused, Error) and (refused.code, refused.id) == ("unexpected_message", 7)
    assert pong == Pong(id=8)
    assert session.conn.phase is Phase.AWAITING_HELLO
    session.outbox.clear()
    # The handshake, with a request pipelined behind the hello.
    session.feed(
        client.send(Hello(protocol="1.0", client="c", kind=ClientKind.BOT))
        + client.send(ListTables())
    )
    welcome, tables = read(client, session.outbox)
    assert isinstance(welcome, Welcome) and welcome.id == 1
    assert isinstance(tables, Tables) and tables.id == 2
    assert phase_of(session.conn) is Phase.OPEN and client.pending == {}
    # A table's event, encoded once, to this session and another; each stamps its own seq.
    other = Session()
    other.feed(encode(Hello(protocol="1.0", client="o", kind=ClientKind.HUMAN)))
    event = EventFrames(CardPlayed(table="t7", version=3, seat=0, card="QS", trick_number=1))
    other.deliver_shared(event)
    session.deliver_shared(event)
    session.deliver_shared(
        EventFrames(
            YourTurn(table="t7", version=4, seat=1, legal=[PLAY], deadline_ms=1000, bank_ms=0)
        )
    )
    played, turn = read(client, session.outbox)
    assert isinstance(played, CardPlayed) and played.seq == 1
    assert isinstance(turn, YourTurn) and turn.seq == 2
    assert other.conn.seq == 1
    # The act for that turn is not charged; the client says bye; the session stops there.
    session.rate_tokens = 0
    session.feed(client.send(Act(table="t7", version=4, action=PLAY)) + client.send(Bye()))
    (ok,) = read(client, session.outbox)
    assert isinstance(ok, Ok) and ok.id == 3
    assert session.closed and session.conn.closed_by == {Sender.CLIENT}
    session.deliver_shared(event)  # a table's late push: dropped, not raised
    assert session.outbox == []


def test_a_fatal_error_is_answered_and_ends_the_session() -> None:
    session = Session()
    session.feed(encode(Hello(id=4, protocol="7.0", client="future", kind=ClientKind.BOT)))
    assert session.closed and session.conn.phase is Phase.CLOSING
    client = Connection(Sender.CLIENT)
    client.send(Hello(id=4, protocol="1.0", client="c", kind=ClientKind.BOT))
    (refusal,) = read(client, session.outbox)
    assert isinstance(refusal, Error)
    assert (refusal.code, refusal.id, refusal.detail) == ("version_mismatch", 4, "1.0")
    assert client.phase is Phase.CLOSING


def test_refusals_count_against_the_rate() -> None:
    session = Session(rate_tokens=2)
    session.feed(encode(Hello(protocol="1.0", client="c", kind=ClientKind.BOT)))
    session.outbox.clear()
    session.feed(
        b"".join(
            encode(Hello(id=i, protocol="1.0", client="c", kind=ClientKind.BOT)) for i in (5, 6)
        )
    )
    decoder = MessageDecoder(Sender.SERVER)
    decoder.receive_data(b"".join(session.outbox))
    assert [(e.code, e.id) for e in decoder if isinstance(e, Error)] == [
        ("unexpected_message", 5),
        ("rate_limited", 6),
    ]


def test_a_broken_frame_is_answered_without_an_id_and_ends_the_session() -> None:
    session = Session()
    session.feed(b"\x00\x00\x00\x00")
    assert session.closed
    client = Connection(Sender.CLIENT)
    (refusal,) = read(client, session.outbox)
    assert isinstance(refusal, Error) and (refusal.code, refusal.id) == ("bad_frame", None)
