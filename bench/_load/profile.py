"""Where a server's time goes: py-spy samples of a running process, summarized.

`py-spy record --format raw` writes one line per distinct stack, `frame;frame;... count`. The summary
gives, for the busiest frames, the share of samples in which the frame is the one running (self) and the
share in which it is anywhere on the stack (inclusive), the project's own frames first.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from bench._load.procs import Child, Children

PROJECT = ("server/", "protocol/", "engine/", "bots/")

# Where a running frame's time is charged, by the file it is in (first match wins).
AREAS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("socket syscalls (send/recv)", ("trio/_socket.py", "trio/_highlevel_socket.py")),
    ("waiting in epoll", ("trio/_core/_io_epoll.py",)),
    (
        "sqlite and its worker thread",
        (
            "server/storage/",
            "_thread_cache.py",
            "trio/_threads.py",
            "sqlite3",
        ),
    ),
    ("protocol: schema, encode, decode", ("protocol/", "msgpack/")),
    ("engine (rules)", ("engine/",)),
    ("logging", ("structlog/", "logging/")),
    ("trio scheduling and channels", ("trio/", "outcome/", "contextlib.py", "sniffio/")),
    ("server: tables, sessions, lobby", ("server/",)),
    ("dataclasses and other stdlib", ("dataclasses.py", "<string>", "copy.py", "enum.py")),
)


def py_spy() -> str | None:
    """The py-spy executable beside this Python, or on PATH; None if it is not installed."""
    here = Path(__file__).resolve().parent.parent.parent / ".venv" / "bin" / "py-spy"
    return str(here) if here.exists() else shutil.which("py-spy")


def start_recording(
    kids: Children, pid: int, seconds: float, out: Path, *, rate: int = 200
) -> Child | None:
    """Sample `pid` for `seconds` in the background (None if py-spy is missing)."""
    exe = py_spy()
    if exe is None:
        return None
    return kids.start(
        "py-spy",
        [
            *(exe, "record", "-p", str(pid), "-d", str(int(seconds)), "-r", str(rate)),
            *("-f", "raw", "-o", str(out), "--nonblocking"),
        ],
        stderr_path=out.with_suffix(".err"),
    )


def summarize(raw: Path, top: int = 15) -> dict[str, Any]:
    """Self and inclusive shares of the busiest frames in a py-spy raw file ({} if none)."""
    try:
        lines = raw.read_text().splitlines()
    except OSError:
        return {}
    own: Counter[str] = Counter()
    areas: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    worker = 0  # samples in other threads than trio's (SQLite's worker threads)
    for line in lines:
        stack, _, count_text = line.rpartition(" ")
        if not stack or not count_text.isdigit():
            continue
        count = int(count_text)
        total += count
        frames = stack.split(";")
        own[_short(frames[-1])] += count
        if "Thread._bootstrap" in stack:
            worker += count
        else:
            areas[_area(frames[-1])] += count
        for name in {_short(frame) for frame in frames}:
            inclusive[name] += count
    if not total:
        return {}

    def share(counter: Counter[str], keep: Any) -> list[str]:
        rows = [(n, f) for f, n in counter.most_common() if keep(f)][:top]
        return [f"{n / total * 100:5.1f}% {f}" for n, f in rows]

    return {
        "samples": total,
        # py-spy counts a thread blocked in fsync as busy: the worker's share is its wall time.
        "worker_thread_share": round(worker / total, 3),
        "trio_thread_by_area": [
            f"{n / (total - worker) * 100:5.1f}% {area}" for area, n in areas.most_common()
        ],
        "self": share(own, lambda f: True),
        "inclusive_project": share(inclusive, lambda f: any(p in f for p in PROJECT)),
    }


def _area(frame: str) -> str:
    for area, markers in AREAS:
        if any(marker in frame for marker in markers):
            return area
    return "other"


def _short(frame: str) -> str:
    """`func (path/to/site-packages/trio/_core/_run.py:12)` -> `func (trio/_core/_run.py)`."""
    name, _, where = frame.partition(" (")
    where = where.rstrip(")").rsplit(":", 1)[0]
    for marker in ("site-packages/", "/work/main/", "lib/python3.11/"):
        if marker in where:
            where = where.split(marker, 1)[1]
    return f"{name} ({where})"
