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

    .venv/bin/python bench/server.py [--tables 16,256] [--duration 10] [--paced-duration 15] [--profile]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._load.drive import limit_run, server_run
from bench._load.procs import Children, load, raise_nofile
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
    args = parser.parse_args()
    figures: dict[str, Any] = {"bench": "server", "load_before": load()}
    raise_nofile()
    server_args: tuple[str, ...] = ()
    if args.server_rate is not None:
        server_args = (f"--rate={args.server_rate}", f"--burst={int(args.server_rate * 2)}")
    server_args = (*server_args, f"--durability={args.durability}")
    figures["durability"] = args.durability
    with tempfile.TemporaryDirectory(prefix="bench-server-") as tmp, Children() as kids:
        logs = Path(tmp)
        for k in (int(text) for text in args.tables.split(",") if text):
            flat = server_run(
                kids,
                k,
                mode="flat",
                clients=args.clients,
                warmup=args.warmup,
                duration=args.duration,
                logs=logs,
                server_args=server_args,
                profile_seconds=args.duration if args.profile else 0.0,
            )
            print(f"flat K={k}: {flat}", file=sys.stderr, flush=True)
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
                flat["limit"] = limit
                flat["ratio_vs_limit"] = round(
                    flat["actions_per_s"] / max(limit["table_actions_per_s"], 1e-9), 3
                )
                # CPU cost per action against the limit's: steadier than the ratio on a busy machine.
                ours, theirs = (
                    flat["actions_per_server_cpu_s"],
                    limit["table_actions_per_server_cpu_s"],
                )
                if ours and theirs:
                    flat["ratio_per_server_cpu_vs_limit"] = round(ours / theirs, 3)
            figures[f"flat_k{k}"] = flat
        if args.paced_tables > 0:
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
            )
            print(f"paced: {paced}", file=sys.stderr, flush=True)
            figures[f"paced_k{args.paced_tables}"] = paced
    figures["load_after"] = load()
    figures["clients"] = args.clients
    figures["player"] = "bench._load.players (lean random player over the protocol, not the SDK)"
    emit(figures)


if __name__ == "__main__":
    main()
