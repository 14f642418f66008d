"""The connection's state machine: its phases, and what each side may send in each, in one table.

Everything that decides whether a message may be sent (or accepted) at a given moment lives here, as
h11 keeps its own in ``_state.py``; ``protocol.connection`` applies it to both sides alike, so the
server, the client and the tests' clients can never disagree about the handshake. docs/protocol.md
renders the table (``<!-- gen:phases -->``) from :data:`MAY_SEND`.

The phases, in the order a connection goes through them:

- ``AWAITING_HELLO``: nothing accepted yet. The client's first message is ``hello``; a ``ping`` is
  answered (it reveals nothing and keeps no connection open: the handshake deadline still runs);
  anything else is refused ``unexpected_message``.
- ``AWAITING_WELCOME``: the ``hello`` is sent (or received) and not yet answered. The client may go on
  sending requests at once: the server reads them after it has answered the ``hello``.
- ``OPEN``: ``welcome`` is sent (or received): both sides may send what they may send at all.
- ``CLOSING``: one side has said ``bye`` or sent an ``error`` whose code closes the connection. That
  side sends nothing more, and the other, once it knows, sends nothing either; messages the other
  side had sent before it knew are still read (by the rules of the handshake's phase, which goes on
  moving: a ``welcome`` may cross a client's ``bye``).
- ``CLOSED``: the stream has ended.

The first three are the handshake's; ``CLOSING`` and ``CLOSED`` are what the connection shows on top
of it once one side has closed, or the stream has ended.
"""

from enum import Enum
from typing import Final

from protocol.errors import closes_connection
from protocol.messages import (
    MESSAGE_TYPES,
    Bye,
    Error,
    Hello,
    Message,
    Ping,
    Pong,
    Sender,
    Welcome,
)


class Phase(Enum):
    """Where a connection is in its life (see the module's docstring)."""

    AWAITING_HELLO = "awaiting_hello"
    AWAITING_WELCOME = "awaiting_welcome"
    OPEN = "open"
    CLOSING = "closing"
    CLOSED = "closed"


def _sent_by(side: Sender) -> frozenset[type[Message]]:
    return frozenset(cls for cls in MESSAGE_TYPES.values() if cls.SENDER is side)


_EITHER: Final = frozenset({Ping, Pong, Bye})
_CLIENT_REQUESTS: Final = _sent_by(Sender.CLIENT) - {Hello}
_SERVER_MESSAGES: Final = _sent_by(Sender.SERVER) - {Welcome}
_NOTHING: Final[frozenset[type[Message]]] = frozenset()

#: What each side may send in each phase. A message outside its row is the sender's bug: ours is a
#: ``LocalProtocolError`` (nothing is sent), the peer's a ``RemoteProtocolError`` with code
#: ``unexpected_message`` (refused, the connection goes on).
MAY_SEND: Final[dict[Phase, dict[Sender, frozenset[type[Message]]]]] = {
    Phase.AWAITING_HELLO: {
        Sender.CLIENT: frozenset({Hello, Ping, Bye}),
        # Refusals (a request before `hello`, a bad frame, server full, no hello in time), the
        # answer to an early `ping`, and a `bye` when the server stops.
        Sender.SERVER: frozenset({Error, Pong, Bye}),
    },
    Phase.AWAITING_WELCOME: {
        Sender.CLIENT: _CLIENT_REQUESTS | _EITHER,
        Sender.SERVER: frozenset({Welcome, Error}) | _EITHER,
    },
    Phase.OPEN: {
        Sender.CLIENT: _CLIENT_REQUESTS | _EITHER,
        Sender.SERVER: _SERVER_MESSAGES | _EITHER,
    },
    Phase.CLOSING: {Sender.CLIENT: _NOTHING, Sender.SERVER: _NOTHING},
    Phase.CLOSED: {Sender.CLIENT: _NOTHING, Sender.SERVER: _NOTHING},
}

#: Why a message is refused in a phase, for the refusal's sentence (the table above says whether).
WHY_NOT: Final[dict[Phase, str]] = {
    Phase.AWAITING_HELLO: "send hello first",
    Phase.AWAITING_WELCOME: "not before welcome",
    Phase.OPEN: "not once the connection is open",
    Phase.CLOSING: "the connection is closing: nothing follows a bye or a closing error",
    Phase.CLOSED: "the connection is closed",
}


def after(phase: Phase, message: Message) -> Phase:
    """The handshake's phase once ``message`` has gone by, either way: ``hello`` opens the handshake
    and ``welcome`` ends it; nothing else moves it. (A ``hello`` the server refuses, of another major
    version, is not taken: the server answers it with a closing ``error`` instead.)"""
    kind = type(message)
    if kind is Hello and phase is Phase.AWAITING_HELLO:
        return Phase.AWAITING_WELCOME
    if kind is Welcome and phase is Phase.AWAITING_WELCOME:
        return Phase.OPEN
    return phase


def closes(message: Message) -> bool:
    """Whether ``message`` ends its sender's part of the connection: ``bye``, or an ``error`` whose
    code closes the connection (docs/protocol.md, Errors)."""
    return type(message) is Bye or (isinstance(message, Error) and closes_connection(message.code))


#: The message types that can change the phase (all others leave it as it is): lets the
#: connection skip :func:`after` and :func:`closes` on its hot path.
PHASE_CHANGERS: Final = frozenset({Hello, Welcome, Bye, Error})
