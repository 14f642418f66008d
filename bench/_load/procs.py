"""Processes for the load benches: start, talk to over pipes, measure, and always stop.

Every child is started by a `Children` and killed when it is left (also on error), so a bench never
leaves a process behind. Lines are read with a deadline, so no wait is unbounded.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent.parent
PYTHON = sys.executable


def raise_nofile() -> int:
    """Raise this process's open-file limit to its hard limit; returns the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        hard = 1 << 20
    if soft < hard:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return resource.getrlimit(resource.RLIMIT_NOFILE)[0]


def rss_kb(pid: int) -> int:
    """Resident set size of `pid` in KiB (VmRSS of /proc/PID/status); 0 if unreadable."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds used so far by `pid` (from /proc/PID/stat)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks


def tree_cpu_seconds(pid: int) -> float:
    """CPU seconds used so far by `pid`, its children that have ended (reaped: cutime, cstime)
    and its live children (a PostgreSQL postmaster and its backends, say)."""

    def stat(of: int | str) -> list[str] | None:
        try:
            return Path(f"/proc/{of}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            return None

    ticks = os.sysconf("SC_CLK_TCK")
    own = stat(pid)
    if own is None:
        return 0.0
    total = sum(int(field) for field in own[11:15])
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            fields = stat(entry.name)
            if fields is not None and fields[1] == str(pid):
                total += sum(int(field) for field in fields[11:15])
    return total / ticks


def load() -> str:
    """The 1, 5 and 15 minute load averages, as `uptime` shows them."""
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


class Child:
    """One child process with line-oriented stdin/stdout pipes (stderr goes to a file)."""

    def __init__(self, name: str, args: list[str], stderr_path: Path | None = None) -> None:
        self.name = name
        self._stderr = stderr_path.open("wb") if stderr_path is not None else None
        self.stderr_path = stderr_path
        self.proc = subprocess.Popen(
            args,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr if self._stderr is not None else subprocess.DEVNULL,
            env={**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"},
        )
        self._buffer = b""
        self.pids: list[int] = []  # a supervisor's workers (bench._load.serve --workers)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def send_line(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode() + b"\n")
        self.proc.stdin.flush()

    def read_line(self, timeout: float) -> str:
        """The next stdout line; raises TimeoutError after `timeout` s, EOFError if the child ended."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while b"\n" not in self._buffer:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"{self.name}: no line within {timeout:.0f} s")
                if not sel.select(left):
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    raise EOFError(f"{self.name} ended (exit {self.proc.poll()}){self._tail()}")
                self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode()

    def read_json(self, timeout: float) -> dict[str, Any]:
        """The next stdout line that is a JSON object (other lines are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            line = self.read_line(max(0.01, deadline - time.monotonic()))
            if line.startswith("{"):
                result: dict[str, Any] = json.loads(line)
                return result

    def _tail(self) -> str:
        if self.stderr_path is None or self._stderr is None:
            return ""
        self._stderr.flush()
        try:
            text = self.stderr_path.read_text(errors="replace")
        except OSError:
            return ""
        return "; stderr: " + text[-1500:]

    def stop(self, grace: float = 5.0) -> None:
        """SIGTERM, then SIGKILL after `grace` seconds; closes the pipes."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(grace)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    self.proc.kill()
                self.proc.wait(5)
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        if self._stderr is not None:
            self._stderr.close()


class Children:
    """Every child of one bench run; `with Children() as kids:` kills them all on the way out."""

    def __init__(self) -> None:
        self.all: list[Child] = []

    def start(self, name: str, args: list[str], stderr_path: Path | None = None) -> Child:
        child = Child(name, args, stderr_path)
        self.all.append(child)
        return child

    def module(self, name: str, module: str, *args: str, stderr_path: Path | None = None) -> Child:
        """`python -m module args...` from the repository root."""
        return self.start(name, [PYTHON, "-m", module, *args], stderr_path)

    def __enter__(self) -> Children:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        for child in reversed(self.all):
            child.stop()


def percentile(sorted_values: list[float], fraction: float) -> float:
    """The value below which `fraction` of the sorted samples lie (nearest rank); 0 if empty."""
    if not sorted_values:
        return 0.0
    rank = min(len(sorted_values) - 1, max(0, round(fraction * len(sorted_values)) - 1))
    return sorted_values[rank]
