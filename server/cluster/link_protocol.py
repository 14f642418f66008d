"""The link's protocol, sans-IO: what one server of a cluster may say to another, and when.

A link is one TCP (or TLS) connection from a *dialer* (the server with something to say) to a
*listener* (the server it says it to). It carries length-prefixed msgpack maps (the protocol's
framing), each with its type in `t`. Bytes go in (`receive_data`), typed messages come out
(`next_message`), already checked: a map of an unknown type, of a type not allowed in the
current phase, or with a field of the wrong type or size raises `LinkError` (every error is
fatal: the connection is closed, nothing after it is read).

Phases (the table `_ALLOWED`), for the listener (the dialer mirrors it):

    HELLO         dialer -> Hello(worker, nonce)
    PROOF         listener -> Challenge(worker, nonce, proof); dialer -> Proof(proof)
    ESTABLISHED   listener -> Accepted(); dialer -> the cluster's messages, listener -> nothing

Both sides prove they hold the cluster's secret: each sends a fresh 32-byte nonce, and each
proof is an HMAC-SHA256 under the secret over both nonces, the prover's role, its own worker id
and the other's (`proof`). A proof therefore cannot be replayed on another connection (the
other side's nonce is new), reflected (the role is in it), or moved to another worker id (the
ids are in it), so the worker id a peer claims is authenticated with it. A listener's proof is
checked by the dialer before it sends anything else, so a server never talks to an impostor
listening at a dead server's address either.

Once established, every frame the dialer sends ends with a 16-byte tag: HMAC-SHA256, under a
key for this connection alone (derived from the secret, both nonces and both ids), of the
frame's number in the connection and its bytes. A frame changed, added, dropped, replayed or
moved on the way (a man in the middle of a link without TLS) fails its check and closes the
link. TLS (`server.cluster.link`) also keeps the link's contents from being read.

The messages after the handshake are frozen dataclasses (`Forward*` commands for a table,
`Deliver`, `Resume`, `Gone`, `LadderAsk`, `LadderAnswer`); their protocol parts (a table's
`table_created`, a chat line, a ladder request and its reply) are validated as the game port
validates them. An event's bytes (`Deliver.body`) pass through as the table's server encoded
them; the receiving server decodes each once.
"""

from __future__ import annotations

import enum
import hashlib
import hmac
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import msgpack

from engine.actions import Action as EngineAction
from engine.actions import action_from_dict, action_to_dict
from engine.errors import EngineError
from protocol.errors import ProtocolError
from protocol.framing import FrameDecoder, frame
from protocol.messages import (
    ChatMessage,
    LadderEnter,
    LadderLeave,
    LadderMatches,
    LadderRecords,
    LadderShow,
    LadderStandings,
    Message,
    Sender,
    TableCreated,
)
from protocol.schema import Check, FieldProblem, from_map, to_map
from protocol.wire import from_wire, to_wire
from server.accounts import Account
from server.table_commands import LeaveReason

#: The largest frame a link accepts (a snapshot of a table with its spectators fits easily).
MAX_FRAME = 8 * 1024 * 1024
#: Bytes of each side's nonce, and of a proof (HMAC-SHA256).
NONCE_SIZE = 32
PROOF_SIZE = 32
#: Bytes of the tag on every established frame (HMAC-SHA256 under the session's key, truncated).
TAG_SIZE = 16
#: The longest id (a worker's, a session's, a table's) a link carries.
MAX_ID = 64
#: The largest frame before the link is established: a handshake's are some 100 bytes, so a
#: stranger cannot make a server hold more than this for it.
MAX_HANDSHAKE_FRAME = 1024
#: The most sessions one `Deliver` names (a table's seats and spectators on one server).
MAX_RECIPIENTS = 4096
_VERSION = "spades-link/1"


class LinkError(Exception):
    """The other side broke the link's protocol (or failed to prove itself); `str()` says how.
    Always fatal: the connection is closed and nothing it sent after is obeyed."""


class Role(enum.Enum):
    DIALER = "dialer"
    LISTENER = "listener"


class Phase(enum.Enum):
    HELLO = "hello"  # the listener waits for the dialer's hello
    CHALLENGE = "challenge"  # the dialer waits for the listener's challenge and proof
    PROOF = "proof"  # the listener waits for the dialer's proof
    ACCEPT = "accept"  # the dialer waits to be accepted (its id is being checked)
    ESTABLISHED = "established"
    CLOSED = "closed"


def proof(
    secret: bytes,
    role: Role,
    *,
    dialer_nonce: bytes,
    listener_nonce: bytes,
    own: str,
    other: str,
) -> bytes:
    """What `own` (in `role`) sends to prove it holds `secret` on this connection."""
    signed = msgpack.packb([_VERSION, role.value, dialer_nonce, listener_nonce, own, other])
    return hmac.new(secret, signed, hashlib.sha256).digest()


# ---------------------------------------------------------------- field checks


def _id(value: Any, name: str) -> str:
    if type(value) is not str or not 0 < len(value) <= MAX_ID or not value.isprintable():
        raise LinkError(f"{name}: expected an id (1..{MAX_ID} printable characters)")
    return value


def _ids(value: Any, name: str) -> tuple[str, ...]:
    if type(value) is not list or not 0 < len(value) <= MAX_RECIPIENTS:
        raise LinkError(f"{name}: expected a list of 1..{MAX_RECIPIENTS} ids")
    return tuple(_id(item, name) for item in value)


def _bytes(size: int) -> Callable[[Any, str], bytes]:
    def check(value: Any, name: str) -> bytes:
        if type(value) is not bytes or len(value) != size:
            raise LinkError(f"{name}: expected {size} bytes")
        return value

    return check


def _body(value: Any, name: str) -> bytes:
    if type(value) is not bytes or not value:
        raise LinkError(f"{name}: expected a message's bytes")
    return value


def _int(low: int, high: int) -> Callable[[Any, str], int]:
    def check(value: Any, name: str) -> int:
        if type(value) is not int or not low <= value <= high:
            raise LinkError(f"{name}: expected an integer in {low}..{high}")
        return value

    return check


def _bool(value: Any, name: str) -> bool:
    if type(value) is not bool:
        raise LinkError(f"{name}: expected a boolean")
    return value


def _optional(check: Callable[[Any, str], Any]) -> Callable[[Any, str], Any]:
    def optional(value: Any, name: str) -> Any:
        return None if value is None else check(value, name)

    return optional


def _account(value: Any, name: str) -> Account:
    if type(value) is not list or len(value) != 4:
        raise LinkError(f"{name}: expected [id, name, bot, guest]")
    account_id = _int(1, 2**63 - 1)(value[0], f"{name}.id")
    if type(value[1]) is not str or not 0 < len(value[1]) <= MAX_ID:
        raise LinkError(f"{name}.name: expected a name")
    return Account(account_id, value[1], _bool(value[2], name), _bool(value[3], name))


def _wire_account(account: Account) -> list[Any]:
    return [account.id, account.name, account.is_bot, account.is_guest]


def _action(value: Any, name: str) -> EngineAction:
    """An act's action, as the engine's wire map (with the seat the sender's session holds):
    read by the engine's own parser (the game port checked it as the `act` came in; the table
    then judges the seat again, and the rules the rest)."""
    if type(value) is not dict:
        raise LinkError(f"{name}: expected an action map")
    try:
        return action_from_dict(value)
    except EngineError as exc:
        raise LinkError(f"{name}: {exc.message}") from None


def _message(kinds: tuple[type[Message], ...], sender: Sender) -> Callable[[Any, str], Any]:
    """A protocol message inside a link message, validated as its port validates it."""

    def check(value: Any, name: str) -> Message:
        if type(value) is not dict:
            raise LinkError(f"{name}: expected a message map")
        try:
            message = from_wire(value, sender)
        except ProtocolError as exc:
            raise LinkError(f"{name}: {exc}") from None
        if not isinstance(message, kinds):
            raise LinkError(f"{name}: a {message.TYPE} is not allowed here")
        return message

    return check


_LADDER_REQUESTS = (
    LadderEnter,
    LadderLeave,
    LadderStandings,
    LadderMatches,
    LadderShow,
    LadderRecords,
)


def _reason(value: Any, name: str) -> LeaveReason:
    try:
        return LeaveReason(value)
    except ValueError:
        raise LinkError(f"{name}: not a reason to leave") from None


# ---------------------------------------------------------------- the field types

# Each field's type says its check (and, where its wire form is not the value itself, its
# encoding), as the game port's messages do (protocol.schema): the message classes below are the
# one declaration of the link's messages, and `decode` and `encode` read them.
LinkId = Annotated[str, Check(_id)]
LinkIds = Annotated[tuple[str, ...], Check(_ids, list)]
Nonce = Annotated[bytes, Check(_bytes(NONCE_SIZE))]
ProofBytes = Annotated[bytes, Check(_bytes(PROOF_SIZE))]
Body = Annotated[bytes, Check(_body)]
Rid = Annotated[int | None, Check(_optional(_int(0, 2**32 - 1)))]
SeatNumber = Annotated[int | None, Check(_optional(_int(0, 15)))]
GameVersion = Annotated[int, Check(_int(0, 2**53))]
CallId = Annotated[int, Check(_int(0, 2**63 - 1))]
Flag = Annotated[bool, Check(_bool)]
LinkAccount = Annotated[Account, Check(_account, _wire_account)]
MaybeAccount = Annotated[Account | None, Check(_optional(_account), _wire_account)]
LinkAction = Annotated[EngineAction, Check(_action, action_to_dict)]
Reason = Annotated[LeaveReason, Check(_reason)]
Created = Annotated[
    TableCreated | None, Check(_optional(_message((TableCreated,), Sender.SERVER)), to_wire)
]
ChatLine = Annotated[ChatMessage, Check(_message((ChatMessage,), Sender.SERVER), to_wire)]
LadderRequest = Annotated[Message, Check(_message(_LADDER_REQUESTS, Sender.CLIENT), to_wire)]
AnyReply = Annotated[Message, Check(_message((Message,), Sender.SERVER), to_wire)]


# ---------------------------------------------------------------- the messages


@dataclass(frozen=True, slots=True)
class LinkMessage:
    """One message of the link. `TYPE` is its `t`; its fields, in order, are the dataclass's, each
    typed with its check (every field must be present, nil where its type allows it)."""

    TYPE: ClassVar[str] = ""

    def wire(self) -> dict[str, Any]:
        return {"t": self.TYPE, **to_map(self)}


@dataclass(frozen=True, slots=True)
class Hello(LinkMessage):
    """The dialer's first message: who it says it is, and its nonce."""

    TYPE: ClassVar[str] = "hello"
    worker: LinkId
    nonce: Nonce


@dataclass(frozen=True, slots=True)
class Challenge(LinkMessage):
    """The listener's answer: who it is, its nonce, and its proof."""

    TYPE: ClassVar[str] = "challenge"
    worker: LinkId
    nonce: Nonce
    proof: ProofBytes


@dataclass(frozen=True, slots=True)
class Proof(LinkMessage):
    """The dialer's proof."""

    TYPE: ClassVar[str] = "proof"
    proof: ProofBytes


@dataclass(frozen=True, slots=True)
class Accepted(LinkMessage):
    """The listener checked the dialer's proof and that its id is a live member: go ahead."""

    TYPE: ClassVar[str] = "accepted"


@dataclass(frozen=True, slots=True)
class ForwardAct(LinkMessage):
    """A session's `act` for a table of the listener's."""

    TYPE: ClassVar[str] = "act"
    table: LinkId
    peer: LinkId
    rid: Rid
    version: GameVersion
    action: LinkAction


@dataclass(frozen=True, slots=True)
class ForwardJoin(LinkMessage):
    """A session's join (or a login's reattach, or the creator's first seat)."""

    TYPE: ClassVar[str] = "join"
    table: LinkId
    peer: LinkId
    rid: Rid
    account: LinkAccount
    seat: SeatNumber
    takeover: Flag
    reattach: Flag
    created: Created


@dataclass(frozen=True, slots=True)
class ForwardSpectate(LinkMessage):
    TYPE: ClassVar[str] = "spectate"
    table: LinkId
    peer: LinkId
    rid: Rid


@dataclass(frozen=True, slots=True)
class ForwardLeave(LinkMessage):
    TYPE: ClassVar[str] = "leave"
    table: LinkId
    peer: LinkId
    rid: Rid
    reason: Reason


@dataclass(frozen=True, slots=True)
class ForwardChat(LinkMessage):
    TYPE: ClassVar[str] = "chat"
    table: LinkId
    peer: LinkId
    rid: Rid
    message: ChatLine


@dataclass(frozen=True, slots=True)
class Deliver(LinkMessage):
    """What a table of the dialer's tells some of the listener's sessions: the message's bytes,
    as the table's server encoded them, once for all of them (the writer merges the deliveries of
    one message queued one after the other, `merge`)."""

    TYPE: ClassVar[str] = "deliver"
    to: LinkIds
    body: Body


@dataclass(frozen=True, slots=True)
class Resume(LinkMessage):
    """A login at the dialer: the listener's tables give the account's held seats back."""

    TYPE: ClassVar[str] = "resume"
    peer: LinkId
    account: LinkAccount


@dataclass(frozen=True, slots=True)
class Gone(LinkMessage):
    """A session of the dialer's is gone."""

    TYPE: ClassVar[str] = "gone"
    peer: LinkId


@dataclass(frozen=True, slots=True)
class LadderAsk(LinkMessage):
    """A session's ladder request, for the server that runs the ladder."""

    TYPE: ClassVar[str] = "ladder"
    call: CallId
    peer: LinkId
    account: MaybeAccount
    owner: LinkId
    request: LadderRequest


@dataclass(frozen=True, slots=True)
class LadderAnswer(LinkMessage):
    """The ladder's server's reply to a `LadderAsk`."""

    TYPE: ClassVar[str] = "ladder_reply"
    call: CallId
    reply: AnyReply


Forward = ForwardAct | ForwardJoin | ForwardSpectate | ForwardLeave | ForwardChat
Established = Forward | Deliver | Resume | Gone | LadderAsk | LadderAnswer

_TYPES: dict[str, type[LinkMessage]] = {
    cls.TYPE: cls
    for cls in (
        Hello,
        Challenge,
        Proof,
        Accepted,
        ForwardAct,
        ForwardJoin,
        ForwardSpectate,
        ForwardLeave,
        ForwardChat,
        Deliver,
        Resume,
        Gone,
        LadderAsk,
        LadderAnswer,
    )
}
_ESTABLISHED: frozenset[type[LinkMessage]] = frozenset(
    {
        ForwardAct,
        ForwardJoin,
        ForwardSpectate,
        ForwardLeave,
        ForwardChat,
        Deliver,
        Resume,
        Gone,
        LadderAsk,
        LadderAnswer,
    }
)
#: What each side may receive in each phase (the phase table).
_ALLOWED: dict[tuple[Role, Phase], frozenset[type[LinkMessage]]] = {
    (Role.LISTENER, Phase.HELLO): frozenset({Hello}),
    (Role.LISTENER, Phase.PROOF): frozenset({Proof}),
    (Role.LISTENER, Phase.ESTABLISHED): _ESTABLISHED,
    (Role.DIALER, Phase.CHALLENGE): frozenset({Challenge}),
    (Role.DIALER, Phase.ACCEPT): frozenset({Accepted}),
}


def merge(messages: list[Established]) -> list[Established]:
    """`messages` in order, each run of `Deliver`s of one body (the same bytes object: one message
    of a table's, told to several sessions) made one `Deliver` naming them all."""
    out: list[Established] = []
    names: list[str] = []
    for message in messages:
        last = out[-1] if out else None
        if (
            isinstance(message, Deliver)
            and isinstance(last, Deliver)
            and last.body is message.body
            and len(names) + len(message.to) <= MAX_RECIPIENTS
        ):
            names.extend(message.to)
            continue
        if isinstance(last, Deliver) and len(names) > len(last.to):
            out[-1] = Deliver(tuple(names), last.body)
        names = list(message.to) if isinstance(message, Deliver) else []
        out.append(message)
    last = out[-1] if out else None
    if isinstance(last, Deliver) and len(names) > len(last.to):
        out[-1] = Deliver(tuple(names), last.body)
    return out


def decode(body: bytes, allowed: frozenset[type[LinkMessage]] | None = None) -> LinkMessage:
    """One frame body as a checked message; a type not in `allowed` (the phase's) is refused
    before its fields are looked at. Raises `LinkError`."""
    try:
        data = msgpack.unpackb(body, raw=False, strict_map_key=True)
    except Exception as exc:  # msgpack raises several kinds on hostile input (ValueError, ...)
        raise LinkError(f"undecodable frame: {type(exc).__name__}") from None
    if type(data) is not dict:
        raise LinkError("a frame must be a map")
    kind = data.get("t")
    cls = _TYPES.get(kind) if type(kind) is str else None
    if cls is None:
        raise LinkError(f"unknown message type {str(kind)[:32]!r}")
    if allowed is not None and cls not in allowed:
        raise LinkError(f"a {cls.TYPE} is not allowed now")
    try:
        return from_map(cls, data, f"{cls.TYPE}.")
    except FieldProblem as exc:
        if exc.missing:
            raise LinkError(f"{cls.TYPE}: {exc.path.partition('.')[2]} is missing") from None
        raise LinkError(str(exc)) from None


def encode(message: LinkMessage) -> bytes:
    """One whole frame of `message`."""
    return frame(msgpack.packb(message.wire(), use_bin_type=True))


class LinkConnection:
    """One side of one link, sans-IO (see the module's doc): feed `receive_data`, read
    `next_message`, send what `hello`/`challenge`/`prove`/`accept`/`send` return.

    `expect`: for a dialer, the worker id it dialled (the listener must prove that one).
    """

    def __init__(
        self,
        role: Role,
        worker: str,
        secret: bytes,
        *,
        expect: str | None = None,
        max_frame: int = MAX_FRAME,
    ) -> None:
        if len(secret) < 16:
            raise ValueError("a cluster secret has at least 16 bytes")
        self.role = role
        self.worker = worker
        self._secret = secret
        self._frames = FrameDecoder(min(max_frame, MAX_HANDSHAKE_FRAME))
        self._max_frame = max_frame
        self._nonce = secrets.token_bytes(NONCE_SIZE)
        self._their_nonce = b""
        self._key = b""  # the session's, once established (`_established`)
        self._count = 0  # established frames sent (a dialer) or received (a listener)
        self.peer: str | None = expect  # the other side's worker id (proved once established)
        self.phase = Phase.HELLO if role is Role.LISTENER else Phase.CHALLENGE

    def receive_data(self, data: bytes) -> None:
        """Bytes from the other side (`b""`: it closed)."""
        self._frames.receive_data(data)

    def next_message(self) -> LinkMessage | None:
        """The next whole message, checked (a handshake message is also verified and moves the
        phase on), or None until more bytes come. Raises `LinkError` (and is then closed)."""
        if self.phase is Phase.CLOSED:
            raise LinkError("the link is closed")
        try:
            try:
                body = self._frames.next_frame()
            except ProtocolError as exc:
                raise LinkError(str(exc)) from None
            if body is None:
                if self._frames.eof and self._frames.buffered:
                    raise LinkError("the other side closed the link inside a frame")
                return None
            if self.phase is Phase.ESTABLISHED:
                body = self._open(body)
            allowed = _ALLOWED.get((self.role, self.phase), frozenset())
            try:
                message = decode(body, allowed)
            except LinkError as exc:
                raise LinkError(f"{exc} (phase {self.phase.value})") from None
            self._handshake(message)
            return message
        except LinkError:
            self.phase = Phase.CLOSED
            raise

    def _handshake(self, message: LinkMessage) -> None:
        if isinstance(message, Hello):
            if message.worker == self.worker:
                raise LinkError("a server does not link to itself")
            self.peer = message.worker
            self._their_nonce = message.nonce
            self.phase = Phase.PROOF  # once `challenge` is sent
        elif isinstance(message, Challenge):
            if message.worker != self.peer:
                raise LinkError(f"dialled {self.peer}, answered by {message.worker}")
            self._their_nonce = message.nonce
            self._verify(message.proof, Role.LISTENER, self._nonce, message.nonce)
            self.phase = Phase.ACCEPT  # once `prove` is sent
        elif isinstance(message, Proof):
            self._verify(message.proof, Role.DIALER, self._their_nonce, self._nonce)
            # Proved; `accept` (after the id is found a live member) opens the link.
        elif isinstance(message, Accepted):
            self._established()

    def _verify(self, given: bytes, role: Role, dialer: bytes, listener: bytes) -> None:
        assert self.peer is not None
        wanted = proof(
            self._secret,
            role,
            dialer_nonce=dialer,
            listener_nonce=listener,
            own=self.peer,
            other=self.worker,
        )
        if not hmac.compare_digest(given, wanted):
            raise LinkError("wrong proof: the other side does not hold the cluster's secret")

    def hello(self) -> bytes:
        """The dialer's first frame."""
        assert self.role is Role.DIALER and self.phase is Phase.CHALLENGE
        return encode(Hello(self.worker, self._nonce))

    def challenge(self) -> bytes:
        """The listener's answer to `Hello`."""
        assert self.role is Role.LISTENER and self.phase is Phase.PROOF and self.peer is not None
        mine = proof(
            self._secret,
            Role.LISTENER,
            dialer_nonce=self._their_nonce,
            listener_nonce=self._nonce,
            own=self.worker,
            other=self.peer,
        )
        return encode(Challenge(self.worker, self._nonce, mine))

    def prove(self) -> bytes:
        """The dialer's answer to a verified `Challenge`."""
        assert self.role is Role.DIALER and self.phase is Phase.ACCEPT and self.peer is not None
        mine = proof(
            self._secret,
            Role.DIALER,
            dialer_nonce=self._nonce,
            listener_nonce=self._their_nonce,
            own=self.worker,
            other=self.peer,
        )
        return encode(Proof(mine))

    def accept(self) -> bytes:
        """The listener opens the link (the dialer's proof was verified, its id checked)."""
        assert self.role is Role.LISTENER and self.phase is Phase.PROOF
        self._established()
        return encode(Accepted())

    def _established(self) -> None:
        self.phase = Phase.ESTABLISHED
        self._frames.max_frame_size = self._max_frame + TAG_SIZE  # the other side proved itself
        dialer, listener = (
            (self.worker, self.peer) if self.role is Role.DIALER else (self.peer, self.worker)
        )
        nonces = (
            (self._nonce, self._their_nonce)
            if self.role is Role.DIALER
            else (self._their_nonce, self._nonce)
        )
        self._key = hmac.digest(
            self._secret,
            msgpack.packb([_VERSION, "session", *nonces, dialer, listener]),
            "sha256",
        )

    def _tag(self, payload: bytes) -> bytes:
        signed = self._count.to_bytes(8, "big") + payload
        self._count += 1
        return hmac.digest(self._key, signed, "sha256")[:TAG_SIZE]

    def _open(self, body: bytes) -> bytes:
        """An established frame's payload, once its tag is checked: made with this connection's
        key (so by the proven peer), and the next in order (not replayed, dropped or moved)."""
        payload, tag = body[:-TAG_SIZE], body[-TAG_SIZE:]
        if len(body) < TAG_SIZE or not hmac.compare_digest(tag, self._tag(payload)):
            raise LinkError("a frame failed its integrity check (altered, replayed or injected)")
        return payload

    def seal(self, payload: bytes) -> bytes:
        """The frame of an established dialer's packed message (`send` packs it first)."""
        if self.role is not Role.DIALER or self.phase is not Phase.ESTABLISHED:
            raise LinkError(f"nothing can be sent in phase {self.phase.value}")
        return frame(payload + self._tag(payload))

    def send(self, message: LinkMessage) -> bytes:
        """The frame of an established dialer's message."""
        if self.role is not Role.DIALER or self.phase is not Phase.ESTABLISHED:
            raise LinkError(f"a {message.TYPE} cannot be sent in phase {self.phase.value}")
        return self.seal(msgpack.packb(message.wire(), use_bin_type=True))
