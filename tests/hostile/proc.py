"""A real `spades-server serve` in a subprocess: start it, learn its port, watch its memory, kill it.

Everything here is bounded: starting waits at most `START_TIMEOUT` seconds for the "listening" line,
stopping sends SIGTERM and falls back to SIGKILL. Use it as a context manager so the process is
killed whatever the test does.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import IO

START_TIMEOUT = 30.0
STOP_TIMEOUT = 15.0
PORT_LINE = re.compile(rb"join with: spades join (?:tls://)?[^\s:/]+:(\d+)")


def server_command() -> list[str]:
    """The installed console script next to this interpreter, else the same entry point via -c."""
    script = Path(sys.executable).parent / "spades-server"
    if script.exists():
        return [str(script)]
    found = shutil.which("spades-server")
    if found:
        return [found]
    return [sys.executable, "-c", "from server.cli import main; main()"]


def _copy(source: IO[bytes], path: Path) -> None:
    """Copy the child's stderr to `path` until it closes (runs in a daemon thread)."""
    with source, path.open("ab") as sink:
        for line in source:
            sink.write(line)
            sink.flush()


class ServerProcess:
    """One server subprocess listening on 127.0.0.1 with its own database and log files."""

    def __init__(
        self,
        db: Path,
        *extra: str,
        workdir: Path | None = None,
        preexec: Callable[[], None] | None = None,
    ) -> None:
        self.db = db
        self.extra = extra
        self.workdir = workdir or db.parent
        self.preexec = preexec
        self.proc: subprocess.Popen[bytes] | None = None
        self.port = 0
        self.starts = 0
        self._copier: threading.Thread | None = None

    @property
    def stdout_path(self) -> Path:
        return self.workdir / f"server-{self.starts}.out"

    @property
    def stderr_path(self) -> Path:
        return self.workdir / f"server-{self.starts}.err"

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def start(self) -> ServerProcess:
        """Start and wait for the port; raises RuntimeError (with the log tail) if it does not listen."""
        assert self.proc is None or self.proc.poll() is not None, "already running"
        self.starts += 1
        args = [
            *server_command(),
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            "0",
            "--db",
            str(self.db),
            "--log-format",
            "json",
            *self.extra,
        ]
        with self.stdout_path.open("wb") as out:
            # stderr (the log) goes through a pipe that a thread copies to a file: the server's own
            # file-size limits (see the disk-full test) must not apply to its log.
            self.proc = subprocess.Popen(
                args,
                stdout=out,
                stderr=subprocess.PIPE,
                stdin=subprocess.DEVNULL,
                preexec_fn=self.preexec,  # noqa: PLW1509 - only resource limits, set before exec
                cwd=self.workdir,
            )
        assert self.proc.stderr is not None
        copier = threading.Thread(
            target=_copy, args=(self.proc.stderr, self.stderr_path), daemon=True
        )
        copier.start()
        self._copier = copier
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            match = PORT_LINE.search(self.stdout_path.read_bytes())
            if match:
                self.port = int(match.group(1))
                return self
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        tail = self.log_tail()
        self.kill()
        raise RuntimeError(f"spades-server did not report a port: {args}\n{tail}")

    def log_tail(self, lines: int = 30) -> str:
        text = ""
        for path in (self.stdout_path, self.stderr_path):
            if path.exists():
                text += "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) + "\n"
        return text

    def logs(self) -> str:
        """Everything the server wrote to stderr in its current (or last) run."""
        return self.stderr_path.read_text(errors="replace") if self.stderr_path.exists() else ""

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def rss_kib(self) -> int:
        """Resident memory of the server process, from /proc (KiB)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError("no VmRSS in /proc status")

    def open_fds(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def kill9(self) -> None:
        """SIGKILL: no shutdown code runs, exactly like a crash or a power cut of the process."""
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=STOP_TIMEOUT)
        self._join_copier()

    def stop(self) -> int:
        """SIGTERM (a graceful stop), then SIGKILL if it does not exit in time; the exit status."""
        if self.proc is None:
            return 0
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.kill()
        self._join_copier()
        return int(self.proc.returncode)

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=STOP_TIMEOUT)
        self._join_copier()

    def _join_copier(self) -> None:
        if self._copier is not None:
            self._copier.join(timeout=STOP_TIMEOUT)
            self._copier = None

    def __enter__(self) -> ServerProcess:
        if not self.alive():
            self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.kill()
