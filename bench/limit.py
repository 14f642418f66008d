"""The raw limit of this machine for table traffic, with no game in it.

A bare trio server and client processes exchange length-prefixed msgpack frames of the project's real
message sizes in the pattern of a table: one `act` in, one `card_played`-sized event out to each of the
table's four seats, and the next seat answers with the next `act` (one action in flight per table). No
rules, validation or storage: whatever the real server does beyond this is its own cost. Prints, for
K = 1, 16 and 256 tables, table-actions per second and the act -> all-four-seats latency, as one JSON
object on its last line (bench/report.py).

    .venv/bin/python bench/limit.py [--tables 1,16,256] [--duration 8] [--clients 2]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._load.drive import limit_run
from bench._load.procs import Children, load, raise_nofile
from bench.report import emit


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", default="1,16,256", help="comma-separated K values")
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds before counting")
    parser.add_argument("--duration", type=float, default=8.0, help="seconds counted per K")
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    args = parser.parse_args()
    raise_nofile()
    figures: dict[str, Any] = {"bench": "limit", "load_before": load()}
    with tempfile.TemporaryDirectory(prefix="bench-limit-") as tmp, Children() as kids:
        for k in (int(text) for text in args.tables.split(",")):
            result = limit_run(
                kids,
                k,
                clients=args.clients,
                warmup=args.warmup,
                duration=args.duration,
                logs=Path(tmp),
            )
            figures[f"k{k}"] = result
            print(f"K={k}: {result}", file=sys.stderr, flush=True)
    figures["load_after"] = load()
    figures["clients"] = args.clients
    figures["duration_s"] = args.duration
    emit(figures)


if __name__ == "__main__":
    main()
