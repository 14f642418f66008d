"""Runs of the load benches: start a server, start load processes, go together, collect, stop.

Shared by bench/limit.py and bench/server.py so that the raw limit and the real server are driven the
same way (the same client processes, the same split of tables, the same windows).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench._load.procs import Child, Children, cpu_seconds, percentile, rss_kb

SETUP_TIMEOUT = 120.0


def split(total: int, parts: int) -> list[int]:
    """`total` tables over `parts` processes, as evenly as possible (no empty part)."""
    parts = max(1, min(parts, total))
    return [total // parts + (1 if i < total % parts else 0) for i in range(parts)]


def read_port(server: Child, timeout: float = 30.0) -> int:
    """The port from the server's `port N ...` line (and its workers' pids, when it has
    workers: `server.pids`, whose CPU and memory `drive` adds up)."""
    line = server.read_line(timeout)
    words = line.split()
    if not words or words[0] != "port":
        raise RuntimeError(f"{server.name}: expected 'port N', got {line!r}")
    if "pids" in words:
        server.pids = [int(p) for p in words[words.index("pids") + 1].split(",")]
    return int(words[1])


def _cpu(server: Child) -> float:
    return sum(cpu_seconds(pid) for pid in server.pids or [server.pid])


def _rss(server: Child) -> int:
    return sum(rss_kb(pid) for pid in server.pids or [server.pid])


def per_cpu(actions: int, cpu_share: float, duration: float) -> float | None:
    """Actions per second of server CPU: what the server would do with a core to itself."""
    return round(actions / (cpu_share * duration), 1) if cpu_share > 0 else None


def summarize_latency(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": round(percentile(ordered, 0.50), 2),
        "p90_ms": round(percentile(ordered, 0.90), 2),
        "p99_ms": round(percentile(ordered, 0.99), 2),
        "max_ms": round(ordered[-1], 2) if ordered else 0.0,
        "samples": len(ordered),
    }


def drive(
    server: Child,
    loaders: list[Child],
    *,
    warmup: float,
    duration: float,
    at_start: Callable[[], None] | None = None,
    db_cpu: Callable[[], float] | None = None,
) -> dict[str, Any]:
    """Wait until every load process is ready, start them together, and merge their results.

    Samples the server's RSS and CPU time at the start and the end of the counted window (and
    the database's CPU time, `db_cpu`, where the bench runs the database itself).
    """
    for loader in loaders:
        line = loader.read_line(SETUP_TIMEOUT)
        if not line.startswith("ready"):
            raise RuntimeError(f"{loader.name}: expected 'ready', got {line!r}")
    begin = time.time() + 0.3
    for loader in loaders:
        loader.send_line(f"go {begin}")
    time.sleep(max(0.0, begin + warmup - time.time()))
    if at_start is not None:
        at_start()
    cpu_start = _cpu(server)
    db_start = db_cpu() if db_cpu is not None else 0.0
    loaders_start = sum(cpu_seconds(loader.pid) for loader in loaders)
    rss_start = _rss(server)
    time.sleep(max(0.0, begin + warmup + duration - time.time()))
    cpu_end = _cpu(server)
    db_end = db_cpu() if db_cpu is not None else 0.0
    loaders_end = sum(cpu_seconds(loader.pid) for loader in loaders)
    rss_end = _rss(server)
    results = [loader.read_json(duration + 60) for loader in loaders]
    merged: dict[str, Any] = {"actions": 0, "hands": 0, "errors": {}, "latencies_ms": []}
    setup = 0.0
    for result in results:
        merged["actions"] += result.get("actions", 0)
        merged["hands"] += result.get("hands", 0)
        merged["latencies_ms"].extend(result.get("latencies_ms", []))
        for code, count in result.get("errors", {}).items():
            merged["errors"][code] = merged["errors"].get(code, 0) + count
        setup = max(setup, result.get("setup_s", 0.0))
        if "late_ms" in result:
            merged.setdefault("late_ms", []).extend(result["late_ms"])
    merged["setup_s"] = setup
    merged["server_cpu_share"] = round((cpu_end - cpu_start) / duration, 2)
    merged["clients_cpu_share"] = round((loaders_end - loaders_start) / duration, 2)
    if db_cpu is not None:
        merged["db_cpu_share"] = round((db_end - db_start) / duration, 2)
    merged["server_rss_kb"] = rss_end
    merged["server_rss_start_kb"] = rss_start
    return merged


def limit_run(
    kids: Children,
    tables: int,
    *,
    clients: int,
    warmup: float,
    duration: float,
    logs: Path,
) -> dict[str, Any]:
    """The raw limit at `tables` tables: table-actions per second of the bare relay."""
    server = kids.module(
        f"relay-server-{tables}",
        "bench._load.relay",
        "--role",
        "server",
        stderr_path=logs / f"relay-server-{tables}.err",
    )
    try:
        port = read_port(server)
        loaders = [
            kids.module(
                f"relay-clients-{tables}-{i}",
                "bench._load.relay",
                "--role=clients",
                f"--port={port}",
                f"--tables={count}",
                f"--warmup={warmup}",
                f"--duration={duration}",
                f"--seed={i + 1}",
                stderr_path=logs / f"relay-clients-{tables}-{i}.err",
            )
            for i, count in enumerate(split(tables, clients))
        ]
        merged = drive(server, loaders, warmup=warmup, duration=duration)
        for loader in loaders:
            loader.stop()
    finally:
        server.stop()
    return {
        "tables": tables,
        "table_actions_per_s": round(merged["actions"] / duration, 1),
        "table_actions_per_server_cpu_s": per_cpu(
            merged["actions"], merged["server_cpu_share"], duration
        ),
        "latency": summarize_latency(merged["latencies_ms"]),
        "server_cpu_share": merged["server_cpu_share"],
        "clients_cpu_share": merged["clients_cpu_share"],
        "server_rss_kb": merged["server_rss_kb"],
        "setup_s": merged["setup_s"],
    }


def server_run(
    kids: Children,
    tables: int,
    *,
    mode: str,
    clients: int,
    warmup: float,
    duration: float,
    logs: Path,
    rate: float = 10.0,
    server_args: tuple[str, ...] = (),
    profile_seconds: float = 0.0,
    db: str | None = None,
    workers: int = 1,
    db_cpu: Callable[[], float] | None = None,
) -> dict[str, Any]:
    """The real server (a fresh SQLite file, or the fresh PostgreSQL database `db`, with
    `workers` processes) with `tables` tables of four lean random players; `db_cpu`: the CPU
    seconds PostgreSQL has used so far, where the bench runs it."""
    from bench._load.profile import start_recording, summarize

    name = f"{mode}-{tables}-w{workers}"
    server = kids.module(
        f"server-{name}",
        "bench._load.serve",
        f"--db={db if db is not None else logs / f'{name}.db'}",
        f"--workers={workers}",
        f"--max-connections={4 * tables + 64}",
        f"--max-tables={max(256, tables + 16)}",
        *server_args,
        stderr_path=logs / f"server-{name}.err",
    )
    try:
        port = read_port(server)
        rss_idle = _rss(server)
        loaders = [
            kids.module(
                f"players-{name}-{i}",
                "bench._load.players",
                f"--port={port}",
                f"--tables={count}",
                f"--mode={mode}",
                f"--rate={rate}",
                f"--warmup={warmup}",
                f"--duration={duration}",
                f"--seed={i + 1}",
                stderr_path=logs / f"players-{name}-{i}.err",
            )
            for i, count in enumerate(split(tables, clients))
        ]
        spies: list[Child | None] = []
        raw = logs / f"profile-{name}.txt"

        def profile() -> None:
            # Started when counting starts, so the samples are of play alone.
            if profile_seconds > 0:
                seconds = min(profile_seconds, duration)
                spies.append(start_recording(kids, server.pid, seconds, raw))

        merged = drive(
            server, loaders, warmup=warmup, duration=duration, at_start=profile, db_cpu=db_cpu
        )
        spy = spies[0] if spies else None
        if spy is not None:
            spy.proc.wait(30)
        for loader in loaders:
            loader.stop()
    finally:
        server.stop()
    result: dict[str, Any] = {
        "tables": tables,
        "mode": mode,
        "workers": workers,
        "store": "sqlite" if db is None else "postgresql",
        "actions_per_s": round(merged["actions"] / duration, 1),
        "actions_per_server_cpu_s": per_cpu(
            merged["actions"], merged["server_cpu_share"], duration
        ),
        "hands_per_s": round(merged["hands"] / duration, 2),
        "latency": summarize_latency(merged["latencies_ms"]),
        "errors": merged["errors"],
        "server_cpu_share": merged["server_cpu_share"],
        "clients_cpu_share": merged["clients_cpu_share"],
        **({"db_cpu_share": merged["db_cpu_share"]} if "db_cpu_share" in merged else {}),
        "server_rss_kb": merged["server_rss_kb"],
        "server_rss_idle_kb": rss_idle,
        "setup_s": merged["setup_s"],
    }
    if mode == "paced":
        result["target_actions_per_s"] = tables * rate
        result["behind_schedule"] = summarize_latency(merged.get("late_ms", []))
    if spy is not None:
        result["profile"] = summarize(raw)
    return result
