"""What a table, the lobby and the ladder may do with a connection: deliver to it, and ask who it is.

A *peer* is one connection of one account: a client's session (its messages cross a socket) or a
built-in bot seated in-process. Tables, the lobby and the ladder only ever hold peers through this
narrow interface, never the session object itself, so none of them can reach into a session's
state (design.md, "Seats belong to connections, accounts own connections").
"""

from __future__ import annotations

from typing import Protocol

from protocol.messages import Event, Message
from protocol.wire import EventFrames


class Peer(Protocol):
    """One connection that may hold a seat, watch a table or listen to the lobby."""

    @property
    def peer_id(self) -> str:
        """This connection's id (the session id in `welcome.session`; a bot seat's own name)."""
        ...

    @property
    def connected(self) -> bool:
        """False once the connection is closing or closed: nothing delivered will arrive."""
        ...

    def deliver(self, message: Message) -> None:
        """Queue `message` for this connection; never blocks (a slow peer is dropped instead)."""
        ...

    def deliver_shared(self, shared: SharedEvent) -> None:
        """Queue an event that other peers receive too (encoded once for all of them)."""
        ...


class SharedEvent:
    """One event for several recipients: the message, and its encoding made on first need.

    A table sends the same event object to every recipient who may see the same thing; each
    session then splices its own `seq` into the one encoding (`protocol.wire.EventFrames`) instead
    of packing the message again. Built-in bots read `message` and never cause an encoding.
    """

    __slots__ = ("_frames", "message")

    def __init__(self, message: Message) -> None:
        self.message = message
        self._frames: EventFrames | None = None

    def frames(self) -> EventFrames:
        """The shared encoding (made by the first session that sends it)."""
        if self._frames is None:
            assert isinstance(self.message, Event)
            self._frames = EventFrames(self.message)
        return self._frames
