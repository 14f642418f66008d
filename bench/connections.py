"""How many idle, handshaken connections the server holds, and its memory per connection.

The real server (`bench._load.serve`, the code `spades-server serve` runs, with its connection cap
raised to fit) runs in a subprocess; a few client processes (`bench._load.idle`) open connections in
steps up to 10,000, each saying `hello` and waiting for `welcome`, then hold them idle. After each step
the server's RSS is read from /proc/PID/status (VmRSS); memory per connection = (RSS with N − RSS with
0) / N. At the end every connection is pinged, to count those the server still holds. The same is then
done, for comparison, against two bare trio servers (bench._load.relay): the relay of bench/limit.py
(framing, msgpack, a reader and a writer task per connection, no sessions) and a plain echo server
(one task per connection).
Prints one JSON object on its last line (bench/report.py).

    .venv/bin/python bench/connections.py [--steps 1000,5000,10000] [--clients 4] [--hold 5]
"""

from __future__ import annotations

import argparse
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._load.drive import read_port, split
from bench._load.procs import Child, Children, load, raise_nofile, rss_kb
from bench.report import emit

STEP_TIMEOUT = 120.0


def settle_rss(pid: int, seconds: float = 1.0) -> int:
    """The RSS after a short pause (lets the server finish the last handshakes' work)."""
    time.sleep(seconds)
    return rss_kb(pid)


def measure(
    kids: Children,
    server: Child,
    steps: list[int],
    clients: int,
    hold: float,
    logs: Path,
    tag: str,
    allocations: Path | None = None,
) -> dict[str, Any]:
    port = read_port(server)
    rss0 = settle_rss(server.pid, 1.5)
    loaders = [
        kids.module(
            f"idle-{tag}-{i}",
            "bench._load.idle",
            f"--port={port}",
            stderr_path=logs / f"idle-{tag}-{i}.err",
        )
        for i in range(clients)
    ]
    rows = []
    started = time.monotonic()
    for total in steps:
        shares = split(total, clients) + [0] * clients
        for loader, share in zip(loaders, shares, strict=False):
            loader.send_line(f"open {share}")
        answers = [loader.read_json(STEP_TIMEOUT) for loader in loaders]
        held = sum(a["open"] for a in answers)
        errors: dict[str, int] = {}
        for answer in answers:
            for key, count in answer.get("errors", {}).items():
                errors[key] = errors.get(key, 0) + count
        rss = settle_rss(server.pid)
        rows.append(
            {
                "wanted": total,
                "held": held,
                "server_rss_kb": rss,
                "kb_per_connection": round((rss - rss0) / held, 2) if held else None,
                "seconds": max(a["seconds"] for a in answers),
                "errors": errors,
            }
        )
        print(f"{tag}: {rows[-1]}", file=sys.stderr, flush=True)
    sites: list[str] = []
    if allocations is not None:
        server.proc.send_signal(signal.SIGUSR1)
        for _ in range(300):  # bounded: up to 30 s for the snapshot
            if allocations.exists():
                sites = allocations.read_text().splitlines()
                break
            time.sleep(0.1)
    time.sleep(hold)
    for loader in loaders:
        loader.send_line("check")
    checks = [loader.read_json(STEP_TIMEOUT) for loader in loaders]
    answered = sum(c["answered"] for c in checks)
    for loader in loaders:
        loader.send_line("quit")
        loader.stop()
    result: dict[str, Any] = {
        "rss_with_0_kb": rss0,
        "steps": rows,
        "held_after_hold": answered,
        "hold_s": hold,
        "kb_per_connection": rows[-1]["kb_per_connection"] if rows else None,
        "seconds": round(time.monotonic() - started, 1),
    }
    if sites:
        result["allocation_sites"] = sites
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", default="1000,5000,10000", help="connection counts, rising")
    parser.add_argument("--clients", type=int, default=4, help="client processes")
    parser.add_argument("--hold", type=float, default=5.0, help="seconds to hold before the check")
    parser.add_argument("--no-bare", action="store_true", help="skip the bare trio comparison")
    parser.add_argument(
        "--tracemalloc",
        action="store_true",
        help="also list the server's allocation sites at the largest step (inflates its RSS)",
    )
    args = parser.parse_args()
    figures: dict[str, Any] = {"bench": "connections", "load_before": load()}
    figures["nofile_limit"] = raise_nofile()
    steps = [int(text) for text in args.steps.split(",")]
    with tempfile.TemporaryDirectory(prefix="bench-conn-") as tmp, Children() as kids:
        logs = Path(tmp)
        allocations = logs / "allocations.txt" if args.tracemalloc else None
        trace = (f"--tracemalloc={allocations}",) if allocations is not None else ()
        server = kids.module(
            "server",
            "bench._load.serve",
            f"--db={logs / 'conn.db'}",
            f"--max-connections={max(steps) + 100}",
            *trace,
            stderr_path=logs / "server.err",
        )
        figures["server"] = measure(
            kids, server, steps, args.clients, args.hold, logs, "server", allocations
        )
        figures["tracemalloc"] = args.tracemalloc
        server.stop()
        if not args.no_bare:
            for role, key in (("server", "bare_trio_relay"), ("echo", "bare_trio_echo")):
                bare = kids.module(
                    key, "bench._load.relay", f"--role={role}", stderr_path=logs / f"{key}.err"
                )
                figures[key] = measure(kids, bare, steps, args.clients, args.hold, logs, key)
                bare.stop()
    figures["load_after"] = load()
    emit(figures)


if __name__ == "__main__":
    main()
