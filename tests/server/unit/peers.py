"""A peer that only records what it is told: a table's audience in unit tests, without sockets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TypeVar

from protocol.messages import Message
from server.peers import SharedEvent

M = TypeVar("M", bound=Message)


class RecordingPeer:
    """Stands where a session would: every message delivered to it is kept, in order."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.got: list[Message] = []
        self.shared: list[SharedEvent] = []
        self.connected = True

    @property
    def peer_id(self) -> str:
        return self.name

    def deliver(self, message: Message) -> None:
        self.got.append(message)

    def deliver_shared(self, shared: SharedEvent) -> None:
        self.shared.append(shared)
        self.got.append(shared.message)

    def of(self, kind: type[M]) -> list[M]:
        return [m for m in self.got if isinstance(m, kind)]

    def last(self, kind: type[M]) -> M:
        found = self.of(kind)
        assert found, f"{self.name} got no {kind.TYPE}: {[m.TYPE for m in self.got]}"
        return found[-1]

    def since(self, index: int) -> Iterator[Message]:
        return iter(self.got[index:])

    def __repr__(self) -> str:
        return f"RecordingPeer({self.name})"
