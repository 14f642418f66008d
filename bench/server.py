"""The real server under bot load: K tables of four random players, flat out and paced.

The server runs in a subprocess (`bench._load.serve`: what `spades-server serve` runs, on 127.0.0.1 with
its default SQLite store in a fresh file, with the connection and table caps raised to fit K tables). Each
table is four lean random players (`bench._load.players`), one connection per seat, spread over a few
client processes: they answer `your_turn` with a random legal `act` over the real protocol.

- flat (K = 16 and 256): whole hands as fast as they go; hands/s, actions/s, server RSS and CPU share.
  The raw limit (bench/limit.py's loop) runs at the same K in the same run, just after, and
  `ratio_vs_limit` = server actions/s / limit table-actions/s.
- paced (256 tables, each acting 10 times a second): p50 / p99 latency from an `act` sent to the
  event of its new version received by all four seats.

Prints one JSON object on its last line (bench/report.py). `--profile` samples the server with py-spy
during the flat runs and adds where its time goes. Defaults take about two to three minutes.

`--db postgres` runs the server on PostgreSQL instead (a throwaway cluster the bench starts, as the
tests do: tests/postgres.py; or `--db postgresql://...`, a server where the bench may create
databases), a fresh database per run; `--workers 1,2` runs each K and the paced load with each
number of worker processes (more than one needs PostgreSQL), and `scaling_kK` is the actions/s of
the most workers over one's, in the same run. `--db sqlite,postgres` runs every load on each store
in turn in the same run (several workers on PostgreSQL only); the keys then name the store too, and
the raw limit (`limit_kK`) runs once per K. On the throwaway cluster, `db_cpu_share` is the CPU
PostgreSQL's processes took (the same cores as the server's).

    .venv/bin/python bench/server.py [--tables 16,256] [--duration 10] [--paced-duration 15] [--profile]
    .venv/bin/python bench/server.py --db postgres --workers 1,2 --tables 256
    .venv/bin/python bench/server.py --db sqlite,postgres --workers 1,2 --tables 256
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._load.drive import limit_run, server_run
from bench._load.procs import Children, load, raise_nofile, tree_cpu_seconds
from bench.report import emit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", default="16,256", help="flat mode: comma-separated K values")
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds before counting")
    parser.add_argument("--duration", type=float, default=10.0, help="seconds counted per flat run")
    parser.add_argument("--paced-tables", type=int, default=256, help="0 skips the paced mode")
    parser.add_argument("--paced-rate", type=float, default=10.0, help="actions/s per table")
    parser.add_argument("--paced-duration", type=float, default=15.0)
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--no-limit", action="store_true", help="skip the raw-limit runs")
    parser.add_argument("--profile", action="store_true", help="py-spy the server (flat runs)")
    parser.add_argument(
        "--server-rate",
        type=float,
        default=None,
        help="per-connection message rate allowed by the server (default: the server's)",
    )
    parser.add_argument(
        "--durability",
        choices=["normal", "full"],
        default="normal",
        help="the server's --durability (normal, the default, or full: an fsync per commit)",
    )
    parser.add_argument(
        "--db",
        default="sqlite",
        help="sqlite (a fresh file per run), postgres (a throwaway cluster), or a postgresql:// URL;"
        " several, comma-separated, run one after the other in the same run (sqlite,postgres)",
    )
    parser.add_argument(
        "--workers", default="1", help="comma-separated worker counts (>1: PostgreSQL)"
    )
    args = parser.parse_args()
    workers = [int(text) for text in args.workers.split(",") if text]
    stores = [text for text in args.db.split(",") if text]
    if max(workers) > 1 and stores == ["sqlite"]:
        parser.error("--workers above 1 needs --db postgres or a postgresql:// URL")
    # Each store with each worker count (several workers only on PostgreSQL), in this order.
    setups = [(db, n) for db in stores for n in workers if n == 1 or db != "sqlite"]
    figures: dict[str, Any] = {"bench": "server", "load_before": load()}
    raise_nofile()
    server_args: tuple[str, ...] = ()
    if args.server_rate is not None:
        server_args = (f"--rate={args.server_rate}", f"--burst={int(args.server_rate * 2)}")
    server_args = (*server_args, f"--durability={args.durability}")
    figures["durability"] = args.durability
    figures["store"] = ",".join(_store_name(db) for db in stores)

    def name(base: str, db: str, count: int) -> str:
        """A figure's key: as before for one store and one worker count, else with the store
        (`_sqlite`, `_postgresql`) and `_w<count>` added."""
        if len(stores) > 1:
            base = f"{base}_{_store_name(db)}"
        return base if len(workers) == 1 else f"{base}_w{count}"

    with (
        tempfile.TemporaryDirectory(prefix="bench-server-") as tmp,
        Children() as kids,
        contextlib.ExitStack() as opened,
    ):
        fresh: dict[str, Callable[[], str | None]] = {}
        db_cpu: dict[str, Callable[[], float] | None] = {}
        for db in stores:
            fresh[db], db_cpu[db] = opened.enter_context(databases(db))
        logs = Path(tmp)
        for k in (int(text) for text in args.tables.split(",") if text):
            runs: dict[tuple[str, int], dict[str, Any]] = {}
            for db, count in setups:
                runs[db, count] = server_run(
                    kids,
                    k,
                    mode="flat",
                    clients=args.clients,
                    warmup=args.warmup,
                    duration=args.duration,
                    logs=logs,
                    server_args=server_args,
                    profile_seconds=args.duration if args.profile and count == 1 else 0.0,
                    db=fresh[db](),
                    workers=count,
                    db_cpu=db_cpu[db],
                )
                print(
                    f"flat K={k} {_store_name(db)} workers={count}: {runs[db, count]}",
                    file=sys.stderr,
                    flush=True,
                )
            for db in stores:
                counts = [n for d, n in setups if d == db]
                if len(counts) > 1:
                    most = runs[db, max(counts)]["actions_per_s"]
                    least = runs[db, min(counts)]["actions_per_s"]
                    key = f"scaling_k{k}" if len(stores) == 1 else f"scaling_k{k}_{_store_name(db)}"
                    figures[key] = round(most / max(least, 1e-9), 3)
            if not args.no_limit:
                limit = limit_run(
                    kids,
                    k,
                    clients=args.clients,
                    warmup=args.warmup,
                    duration=args.duration,
                    logs=logs,
                )
                print(f"limit K={k}: {limit}", file=sys.stderr, flush=True)
                figures[f"limit_k{k}"] = limit
                for run in runs.values():
                    run["ratio_vs_limit"] = round(
                        run["actions_per_s"] / max(limit["table_actions_per_s"], 1e-9), 3
                    )
                    # CPU cost per action against the limit's: steadier than the ratio on a busy
                    # machine.
                    ours = run.get("actions_per_server_cpu_s")
                    theirs = limit["table_actions_per_server_cpu_s"]
                    if ours and theirs:
                        run["ratio_per_server_cpu_vs_limit"] = round(ours / theirs, 3)
            for (db, count), run in runs.items():
                figures[name(f"flat_k{k}", db, count)] = run
        for db, count in setups if args.paced_tables > 0 else []:
            paced = server_run(
                kids,
                args.paced_tables,
                mode="paced",
                rate=args.paced_rate,
                clients=args.clients,
                warmup=args.warmup,
                duration=args.paced_duration,
                logs=logs,
                server_args=server_args,
                db=fresh[db](),
                workers=count,
                db_cpu=db_cpu[db],
            )
            print(f"paced {_store_name(db)} workers={count}: {paced}", file=sys.stderr, flush=True)
            figures[name(f"paced_k{args.paced_tables}", db, count)] = paced
    figures["load_after"] = load()
    figures["clients"] = args.clients
    figures["player"] = "bench._load.players (lean random player over the protocol, not the SDK)"
    emit(figures)


def _store_name(db: str) -> str:
    return "sqlite" if db == "sqlite" else "postgresql"


@contextmanager
def databases(
    db: str,
) -> Iterator[tuple[Callable[[], str | None], Callable[[], float] | None]]:
    """A maker of fresh databases for the runs: None (a SQLite file per run, the default), a
    database of a throwaway cluster, or one created on the server of a URL; and, for the
    throwaway cluster, the CPU seconds its processes have used so far (on the same cores)."""
    if db == "sqlite":
        yield (lambda: None), None
        return
    if db == "postgres":
        from tests.postgres import started

        with started() as cluster:
            postmaster = cluster.postmaster_pid()
            cpu = None if postmaster is None else partial(tree_cpu_seconds, postmaster)
            yield cluster.fresh_database, cpu
        return
    import psycopg

    made = 0

    def fresh() -> str:
        nonlocal made
        made += 1
        name = f"bench_{os.getpid()}_{made}"
        with psycopg.connect(db, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return db.rsplit("/", 1)[0] + "/" + name

    yield fresh, None


if __name__ == "__main__":
    main()
