"""`spades-server serve --workers N`: N server processes on this machine as one server.

This process is only their supervisor: it listens on the address (one socket, which every worker
inherits and accepts on: the kernel hands each new connection to one of them), starts N workers
(`serve --cluster` each, on the same PostgreSQL database, the first also serving the web page),
prints the address once every worker is up, starts a worker again if one dies (its tables are
taken over by the others meanwhile, from the store), and on SIGINT or SIGTERM stops them all.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence

import structlog

from server.config import DB_ENV, DEFAULT_METRICS_PORT, LogFormat
from server.failures import tell
from server.storage.postgres import hold_supervisor_lock, release_serving_lock

log = structlog.get_logger("server.cluster")

#: Seconds a worker has to come up (print its line) before the supervisor gives up.
START_TIMEOUT = 60.0
#: Seconds between starting a dead worker again.
RESTART_DELAY = 1.0
#: Seconds the workers have to stop after SIGTERM before they are killed.
STOP_TIMEOUT = 15.0


#: The supervisor's own options a worker is not given with their values: `--workers` (it is one),
#: its link and metrics ports (each worker gets its own), and the database, which it gets by its
#: environment (`server.config.DB_ENV`) instead, never on its command line.
NOT_PASSED_ON = ("--workers", "--link-port", "--metrics-port", "--db", "--db-file")


def worker_arguments(argv: Sequence[str], index: int, fd: int, link_port: int = 0) -> list[str]:
    """The `serve` arguments of worker `index`: the supervisor's own, without `--workers` and the
    database, with the inherited socket, a link port of its own (`link_port` + `index`: the same
    at every start of that worker; 0: any), and the web page only in the first.

    Each worker answers /healthz, /readyz and /metrics of its own: the first on the web page (or,
    without it, on the metrics port as a lone server would), worker `i` on `--metrics-port` + i
    when one is given (0: any free port each), else on `DEFAULT_METRICS_PORT` + i if it is free.
    """
    kept: list[str] = []
    metrics_port: str | None = None
    skip: str | None = None
    for arg in argv:
        if skip is not None:
            if skip == "--metrics-port":
                metrics_port = arg
            skip = None
            continue
        if arg in NOT_PASSED_ON:
            skip = arg
            continue
        if arg.startswith("--metrics-port="):
            metrics_port = arg.partition("=")[2]
            continue
        if arg.startswith(tuple(f"{option}=" for option in NOT_PASSED_ON)):
            continue
        kept.append(arg)
    worker_link = link_port + index if link_port else 0
    extra = ["--cluster", "--listen-fd", str(fd), "--link-port", str(worker_link)]
    if index > 0:
        extra.append("--no-web")
    if metrics_port is not None:
        base = int(metrics_port)  # checked by the supervisor's own `serve` (0..65535)
        extra += ["--metrics-port", str(base + index if base else 0)]
    elif index > 0:
        extra += [
            "--metrics-port",
            str(DEFAULT_METRICS_PORT + index),
            "--metrics-port-optional",
        ]
    return [*kept, *extra]


class WorkerFailed(RuntimeError):
    """A worker exited while starting; it said why on its stderr (the supervisor's own)."""

    def __init__(self, code: int) -> None:
        super().__init__(f"a worker exited with code {code} while starting")
        self.code = code


class Supervisor:
    def __init__(
        self,
        argv: Sequence[str],
        workers: int,
        host: str,
        port: int,
        *,
        db_url: str,
        link_port: int = 0,
    ) -> None:
        self.argv = list(argv)
        self.db_url = db_url
        self.link_port = link_port
        self.count = workers
        self.host = host
        self.port = port
        self.sock: socket.socket | None = None
        self.procs: list[subprocess.Popen[bytes] | None] = [None] * workers
        self.stopping = False

    def listen(self) -> int:
        """Bind and listen (raises `OSError` as `serve` would); returns the port."""
        family = socket.AF_INET6 if ":" in self.host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host if self.host else "0.0.0.0", self.port))
        sock.listen(1024)
        sock.set_inheritable(True)
        self.sock = sock
        return int(sock.getsockname()[1])

    def start(self, index: int) -> subprocess.Popen[bytes]:
        assert self.sock is not None
        fd = self.sock.fileno()
        command = [
            sys.executable,
            "-m",
            "server.cli",
            "serve",
            *worker_arguments(self.argv, index, fd, self.link_port),
        ]
        # The database URL (a password, maybe) by the environment: `ps` shows every argv.
        env = {**os.environ, DB_ENV: self.db_url}
        proc = subprocess.Popen(command, pass_fds=(fd,), stdout=subprocess.PIPE, env=env)
        self.procs[index] = proc
        return proc

    def wait_ready(self, proc: subprocess.Popen[bytes]) -> list[str]:
        """The worker's first line(s) once it listens; raises `WorkerFailed` if it exits first."""
        assert proc.stdout is not None
        lines = []
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            line = proc.stdout.readline().decode(errors="replace").rstrip("\n")
            if not line:
                raise WorkerFailed(proc.wait())
            lines.append(line)
            if line.startswith("spades-server listening"):
                return lines
        raise RuntimeError("a worker did not start in time")

    def stop(self) -> None:
        self.stopping = True
        for proc in self.procs:
            if proc is not None and proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        deadline = time.monotonic() + STOP_TIMEOUT
        for proc in self.procs:
            if proc is None:
                continue
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def run(
    argv: Sequence[str],
    workers: int,
    host: str,
    port: int,
    shown: str,
    *,
    db_url: str,
    cluster: bool = False,
    log_format: LogFormat = LogFormat.console,
    link_port: int = 0,
) -> int:
    """Supervise `workers` workers until SIGINT/SIGTERM; the exit code. Worker i's link listens
    on `link_port` + i (0: any port). Raises `OSError` if the address cannot be listened on and
    `StorageError` if the database cannot be had, or another supervisor holds it
    (`PostgresInUse`, naming it); no worker has started then."""
    supervisor = Supervisor(argv, workers, host, port, db_url=db_url, link_port=link_port)
    bound = supervisor.listen()
    # One supervisor per database (per machine of a `--cluster`), held until this one exits (a
    # killed one lets go with its connection): a second would serve the same lobby on a port of
    # its own.
    lock = hold_supervisor_lock(db_url, f"{shown}:{bound}", shared=cluster)
    try:
        return _supervise(supervisor, bound, shown, log_format)
    finally:
        release_serving_lock(lock)


def _supervise(supervisor: Supervisor, bound: int, shown: str, log_format: LogFormat) -> int:
    """Start the workers, then keep them running until SIGINT/SIGTERM; the exit code."""
    workers, argv = supervisor.count, supervisor.argv
    stop_now = False

    def on_signal(signum: int, _frame: object) -> None:
        nonlocal stop_now
        stop_now = True

    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    web_line = None
    metrics_lines: list[str] = []
    try:
        for index in range(workers):
            lines = supervisor.wait_ready(supervisor.start(index))
            metrics_lines += [x for x in lines if x.startswith("spades-server metrics")]
            web_line = web_line or next((x for x in lines if "web page" in x), None)
            # The first worker's web page line follows its listening line.
            if index == 0 and web_line is None and "--no-web" not in argv:
                web_line = _read_web_line(supervisor.procs[0])
    except RuntimeError as exc:
        supervisor.stop()
        if isinstance(exc, WorkerFailed) and exc.code > 0:
            # It said why in one line (as `serve` does): its exit code is the supervisor's.
            return exc.code
        tell(f"error: {exc}", 1, log_format)
        return 1
    print(
        f"spades-server listening with {workers} workers; join with: spades join {shown}:{bound}",
        flush=True,
    )
    if web_line is not None:
        print(web_line, flush=True)
    for line in metrics_lines:  # each worker's own, in order
        print(line.replace("spades-server metrics", "spades-server worker metrics", 1), flush=True)
    for proc in supervisor.procs:
        if proc is not None and proc.stdout is not None:
            proc.stdout.close()  # the workers print nothing more that we read
    while not stop_now:
        time.sleep(0.2)
        for index, proc in enumerate(supervisor.procs):
            if proc is not None and proc.poll() is not None and not stop_now:
                log.warning("worker_died", worker=index, code=proc.returncode)
                time.sleep(RESTART_DELAY)
                try:
                    new = supervisor.start(index)
                    supervisor.wait_ready(new)
                    if new.stdout is not None:
                        new.stdout.close()
                except (RuntimeError, OSError) as exc:
                    log.error("worker_not_restarted", worker=index, error=str(exc))
    supervisor.stop()
    return 0


def _read_web_line(proc: subprocess.Popen[bytes] | None) -> str | None:
    if proc is None or proc.stdout is None:
        return None
    line = proc.stdout.readline().decode(errors="replace").rstrip("\n")
    return line if "web page" in line else None
