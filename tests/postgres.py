"""A throwaway PostgreSQL cluster for tests and benchmarks: initdb and pg_ctl into a temporary
folder (in memory, /dev/shm, where there is one), listening on a free port of 127.0.0.1 only,
removed when it stops.

`Cluster.start()` finds the server's programs (`SPADES_PG_BIN`, then `initdb` on the PATH, then the
newest `/usr/lib/postgresql/*/bin`, where Debian's `postgresql` package puts them). PostgreSQL
refuses to run as root, and CI runs as root: then the cluster runs as the `postgres` user the
package made (`runuser`), in a folder handed to it. `unavailable()` says why a cluster cannot be had
here (no programs; root without a `postgres` user), or None.

The cluster trusts local connections (it listens on 127.0.0.1 alone, for the length of a test run)
and runs with `fsync=off`: a test never survives a power cut, and every `CREATE DATABASE` is then
cheap. `url(db)` is what `--db` is given.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

SUPERUSER = "spades"
RUN_AS = "postgres"  # when we are root: the user Debian's postgresql package makes


def bin_dir() -> Path | None:
    """The folder of `initdb`, `pg_ctl` and `postgres`, or None if this machine has none."""
    named = os.environ.get("SPADES_PG_BIN")
    if named:
        return Path(named) if (Path(named) / "initdb").exists() else None
    on_path = shutil.which("initdb")
    if on_path is not None:
        return Path(on_path).resolve().parent
    versions = sorted(
        Path("/usr/lib/postgresql").glob("*/bin/initdb"),
        key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0,
    )
    return versions[-1].parent if versions else None


def _is_root() -> bool:
    return os.geteuid() == 0


def unavailable() -> str | None:
    """Why no cluster can be started here, or None when one can."""
    if bin_dir() is None:
        return (
            "PostgreSQL's server programs are not installed (apt-get install postgresql; "
            "or set SPADES_PG_BIN to the folder of initdb)"
        )
    if _is_root():
        try:
            pwd.getpwnam(RUN_AS)
        except KeyError:
            return f"running as root and there is no {RUN_AS!r} user to run PostgreSQL as"
        if shutil.which("runuser") is None:
            return "running as root and runuser is missing"
    return None


def _memory_folder() -> str | None:
    """Where the cluster's files go: /dev/shm (memory) where there is one, else the temp folder.
    A run makes a database per test, some 300 files each; on a disk that other processes keep
    busy, writing them and removing them all at the end took over a minute."""
    shm = "/dev/shm"
    return shm if os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK) else None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@dataclass
class Cluster:
    """One running throwaway cluster (use `started()`)."""

    folder: Path
    port: int
    bin: Path
    _as_user: list[str] = field(default_factory=list)
    _databases: int = 0
    _options: str = ""

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def fresh_database(self) -> str:
        """A new, empty database of this cluster; returns its URL."""
        import psycopg

        self._databases += 1
        name = f"test_{self._databases}"
        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*self._as_user, *args], capture_output=True, text=True, check=False, timeout=120
        )

    def _checked(self, *args: str) -> None:
        done = self._run(*args)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed: {done.stdout}{done.stderr}")

    @classmethod
    def start(cls) -> Cluster:
        reason = unavailable()
        if reason is not None:
            raise RuntimeError(reason)
        programs = bin_dir()
        assert programs is not None
        folder = Path(tempfile.mkdtemp(prefix="spades-pg-", dir=_memory_folder()))
        as_user: list[str] = []
        if _is_root():
            as_user = ["runuser", "-u", RUN_AS, "--"]
            user = pwd.getpwnam(RUN_AS)
            os.chown(folder, user.pw_uid, user.pw_gid)
        cluster = cls(folder, free_port(), programs, as_user)
        data = folder / "data"
        try:
            cluster._checked(
                str(programs / "initdb"),
                "-D",
                str(data),
                "-U",
                SUPERUSER,
                "--auth=trust",
                "--no-sync",
                "--encoding=UTF8",
                "--locale=C",
            )
            options = (
                f"-c listen_addresses=127.0.0.1 -c port={cluster.port}"
                f" -c unix_socket_directories={folder} -c fsync=off"
                " -c full_page_writes=off -c max_connections=200"
                # Its shared memory segments in its own folder, so an immediate stop leaves none.
                " -c dynamic_shared_memory_type=mmap"
            )
            cluster._options = options
            cluster.start_server()
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)
            raise
        return cluster

    def start_server(self) -> None:
        """Start PostgreSQL (again, after `stop_server`: same folder, same port, same data)."""
        self._checked(
            str(self.bin / "pg_ctl"),
            "-D",
            str(self.folder / "data"),
            "-o",
            self._options,
            "-l",
            str(self.folder / "log"),
            "-w",
            "-t",
            "60",
            "start",
        )

    def stop_server(self, mode: str = "fast") -> None:
        """Stop PostgreSQL but keep its data, as an operator's restart does (`fast`: every
        connection is ended and open transactions rolled back; `immediate`: as a crash)."""
        self._checked(
            str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-m", mode, "-w", "stop"
        )

    def stop(self) -> None:
        try:
            self._run(
                str(self.bin / "pg_ctl"), "-D", str(self.folder / "data"), "-m", "immediate", "stop"
            )
        finally:
            shutil.rmtree(self.folder, ignore_errors=True)

    def postmaster_pid(self) -> int | None:
        """The pid of the cluster's postmaster (its backends are its children), or None."""
        try:
            return int((self.folder / "data" / "postmaster.pid").read_text().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def log_tail(self, lines: int = 40) -> str:
        try:
            text = (self.folder / "log").read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])


@contextmanager
def started() -> Iterator[Cluster]:
    cluster = Cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop()
