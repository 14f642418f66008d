"""What a test's `Links` handed over, and which links it lost (`tests/server/cluster/test_link_*`)."""

from __future__ import annotations

from typing import Any

import trio

from server.cluster.link_protocol import Established


class Heard:
    """What one server's links handed over, and which links it lost."""

    def __init__(self) -> None:
        self.messages: list[tuple[str, Established]] = []
        self.lost: list[str] = []
        self.changed = trio.Event()

    def handle(self, origin: str, message: Established) -> None:
        self.messages.append((origin, message))
        self._tell()

    def on_lost(self, worker: str) -> None:
        self.lost.append(worker)
        self._tell()

    def _tell(self) -> None:
        self.changed.set()
        self.changed = trio.Event()

    async def until(self, check: Any) -> None:
        while not check():  # bounded by the test's fail_after
            await self.changed.wait()
