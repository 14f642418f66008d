"""The link's protocol, sans-IO (`server.cluster.link_protocol`): the handshake's proofs, the phase
table, and every malformed frame refused with a reason, never a traceback. No sockets, no trio."""

from __future__ import annotations

import secrets

import msgpack
import pytest

from engine.actions import Bid
from protocol.framing import frame
from server.accounts import Account
from server.cluster.link_protocol import (
    MAX_RECIPIENTS,
    NONCE_SIZE,
    PROOF_SIZE,
    Challenge,
    Deliver,
    ForwardAct,
    ForwardJoin,
    Gone,
    Hello,
    LinkConnection,
    LinkError,
    Phase,
    Proof,
    Role,
    decode,
    encode,
    merge,
    proof,
)

SECRET = b"s" * 32


def pair(
    dialer_secret: bytes = SECRET, listener_secret: bytes = SECRET
) -> tuple[LinkConnection, LinkConnection]:
    dialer = LinkConnection(Role.DIALER, "dial", dialer_secret, expect="listen")
    listener = LinkConnection(Role.LISTENER, "listen", listener_secret)
    return dialer, listener


def feed(conn: LinkConnection, data: bytes) -> object:
    conn.receive_data(data)
    return conn.next_message()


def handshake(dialer: LinkConnection, listener: LinkConnection) -> None:
    assert isinstance(feed(listener, dialer.hello()), Hello)
    assert isinstance(feed(dialer, listener.challenge()), Challenge)
    assert isinstance(feed(listener, dialer.prove()), Proof)
    feed(dialer, listener.accept())


def test_a_handshake_proves_both_sides_and_their_ids() -> None:
    dialer, listener = pair()
    handshake(dialer, listener)
    assert dialer.phase is listener.phase is Phase.ESTABLISHED
    assert listener.peer == "dial" and dialer.peer == "listen"
    sent = dialer.send(Gone("abc"))
    assert feed(listener, sent) == Gone("abc")


def test_a_listener_without_the_secret_is_found_out_by_the_dialer() -> None:
    dialer, listener = pair(listener_secret=b"x" * 32)
    feed(listener, dialer.hello())
    with pytest.raises(LinkError, match="wrong proof"):
        feed(dialer, listener.challenge())
    assert dialer.phase is Phase.CLOSED


def test_a_dialer_without_the_secret_is_refused() -> None:
    """A proof made right, under another secret (a guess, an old one)."""
    dialer, listener = pair()
    hello = decode(dialer.hello()[4:])
    assert isinstance(hello, Hello)
    feed(listener, encode(hello))
    challenge = decode(listener.challenge()[4:])
    assert isinstance(challenge, Challenge)
    guessed = proof(
        b"x" * 32,
        Role.DIALER,
        dialer_nonce=hello.nonce,
        listener_nonce=challenge.nonce,
        own="dial",
        other="listen",
    )
    with pytest.raises(LinkError, match="wrong proof"):
        feed(listener, encode(Proof(guessed)))
    assert listener.phase is Phase.CLOSED


def test_a_forged_proof_is_refused() -> None:
    dialer, listener = pair()
    feed(listener, dialer.hello())
    listener.challenge()
    with pytest.raises(LinkError, match="wrong proof"):
        feed(listener, encode(Proof(secrets.token_bytes(PROOF_SIZE))))


def test_a_replayed_handshake_is_refused() -> None:
    """Every byte of a good handshake, recorded and sent again to a new connection: the listener's
    nonce is new, so the recorded proof does not prove anything."""
    dialer, listener = pair()
    hello = dialer.hello()
    feed(listener, hello)
    feed(dialer, listener.challenge())
    proof = dialer.prove()
    feed(listener, proof)
    again = LinkConnection(Role.LISTENER, "listen", SECRET)
    feed(again, hello)
    again.challenge()
    with pytest.raises(LinkError, match="wrong proof"):
        feed(again, proof)


def test_a_listeners_proof_reflected_back_is_refused() -> None:
    """An attacker dials two connections and hands the listener its own proof: the role is in it."""
    dialer, listener = pair()
    feed(listener, dialer.hello())
    challenge = decode(listener.challenge()[4:])
    assert isinstance(challenge, Challenge)
    with pytest.raises(LinkError, match="wrong proof"):
        feed(listener, encode(Proof(challenge.proof)))


def test_a_proof_for_another_worker_id_is_refused() -> None:
    """A real server's hello relayed under another id: the listener's proof then names that id,
    which the real server does not accept, and its own proof names its own id."""
    real = LinkConnection(Role.DIALER, "real", SECRET, expect="listen")
    listener = LinkConnection(Role.LISTENER, "listen", SECRET)
    hello = decode(real.hello()[4:])
    assert isinstance(hello, Hello)
    feed(listener, encode(Hello("other", hello.nonce)))
    with pytest.raises(LinkError, match="wrong proof"):
        feed(real, listener.challenge())


def test_a_dialer_answered_by_another_server_refuses_it() -> None:
    dialer = LinkConnection(Role.DIALER, "dial", SECRET, expect="meant")
    listener = LinkConnection(Role.LISTENER, "someone-else", SECRET)
    feed(listener, dialer.hello())
    with pytest.raises(LinkError, match="answered by someone-else"):
        feed(dialer, listener.challenge())


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"\xc1", "undecodable"),
        (msgpack.packb([1, 2]), "must be a map"),
        (msgpack.packb({"hello": "evil"}), "unknown message type"),
        (msgpack.packb({"t": "hello", "worker": "w"}), "nonce is missing"),
        (msgpack.packb({"t": "hello", "worker": 5, "nonce": b"n" * 32}), "worker: expected an id"),
        (msgpack.packb({"t": "hello", "worker": "w" * 65, "nonce": b"n" * 32}), "expected an id"),
        (msgpack.packb({"t": "hello", "worker": "w", "nonce": b"short"}), "expected 32 bytes"),
        (msgpack.packb({"t": "hello", "worker": "w", "nonce": "n" * 32}), "expected 32 bytes"),
        (msgpack.packb({"t": "deliver", "to": "x", "body": b"b"}), "not allowed now .phase hello"),
        (msgpack.packb({"t": "proof", "proof": b"p" * 32}), "not allowed now .phase hello"),
        (msgpack.packb({"t": "hello", "worker": "listen", "nonce": b"n" * 32}), "itself"),
        (msgpack.packb({1: 2}), "undecodable"),
    ],
)
def test_a_malformed_handshake_frame_is_refused_with_a_reason(body: bytes, reason: str) -> None:
    listener = LinkConnection(Role.LISTENER, "listen", SECRET)
    with pytest.raises(LinkError, match=reason):
        feed(listener, frame(body))
    assert listener.phase is Phase.CLOSED
    with pytest.raises(LinkError):  # and nothing after it is read
        feed(listener, frame(msgpack.packb({"t": "hello", "worker": "w", "nonce": b"n" * 32})))


class Established:
    """A link past its handshake; `feed` hands the listener a packed map as the dialer sends it
    (with its integrity tag), so a test can send any map a proven server could."""

    def __init__(self) -> None:
        self.dialer, self.listener = pair()
        handshake(self.dialer, self.listener)

    @property
    def phase(self) -> Phase:
        return self.listener.phase

    def feed(self, payload: bytes) -> object:
        return feed(self.listener, self.dialer.seal(payload))


def established() -> Established:
    return Established()


def act(**fields: object) -> bytes:
    data: dict[str, object] = {
        "t": "act",
        "table": "t1",
        "peer": "p1",
        "rid": 3,
        "version": 7,
        "action": {"kind": "bid", "seat": 0, "tricks": 4, "blind": False},
    }
    data.update(fields)
    packed: bytes = msgpack.packb(data, use_bin_type=True)
    return packed


def test_a_good_act_is_typed_once_at_the_edge() -> None:
    message = established().feed(act())
    assert message == ForwardAct("t1", "p1", 3, 7, Bid(seat=0, tricks=4, blind=False))


@pytest.mark.parametrize(
    ("fields", "reason"),
    [
        ({"version": -1}, "version: expected an integer"),
        ({"version": True}, "version: expected an integer"),
        ({"rid": "x"}, "rid: expected an integer"),
        ({"table": ""}, "table: expected an id"),
        ({"peer": None}, "peer: expected an id"),
        ({"action": {"kind": "bid", "seat": 0, "tricks": "x"}}, "action"),
        ({"action": {"kind": "fly"}}, "action"),
        ({"action": [1]}, "action: expected an action map"),
    ],
)
def test_a_malformed_command_closes_the_link(fields: dict[str, object], reason: str) -> None:
    listener = established()
    with pytest.raises(LinkError, match=reason):
        listener.feed(act(**fields))
    assert listener.phase is Phase.CLOSED


def test_a_join_carries_an_account_and_a_checked_table_created() -> None:
    listener = established()
    join = {
        "t": "join",
        "table": "t1",
        "peer": "p1",
        "rid": None,
        "account": [5, "ada", False, False],
        "seat": 1,
        "takeover": True,
        "reattach": False,
        "created": None,
    }
    message = listener.feed(msgpack.packb(join))
    assert isinstance(message, ForwardJoin) and message.account == Account(5, "ada", False, False)
    for bad, reason in (
        ({"account": [5, "ada"]}, "account"),
        ({"account": [0, "ada", False, False]}, "account.id"),
        ({"takeover": None}, "takeover: expected a boolean"),
        ({"seat": 99}, "seat"),
        ({"created": {"t": "chat_message"}}, "created"),
    ):
        listener = established()
        with pytest.raises(LinkError, match=reason):
            listener.feed(msgpack.packb({**join, **bad}))


def test_an_oversize_frame_is_refused_before_it_is_read() -> None:
    listener = LinkConnection(Role.LISTENER, "listen", SECRET, max_frame=1024)
    with pytest.raises(LinkError, match="1024"):
        feed(listener, (1 << 20).to_bytes(4, "big"))


def test_the_listener_sends_nothing_once_established_and_a_dialer_nothing_before() -> None:
    dialer, listener = pair()
    with pytest.raises(LinkError, match="phase challenge"):
        dialer.send(Gone("x"))
    handshake(dialer, listener)
    with pytest.raises(LinkError):
        listener.send(Deliver(("x",), b"b"))


def test_a_short_secret_is_a_mistake_of_the_caller() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        LinkConnection(Role.LISTENER, "w", b"short")
    assert NONCE_SIZE == 32


def test_deliveries_of_one_message_in_a_row_travel_as_one() -> None:
    """A table tells one event to each of its remote audience in turn: the writer sends the bytes
    once, naming them all; anything in between keeps the order."""
    body, other = b"\x81\xa1t\xa4pong", b"\x81\xa1t\xa4ping"
    merged = merge(
        [
            Deliver(("a",), body),
            Deliver(("b",), body),
            Gone("x"),
            Deliver(("c",), body),
            Deliver(("d",), other),
            Deliver(("e",), other),
        ]
    )
    assert merged == [
        Deliver(("a", "b"), body),
        Gone("x"),
        Deliver(("c",), body),
        Deliver(("d", "e"), other),
    ]
    link = established()
    assert feed(link.listener, link.dialer.send(merged[0])) == Deliver(("a", "b"), body)


def test_a_deliver_names_at_least_one_session_and_not_too_many() -> None:
    for to in ([], ["x"] * (MAX_RECIPIENTS + 1), "x"):
        listener = established()
        with pytest.raises(LinkError, match=r"deliver\.to"):
            listener.feed(msgpack.packb({"t": "deliver", "to": to, "body": b"b"}))


def test_an_established_frame_altered_replayed_or_injected_closes_the_link() -> None:
    """Without TLS a man in the middle could change or add frames on an established link: every
    frame carries a tag under the session's key (from the secret and both nonces) and its number
    in the session, so it cannot."""
    good = Gone("s1")
    for attack in ("altered", "replayed", "injected", "dropped", "truncated"):
        link = established()
        sent = link.dialer.send(good)
        if attack == "altered":
            sent = sent[:-20] + bytes([sent[-20] ^ 1]) + sent[-19:]
        elif attack == "replayed":
            assert feed(link.listener, sent) == good
        elif attack == "injected":
            sent = encode(good)  # a well-formed frame, no tag
        elif attack == "dropped":
            sent = link.dialer.send(Gone("s2"))  # the first never arrives
        elif attack == "truncated":
            sent = frame(b"\x01")
        with pytest.raises(LinkError, match="integrity"):
            feed(link.listener, sent)
        assert link.listener.phase is Phase.CLOSED
