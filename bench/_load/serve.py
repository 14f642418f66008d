"""The real server (`server.app.serve`) in this process, for the load benches.

It is what `spades-server serve` runs, with the settings a bench needs from flags: the connection
caps (also per address: every bench connection is from 127.0.0.1), the table cap, the per-connection
message rate and the durability. It prints `port N` on stdout once listening, logs like the CLI
(console format, to stderr), and stops gracefully on SIGTERM. `--profile FILE` runs it under pyinstrument
and writes a text profile there on the way out.

`--db` is a SQLite file or a PostgreSQL URL. `--workers N` (N > 1, PostgreSQL) makes this process
the workers' supervisor, as `spades-server serve --workers N` is: it listens, starts N copies of
itself as cluster servers on its socket, and prints `port N nofile M pids A,B,...` (the workers'
process ids, whose CPU the bench adds up).

    python -m bench._load.serve --db /tmp/s.db --max-connections 12000
"""

from __future__ import annotations

import argparse
import signal
import socket
import subprocess
import sys
import time
from functools import partial
from pathlib import Path

import trio

from bench._load.procs import raise_nofile
from server.app import serve
from server.config import Limits, LogFormat, ServerConfig, configure_logging
from server.storage import Durability
from server.storage.target import is_postgres


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--db", required=True, help="a SQLite file or a PostgreSQL URL")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--cluster", action="store_true", help="serve as one of a cluster")
    parser.add_argument("--listen-fd", type=int, default=None, help="(a worker) the socket")
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
    if args.workers > 1:
        _supervise(args.workers, nofile)
        return
    if args.tracemalloc is not None:
        import tracemalloc

        tracemalloc.start(1)
    configure_logging(LogFormat.console)
    url = args.db if is_postgres(args.db) else None
    config = ServerConfig(
        host="127.0.0.1",
        port=0,
        db_path=Path(args.db) if url is None else Path("unused.db"),
        db_url=url,
        cluster=args.cluster,
        durability=Durability(args.durability),
        # The figures are the tables' own: no double-dummy process a hand beside them (it runs at
        # nice 19, but on two cores it would still take the one the load generator uses).
        hand_analysis=False,
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

    listeners = None
    if args.listen_fd is not None:
        inherited = socket.socket(fileno=args.listen_fd)
        listeners = [trio.SocketListener(trio.socket.from_stdlib_socket(inherited))]

    async def run() -> None:
        async with trio.open_nursery() as nursery:
            server = await nursery.start(partial(serve, config, listeners=listeners))
            port = server.port if listeners is None else listeners[0].socket.getsockname()[1]
            print(f"port {port} nofile {nofile}", flush=True)
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


def _supervise(workers: int, nofile: int) -> None:
    """Listen, start `workers` copies of this module on the socket, report, stop them on SIGTERM."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(4096)
    sock.set_inheritable(True)
    argv = [a for a in sys.argv[1:] if not a.startswith("--workers")]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench._load.serve",
                *argv,
                "--cluster",
                f"--listen-fd={sock.fileno()}",
            ],
            pass_fds=(sock.fileno(),),
            stdout=subprocess.PIPE,
        )
        for _ in range(workers)
    ]
    for proc in procs:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode()
        if not line.startswith("port"):
            raise SystemExit(f"a worker did not start: {line!r}")
    pids = ",".join(str(p.pid) for p in procs)
    print(f"port {sock.getsockname()[1]} nofile {nofile} pids {pids}", flush=True)
    stopping = False

    def stop(_signum: int, _frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    while not stopping and all(p.poll() is None for p in procs):
        time.sleep(0.5)
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    for proc in procs:
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


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
