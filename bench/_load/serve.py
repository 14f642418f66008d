"""The real server (`server.app.serve`) in this process, for the load benches.

It is what `spades-server serve` runs, with the settings a bench needs from flags: the connection
caps (also per address: every bench connection is from 127.0.0.1), the table cap, the per-connection
message rate and the durability. It prints `port N` on stdout once listening, logs like the CLI
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
from server.storage import Durability


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--max-connections", type=int, default=Limits.max_connections)
    parser.add_argument("--max-tables", type=int, default=Limits.max_tables)
    parser.add_argument("--rate", type=float, default=Limits.max_messages_per_second)
    parser.add_argument("--burst", type=int, default=Limits.max_message_burst)
    parser.add_argument("--profile", type=Path, default=None)
    parser.add_argument(
        "--cprofile",
        type=Path,
        default=None,
        help="run under cProfile and dump its stats here on the way out (call counts per action)",
    )
    parser.add_argument(
        "--tracemalloc",
        type=Path,
        default=None,
        help="trace allocations; on SIGUSR1 write the top allocation sites to this file",
    )
    parser.add_argument(
        "--durability", choices=[d.value for d in Durability], default=Durability.normal.value
    )
    args = parser.parse_args()
    nofile = raise_nofile()
    if args.tracemalloc is not None:
        import tracemalloc

        tracemalloc.start(1)
    configure_logging(LogFormat.console)
    config = ServerConfig(
        host="127.0.0.1",
        port=0,
        db_path=args.db,
        durability=Durability(args.durability),
        limits=Limits(
            max_connections=args.max_connections,
            # Every bench connection comes from 127.0.0.1, and each seat is a guest.
            max_connections_per_address=args.max_connections,
            max_tables=args.max_tables,
            max_tables_per_address=args.max_tables,
            max_guests_per_address=args.max_connections,
            max_messages_per_second=args.rate,
            max_message_burst=args.burst,
        ),
    )

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            server = await nursery.start(serve, config)
            print(f"port {server.port} nofile {nofile}", flush=True)
            with trio.open_signal_receiver(
                signal.SIGINT, signal.SIGTERM, signal.SIGUSR1
            ) as signals:
                async for signum in signals:
                    if signum == signal.SIGUSR1:
                        if args.tracemalloc is not None:
                            _write_allocations(args.tracemalloc)
                        continue
                    server.request_stop()
                    break

    if args.cprofile is not None:
        import cProfile

        counting = cProfile.Profile()
        try:
            counting.runcall(trio.run, run)
        finally:
            counting.dump_stats(str(args.cprofile))
        return
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


def _write_allocations(path: Path, top: int = 25) -> None:
    """The live allocations by source line, biggest first (`tracemalloc`), written to `path`."""
    import tracemalloc

    snapshot = tracemalloc.take_snapshot()
    stats = snapshot.statistics("lineno")
    total = sum(stat.size for stat in stats)
    lines = [f"total {total} bytes in {sum(stat.count for stat in stats)} blocks"]
    for stat in stats[:top]:
        frame = stat.traceback[0]
        where = frame.filename.split("site-packages/")[-1].split("/work/main/")[-1]
        lines.append(f"{stat.size} {stat.count} {where}:{frame.lineno}")
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines) + "\n")
    tmp.rename(path)


if __name__ == "__main__":
    main()
