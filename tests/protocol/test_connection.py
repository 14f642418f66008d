"""`protocol.connection.Connection`: one golden table of (phase, sender, message, bytes) rows drives
both the writer and the reader tests (as h11's tests/test_io.py does); then the phase rules, reply
matching, `seq`, `bye` and the errors, each with whose fault it is."""

import dataclasses
from collections.abc import Callable
from functools import partial

import pytest

from protocol.connection import CONNECTION_CLOSED, Connection, ConnectionClosed
from protocol.errors import ErrorCode, LocalProtocolError, RemoteProtocolError
from protocol.messages import (
    Act,
    Bye,
    CardPlayed,
    Error,
    Hello,
    Join,
    Joined,
    ListTables,
    Message,
    Ok,
    Ping,
    Pong,
    Reply,
    Request,
    Sender,
    Welcome,
    YourTurn,
)
from protocol.phases import MAY_SEND, Phase
from protocol.types import Action, ActionKind, ClientKind, Clock, ServerLimits
from protocol.wire import EventFrames, encode, error_message

CLIENT, SERVER = Sender.CLIENT, Sender.SERVER
A_HELLO, A_WELCOME, OPEN = Phase.AWAITING_HELLO, Phase.AWAITING_WELCOME, Phase.OPEN

HELLO = Hello(id=1, protocol="1.0", client="t/1", kind=ClientKind.BOT)
LIMITS = ServerLimits(
    max_frame_size=65536,
    max_str_len=4096,
    max_array_len=1024,
    max_map_len=256,
    max_depth=16,
    rate_per_second=20,
    rate_burst=40,
    handshake_timeout_ms=10000,
    idle_timeout_ms=60000,
    clock=Clock(turn_ms=30000, bank_ms=0),
)
WELCOME = Welcome(
    id=1, server="s", server_version="0.1", protocol="1.0", session="s1", limits=LIMITS
)
PLAY_QS = Action(kind=ActionKind.PLAY, card="QS")

# (phase, sender, message, its exact frame). The bytes are written out, not computed: they are the
# contract (docs/protocol.md's examples are checked the same way).
GOLDEN: list[tuple[Phase, Sender, Message, str]] = [
    (
        A_HELLO,
        CLIENT,
        HELLO,
        "0000002e85a174a568656c6c6fa2696401a870726f746f636f6ca3312e30a6636c69656e74a3742f31"
        "a46b696e64a3626f74",
    ),
    (
        A_HELLO,
        CLIENT,
        Hello(id=1, protocol="1.0", client="t/1", kind=ClientKind.HUMAN, token="tok"),
        "0000003a86a174a568656c6c6fa2696401a870726f746f636f6ca3312e30a6636c69656e74a3742f31"
        "a46b696e64a568756d616ea5746f6b656ea3746f6b",
    ),
    # A ping before hello is answered (docs/protocol.md, Handshake).
    (A_HELLO, CLIENT, Ping(id=1), "0000000c82a174a470696e67a2696401"),
    (A_HELLO, SERVER, Pong(id=1), "0000000c82a174a4706f6e67a2696401"),
    (
        A_HELLO,
        SERVER,
        Error(id=2, code="unexpected_message", message="send hello first", detail="list_tables"),
        "0000005185a174a56572726f72a2696402a4636f6465b2756e65787065637465645f6d657373616765"
        "a76d657373616765b073656e642068656c6c6f206669727374a664657461696cab6c6973745f746162"
        "6c6573",
    ),
    (
        A_HELLO,
        SERVER,
        Error(code="timeout", message="no hello in time"),
        "0000002f83a174a56572726f72a4636f6465a774696d656f7574a76d657373616765b06e6f2068656c"
        "6c6f20696e2074696d65",
    ),
    (A_HELLO, CLIENT, Bye(), "0000000781a174a3627965"),
    (
        A_WELCOME,
        SERVER,
        WELCOME,
        "0000010488a174a777656c636f6d65a2696401a6736572766572a173ae7365727665725f7665727369"
        "6f6ea3302e31a870726f746f636f6ca3312e30a773657373696f6ea27331a6677565737473c2a66c69"
        "6d6974738aae6d61785f6672616d655f73697a65ce00010000ab6d61785f7374725f6c656ecd1000ad"
        "6d61785f61727261795f6c656ecd0400ab6d61785f6d61705f6c656ecd0100a96d61785f6465707468"
        "10af726174655f7065725f7365636f6e6414aa726174655f627572737428b468616e647368616b655f"
        "74696d656f75745f6d73cd2710af69646c655f74696d656f75745f6d73cdea60a5636c6f636b82a774"
        "75726e5f6d73cd7530a762616e6b5f6d7300",
    ),
    # Requests may follow the hello at once (the server reads them once it has answered it).
    (
        A_WELCOME,
        CLIENT,
        ListTables(id=3),
        "0000001f83a174ab6c6973745f7461626c6573a2696403aa6f70656e5f7365617473c2",
    ),
    (
        OPEN,
        CLIENT,
        Join(id=4, table="t7"),
        "0000001f84a174a46a6f696ea2696404a57461626c65a27437a874616b656f766572c2",
    ),
    (
        OPEN,
        CLIENT,
        Act(id=7, table="t7", version=17, action=PLAY_QS),
        "0000003785a174a3616374a2696407a57461626c65a27437a776657273696f6e11a6616374696f6e82"
        "a46b696e64a4706c6179a463617264a25153",
    ),
    (OPEN, SERVER, Ok(id=7), "0000000a82a174a26f6ba2696407"),
    (
        OPEN,
        SERVER,
        CardPlayed(seq=1, table="t7", version=18, seat=0, card="QS", trick_number=3),
        "0000004287a174ab636172645f706c61796564a373657101a57461626c65a27437a776657273696f6e"
        "12a47365617400a463617264a25153ac747269636b5f6e756d62657203",
    ),
    # Unsolicited replies: no `id` (a resume's `joined`, `bad_token` after `welcome`).
    (
        OPEN,
        SERVER,
        Joined(table="t7", seat=2),
        "0000001983a174a66a6f696e6564a57461626c65a27437a47365617402",
    ),
    (
        OPEN,
        SERVER,
        Error(code="bad_token", message="no such account"),
        "0000003083a174a56572726f72a4636f6465a96261645f746f6b656ea76d657373616765af6e6f2073"
        "756368206163636f756e74",
    ),
    (OPEN, CLIENT, Pong(), "0000000881a174a4706f6e67"),
    (OPEN, SERVER, Bye(reason="done"), "0000001382a174a3627965a6726561736f6ea4646f6e65"),
    (OPEN, CLIENT, Bye(reason="done"), "0000001382a174a3627965a6726561736f6ea4646f6e65"),
]


def phase_of(conn: Connection) -> Phase:
    """(A call, so the type checker does not keep an earlier `assert conn.phase is ...` in mind.)"""
    return conn.phase


def other(side: Sender) -> Sender:
    return SERVER if side is CLIENT else CLIENT


def received(conn: Connection, message: Message) -> Message:
    """Feed `message`'s frame to `conn` and return what it makes of it."""
    conn.receive_data(encode(message))
    event = conn.next_event()
    assert isinstance(event, type(message)), event
    return event


def in_phase(role: Sender, phase: Phase) -> Connection:
    """A connection of `role` taken to `phase` by real traffic (hello, welcome)."""
    conn = Connection(role)
    if phase is A_HELLO:
        return conn
    if role is CLIENT:
        conn.send(HELLO)
    else:
        received(conn, HELLO)
    if phase is A_WELCOME:
        return conn
    if role is SERVER:
        conn.send(WELCOME)
    else:
        received(conn, WELCOME)
    assert conn.phase is phase is OPEN
    return conn


def reader_for(phase: Phase, sender: Sender, message: Message) -> Connection:
    """The receiving end of a golden row, expecting the reply if the row's message is one."""
    conn = in_phase(other(sender), phase)
    if isinstance(message, Reply) and message.id is not None and message.id not in conn.pending:
        conn.send(Ping(id=message.id))
    return conn


@pytest.mark.parametrize(("phase", "sender", "message", "hex_text"), GOLDEN)
def test_writer(phase: Phase, sender: Sender, message: Message, hex_text: str) -> None:
    data = bytes.fromhex(hex_text)
    assert in_phase(sender, phase).send(message) == data
    if isinstance(message, CardPlayed):  # the encode-once path writes the same bytes
        assert in_phase(sender, phase).send_event(EventFrames(message)) == data


def read_all(conn: Connection) -> list[Message | ConnectionClosed]:
    out: list[Message | ConnectionClosed] = []
    while (event := conn.next_event()) is not None and event is not CONNECTION_CLOSED:
        out.append(event)
    return out


@pytest.mark.parametrize(("phase", "sender", "message", "hex_text"), GOLDEN)
def test_reader(phase: Phase, sender: Sender, message: Message, hex_text: str) -> None:
    data = bytes.fromhex(hex_text)
    # The whole frame at once.
    conn = reader_for(phase, sender, message)
    conn.receive_data(data)
    assert conn.next_event() == message
    assert conn.next_event() is None
    assert conn.buffered == 0
    # A byte at a time: nothing until the last byte.
    conn = reader_for(phase, sender, message)
    for i in range(len(data) - 1):
        conn.receive_data(data[i : i + 1])
        assert conn.next_event() is None
    conn.receive_data(data[-1:])
    assert conn.next_event() == message
    # With the start of another frame behind it: that stays buffered.
    conn = reader_for(phase, sender, message)
    conn.receive_data(data + b"\x00\x00")
    assert conn.next_event() == message
    assert conn.next_event() is None
    assert conn.buffered == 2


def test_golden_rows_cover_the_phase_table() -> None:
    for phase, sender, message, _ in GOLDEN:
        assert type(message) in MAY_SEND[phase][sender]
    assert {(phase, sender) for phase, sender, _, _ in GOLDEN} == {
        (phase, sender) for phase in (A_HELLO, A_WELCOME, OPEN) for sender in (CLIENT, SERVER)
    }


# ---- the phase table ----------------------------------------------------------------------------


def test_the_table_sends_each_message_only_from_its_own_side() -> None:
    for phase, rows in MAY_SEND.items():
        for sender, kinds in rows.items():
            for kind in kinds:
                assert kind.SENDER in (sender, Sender.EITHER), (phase, sender, kind)


def test_every_message_can_be_sent_when_open() -> None:
    from protocol.messages import MESSAGE_TYPES

    for kind in MESSAGE_TYPES.values():
        allowed = [s for s in (CLIENT, SERVER) if kind in MAY_SEND[OPEN][s]]
        assert allowed or kind in (Hello, Welcome), kind
    assert Hello not in MAY_SEND[OPEN][CLIENT] and Welcome not in MAY_SEND[OPEN][SERVER]


def test_nothing_is_sent_once_closing_or_closed() -> None:
    for phase in (Phase.CLOSING, Phase.CLOSED):
        assert not MAY_SEND[phase][CLIENT] and not MAY_SEND[phase][SERVER]


# ---- the handshake --------------------------------------------------------------------------------


def refusal(call: Callable[[], object]) -> RemoteProtocolError:
    with pytest.raises(RemoteProtocolError) as caught:
        call()
    return caught.value


def local_refusal(call: Callable[[], object]) -> LocalProtocolError:
    with pytest.raises(LocalProtocolError) as caught:
        call()
    return caught.value


def test_a_request_before_hello_is_refused_and_the_handshake_goes_on() -> None:
    server = Connection(SERVER)
    server.receive_data(encode(ListTables(id=5)))
    error = refusal(server.next_event)
    assert (error.code, error.fatal, error.request_id) == (ErrorCode.UNEXPECTED_MESSAGE, False, 5)
    assert (error.message, error.detail) == ("send hello first", "list_tables")
    # The server answers it, then the hello is taken as usual.
    assert server.send(error_message(error)) == encode(
        Error(id=5, code="unexpected_message", message="send hello first", detail="list_tables")
    )
    assert received(server, HELLO) == HELLO
    assert server.phase is A_WELCOME


def test_a_ping_before_hello_is_answered() -> None:
    client, server = Connection(CLIENT), Connection(SERVER)
    server.receive_data(client.send(Ping()))
    ping = server.next_event()
    assert isinstance(ping, Ping) and ping.id == 1
    assert server.phase is A_HELLO  # it opened nothing
    client.receive_data(server.send(Pong(id=ping.id)))
    assert client.next_event() == Pong(id=1)
    assert client.pending == {}


def test_our_own_request_before_hello_is_not_sent() -> None:
    client = Connection(CLIENT)
    error = local_refusal(lambda: client.send(Join(table="t7")))
    assert (error.code, error.message) == (ErrorCode.UNEXPECTED_MESSAGE, "send hello first")
    assert client.pending == {} and client.phase is A_HELLO
    assert client.numbered(Ping()).id == 1  # no id was used up


def test_another_major_version_is_refused_with_the_hellos_id() -> None:
    server = Connection(SERVER)
    server.receive_data(encode(Hello(id=9, protocol="2.0", client="future", kind=ClientKind.BOT)))
    error = refusal(server.next_event)
    assert (error.code, error.fatal, error.request_id, error.detail) == (
        ErrorCode.VERSION_MISMATCH,
        True,
        9,
        "1.0",
    )
    assert refusal(server.next_event) is error  # fatal: raised again
    assert server.phase is A_HELLO
    answer = server.send(error_message(error))
    assert answer == encode(
        Error(id=9, code="version_mismatch", message=error.message, detail="1.0")
    )
    assert server.phase is Phase.CLOSING
    # And the client reads it as the answer to its hello, closing.
    client = Connection(CLIENT)
    client.send(Hello(id=9, protocol="1.0", client="c", kind=ClientKind.BOT))
    client.receive_data(answer)
    assert isinstance(client.next_event(), Error)
    assert client.pending == {} and client.phase is Phase.CLOSING
    assert client.closed_by == {SERVER}


def test_a_minor_version_is_accepted() -> None:
    server = Connection(SERVER)
    assert received(server, Hello(protocol="1.7", client="newer", kind=ClientKind.HUMAN))
    assert server.phase is A_WELCOME


def test_a_welcome_of_another_major_version_is_refused_by_the_client() -> None:
    client = in_phase(CLIENT, A_WELCOME)
    client.receive_data(encode(dataclasses.replace(WELCOME, protocol="3.1")))
    error = refusal(client.next_event)
    assert (error.code, error.fatal) == (ErrorCode.VERSION_MISMATCH, True)


def test_a_second_hello_is_refused() -> None:
    for phase in (A_WELCOME, OPEN):
        server = in_phase(SERVER, phase)
        server.receive_data(encode(Hello(id=2, protocol="1.0", client="x", kind=ClientKind.HUMAN)))
        error = refusal(server.next_event)
        assert (error.code, error.fatal, error.request_id) == (
            ErrorCode.UNEXPECTED_MESSAGE,
            False,
            2,
        )
        assert error.message == "hello was already sent"
        client = in_phase(CLIENT, phase)
        assert local_refusal(partial(client.send, HELLO)).message == "hello was already sent"


def test_the_server_sends_no_event_before_welcome() -> None:
    server = in_phase(SERVER, A_WELCOME)
    event = CardPlayed(table="t7", version=1, seat=0, card="QS", trick_number=1)
    assert local_refusal(lambda: server.send(event)).code is ErrorCode.UNEXPECTED_MESSAGE
    assert local_refusal(lambda: server.send_event(EventFrames(event))).detail == "card_played"
    assert server.seq == 0
    client = in_phase(CLIENT, A_WELCOME)
    client.receive_data(encode(event))
    assert refusal(client.next_event).fatal is False


def test_a_side_never_sends_the_others_messages() -> None:
    error = local_refusal(lambda: in_phase(CLIENT, OPEN).send(Ok(id=1)))
    assert error.message == "a ok is never sent by the client"
    # On the way in, the decoder refuses it before the phase is even looked at.
    server = in_phase(SERVER, OPEN)
    server.receive_data(encode(WELCOME))
    assert refusal(server.next_event).message == "a welcome is never sent by the client"


# ---- replies --------------------------------------------------------------------------------------


def test_requests_are_numbered_and_replies_matched() -> None:
    client = in_phase(CLIENT, OPEN)
    join = client.numbered(Join(table="t7"))
    assert join.id == 2  # hello had 1
    client.send(join)
    client.send(ListTables())  # numbered by send itself
    assert sorted(client.pending) == [2, 3]
    assert received(client, Ok(id=3)) == Ok(id=3)
    assert list(client.pending) == [2]


def test_an_explicit_id_is_kept_and_not_handed_out_again() -> None:
    client = in_phase(CLIENT, OPEN)
    client.send(Ping(id=2))
    assert client.numbered(Ping()).id == 3
    error = local_refusal(lambda: client.send(Ping(id=2)))
    assert (error.code, error.detail) == (ErrorCode.INVALID_FIELD, "id")


def test_a_reply_answering_no_request_is_refused_and_the_connection_goes_on() -> None:
    client = in_phase(CLIENT, OPEN)
    client.receive_data(encode(Ok(id=42)) + encode(Ok(id=1)))
    error = refusal(client.next_event)
    assert (error.code, error.fatal, error.detail) == (ErrorCode.UNEXPECTED_MESSAGE, False, "ok")
    assert error.received == Ok(id=42)
    # A second answer to a request already answered (the hello's) is refused the same way.
    assert refusal(client.next_event).received == Ok(id=1)
    client.send(Ping(id=5))
    assert received(client, Pong(id=5)) == Pong(id=5)


def test_a_reply_without_id_is_unsolicited_and_taken_as_it_is() -> None:
    client = in_phase(CLIENT, OPEN)
    client.send(Ping(id=5))
    assert received(client, Joined(table="t7", seat=1)) == Joined(table="t7", seat=1)
    assert list(client.pending) == [5]
    server = in_phase(SERVER, OPEN)
    assert received(server, Pong()) == Pong()  # a heartbeat


def test_the_servers_own_pings_are_matched_too() -> None:
    server = in_phase(SERVER, OPEN)
    client = in_phase(CLIENT, OPEN)
    client.receive_data(server.send(Ping()))
    ping = client.next_event()
    assert isinstance(ping, Ping) and ping.id in server.pending
    server.receive_data(client.send(Pong(id=ping.id)))
    assert server.next_event() == Pong(id=ping.id) and server.pending == {}
    server.receive_data(encode(Pong(id=77)))
    assert refusal(server.next_event).code is ErrorCode.UNEXPECTED_MESSAGE


# ---- events ---------------------------------------------------------------------------------------


def card(seq: int = 0, version: int = 1) -> CardPlayed:
    return CardPlayed(seq=seq, table="t7", version=version, seat=0, card="QS", trick_number=1)


def test_the_server_stamps_seq_on_every_path() -> None:
    server = in_phase(SERVER, OPEN)
    frames = EventFrames(card())
    sent = [server.send(card(seq=99)), server.send_event(frames), server.send(card())]
    assert server.seq == 3
    client = in_phase(CLIENT, OPEN)
    client.receive_data(b"".join(sent))
    assert [e.seq for e in read_all(client) if isinstance(e, CardPlayed)] == [1, 2, 3]
    assert client.seq == 3


def test_a_gap_in_seq_is_fatal_on_the_client() -> None:
    client = in_phase(CLIENT, OPEN)
    client.receive_data(encode(card(seq=1)) + encode(card(seq=3)))
    assert client.next_event() == card(seq=1)
    error = refusal(client.next_event)
    assert (error.code, error.fatal, error.detail) == (ErrorCode.INVALID_FIELD, True, "seq")
    assert refusal(client.next_event) is error


def test_an_act_answering_the_last_turn_is_free_once() -> None:
    server = in_phase(SERVER, OPEN)
    turn = YourTurn(table="t7", version=17, seat=0, legal=[PLAY_QS], deadline_ms=1000)
    server.send_event(EventFrames(turn))
    act = Act(id=3, table="t7", version=17, action=PLAY_QS)
    assert not server.answers_turn(Act(id=3, table="t7", version=16, action=PLAY_QS))
    assert not server.answers_turn(Ping(id=3))
    assert server.answers_turn(act)
    assert not server.answers_turn(act)  # a repeat is charged
    server.send(turn)
    assert server.answers_turn(act)


# ---- closing --------------------------------------------------------------------------------------


def test_after_our_bye_nothing_is_sent_but_what_was_in_flight_is_read() -> None:
    client = in_phase(CLIENT, OPEN)
    client.send(Ping(id=8))
    client.send(Bye(reason="done"))
    assert client.phase is Phase.CLOSING and client.closed_by == {CLIENT}
    assert not client.can_send
    error = local_refusal(lambda: client.send(Ping()))
    assert "nothing more may be sent" in error.message
    client.receive_data(encode(card(seq=1)) + encode(Pong(id=8)) + b"")
    assert read_all(client) == [card(seq=1), Pong(id=8)]
    client.receive_data(b"")
    assert client.next_event() is CONNECTION_CLOSED
    assert client.next_event() is CONNECTION_CLOSED
    assert phase_of(client) is Phase.CLOSED


def test_nothing_is_accepted_after_the_peers_bye() -> None:
    server = in_phase(SERVER, OPEN)
    server.receive_data(encode(Bye()) + encode(Ping(id=4)))
    assert server.next_event() == Bye()
    assert server.closed_by == {CLIENT} and not server.can_send
    error = refusal(server.next_event)
    assert (error.code, error.fatal, error.received) == (
        ErrorCode.UNEXPECTED_MESSAGE,
        False,
        Ping(id=4),
    )
    assert local_refusal(lambda: server.send(Ok())).code is ErrorCode.UNEXPECTED_MESSAGE


def test_a_closing_error_is_taken_even_answering_nothing() -> None:
    client = in_phase(CLIENT, OPEN)
    assert received(client, Error(id=99, code="shutting_down", message="stopping"))
    assert client.phase is Phase.CLOSING


def test_a_closing_error_closes_and_others_do_not() -> None:
    client = in_phase(CLIENT, OPEN)
    received(client, Error(code="rate_limited", message="slow down"))
    assert client.phase is OPEN
    received(client, Error(code="some_future_code", message="?"))
    assert client.phase is OPEN
    received(client, Error(code="shutting_down", message="bye"))
    assert client.phase is Phase.CLOSING and client.closed_by == {SERVER}


def test_the_server_answers_a_fatal_error_and_closes() -> None:
    server = in_phase(SERVER, OPEN)
    server.receive_data(b"\x00\x00\x00\x00")
    error = refusal(server.next_event)
    assert (error.code, error.fatal) == (ErrorCode.BAD_FRAME, True)
    server.send(error_message(error))
    assert server.phase is Phase.CLOSING and not server.can_send


def test_a_stream_that_ends_inside_a_frame_is_bad_frame() -> None:
    client = in_phase(CLIENT, OPEN)
    client.receive_data(encode(Ok(id=1))[:5])
    client.receive_data(b"")
    error = refusal(client.next_event)
    assert (error.code, error.fatal) == (ErrorCode.BAD_FRAME, True)


# ---- what the message says about itself ------------------------------------------------------------


def test_the_client_validates_what_it_sends_and_the_server_does_not() -> None:
    bad = Act(table="t7", version=-1, action=PLAY_QS)
    client = in_phase(CLIENT, OPEN)
    error = local_refusal(lambda: client.send(bad))
    assert (error.code, error.detail) == (ErrorCode.INVALID_FIELD, "version")
    assert client.pending == {}
    unchecked = in_phase(CLIENT, OPEN)
    unchecked._validate = False
    assert unchecked.send(bad)  # the server's path: its own messages are trusted
    server = in_phase(SERVER, OPEN)
    assert server.send(Error(code="NOT A CODE", message="x"))


def test_unknown_types_name_themselves_in_detail() -> None:
    import msgpack

    from protocol.framing import frame

    server = in_phase(SERVER, OPEN)
    server.receive_data(frame(msgpack.packb({"t": "teleport", "id": 3})))
    error = refusal(server.next_event)
    assert (error.code, error.detail, error.request_id) == (ErrorCode.UNKNOWN_TYPE, "teleport", 3)


def test_a_request_is_a_request() -> None:
    # The reply matching reads these roles; a new message type must declare one.
    assert issubclass(Ping, Request) and issubclass(Pong, Reply)
