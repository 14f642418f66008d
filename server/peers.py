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
    """One encoded event for one or several recipients: its frames, made once, each session
    splicing in its own `seq` (`protocol.wire.EventFrames`).

    A table makes one for everyone who may see the same thing: from the engine's map for a game
    event, from the seat's legal actions for a `your_turn` (neither ever becomes a message object on
    the server), from a message for the table's other notices. Another server's event arrives as
    its bytes (`EventFrames.from_body`) and passes through the same way. `kind` says which message
    it is; `message` is the object itself, decoded on first need, for a peer that reads it (a
    built-in bot reads its `your_turn`); a session never needs it.
    """

    __slots__ = ("_frames", "_message")

    def __init__(self, what: Event | EventFrames) -> None:
        # A message is encoded on first need (a table of built-in bots alone never needs it).
        self._frames: EventFrames | None = what if isinstance(what, EventFrames) else None
        self._message: Event | None = None if isinstance(what, EventFrames) else what

    def frames(self) -> EventFrames:
        """The shared encoding (made by the first session that sends it, if made of a message)."""
        if self._frames is None:
            assert self._message is not None
            self._frames = EventFrames(self._message)
        return self._frames

    @property
    def kind(self) -> type[Event]:
        return type(self._message) if self._message is not None else self.frames().kind

    @property
    def message(self) -> Event:
        if self._message is None:
            self._message = self.frames().message
        return self._message
