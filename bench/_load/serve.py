"""The real server (`server.app.serve`) in this process, for the load benches.

It is what `spades-server serve` runs, with three differences a bench needs and the CLI cannot set
(see docs/performance.md): it raises its own open-file limit, and the connection, table and per-connection
message-rate limits come from flags. It prints `port N` on stdout once listening, logs like the CLI
(console format, to stderr), and stops gracefully on SIGTERM. `--profile FILE` runs it under pyinstrument
and writes a text profile there on the way out.

    python -m bench._load.serve --db /tmp/s.db --max-connections 12000
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

import trio

from bench._load.procs import raise_nofile
from server.app import serve
from server.config import Limits, LogFormat, ServerConfig, configure_logging


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--max-connections", type=int, default=Limits.max_connections)
    parser.add_argument("--max-tables", type=int, default=Limits.max_tables)
    parser.add_argument("--rate", type=float, default=Limits.max_messages_per_second)
    parser.add_argument("--burst", type=int, default=Limits.max_message_burst)
    parser.add_argument("--profile", type=Path, default=None)
    parser.add_argument(
        "--what-if-synchronous",
        choices=["FULL", "NORMAL", "OFF"],
        default=None,
        help="experiment: open the store with this PRAGMA synchronous instead of the server's FULL",
    )
    args = parser.parse_args()
    if args.what_if_synchronous is not None:
        _what_if_synchronous(args.what_if_synchronous)
    nofile = raise_nofile()
    configure_logging(LogFormat.console)
    config = ServerConfig(
        host="127.0.0.1",
        port=0,
        db_path=args.db,
        limits=Limits(
            max_connections=args.max_connections,
            max_tables=args.max_tables,
            max_messages_per_second=args.rate,
            max_message_burst=args.burst,
        ),
    )

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            server = await nursery.start(serve, config)
            print(f"port {server.port} nofile {nofile}", flush=True)
            with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
                async for _signum in signals:
                    server.request_stop()
                    break

    if args.profile is None:
        trio.run(run)
        return
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.001, async_mode="disabled")
    profiler.start()
    try:
        trio.run(run)
    finally:
        profiler.stop()
        args.profile.write_text(profiler.output_text(unicode=False, color=False, show_all=False))
        print(f"profile written to {args.profile}", file=sys.stderr, flush=True)


def _what_if_synchronous(level: str) -> None:
    """A what-if for docs/performance.md, never the default: the same server, another fsync policy."""
    import sqlite3

    from server import storage

    connect = storage.connect

    def patched(path: Path | str) -> sqlite3.Connection:
        conn = connect(path)
        conn.execute(f"PRAGMA synchronous={level}")
        return conn

    storage.connect = patched


if __name__ == "__main__":
    main()
