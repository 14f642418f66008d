"""The server's Prometheus metrics: what it counts as it goes, and what it reads when scraped.

Each `ServerMetrics` has a registry of its own (never prometheus-client's global one), so several
servers in one process (tests, tools) keep their figures apart. Two kinds of figure:

- counted in place, on the path that does the work: actions applied (`ActionMeter`), refusals by
  error code, connections accepted, the act-to-delivered and store-commit latencies (histograms).
  Each is one `inc()` or `observe()` on a child made in advance (no label lookup per event);
- read at scrape time (`Observation`, gathered by `server.health`): open connections, sessions,
  tables by state, inbox and outbox depths, the store's queue, the cluster's link and lease, the
  ladder's matches. Nothing on the hot path pays for those: a scrape walks the sessions and tables
  once (both are bounded by the server's limits).

Nothing secret is exported: no tokens, account names, table ids or join codes, no worker ids of
a cluster; labels are closed sets (transports, client kinds, table states, error codes, sources).
docs/operations.md ("Health and metrics") says what each metric means.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass

import trio
from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import generate_latest
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from protocol.errors import ErrorCode
from server.web.websocket import WebSocketStream

# The classic text format `generate_latest` writes (what `promtool check metrics` and every
# Prometheus read), named here: the library's own "latest" now names a newer version of it.
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

TRANSPORTS = ("tcp", "websocket")
ACTION_SOURCES = ("player", "bot", "fallback")  # as the store records an action's source
TABLE_STATES = ("waiting", "playing", "finished", "closed")  # `Lifecycle` values
CLIENT_KINDS = ("human", "bot")

# Seconds. An action's path is a commit (a fraction of a millisecond on SQLite, a round trip on
# PostgreSQL) plus the table's turn in the event loop: most land in the low buckets, and the high
# ones show a stalled store or a loaded loop.
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


def transport_of(stream: trio.abc.Stream) -> str:
    """`websocket` for a session over the web port's WebSocket, else `tcp` (TLS or not)."""
    return "websocket" if isinstance(stream, WebSocketStream) else "tcp"


@dataclass
class Observation:
    """What the server is at the moment of a scrape (`server.health.Health.observe`)."""

    ready: bool
    connections: Mapping[str, int]  # open protocol connections by transport
    sessions: Mapping[str, int]  # logged-in sessions by client kind
    tables: Mapping[str, int]  # this server's tables by lifecycle state
    inbox_queued: int = 0  # commands waiting in every table's inbox together
    inbox_queued_max: int = 0  # in the fullest one
    outbox_queued: int = 0  # frames waiting in every connection's outbox together
    outbox_queued_max: int = 0
    store_queued: int = 0  # requests waiting for the store's writer
    store_batches: int = 0  # transactions committed since start (group commits)
    store_jobs: int = 0  # requests committed since start
    store_reachable: bool = True
    store_outages: int = 0  # times the database could not be reached since start
    store_unavailable_seconds: float = 0.0  # how long, all together (the current outage too)
    # In a cluster (None otherwise): the link's connected peers and the frames queued for them.
    link_peers: int | None = None
    link_queued: int = 0
    link_queued_max: int = 0
    link_sent: int = 0  # messages sent to the other servers since start
    link_refused: int = 0  # incoming links refused (a failed handshake, not a member) since start
    lease_held: bool | None = None
    tables_claimed: int = 0
    # With the ladder (None otherwise): matches rated and voided since start, and running now.
    ladder: tuple[int, int, int] | None = None


class ActionMeter:
    """What a table counts for each action it applies (handed to every table by the lobby)."""

    def __init__(self, actions: Counter, latency: Histogram) -> None:
        self._by_source = {source: actions.labels(source) for source in ACTION_SOURCES}
        self._actions = actions
        self._latency = latency

    def applied(self, source: str, since: float | None) -> None:
        """One action stored and told; `since` is when its `act` reached the server (trio time),
        None for the table's own (a clock's fallback), which no one sent."""
        counter = self._by_source.get(source)
        if counter is None:  # pragma: no cover - a source the store does not know
            counter = self._actions.labels(source)
        counter.inc()
        if since is not None:
            self._latency.observe(trio.current_time() - since)


class ServerMetrics:
    """One server's registry and the figures it counts in place; `render()` is a scrape."""

    def __init__(self, version: str, observe: Callable[[], Observation]) -> None:
        # No `*_created` series (a start time per counter and label): they double the output and
        # say what `process_start_time_seconds` says. (The library's switch is process-wide.)
        disable_created_metrics()  # type: ignore[no-untyped-call]  # (the library: no hints)
        self.registry = CollectorRegistry(auto_describe=True)
        registry = self.registry
        accepted = Counter(
            "spades_connections_accepted",
            "Protocol connections accepted, by transport (refused ones included).",
            ["transport"],
            registry=registry,
        )
        self.accepted = {t: accepted.labels(t) for t in TRANSPORTS}
        self._refusals = Counter(
            "spades_refusals",
            "Error messages sent to clients, by error code (docs/protocol.md, Errors).",
            ["code"],
            registry=registry,
        )
        # Made in advance (every code shows, at 0), so counting one is a dict lookup and an inc.
        self._refused = {code.value: self._refusals.labels(code.value) for code in ErrorCode}
        actions = Counter(
            "spades_actions",
            "Game actions applied and stored, by source (player; bot: a built-in seat; fallback:"
            " a seat's clock ran out).",
            ["source"],
            registry=registry,
        )
        latency = Histogram(
            "spades_act_to_delivered_seconds",
            "From an act reaching the server to its events queued for every connection at the"
            " table (inbox wait, engine, commit, broadcast).",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self.actions = ActionMeter(actions, latency)
        self.store_commit = Histogram(
            "spades_store_commit_seconds",
            "Time to commit one batch of the store's writer (one group commit).",
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        registry.register(_ScrapeCollector(version, observe))
        # The process's CPU, memory, open files and start time (Linux: from /proc).
        ProcessCollector(registry=registry)

    def refused(self, code: str) -> None:
        """An `error` with `code` went to a client."""
        counter = self._refused.get(code)
        if counter is None:  # a code outside ErrorCode (an account error's): still a closed set
            counter = self._refused[code] = self._refusals.labels(code)
        counter.inc()

    def render(self) -> bytes:
        """The registry in the Prometheus text format (`CONTENT_TYPE`)."""
        return generate_latest(self.registry)


class _ScrapeCollector(Collector):
    """The gauges (and the counters kept as plain ints elsewhere), read once per scrape."""

    def __init__(self, version: str, observe: Callable[[], Observation]) -> None:
        self._version = version
        self._observe = observe

    def describe(self) -> Iterable[Metric]:
        return []  # families vary (cluster, ladder): described by collecting, at scrape time

    def collect(self) -> Iterator[Metric]:
        seen = self._observe()
        info = GaugeMetricFamily(
            "spades_server_info", "The server's version (always 1).", labels=["version"]
        )
        info.add_metric([self._version], 1)
        yield info
        yield _gauge("spades_ready", "1 while /readyz answers 200 (accepting), else 0.", seen.ready)
        yield _labelled(
            "spades_connections",
            "Open protocol connections, by transport.",
            "transport",
            TRANSPORTS,
            seen.connections,
        )
        yield _labelled(
            "spades_sessions",
            "Logged-in sessions, by client kind.",
            "kind",
            CLIENT_KINDS,
            seen.sessions,
        )
        yield _labelled(
            "spades_tables", "This server's tables, by state.", "state", TABLE_STATES, seen.tables
        )
        yield _gauge(
            "spades_table_inbox_queued",
            "Commands waiting in the tables' inboxes, all tables together.",
            seen.inbox_queued,
        )
        yield _gauge(
            "spades_table_inbox_queued_max",
            "Commands waiting in the fullest table inbox.",
            seen.inbox_queued_max,
        )
        yield _gauge(
            "spades_outbox_queued",
            "Frames waiting in the connections' outboxes, all connections together.",
            seen.outbox_queued,
        )
        yield _gauge(
            "spades_outbox_queued_max",
            "Frames waiting in the fullest outbox (a full one drops its slow peer).",
            seen.outbox_queued_max,
        )
        yield _gauge(
            "spades_store_queued", "Requests waiting for the store's writer.", seen.store_queued
        )
        yield _gauge(
            "spades_store_reachable",
            "1 while the database can be reached, else 0.",
            seen.store_reachable,
        )
        yield _counter(
            "spades_store_outages",
            "Times the database could not be reached (a batch found it gone), since start.",
            seen.store_outages,
        )
        yield _counter(
            "spades_store_unavailable_seconds",
            "Seconds the database could not be reached, all outages together (play paused).",
            seen.store_unavailable_seconds,
        )
        yield _counter(
            "spades_store_batches",
            "Batches (transactions) the store committed.",
            seen.store_batches,
        )
        yield _counter("spades_store_jobs", "Requests the store committed.", seen.store_jobs)
        if seen.link_peers is not None:
            yield _gauge(
                "spades_link_peers",
                "Other servers of the cluster this one has a link open to.",
                seen.link_peers,
            )
            yield _gauge(
                "spades_link_queued",
                "Messages queued for the other servers, all links together (the link's lag).",
                seen.link_queued,
            )
            yield _gauge(
                "spades_link_queued_max",
                "Messages queued for the most lagging other server.",
                seen.link_queued_max,
            )
            yield _counter(
                "spades_link_sent", "Messages sent to the other servers.", seen.link_sent
            )
            yield _counter(
                "spades_link_refused",
                "Incoming links refused: a failed handshake (wrong secret, a forged or replayed"
                " proof, too slow) or a server that is not a live member.",
                seen.link_refused,
            )
            yield _counter(
                "spades_cluster_tables_claimed",
                "Tables taken over from servers declared dead.",
                seen.tables_claimed,
            )
        if seen.lease_held is not None:
            yield _gauge(
                "spades_cluster_lease_held",
                "1 while this server holds its cluster lease, else 0.",
                seen.lease_held,
            )
        if seen.ladder is not None:
            rated, voided, running = seen.ladder
            matches = CounterMetricFamily(
                "spades_ladder_matches",
                "Ladder matches settled since start, by result (rated, voided).",
                labels=["result"],
            )
            matches.add_metric(["rated"], rated)
            matches.add_metric(["voided"], voided)
            yield matches
            yield _gauge("spades_ladder_matches_running", "Ladder matches being played.", running)


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, documentation, value=float(value))


def _counter(name: str, documentation: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(name, documentation, value=float(value))


def _labelled(
    name: str, documentation: str, label: str, known: tuple[str, ...], values: Mapping[str, int]
) -> GaugeMetricFamily:
    """A gauge with one row per known label value (0 when absent), then any other seen."""
    family = GaugeMetricFamily(name, documentation, labels=[label])
    for key in known:
        family.add_metric([key], values.get(key, 0))
    for key, value in values.items():
        if key not in known:
            family.add_metric([key], value)
    return family
