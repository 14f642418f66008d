"""Server settings with defaults that work with no flags, and the structlog setup."""

from __future__ import annotations

import logging
import sys
import threading
import types
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

import platformdirs
import structlog

from server.ladder.settings import LadderSettings
from server.storage import Durability
from server.storage.target import Target

DEFAULT_PORT = 7777
#: The link between a cluster's servers listens on the game port + this (7877 by default): far
#: enough from the web and metrics ports (7778, 7779 + worker) that workers' ports never meet.
LINK_PORT_OFFSET = 100
DEFAULT_WEB_PORT = 7778  # `spades-server serve`'s web port (the browser page and its WebSocket)
# The operator's port (/healthz, /readyz, /metrics) when the web page, which also answers them, is
# off; worker i of `serve --workers N` without a page uses DEFAULT_METRICS_PORT + i. Far from the
# game port's neighbours (the web port is `--port` + 1, the cluster's link `--port` + 2, + i).
DEFAULT_METRICS_PORT = 9777


class LogFormat(StrEnum):
    """`console` for people at a terminal, `json` (one object a line) for machines."""

    console = "console"
    json = "json"


def default_db_path() -> Path:
    """`spades.db` under the user's data directory (e.g. ~/.local/share/spades-table/)."""
    return Path(platformdirs.user_data_dir("spades-table", appauthor=False)) / "spades.db"


#: The environment variable `serve --db` is also read from: how a `--workers` supervisor hands
#: its workers the database URL (a command line is anyone's to read in `ps`, an environment only
#: its user's and root's).
DB_ENV = "SPADES_DB"


@dataclass(frozen=True)
class Limits:
    """Bounds that keep one client from costing the server more than its share."""

    max_connections: int = 256
    max_connections_per_address: int = 64
    max_tables: int = 256
    max_tables_per_account: int = 64  # open tables one account may have created
    # Open tables created from one network address (`server.quotas.network_of`), whatever the
    # accounts: an address cannot take every table from everyone else.
    max_tables_per_address: int = 16
    # Guest accounts one address may make: this many at once, then this many an hour.
    max_guests_per_address: int = 30
    # Wrong join codes for private tables: from one address, this many at once, then one every
    # 5 s; at one table (from any addresses), 20 at once, then one a second. Past them every code
    # is refused `rate_limited` (with `retry_ms`) until there is room again. The table's limit
    # refills faster than an address's, so one address cannot lock a table's friends out.
    wrong_codes_burst: int = 5
    wrong_codes_per_second: float = 0.2
    table_wrong_codes_burst: int = 20
    table_wrong_codes_per_second: float = 1.0
    # Accounts `register`ed from one address: this many at once, then this many an hour (a name
    # stays taken for good, and each account is one more thing to guess tokens at).
    max_registrations_per_address: int = 20
    # Wrong tokens (`login`, `hello.token`) from one address: this many at once, then one a
    # second; at one account, 10 at once then one every 2 s, for the addresses that guessed wrong
    # at that account within `wrong_token_memory` seconds (any other address, the owner's, is not
    # held back by it: `server.quotas.TokenGuard`). Past them a login is refused `rate_limited`
    # (with `retry_ms`) before any hashing. A right token costs nothing from these.
    wrong_tokens_burst: int = 20
    wrong_tokens_per_second: float = 1.0
    account_wrong_tokens_burst: int = 10
    account_wrong_tokens_per_second: float = 0.5
    wrong_token_memory: float = 600.0
    # Token checks one address may have waiting for each hashing thread (`server.hashing`); more
    # are refused `rate_limited`. Only tokens stored with the old, slow hash need that thread.
    hash_queue_per_address: int = 4
    # Old-hash checks a second, from all addresses together, that the normal-priority hashing
    # lane takes for addresses in good standing (about 5 % of a core at 5 ms a check); past it
    # they go to the lowest-priority lane with everyone else's (`server.hashing.Hashers`).
    clean_hash_checks_per_second: float = 10.0
    clean_hash_checks_burst: int = 20
    # Lobby chat lines (which every logged-in connection hears) from one address, all its
    # connections together: this many at once, then this many a second.
    address_lobby_chat_burst: int = 20
    address_lobby_chat_per_second: float = 2.0
    max_spectators: int = 64  # per table
    outbox_size: int = 256  # frames queued for one connection; full means a slow peer: disconnect
    table_inbox_size: int = 64
    handshake_timeout: float = 10.0
    # Seconds without a whole message from a client (after `hello`) before it is let go; 0: never.
    # Clients ping while idle (welcome.limits.idle_timeout_ms says how often they must).
    idle_timeout: float = 300.0
    # Seconds the server's writes to a client may wait for it to read before it is let go (a slow
    # consumer); also bounds waiting for room in its outbox.
    write_timeout: float = 10.0
    max_frame_bytes: int = 64 * 1024
    chat_max_chars: int = 300
    chat_burst: int = 5  # messages allowed back to back ...
    chat_per_second: float = 1.0  # ... refilled at this rate (a token bucket)
    max_messages_per_second: float = 50.0  # all requests of one connection, same bucket scheme
    max_message_burst: int = 100
    # `act`s of one connection that answer no `your_turn` (a repeat, a stale one, one from a
    # connection with no seat there): this many at once, then this many a second, on top of the
    # rate above. Each one that is a seat's costs its table's inbox; the answers are free.
    # (A player trying a few illegal moves in a row stays well inside them.)
    act_burst: int = 30
    act_per_second: float = 5.0
    table_name_max_chars: int = 40
    # Hand reviews (`review`, server.reviews): each one a solver process at nice 19 for up to
    # `review_seconds`. One at a time per connection; at most this many at once from one address
    # and from everyone together (more are refused `review_busy`); a record of at most this many
    # bytes (as JSON: a whole hand is about 5 KB); a position's search at most this many positions
    # (past it, its cards' costs are left unanswered, never guessed).
    max_reviews: int = 2
    max_reviews_per_address: int = 1
    review_max_bytes: int = 16 * 1024
    review_budget: int = 60_000
    # As the statistics' hands (`server.hand_analysis.HAND_SECONDS`): a hard hand takes a minute on
    # a loaded 2-core machine.
    review_seconds: float = 120.0


@dataclass(frozen=True)
class ServerConfig:
    """Everything `serve` needs; every field has a default that works on a LAN."""

    host: str = "0.0.0.0"
    port: int = DEFAULT_PORT
    db_path: Path = field(default_factory=default_db_path)
    # A PostgreSQL database (`postgresql://user@host:port/db`) instead of the SQLite file
    # `db_path`: the one several servers (workers, machines) share. See `database`.
    db_url: str | None = None
    # One of several servers sharing `db_url` as one server (server/cluster/): `serve --cluster`
    # on each machine, or each worker of `serve --workers N`. `cluster_address`: the address the
    # others reach this one's link at (None: `host`, or this machine's LAN address for 0.0.0.0).
    cluster: bool = False
    cluster_address: str | None = None
    # The link the cluster's servers talk over (server/cluster/link.py): the address to bind
    # (None: `cluster_address`, never every interface unless asked) and port (0: any), and the
    # cluster's secret from a file (None: kept in the database; docs/operations.md, "The link").
    link_host: str | None = None
    link_port: int = 0
    cluster_secret_file: Path | None = None
    # normal: a commit survives a killed server process; full: also power loss (an fsync per
    # commit). See `server.storage.Durability` and docs/operations.md.
    durability: Durability = Durability.normal
    human_clock: float = 30.0  # seconds per action
    bot_clock: float = 5.0
    reconnect_grace: float = 120.0
    # Seconds a lobby table waiting for players may go with nobody seated (no one connected, no
    # seat held within its grace; built-in bots do not count) before it is closed; 0: never.
    waiting_table_ttl: float = 1800.0
    # Seconds after its last login (or its making) that a guest account with no seat, no game
    # results and no connection is deleted (checked once a minute, or four times a ttl); 0: never.
    guest_ttl: float = 86400.0
    allow_guests: bool = True
    builtin_bot: str = "heuristic"  # sample bot seated in built-in bot seats (bots.registry name)
    fallback_bot: str = "heuristic"  # plays for a seat whose clock ran out
    # Built-in seats and the fallback think in worker threads, so a slow bot never stalls the
    # event loop. False: in the event loop itself, for tests on trio's virtual (autojump) clock,
    # which jumps while a thread thinks.
    bots_in_threads: bool = True
    ladder: bool = True  # run the rated bot ladder (server/ladder/) beside the tables
    # Who may announce an event (server/events/): False: only the operator (a connection that sent
    # a good `operator_login`); True: any registered account too (`serve --events-open`).
    events_open: bool = False
    # Analyse each counted hand double-dummy for the player statistics (server/hand_analysis.py:
    # a process at nice 19, one at a time, skipped when the machine is busy).
    hand_analysis: bool = True
    ladder_settings: LadderSettings | None = None  # None: the ladder's defaults
    tls_cert: Path | None = None  # both set: every accepted stream is wrapped in TLS
    tls_key: Path | None = None
    server_name: str = "spades-table"
    # The browser page and the protocol over WebSocket on this HTTP port (server/web/; 0: any
    # free port); None: no web port (embedded servers: tests, `spades play`). `web_port_optional`:
    # if the port is taken, log it and serve without the page instead of failing (the CLI's
    # default port, not one the user chose).
    web_port: int | None = None
    web_port_optional: bool = False
    # DNS names the web port answers for besides IP addresses and `localhost` (`--web-name`):
    # a request for any other name is refused 421, against DNS rebinding (server/web/names.py).
    # `host`, when it is a name, is one of them.
    web_names: tuple[str, ...] = ()
    # /healthz, /readyz and /metrics on a port of their own (server/web/ops_port.py; 0: any free
    # port) at `metrics_host`; None: only on the web port (if any). `metrics_port_optional`: if
    # the port is taken, log it and go on without it (a default port, not one the user chose).
    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"
    metrics_port_optional: bool = False
    limits: Limits = field(default_factory=Limits)

    @property
    def database(self) -> Target:
        """What the store opens: `db_url` when given, else the SQLite file `db_path`."""
        return self.db_url if self.db_url is not None else self.db_path


class _StderrLogger:
    """Writes each rendered line to `sys.stderr` as it is now (it is replaced under test runners
    and by daemon managers, so it is looked up per line rather than bound once)."""

    def __init__(self, *args: Any) -> None:
        pass

    def msg(self, message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    log = debug = info = warning = warn = error = critical = exception = fatal = msg


class _ProcessStderrLogger(_StderrLogger):
    """Writes to the process's own stderr, never to a stream a test runner swapped in, so an
    embedded server (tests, tools) does not mix its log into a command's captured output."""

    def msg(self, message: str) -> None:
        stream = sys.__stderr__
        if stream is not None:
            print(message, file=stream, flush=True)

    log = debug = info = warning = warn = error = critical = exception = fatal = msg


def configure_logging(
    fmt: LogFormat | str = LogFormat.console,
    level: int = logging.INFO,
    *,
    process_stderr: bool = False,
) -> None:
    """Route structlog to stderr, rendered for people (`console`) or machines (`json`).

    `process_stderr` writes to the process's real stderr even when `sys.stderr` is replaced.
    """
    fmt = LogFormat(fmt)
    renderer: Any
    if fmt is LogFormat.json:
        renderer = structlog.processors.JSONRenderer()
    else:
        renderer = structlog.dev.ConsoleRenderer(colors=sys.stderr.isatty())
    structlog.configure(
        processors=[
            structlog.contextvars.merge_contextvars,
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso", utc=True),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=_ProcessStderrLogger if process_stderr else _StderrLogger,
        cache_logger_on_first_use=False,
    )


def log_crashes() -> None:
    """Report an uncaught exception (the process's, or a thread's) as a `crashed` log record,
    `critical`, its traceback in `exception`, instead of Python's text: under `--log-format json`
    every line of the log stays JSON, a crash included. Call after `configure_logging`."""
    crash_log = structlog.get_logger("server.crash")

    def process_hook(
        kind: type[BaseException], error: BaseException, trace: types.TracebackType | None
    ) -> None:
        crash_log.critical("crashed", exc_info=(kind, error, trace))

    def thread_hook(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit or args.exc_value is None:
            return
        crash_log.critical(
            "crashed",
            thread=args.thread.name if args.thread is not None else None,
            exc_info=(args.exc_type, args.exc_value, args.exc_traceback),
        )

    sys.excepthook = process_hook
    threading.excepthook = thread_hook
