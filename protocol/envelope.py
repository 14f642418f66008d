"""The envelope every message shares, the message registry and the protocol version.

``t`` names the type; requests and replies carry ``id``, server events carry ``seq``, and game events
also the table and the game version they belong to. ``register`` enters a class in ``MESSAGE_TYPES``,
the one table the decoder, the tests and the docs all read.
"""

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Annotated, ClassVar, Final, TypeVar

from protocol.schema import Doc
from protocol.types import GameVersion, RequestId, Seq, TableId

PROTOCOL_VERSION: Final = (1, 0)
PROTOCOL_VERSION_TEXT: Final = f"{PROTOCOL_VERSION[0]}.{PROTOCOL_VERSION[1]}"


class Sender(StrEnum):
    """Which side may send a message."""

    CLIENT = "client"
    SERVER = "server"
    EITHER = "either"


class Role(StrEnum):
    """How a message relates to others: a request (may carry ``id``), its reply, or an event."""

    REQUEST = "request"
    REPLY = "reply"
    EVENT = "event"
    NOTICE = "notice"  # neither answered nor sequenced (bye)


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    """Base of every message. ``TYPE`` is its ``t``; ``SENDER`` who may send it."""

    TYPE: ClassVar[str]
    SENDER: ClassVar[Sender]
    ROLE: ClassVar[Role] = Role.NOTICE


@dataclass(frozen=True, slots=True, kw_only=True)
class Request(Message):
    """A message that the receiver answers; the answer carries the same ``id``."""

    ROLE: ClassVar[Role] = Role.REQUEST
    id: Annotated[
        RequestId | None, Doc("the requester's number for this request, echoed in the reply")
    ] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Reply(Message):
    """The answer to a request."""

    ROLE: ClassVar[Role] = Role.REPLY
    id: Annotated[RequestId | None, Doc("the `id` of the request answered; nil if it had none")] = (
        None
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Event(Message):
    """A push from the server; ``seq`` counts the events of one connection, from 1, without gaps.

    The table task builds events with ``seq=0``; the session stamps the real number as it sends them
    (``dataclasses.replace(event, seq=n)``), since only it knows the connection's count.
    """

    ROLE: ClassVar[Role] = Role.EVENT
    seq: Annotated[Seq, Doc("this connection's event counter (stamped by the session)")] = 0


@dataclass(frozen=True, slots=True, kw_only=True)
class GameEvent(Event):
    """Something that happened in a table's game; ``version`` is the game version once it happened."""

    table: Annotated[TableId, Doc("the table")]
    version: Annotated[GameVersion, Doc("the game version after this event")]


MESSAGE_TYPES: dict[str, type[Message]] = {}

M = TypeVar("M", bound=Message)


def register(type_name: str, sender: Sender) -> Callable[[type[M]], type[M]]:
    """Give a message class its ``t`` and sender and enter it in ``MESSAGE_TYPES``."""

    def decorate(cls: type[M]) -> type[M]:
        if type_name in MESSAGE_TYPES:
            raise ValueError(f"message type {type_name!r} is declared twice")
        cls.TYPE = type_name
        cls.SENDER = sender
        MESSAGE_TYPES[type_name] = cls
        return cls

    return decorate
