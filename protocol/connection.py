"""One connection of the protocol, either side, sans-IO: bytes in, messages out; messages in, bytes out.

Modelled on h11's ``Connection``. The caller owns the socket (and every clock); this object owns the
protocol's state: the phase (``protocol.phases``, the one table of what each side may send when),
request numbering and the matching of replies, the events' ``seq`` (stamped on the server side,
checked on the client side), ``ping``/``pong`` and ``bye``.

    conn = Connection(Sender.CLIENT)
    await stream.send_all(conn.send(Hello(...)))  # numbered (``conn.numbered`` shows the id first)
    conn.receive_data(await stream.receive_some())  # b"" when the peer closed
    while (event := conn.next_event()) is not None:
        if event is CONNECTION_CLOSED:  # (returned again on every later call)
            break
        ...  # a Message

Errors say whose fault they are. ``next_event`` raises :class:`RemoteProtocolError` (the peer's bytes
or messages; ``fatal`` says whether the connection can go on, and a fatal one is raised again on every
later call); ``send`` raises :class:`LocalProtocolError` (our own code's mistake: nothing is sent and the
state is unchanged). Both carry an ``ErrorCode``; a server answers a remote one with
``error_message(exc)``.

Replies are matched by ``id`` to the requests this side sent. A reply without an ``id`` is unsolicited
and given to the caller as it is (a server sends ``joined`` after a resume, ``bad_token`` after
``welcome``; a client may send ``pong`` as a heartbeat). A reply whose ``id`` answers no pending
request (never sent, or answered already) is refused: ``RemoteProtocolError`` ``unexpected_message``,
not fatal, the reply in its ``received``; acting on it could apply an answer twice or to the wrong
question. (docs/protocol.md, Connection.)

The server side does not validate what it sends (its messages are its own, built from declared types
or from the engine, which the tests check); the client side does by default, so a client's bug is
caught before the server has to refuse it. The server sends an event several connections share as one
:class:`protocol.wire.EventFrames` (``send_event``): encoded once, each connection splicing in its own
``seq``.
"""

import dataclasses
import types
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, TypeVar

from protocol.codec import DEFAULT_LIMITS, Limits, pack_body
from protocol.errors import ErrorCode, LocalProtocolError, ProtocolError, RemoteProtocolError
from protocol.framing import DEFAULT_MAX_FRAME_SIZE, frame
from protocol.messages import (
    PROTOCOL_VERSION,
    Act,
    Event,
    Hello,
    Message,
    Reply,
    Request,
    Role,
    Sender,
    Welcome,
    YourTurn,
)
from protocol.phases import MAY_SEND, PHASE_CHANGERS, Phase, after, closes
from protocol.schema import FieldProblem, from_map, to_map
from protocol.wire import EventFrames, MessageDecoder, check_version, encode, to_wire

__all__ = [
    "CONNECTION_CLOSED",
    "MAX_REQUEST_ID",
    "Connection",
    "ConnectionClosed",
    "Phase",
]

MAX_REQUEST_ID: Final = 2**32 - 1
R = TypeVar("R", bound=Request)


@dataclass(frozen=True, slots=True)
class ConnectionClosed:
    """The peer ended the stream cleanly, after a whole frame. ``next_event`` returns it from then on."""


CONNECTION_CLOSED: Final = ConnectionClosed()


class Connection:
    """The protocol state of one connection, seen from ``our_role`` (``Sender.CLIENT`` or ``SERVER``).

    ``max_frame_size`` and ``limits`` bound what is accepted from the peer. ``validate`` checks every
    outgoing message against its schema (default: on for a client, off for a server, see the module's
    docstring).
    """

    # A server holds one per connection (thousands): no instance dict, and no dict it may never use.
    __slots__ = (
        "_decoder",
        "_eof",
        "_error",
        "_handshake",
        "_next_id",
        "_ours",
        "_pending",
        "_phase",
        "_seq",
        "_theirs",
        "_they_closed",
        "_turns_owed",
        "_validate",
        "_we_closed",
        "our_role",
        "their_role",
    )

    def __init__(
        self,
        our_role: Sender,
        *,
        max_frame_size: int = DEFAULT_MAX_FRAME_SIZE,
        limits: Limits = DEFAULT_LIMITS,
        validate: bool | None = None,
    ) -> None:
        if our_role not in (Sender.CLIENT, Sender.SERVER):
            raise ValueError(f"a connection is a client's or a server's, not {our_role!r}")
        self.our_role = our_role
        self.their_role = Sender.SERVER if our_role is Sender.CLIENT else Sender.CLIENT
        self._validate = our_role is Sender.CLIENT if validate is None else validate
        self._decoder = MessageDecoder(
            self.their_role, max_frame_size=max_frame_size, limits=limits
        )
        self._handshake = Phase.AWAITING_HELLO  # the first three phases; moved by hello, welcome
        self._phase = Phase.AWAITING_HELLO  # what the caller sees: CLOSING or CLOSED on top of it
        self._we_closed = False
        self._they_closed = False
        self._eof = False
        self._error: RemoteProtocolError | None = None
        self._pending: dict[int, Request] = {}
        self._next_id = 1
        self._seq = 0  # events stamped (server side) or received (client side)
        # table -> the version of the last `your_turn` sent there, not yet answered (server side;
        # made on first use: most connections never sit).
        self._turns_owed: dict[str, int] | None = None
        self._ours = MAY_SEND[self._phase][our_role]
        self._theirs = MAY_SEND[self._phase][self.their_role]

    # ---------------------------------------------------------------- state

    @property
    def phase(self) -> Phase:
        """Where the connection is (``protocol.phases``)."""
        return self._phase

    @property
    def closed_by(self) -> frozenset[Sender]:
        """The sides that have said ``bye`` (or sent a closing ``error``), if any."""
        sides: set[Sender] = set()
        if self._we_closed:
            sides.add(self.our_role)
        if self._they_closed:
            sides.add(self.their_role)
        return frozenset(sides)

    @property
    def can_send(self) -> bool:
        """Whether anything may still be sent (false once the connection is closing or closed)."""
        return bool(self._ours)

    def may_send(self, kind: type[Message]) -> bool:
        """Whether a message of this type may be sent now."""
        return kind in self._ours

    @property
    def pending(self) -> Mapping[int, Request]:
        """This side's requests not answered yet, by ``id`` (read-only)."""
        return types.MappingProxyType(self._pending)

    @property
    def seq(self) -> int:
        """The ``seq`` of the last event: stamped (server side) or received (client side); 0 before."""
        return self._seq

    @property
    def error(self) -> RemoteProtocolError | None:
        """The fatal error that stopped the reading side, if any."""
        return self._error

    @property
    def buffered(self) -> int:
        """Bytes received but not yet part of a whole frame."""
        return self._decoder.buffered

    def _moved(self, message: Message, *, by_us: bool) -> None:
        """Take a phase-changing message into account (sent if ``by_us``, else received)."""
        self._handshake = after(self._handshake, message)
        if closes(message):
            if by_us:
                self._we_closed = True
            else:
                self._they_closed = True
        self._update()

    def _update(self) -> None:
        if self._eof:
            self._phase = Phase.CLOSED
        elif self._we_closed or self._they_closed:
            self._phase = Phase.CLOSING
        else:
            self._phase = self._handshake
        self._ours = MAY_SEND[self._phase][self.our_role]
        # What they sent before they knew we were closing is still read, by the handshake's rules.
        they_may = self._handshake if not (self._they_closed or self._eof) else self._phase
        self._theirs = MAY_SEND[they_may][self.their_role]

    # ---------------------------------------------------------------- receiving

    def receive_data(self, data: bytes | bytearray | memoryview) -> None:
        """Bytes from the peer, in any split; ``b""`` when it closed its side. Never raises for bad
        bytes: their errors come out of :meth:`next_event`, in stream order."""
        self._decoder.receive_data(data)

    def next_event(self) -> Message | ConnectionClosed | None:
        """The next message from the peer; ``None`` until more bytes arrive; ``CONNECTION_CLOSED``
        once the stream has ended cleanly (and on every call after).

        Raises :class:`RemoteProtocolError`. Not fatal: one message was refused and consumed (answer
        it, or skip it) and the next call goes on. Fatal: the connection cannot go on; it is raised
        again on every call.
        """
        if self._error is not None:
            raise self._error
        if self._phase is Phase.CLOSED:
            return CONNECTION_CLOSED
        try:
            message = self._decoder.next_message()
        except ProtocolError as exc:
            raise self._refused(RemoteProtocolError.of(exc)) from None
        if message is None:
            if self._decoder.eof:
                self._eof = True
                self._update()
                return CONNECTION_CLOSED
            return None
        return self._accept(message)

    def _refused(self, error: RemoteProtocolError) -> RemoteProtocolError:
        if error.fatal:
            self._error = error
        return error

    def _accept(self, message: Message) -> Message:
        """Check a decoded message against the phase, the pending requests and the `seq`; take it."""
        kind = type(message)
        if kind not in self._theirs:
            raise self._refused(self._out_of_phase(message))
        role = kind.ROLE
        if role is Role.EVENT:
            assert isinstance(message, Event)
            if message.seq != self._seq + 1:
                raise self._refused(
                    RemoteProtocolError(
                        ErrorCode.INVALID_FIELD,
                        f"{kind.TYPE} has seq {message.seq} after {self._seq}: events were lost "
                        "or reordered (reconnect to resync)",
                        fatal=True,
                        detail="seq",
                        received=message,
                    )
                )
            self._seq = message.seq
        elif role is Role.REPLY:
            assert isinstance(message, Reply)
            rid = message.id
            # (A closing error is the server's last word, whatever it answers: taken.)
            if rid is not None and self._pending.pop(rid, None) is None and not closes(message):
                raise self._refused(
                    RemoteProtocolError(
                        ErrorCode.UNEXPECTED_MESSAGE,
                        f"a {kind.TYPE} answering no request of ours (id {rid})",
                        detail=kind.TYPE,
                        received=message,
                    )
                )
        if kind in PHASE_CHANGERS:
            self._check_versions(message)
            self._moved(message, by_us=False)
        return message

    def _out_of_phase(self, message: Message) -> RemoteProtocolError:
        kind = type(message)
        if self._they_closed:
            why = f"a {kind.TYPE} after a bye or a closing error: nothing follows those"
        elif kind is Hello:
            why = "hello was already sent"
        elif self._handshake is Phase.AWAITING_HELLO:
            why = "send hello first"
        else:
            why = f"a {kind.TYPE} is not accepted in phase {self._handshake.value}"
        return RemoteProtocolError(
            ErrorCode.UNEXPECTED_MESSAGE,
            why,
            request_id=message.id if isinstance(message, Request) else None,
            detail=kind.TYPE,
            received=message,
        )

    def _check_versions(self, message: Message) -> None:
        """A `hello` of another major version is refused (fatal: the connection cannot go on); so
        is a `welcome` from a server of another major version."""
        refusal: ProtocolError | None = None
        if isinstance(message, Hello):
            refusal = check_version(message.protocol)
        elif isinstance(message, Welcome):
            major = message.protocol.partition(".")[0]
            if major != str(PROTOCOL_VERSION[0]):
                refusal = ProtocolError(
                    ErrorCode.VERSION_MISMATCH,
                    f"the server speaks protocol {message.protocol}, this client {PROTOCOL_VERSION[0]}.x",
                    fatal=True,
                    detail=message.protocol,
                )
        if refusal is not None:
            rid = message.id if isinstance(message, Request) else None
            raise self._refused(
                RemoteProtocolError(
                    refusal.code,
                    refusal.message,
                    fatal=True,
                    request_id=rid,
                    detail=refusal.detail,
                    received=message,
                )
            )

    # ---------------------------------------------------------------- sending

    def numbered(self, request: R) -> R:
        """``request`` with a fresh ``id`` if it has none (the id is then taken: ask once per request).
        Sending it registers it as pending."""
        if request.id is not None:
            return request
        rid = self._next_id
        while rid in self._pending:
            rid = rid + 1 if rid < MAX_REQUEST_ID else 1
        self._next_id = rid + 1 if rid < MAX_REQUEST_ID else 1
        return dataclasses.replace(request, id=rid)

    def send(self, message: Message) -> bytes:
        """The frame for ``message``, moving the connection's state along.

        A request without an ``id`` is numbered (see :meth:`numbered`) and its reply will be matched;
        an event gets this connection's next ``seq`` (whatever ``seq`` it carried). Raises
        :class:`LocalProtocolError` when this side may not send it now (or, with validation on, when
        it breaks its schema); nothing is sent then and the state is unchanged.
        """
        kind = type(message)
        if kind not in self._ours:
            raise self._not_now(message)
        role = kind.ROLE
        if role is Role.EVENT:
            assert isinstance(message, Event)
            if self._validate:
                self._check(message)
            seq = self._seq + 1
            wire = to_wire(message)
            wire["seq"] = seq
            data = frame(pack_body(wire))
            self._seq = seq
            if kind is YourTurn:
                assert isinstance(message, YourTurn)
                self._owe_turn(message.table, message.version)
            return data
        if role is Role.REQUEST:
            assert isinstance(message, Request)
            message = self.numbered(message)
            assert message.id is not None
            if message.id in self._pending:
                raise LocalProtocolError(
                    ErrorCode.INVALID_FIELD,
                    f"request id {message.id} is still pending",
                    request_id=message.id,
                    detail="id",
                )
            if self._validate:
                self._check(message)
            data = encode(message)
            self._pending[message.id] = message
            if message.id >= self._next_id:  # an id of the caller's own: number after it
                self._next_id = message.id + 1 if message.id < MAX_REQUEST_ID else 1
        else:
            if self._validate:
                self._check(message)
            data = frame(pack_body(to_wire(message)))  # (encode's own steps: the server's hot path)
        if kind in PHASE_CHANGERS:
            self._moved(message, by_us=True)
        return data

    def send_event(self, frames: EventFrames) -> bytes:
        """The frame of a shared, pre-encoded event with this connection's next ``seq`` spliced in
        (server side). Raises :class:`LocalProtocolError` as :meth:`send` does."""
        kind = frames.kind
        if kind not in self._ours:
            raise self._not_now_kind(kind)
        self._seq += 1
        if kind is YourTurn:
            assert frames.table is not None and frames.version is not None
            self._owe_turn(frames.table, frames.version)
        return frames.frame(self._seq)

    def _owe_turn(self, table: str, version: int) -> None:
        if self._turns_owed is None:
            self._turns_owed = {}
        self._turns_owed[table] = version

    def answers_turn(self, message: Message) -> bool:
        """Whether ``message`` is the first ``act`` for the version of the last ``your_turn`` this
        connection was sent at that table (server side); that turn is then answered, so a second
        ``act`` for it is not. docs/protocol.md (Limits and clocks): such an act is not charged to the
        rate limit, since the server sets that pace."""
        if not self._turns_owed or type(message) is not Act:
            return False
        assert isinstance(message, Act)
        if self._turns_owed.get(message.table) != message.version:
            return False
        del self._turns_owed[message.table]
        return True

    def _not_now(self, message: Message) -> LocalProtocolError:
        return self._not_now_kind(type(message))

    def _not_now_kind(self, kind: type[Message]) -> LocalProtocolError:
        if kind.SENDER not in (self.our_role, Sender.EITHER):
            why = f"a {kind.TYPE} is never sent by the {self.our_role}"
        elif not self._ours:
            why = f"the connection is {self._phase.value}: nothing more may be sent"
        elif kind is Hello:
            why = "hello was already sent"
        elif self._phase is Phase.AWAITING_HELLO:
            why = "send hello first"
        else:
            why = f"a {kind.TYPE} is not sent in phase {self._phase.value}"
        return LocalProtocolError(ErrorCode.UNEXPECTED_MESSAGE, why, detail=kind.TYPE)

    @staticmethod
    def _check(message: Message) -> None:
        """Refuse a message its receiver would refuse (as it will decode it: through its map)."""
        try:
            from_map(type(message), to_map(message))
        except FieldProblem as problem:
            raise LocalProtocolError(
                ErrorCode.MISSING_FIELD if problem.missing else ErrorCode.INVALID_FIELD,
                f"{message.TYPE}: {problem}",
                detail=problem.path[:200],
            ) from None
