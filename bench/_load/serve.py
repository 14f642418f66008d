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
from collections.abc import Callable
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
        "--what-if",
        action="append",
        choices=sorted(WHAT_IFS),
        default=[],
        help="experiment (never the default): patch the server as one of the recommended fixes",
    )
    args = parser.parse_args()
    for name in args.what_if:
        WHAT_IFS[name]()
    nofile = raise_nofile()
    if args.tracemalloc is not None:
        import tracemalloc

        tracemalloc.start(1)
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


# What-ifs: the fixes docs/performance.md recommends for server/, applied by patching at start-up so
# their gain can be measured before anyone changes the server. Never used unless asked for.


def _what_if_sync_normal() -> None:
    """The store with `PRAGMA synchronous=NORMAL` (WAL): no fsync per commit."""
    import sqlite3

    from server import storage

    connect = storage.connect

    def patched(path: Path | str) -> sqlite3.Connection:
        conn = connect(path)
        conn.execute("PRAGMA synchronous=NORMAL")
        return conn

    storage.connect = patched


def _what_if_coalesce() -> None:
    """Each connection's writer sends every frame queued when it wakes in one `send_all`."""
    from server import connection

    async def run_writer(self: connection.Connection) -> None:
        receive = self._receive
        try:
            async with receive:
                async for data in receive:
                    chunks = [data]
                    while len(chunks) < 64:
                        try:
                            chunks.append(receive.receive_nowait())
                        except (trio.WouldBlock, trio.EndOfChannel):
                            break
                    await self.stream.send_all(b"".join(chunks) if len(chunks) > 1 else data)
                    self.frames_sent += len(chunks)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            self.abort("peer_gone")
        finally:
            with trio.move_on_after(connection.FLUSH_TIMEOUT) as scope:
                scope.shield = True
                await self.stream.aclose()
            self.closed.set()
            self.cancel_scope.cancel()

    connection.Connection.run_writer = run_writer  # type: ignore[method-assign]


def _what_if_cache_version() -> None:
    """`project_version()` computed once instead of reading package metadata for every `welcome`."""
    import functools

    from server import session

    name = "project_version"  # patched where the session looks it up
    setattr(session, name, functools.cache(getattr(session, name)))


WHAT_IFS: dict[str, Callable[[], None]] = {
    "sync-normal": _what_if_sync_normal,
    "coalesce": _what_if_coalesce,
    "cache-version": _what_if_cache_version,
}


if __name__ == "__main__":
    main()
