"""What the real server does per applied action, counted (not timed): cProfile call counts.

The server of bench/server.py (`bench._load.serve`, a fresh SQLite file) runs under cProfile
(`--cprofile`) with K tables of four lean random players, flat out, for `--duration` seconds; then
the calls of a few functions are divided by the engine's `apply` calls (one per applied action; a
coroutine's count in cProfile is one per resumption, so the table's own methods are no denominator).
The counts do not depend on the machine's load, which makes them the figure to compare across
commits on a shared machine. To count another commit's server, copy this file into a copy of
that commit and run it there (the server runs from the tree the script is in):

    .venv/bin/python bench/server_counts.py [--tables 16] [--duration 6]
    git archive 0dc8e6a | tar -x -C /tmp/old && cp bench/server_counts.py /tmp/old/bench/
    (cd /tmp/old && "$OLDPWD/.venv/bin/python" bench/server_counts.py)

Prints one JSON object on its last line (bench/report.py); a function the server never called is
left out.
"""

from __future__ import annotations

import argparse
import pstats
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._load.drive import server_run
from bench._load.procs import Children, load, raise_nofile
from bench.report import emit

# (file name, function name) -> the key printed. Builtins are cProfile's own names.
COUNTED: dict[tuple[str, str], str] = {
    ("schema.py", "from_map"): "schema_validations",
    ("schema.py", "to_map"): "to_map",
    ("schema.py", "_to_map"): "to_map_walks",
    ("schema.py", "assemble"): "assemble",
    ("actions.py", "action_from_dict"): "action_from_dict",
    ("actions.py", "action_to_dict"): "action_to_dict",
    ("seats.py", "wire_action"): "wire_action",
    ("types.py", "engine_action"): "engine_action",
    ("wire.py", "game_event"): "game_event",
    ("wire.py", "game_event_frames"): "game_event_frames",
    ("wire.py", "your_turn_frames"): "your_turn_frames",
    ("session.py", "deliver"): "session_deliver",
    ("session.py", "deliver_shared"): "session_deliver_shared",
    ("_run.py", "reschedule"): "trio_reschedules",
    ("~", "<method 'send' of '_socket.socket' objects>"): "send_syscalls",
    ("~", "<method 'recv' of '_socket.socket' objects>"): "recv_syscalls",
    ("__init__.py", "packb"): "msgpack_packs",  # before: a new Packer per call
    ("codec.py", "_packer"): "msgpack_packs",  # one per pack since the packer is reused
}


def counts_per_action(profile: Path) -> dict[str, Any]:
    """The counted functions' calls per applied action in a cProfile dump."""
    stats: dict[tuple[str, int, str], tuple[Any, ...]] = pstats.Stats(str(profile)).stats  # type: ignore[attr-defined]
    calls: dict[str, int] = {}
    applied = 0
    for (path, _line, name), row in stats.items():
        where = Path(path).name if path != "~" else "~"
        if where == "spades.py" and name == "apply":
            applied += int(row[1])
        key = COUNTED.get((where, name))
        if key is not None:
            calls[key] = calls.get(key, 0) + int(row[1])
    out: dict[str, Any] = {"applied_actions": applied}
    for key, count in sorted(calls.items()):
        out[key] = round(count / max(applied, 1), 2)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tables", type=int, default=16)
    parser.add_argument("--warmup", type=float, default=1.0)
    parser.add_argument("--duration", type=float, default=6.0)
    args = parser.parse_args()
    raise_nofile()
    figures: dict[str, Any] = {"bench": "server_counts", "load_before": load()}
    with tempfile.TemporaryDirectory(prefix="bench-counts-") as tmp, Children() as kids:
        profile = Path(tmp) / "server.prof"
        run = server_run(
            kids,
            args.tables,
            mode="flat",
            clients=2,
            warmup=args.warmup,
            duration=args.duration,
            logs=Path(tmp),
            server_args=("--cprofile", str(profile)),
        )
        for _ in range(100):  # the server writes its profile as it exits: at most 10 s
            if profile.exists() and profile.stat().st_size:
                break
            time.sleep(0.1)
        time.sleep(0.5)
        figures["per_action"] = counts_per_action(profile)
    figures["tables"] = args.tables
    figures["actions_per_s_under_cprofile"] = run["actions_per_s"]
    figures["load_after"] = load()
    emit(figures)


if __name__ == "__main__":
    main()
