"""`/healthz`, `/readyz` and `/metrics`: what a load balancer, a service manager or Prometheus asks.

- `/healthz`: alive. 200 while the process serves HTTP at all (its event loop turns).
- `/readyz`: accepting. 200 when new players would be served: not shutting down, the store
  reachable (a flag its writer keeps: `Store.reachable`), in a cluster the lease held, and room for
  another connection (`--max-connections`); else 503 with the reason in one line.
- `/metrics`: the Prometheus text format (`server.metrics`).

They are answered on the web port (next to the page, behind its `Host` check) and on a port of their
own (`server.web.ops_port`: `--metrics-port`, or by default when the page is off). `Health` reads
the server's parts through `ServerParts`, the few attributes it needs, at request time only.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, Protocol

import trio

from server.metrics import CONTENT_TYPE, Observation, ServerMetrics, transport_of
from server.web.ops import OpsReply

if TYPE_CHECKING:
    from server.cluster.node import ClusterNode
    from server.config import ServerConfig
    from server.ladder.service import LadderService
    from server.lobby import Lobby
    from server.session import Session
    from server.storage import Store

TEXT = b"text/plain; charset=utf-8"


class ServerParts(Protocol):
    """What `Health` reads of the server (`server.app.Server` is one)."""

    @property
    def config(self) -> ServerConfig: ...
    @property
    def sessions(self) -> set[Session]: ...
    @property
    def lobby(self) -> Lobby: ...
    @property
    def store(self) -> Store: ...
    @property
    def ladder(self) -> LadderService | None: ...
    @property
    def node(self) -> ClusterNode | None: ...
    @property
    def stop_requested(self) -> bool: ...


class Health:
    """The answers to the three paths, and the metrics they read (one per server)."""

    def __init__(self, parts: ServerParts, version: str) -> None:
        self.parts = parts
        self.metrics = ServerMetrics(version, self.observe)

    def unready_reason(self) -> str | None:
        """Why the server is not accepting now (one sentence), or None when it is."""
        parts = self.parts
        if parts.stop_requested:
            return "the server is shutting down"
        if not parts.store.reachable:
            return "the database cannot be reached"
        node = parts.node
        if node is not None and not node.lease_held:
            return "this server does not hold its cluster lease"
        if len(parts.sessions) >= parts.config.limits.max_connections:
            # The next connection would be refused `server_full`: send it elsewhere.
            return "the server has no room for another connection"
        return None

    def answer(self, path: str) -> OpsReply | None:
        """The reply to a GET (or HEAD) of `path`, or None if it is not one of ours."""
        if path == "/healthz":
            return OpsReply(200, TEXT, b"ok\n")
        if path == "/readyz":
            reason = self.unready_reason()
            if reason is None:
                return OpsReply(200, TEXT, b"ready\n")
            return OpsReply(503, TEXT, f"not ready: {reason}\n".encode())
        if path == "/metrics":
            return OpsReply(200, CONTENT_TYPE.encode(), self.metrics.render())
        return None

    def observe(self) -> Observation:
        """The server as it is now: one pass over its sessions and tables (both bounded)."""
        parts = self.parts
        connections: Counter[str] = Counter()
        sessions: Counter[str] = Counter()
        outbox_total = outbox_max = 0
        for session in parts.sessions:
            connections[transport_of(session.stream)] += 1
            if session.account is not None:
                sessions[session.kind.value] += 1
            queued = session.connection.queued
            outbox_total += queued
            outbox_max = max(outbox_max, queued)
        tables: Counter[str] = Counter()
        inbox_total = inbox_max = 0
        for table in parts.lobby.tables.values():
            tables[table.lifecycle.value] += 1
            queued = table.send_inbox.statistics().current_buffer_used
            inbox_total += queued
            inbox_max = max(inbox_max, queued)
        store = parts.store
        seen = Observation(
            ready=self.unready_reason() is None,
            connections=connections,
            sessions=sessions,
            tables=tables,
            inbox_queued=inbox_total,
            inbox_queued_max=inbox_max,
            outbox_queued=outbox_total,
            outbox_queued_max=outbox_max,
            store_queued=store.queued,
            store_batches=store.batches,
            store_jobs=store.jobs,
            store_reachable=store.reachable,
            store_outages=store.health.outages,
            store_unavailable_seconds=store.health.paused_until(trio.current_time()),
        )
        node = parts.node
        if node is not None:
            depths = node.links.queued()
            seen.link_peers = len(depths)
            seen.link_queued = sum(depths.values())
            seen.link_queued_max = max(depths.values(), default=0)
            seen.link_sent = node.links.sent
            seen.link_refused = node.links.refused
            seen.lease_held = node.lease_held
            seen.tables_claimed = node.claimed
        ladder = parts.ladder
        if ladder is not None:
            seen.ladder = (ladder.rated, ladder.voided, ladder.running)
        return seen
