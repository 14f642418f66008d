"""The `spades-server` command line: `serve`, `export`, `version`, `conformance`, `ladder`, `events`,
`db`."""

from __future__ import annotations

import itertools
import json
import signal
import socket
import sys
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import structlog
import trio
import typer

from engine.version import project_version
from server.cli_admin import admin_app
from server.cli_db import db_app
from server.config import (
    DB_ENV,
    DEFAULT_METRICS_PORT,
    DEFAULT_PORT,
    DEFAULT_WEB_PORT,
    LINK_PORT_OFFSET,
    Limits,
    LogFormat,
    ServerConfig,
    configure_logging,
    default_db_path,
    log_crashes,
)
from server.storage import Durability, StorageError
from server.storage.target import Target, is_postgres, shown

if TYPE_CHECKING:
    from server.app import Server
    from server.storage import Tx

app = typer.Typer(
    name="spades-server",
    help="Host a Spades and Hearts table server on your LAN.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

log = structlog.get_logger("server.cli")

DEFAULT_LIMITS = Limits()


@app.callback()
def root() -> None:
    """Keeps the app a group of subcommands even while it has few."""


@app.command()
def version() -> None:
    """Print the version and exit."""
    typer.echo(f"spades-server {project_version()}")


def lan_address() -> str:
    """This machine's address on the LAN, as other machines would dial it (best effort)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        try:
            # No packet is sent: connecting a UDP socket only picks the outgoing interface.
            probe.connect(("192.0.2.1", 9))
            return str(probe.getsockname()[0])
        except OSError:
            return "127.0.0.1"


@app.command()
def serve(  # noqa: PLR0917 - typer maps each option to a parameter
    host: Annotated[str, typer.Option(help="Address to listen on (0.0.0.0: every interface).")] = (
        "0.0.0.0"
    ),
    port: Annotated[int, typer.Option(help="TCP port to listen on (0: any free port).")] = (
        DEFAULT_PORT
    ),
    web_port: Annotated[
        int | None,
        typer.Option(
            help=f"HTTP port of the browser page and its WebSocket (default {DEFAULT_WEB_PORT}; "
            "0: any free port)."
        ),
    ] = None,
    web: Annotated[
        bool, typer.Option("--web/--no-web", help="Serve the browser page (--no-web: TCP only).")
    ] = True,
    web_name: Annotated[
        list[str] | None,
        typer.Option(
            help="A DNS name the page is opened by (repeatable), e.g. club.example; IP "
            "addresses, localhost and a --host name are always served, any other name is "
            "refused 421 (DNS rebinding: docs/web.md)."
        ),
    ] = None,
    metrics_port: Annotated[
        int | None,
        typer.Option(
            help="HTTP port of /healthz, /readyz and /metrics alone (0: any free port); they are "
            f"on the web port too. Default: none, or {DEFAULT_METRICS_PORT} with --no-web.",
        ),
    ] = None,
    metrics_host: Annotated[
        str, typer.Option(help="Address of --metrics-port (default: this machine only).")
    ] = "127.0.0.1",
    metrics_port_optional: Annotated[bool, typer.Option(hidden=True)] = False,
    db: Annotated[
        str | None,
        typer.Option(
            envvar=DB_ENV,
            help="SQLite database file (default: under your data dir), or a PostgreSQL database "
            "postgresql://user@host:port/db (which several servers may share). A password in it "
            "shows in `ps`: prefer PGPASSWORD or PGPASSFILE, or --db-file.",
        ),
    ] = None,
    db_file: Annotated[
        Path | None,
        typer.Option(
            help="Read --db from this file (its first line), so that a PostgreSQL password is "
            "never on a command line."
        ),
    ] = None,
    durability: Annotated[
        Durability,
        typer.Option(
            help="normal: a commit survives a killed server process (no fsync per action); "
            "full: it also survives power loss (an fsync of the WAL per group commit)."
        ),
    ] = Durability.normal,
    log_format: Annotated[
        LogFormat, typer.Option(help="console for people, json for machines.")
    ] = LogFormat.console,
    human_clock: Annotated[float, typer.Option(help="Seconds per action for humans.")] = 30.0,
    bot_clock: Annotated[float, typer.Option(help="Seconds per action for bots.")] = 5.0,
    reconnect_grace: Annotated[
        float, typer.Option(help="Seconds a dropped seat is held for its player.")
    ] = 120.0,
    waiting_table_ttl: Annotated[
        float,
        typer.Option(
            help="Seconds a table waiting for players may have nobody seated before it is "
            "closed (built-in bots do not count); 0: never."
        ),
    ] = 1800.0,
    guests: Annotated[bool, typer.Option(help="Allow guests (no account).")] = True,
    guest_ttl: Annotated[
        float,
        typer.Option(
            help="Seconds after its last login that a guest account with no seat, no game "
            "results and no connection is deleted; 0: never."
        ),
    ] = 86400.0,
    ladder: Annotated[bool, typer.Option(help="Run the rated bot ladder.")] = True,
    events_open: Annotated[
        bool,
        typer.Option(
            help="Let any registered account announce an event (else only the operator may)."
        ),
    ] = False,
    hand_analysis: Annotated[
        bool,
        typer.Option(
            help="Analyse each hand double-dummy for the player statistics (nice 19, one at a time)."
        ),
    ] = True,
    tls_cert: Annotated[
        Path | None, typer.Option(help="PEM certificate (chain): serve over TLS (with --tls-key).")
    ] = None,
    tls_key: Annotated[
        Path | None, typer.Option(help="PEM private key (unencrypted) of --tls-cert.")
    ] = None,
    max_connections: Annotated[
        int, typer.Option(help="Connections open at once; more are refused server_full.")
    ] = DEFAULT_LIMITS.max_connections,
    max_per_address: Annotated[
        int, typer.Option(help="Connections open at once from one IP address.")
    ] = DEFAULT_LIMITS.max_connections_per_address,
    max_tables: Annotated[int, typer.Option(help="Tables open at once.")] = (
        DEFAULT_LIMITS.max_tables
    ),
    max_tables_per_address: Annotated[
        int, typer.Option(help="Open tables created from one IP address (any accounts).")
    ] = DEFAULT_LIMITS.max_tables_per_address,
    max_guests_per_address: Annotated[
        int,
        typer.Option(help="Guest accounts one IP address may make at once, and again each hour."),
    ] = DEFAULT_LIMITS.max_guests_per_address,
    max_reviews: Annotated[
        int,
        typer.Option(
            help="Hand reviews (`review`, a solver process at nice 19 each) at once on this"
            " server; 0: none are served."
        ),
    ] = DEFAULT_LIMITS.max_reviews,
    review_budget: Annotated[
        int,
        typer.Option(
            help="Positions the search of one position of a reviewed hand may visit before that"
            " position is left unanswered."
        ),
    ] = DEFAULT_LIMITS.review_budget,
    max_registrations_per_address: Annotated[
        int,
        typer.Option(help="Accounts one IP address may register at once, and again each hour."),
    ] = DEFAULT_LIMITS.max_registrations_per_address,
    handshake_timeout: Annotated[
        float, typer.Option(help="Seconds a new connection has to send hello.")
    ] = DEFAULT_LIMITS.handshake_timeout,
    idle_timeout: Annotated[
        float,
        typer.Option(
            help="Seconds without a message (pings count) before a client is let go; 0: never."
        ),
    ] = DEFAULT_LIMITS.idle_timeout,
    workers: Annotated[
        int,
        typer.Option(
            help="Server processes on this machine, sharing the address and a PostgreSQL --db "
            "as one server (tables spread over them); 1: this process alone."
        ),
    ] = 1,
    cluster: Annotated[
        bool,
        typer.Option(
            "--cluster/--no-cluster",
            help="Serve as one of several servers (other machines, or other serve commands) "
            "sharing the PostgreSQL --db as one server.",
        ),
    ] = False,
    cluster_address: Annotated[
        str | None, typer.Option(help="The address other servers of the cluster reach this one at.")
    ] = None,
    link_host: Annotated[
        str | None,
        typer.Option(
            help="Address the link to the cluster's other servers listens on (default: the "
            "--cluster-address they dial; 0.0.0.0 only if you ask for it)."
        ),
    ] = None,
    link_port: Annotated[
        int | None,
        typer.Option(
            help=f"TCP port of the link to the cluster's other servers (default: --port + "
            f"{LINK_PORT_OFFSET}, so {DEFAULT_PORT + LINK_PORT_OFFSET}; with --workers N, worker i "
            "uses it + i; 0: any free port)."
        ),
    ] = None,
    cluster_secret_file: Annotated[
        Path | None,
        typer.Option(
            help="The cluster's secret (16 bytes or more, e.g. `openssl rand -hex 32`), the same "
            "file on every server; default: made by the first server and kept in the database."
        ),
    ] = None,
    listen_fd: Annotated[int | None, typer.Option(hidden=True)] = None,
) -> None:
    """Run the table server until SIGINT or SIGTERM, then shut down gracefully."""
    from server.app import serve as run_server
    from server.failures import ExitCode, explain
    from server.tls import TLSConfigError, server_context
    from server.web.names import WebNameError, normalise_name

    # Logging first: under `--log-format json` every line on stderr is JSON, a refusal of a flag
    # (`server.failures.tell`) and a crash (`log_crashes`) included.
    configure_logging(log_format)
    if log_format is LogFormat.json:
        log_crashes()
    refuse = partial(_refuse, log_format)

    if not 0 <= port <= 65535:
        refuse(f"error: port {port} is not in 0..65535", 2)
    if web_port is not None and not 0 <= web_port <= 65535:
        refuse(f"error: --web-port {web_port} is not in 0..65535", 2)
    try:
        web_names = tuple(normalise_name(name) for name in web_name or ())
    except WebNameError as exc:
        refuse(f"error: {exc}", 2)
    if metrics_port is not None and not 0 <= metrics_port <= 65535:
        refuse(f"error: --metrics-port {metrics_port} is not in 0..65535", 2)
    if min(human_clock, bot_clock) <= 0 or reconnect_grace < 0:
        refuse("error: clocks must be positive and the grace period not negative", 2)
    if waiting_table_ttl < 0 or guest_ttl < 0:
        refuse("error: --waiting-table-ttl and --guest-ttl must not be negative (0: never)", 2)
    if min(max_connections, max_per_address, max_tables, max_tables_per_address) < 1:
        refuse(
            "error: --max-connections, --max-per-address, --max-tables and "
            "--max-tables-per-address must be >= 1",
            2,
        )
    if max_guests_per_address < 1:
        refuse("error: --max-guests-per-address must be >= 1 (--no-guests turns guests off)", 2)
    if max_registrations_per_address < 1:
        refuse("error: --max-registrations-per-address must be >= 1", 2)
    if max_reviews < 0 or review_budget < 1:
        refuse("error: --max-reviews must be >= 0 (0: none) and --review-budget >= 1", 2)
    if handshake_timeout <= 0 or idle_timeout < 0:
        refuse("error: --handshake-timeout must be positive and --idle-timeout not negative", 2)
    if workers < 1:
        refuse("error: --workers must be at least 1", 2)
    if link_port is None:
        link_port = port + LINK_PORT_OFFSET if port != 0 else 0
    if not 0 <= link_port <= 65535:
        refuse(f"error: --link-port {link_port} is not in 0..65535 (give one)", 2)
    if cluster_secret_file is not None:
        from server.cluster.secret import SecretError, from_file

        try:
            from_file(cluster_secret_file)  # checked here: one line, no traceback
        except SecretError as exc:
            refuse(f"error: {exc}", 2)
    if db_file is not None:
        if db is not None:
            refuse(f"error: give --db or --db-file, not both (is {DB_ENV} set?)", 2)
        db = _read_db_file(db_file, refuse)
    if (workers > 1 or cluster) and (db is None or not is_postgres(db)):
        flag = f"--workers {workers}" if workers > 1 else "--cluster"
        refuse(
            f"error: {flag} needs a PostgreSQL --db (postgresql://user@host:port/db), which the "
            "servers share; a SQLite file serves one process",
            2,
        )
    if (tls_cert is None) != (tls_key is None):
        refuse("error: give both --tls-cert and --tls-key (or neither)", 2)
    if tls_cert is not None and tls_key is not None:
        try:
            server_context(tls_cert, tls_key)  # checked here: one line, no traceback
        except TLSConfigError as exc:
            refuse(f"error: {exc}", ExitCode.TLS)
    raise_open_files_limit()
    if workers > 1:
        from server.cluster.workers import run as run_workers

        shown_host = lan_address() if host in ("0.0.0.0", "") else host
        try:
            assert db is not None  # checked above: a PostgreSQL URL
            code = run_workers(
                sys.argv[2:],
                workers,
                host,
                port,
                shown_host,
                db_url=db,
                cluster=cluster,
                log_format=log_format,
                link_port=link_port,
            )
        except (OSError, StorageError) as exc:
            failure = explain(exc, host, port)
            refuse(failure.line if failure else f"error: {exc}", failure.code if failure else 1)
        raise typer.Exit(code)
    limits = replace(
        DEFAULT_LIMITS,
        max_connections=max_connections,
        max_connections_per_address=max_per_address,
        max_tables=max_tables,
        max_tables_per_address=max_tables_per_address,
        max_guests_per_address=max_guests_per_address,
        max_registrations_per_address=max_registrations_per_address,
        max_reviews=max_reviews,
        review_budget=review_budget,
        handshake_timeout=handshake_timeout,
        idle_timeout=idle_timeout,
    )
    if db is None:
        # The default lives in our own data folder, made on first use; a --db folder never is.
        default_db_path().parent.mkdir(parents=True, exist_ok=True)
    config = ServerConfig(
        host=host,
        port=port,
        db_path=Path(db) if db is not None and not is_postgres(db) else default_db_path(),
        db_url=db if db is not None and is_postgres(db) else None,
        durability=durability,
        human_clock=human_clock,
        bot_clock=bot_clock,
        reconnect_grace=reconnect_grace,
        waiting_table_ttl=waiting_table_ttl,
        guest_ttl=guest_ttl,
        allow_guests=guests,
        ladder=ladder,
        events_open=events_open,
        hand_analysis=hand_analysis,
        tls_cert=tls_cert,
        tls_key=tls_key,
        limits=limits,
        # The default web port may be taken (another server here): then serve without the page.
        web_port=(web_port if web_port is not None else DEFAULT_WEB_PORT) if web else None,
        web_port_optional=web_port is None,
        web_names=web_names,
        # Without the page, the health checks and metrics get a port of their own by default.
        metrics_port=metrics_port if metrics_port is not None or web else DEFAULT_METRICS_PORT,
        metrics_host=metrics_host,
        metrics_port_optional=metrics_port_optional or (metrics_port is None and not web),
        cluster=cluster,
        cluster_address=cluster_address
        or (lan_address() if cluster and host in ("0.0.0.0", "") else None),
        link_host=link_host,
        link_port=link_port,
        cluster_secret_file=cluster_secret_file,
    )
    listeners = None
    if listen_fd is not None:  # a worker of `--workers N`: the supervisor's socket
        inherited = socket.socket(fileno=listen_fd)
        listeners = [trio.SocketListener(trio.socket.from_stdlib_socket(inherited))]

    async def main() -> None:
        # Catch the signals before anything else, so one arriving during start-up still means
        # "stop gracefully" (it is acted on once the server is up).
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                server = await nursery.start(partial(run_server, config, listeners=listeners))
                shown = lan_address() if host in ("0.0.0.0", "") else host
                metrics_line = None
                if server.metrics_port is not None:
                    metrics_at = f"[{metrics_host}]" if ":" in metrics_host else metrics_host
                    metrics_line = (
                        f"spades-server metrics: http://{metrics_at}:{server.metrics_port}/metrics"
                    )
                if metrics_line is not None and listeners is not None:
                    # A worker's goes before the line its supervisor waits for: the supervisor
                    # reads that far, then closes the pipe (a later line would break it).
                    print(metrics_line, flush=True)
                # stdout, flushed: people read it, and scripts (and tests) wait for this line.
                scheme = "tls://" if tls_cert is not None else ""
                print(
                    "spades-server listening; join with: "
                    f"spades join {scheme}{shown}:{server.port}",
                    flush=True,
                )
                if server.web_port is not None:
                    web_scheme = "https" if tls_cert is not None else "http"
                    print(
                        f"spades-server web page: open {web_scheme}://{shown}:{server.web_port}",
                        flush=True,
                    )
                elif web:
                    print(
                        f"spades-server web page off: port {DEFAULT_WEB_PORT} is in use "
                        "(choose one with --web-port)",
                        flush=True,
                    )
                if metrics_line is not None and listeners is None:
                    print(metrics_line, flush=True)
                with trio.CancelScope() as waiting:
                    # A server may also stop by itself (a cluster server that lost its lease).
                    nursery.start_soon(_cancel_when_stopped, server, waiting)
                    async for signum in signals:
                        log.info("signal", signal=signal.Signals(signum).name)
                        server.request_stop()
                        break

    try:
        trio.run(main)
    except (Exception, BaseExceptionGroup) as exc:
        failure = explain(exc, host, port)
        if failure is None:
            raise  # not an operator's mistake: a bug, reported as one (`log_crashes` under json)
        refuse(failure.line, failure.code)


def _read_db_file(path: Path, refuse: Callable[[str, int], NoReturn]) -> str:
    """The database URL (or path) kept in `path`: its first non-blank line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        refuse(f"error: cannot read --db-file {path}: {reason}", 2)
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    if not line:
        refuse(f"error: --db-file {path} is empty (it holds the --db, on its first line)", 2)
    return line


def _refuse(log_format: LogFormat, line: str, code: int) -> NoReturn:
    """Stop `serve` with one line on stderr (one JSON object under json) and exit `code`."""
    from server.failures import tell

    tell(line, code, log_format)
    raise typer.Exit(code)


async def _cancel_when_stopped(server: Server, scope: trio.CancelScope) -> None:
    await server.wait_stopped()
    scope.cancel()


def raise_open_files_limit() -> None:
    """Raise the soft limit on open files to the hard one (each connection is a descriptor);
    where that is not allowed or not supported, keep the limit as it is."""
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        if soft != hard:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    except (ImportError, OSError, ValueError):
        pass


@app.command()
def export(
    game: Annotated[
        str | None,
        typer.Option(
            help="Export the hands of this game: its table id (as `spades tables` and `spades "
            "history` show it) or its number in the database (a hand record's game_id)."
        ),
    ] = None,
    all_games: Annotated[bool, typer.Option("--all", help="Export every recorded hand.")] = False,
    db: Annotated[
        str | None, typer.Option(help="SQLite database file, or a PostgreSQL URL.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write here instead of stdout.")
    ] = None,
) -> None:
    """Write hand records as JSON Lines (one `spades-hand/1` object per line)."""
    from server.storage import StorageError, read_transaction

    if (game is None) == (not all_games):
        typer.echo("error: give exactly one of --game ID or --all", err=True)
        raise typer.Exit(2)
    path = _database(db)
    try:
        # Read-only and lock-free: works while a server serves the file.
        with read_transaction(path) as tx:
            game_id = None
            if game is not None:
                game_id = _game_number(tx, game)
                if game_id is None:
                    typer.echo(
                        f"error: no game {game} in {shown(path)}: give a table id (`spades history` "
                        "lists yours) or a game number",
                        err=True,
                    )
                    raise typer.Exit(1)
            out = output.open("w", encoding="utf-8") if output is not None else sys.stdout
            try:
                count = 0
                for record in tx.hand_records(game_id):
                    out.write(json.dumps(record, separators=(",", ":"), sort_keys=True) + "\n")
                    count += 1
            finally:
                if output is not None:
                    out.close()
    except StorageError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    typer.echo(f"{count} hand records", err=True)


def _database(db: str | None) -> Target:
    """A command's `--db`: a PostgreSQL URL, a SQLite file, or the default file."""
    if db is None:
        return default_db_path()
    return db if is_postgres(db) else Path(db)


def _game_number(tx: Tx, game: str) -> int | None:
    """The database's number for a game named by its table id or by that number itself (a
    table plays one game; if it ever held more, the latest)."""
    if game.isascii() and game.isdigit() and tx.game_status(int(game)) is not None:
        return int(game)
    return tx.latest_game_at(game)


@app.command(context_settings={"allow_interspersed_args": False})
def conformance(  # noqa: PLR0917 - typer maps each option to a parameter
    command: Annotated[
        list[str] | None,
        typer.Argument(help="the bot program and its arguments, after --", show_default=False),
    ] = None,
    preset: Annotated[
        list[str] | None,
        typer.Option(
            "--preset",
            help="a preset the bot plays (repeat, or a comma list; default: standard and hearts)",
        ),
    ] = None,
    only: Annotated[
        list[str] | None,
        typer.Option("--only", help="run only these scenarios (repeat, or a comma list)"),
    ] = None,
    keep: Annotated[
        Path | None,
        typer.Option(
            help="keep each scenario's transcript, bot output and database in this folder"
        ),
    ] = None,
    list_scenarios: Annotated[
        bool, typer.Option("--list", help="list the scenarios and what each checks")
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="show the server's log")] = False,
) -> None:
    """Run a bot program against scripted scenarios on a local server; say what it did wrong.

    The bot is started with SPADES_SERVER, SPADES_TOKEN and SPADES_TABLE in its environment, e.g.
    `spades-server conformance -- spades-bot run heuristic`. Exits 0 only if every scenario passed.
    """
    from server.conformance import cli as kit

    if list_scenarios:
        typer.echo(kit.list_scenarios(kit.names(preset or [])))
        return
    try:
        code = kit.run(command or [], preset or [], only or [], keep, verbose=verbose)
    except ValueError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(2) from None
    raise typer.Exit(code)


ladder_app = typer.Typer(
    help="The rated bot ladder.", no_args_is_help=True, pretty_exceptions_enable=False
)
app.add_typer(ladder_app, name="ladder")


@ladder_app.command("add-house-bots")
def add_house_bots(
    specs: Annotated[
        list[str] | None, typer.Argument(help="Bot specs (default: the sample bots).")
    ] = None,
    db: Annotated[
        str | None, typer.Option(help="SQLite database file, or a PostgreSQL URL.")
    ] = None,
) -> None:
    """Enter sample bots on the ladder as house bots (the ladder seats them itself)."""
    from server.ladder.house import add_house_bots_command
    from server.storage import StorageError

    path = _database(db)
    if db is None:
        default_db_path().parent.mkdir(parents=True, exist_ok=True)  # ours, made on first use
    try:
        typer.echo(add_house_bots_command(path, specs or ()))
    except (ValueError, StorageError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None


events_app = typer.Typer(
    help="Events (tournaments).", no_args_is_help=True, pretty_exceptions_enable=False
)
app.add_typer(events_app, name="events")


@events_app.command("export")
def events_export(
    event: Annotated[str, typer.Argument(help="The event's id (E1, E2, ...).")],
    out: Annotated[
        Path, typer.Option(help="The folder to write standings.json and records.jsonl in.")
    ],
    db: Annotated[
        str | None, typer.Option(help="SQLite database file, or a PostgreSQL URL.")
    ] = None,
) -> None:
    """Write an event's standings (standings.json) and every board's hand record (records.jsonl)."""
    from server.events.export import export_command
    from server.storage import StorageError

    try:
        typer.echo(export_command(_database(db), event, out))
    except (ValueError, StorageError, OSError) as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None


app.add_typer(db_app, name="db")
app.add_typer(admin_app, name="admin")


PROG = "spades-server"


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: a typo or a missing argument is one `error:` line naming the
    help to read, never a boxed `Error:`; exits with the command's code. Under `--log-format json`
    that line is a JSON object, as every line of that log is."""
    args = sys.argv[1:] if argv is None else argv
    if not args:  # the help, and the exit code of a usage mistake
        app(args=["--help"], prog_name=PROG, standalone_mode=False)
        raise SystemExit(2)
    say = _say_json if _json_logs_asked(args) else _say_text
    try:
        # Not standalone: click would print its boxed `Error:` usage; we print one line instead,
        # as every other failure is (and as `spades-bot`'s main does, bots/cli.py).
        code = app(args=args, prog_name=PROG, standalone_mode=False)
    except typer.TyperException as exc:  # click's usage errors (and the few others it raises)
        text = exc.format_message().removeprefix("Invalid value: ").strip()
        where = getattr(getattr(exc, "ctx", None), "command_path", PROG)
        exit_code = getattr(exc, "exit_code", 1)
        hint = f" (see {where} --help)" if exit_code == 2 else ""
        say(f"error: {text}{hint}", exit_code)
        raise SystemExit(exit_code) from None
    except typer.Abort:
        say("error: interrupted", 130)
        raise SystemExit(130) from None
    raise SystemExit(code if isinstance(code, int) else 0)


def _say_text(line: str, code: int) -> None:
    typer.echo(line, err=True)


def _say_json(line: str, code: int) -> None:
    """Under `--log-format json` a mistake the command-line parser finds before `serve` runs (an
    unknown option, a value that is no number) is a `cannot_serve` record too."""
    from server.failures import tell

    configure_logging(LogFormat.json)
    tell(line, code, LogFormat.json)


def _json_logs_asked(args: list[str]) -> bool:
    """Whether the command line asks for `--log-format json` (read before it is parsed)."""
    return "--log-format=json" in args or any(
        arg == "--log-format" and value == "json" for arg, value in itertools.pairwise(args)
    )


if __name__ == "__main__":
    main()
