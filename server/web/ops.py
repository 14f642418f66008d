"""What the web port (and the operator's port, `server.web.ops_port`) asks of the server's health
endpoints: a `Routes` answers a path with an `OpsReply`, or None when the path is not its own.

The answers themselves are the server's (`server.health`); the HTTP side only serves them, so the
web package knows nothing of metrics or readiness.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class OpsReply:
    """One answer: its status, `Content-Type` and body."""

    status: int
    content_type: bytes
    body: bytes


class Routes(Protocol):
    def answer(self, path: str) -> OpsReply | None:
        """The reply to a GET or HEAD of `path`, or None if the path is not one of these."""
        ...
