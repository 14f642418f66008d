"""The `--workers` supervisor as an operator meets it (issue 38 item 4): one supervisor per
database, the second refused with exit 5 naming the first (its pid, address and port), and the
database password never on a command line (`ps` shows every process's argv): the workers get the
URL by their environment, and the supervisor may read it from `--db-file`. Real processes on
127.0.0.1 over a throwaway PostgreSQL (which trusts local connections, so any password works).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import trio

from server.failures import ExitCode
from tests.server.cluster.test_workers import stop

CLI = [sys.executable, "-m", "server.cli"]
SERVE = [*CLI, "serve", "--host", "127.0.0.1", "--port", "0", "--no-web", "--no-ladder"]
PASSWORD = "pw-never-in-argv-81f3"


async def start_supervisor(*flags: str) -> tuple[trio.Process, int]:
    """A `--workers 2` supervisor, once it has printed its address; and its port."""
    process = await trio.lowlevel.open_process(
        [*SERVE, "--workers", "2", *flags], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert process.stdout is not None
    line = b""
    while not line.endswith(b"\n"):  # bounded by the caller's fail_after
        chunk = await process.stdout.receive_some(1)
        assert chunk, "the supervisor exited before printing its address"
        line += chunk
    assert b"with 2 workers" in line, line
    return process, int(line.decode().strip().rsplit(":", 1)[1])


def with_password(url: str) -> str:
    """The URL with a password in it (postgresql://user@host -> postgresql://user:PW@host)."""
    scheme, rest = url.split("://", 1)
    user, host = rest.split("@", 1)
    return f"{scheme}://{user}:{PASSWORD}@{host}"


def children_of(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces, so split after its ')'.
        if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
            found.append(int(entry.name))
    return found


def argv_of(pid: int) -> str:
    return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()


async def test_a_second_supervisor_on_the_database_is_refused_naming_the_first(
    pg_url: str, tmp_path: Path
) -> None:
    errors = tmp_path / "second.err"
    with trio.fail_after(100):
        first, port = await start_supervisor("--db", pg_url)
        try:
            with errors.open("wb") as err:
                second = await trio.lowlevel.open_process(
                    [*SERVE, "--workers", "2", "--db", pg_url],
                    stdout=subprocess.DEVNULL,
                    stderr=err,
                )
            with trio.move_on_after(40):
                await second.wait()
            if second.returncode is None:  # it joined: the failure this test is about
                await stop(second)
                raise AssertionError("a second supervisor started on the same database")
            assert second.returncode == ExitCode.DATABASE_IN_USE, errors.read_text()
            lines = errors.read_text().strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("error: database "), lines
            assert f"pid {first.pid}" in lines[0] and f"127.0.0.1:{port}" in lines[0], lines
            assert first.returncode is None  # the first serves on, undisturbed
            # Only the first supervisor's two workers run.
            assert len(children_of(first.pid)) == 2
        finally:
            await stop(first)


async def test_the_password_is_never_on_a_command_line(pg_url: str, tmp_path: Path) -> None:
    url_file = tmp_path / "db-url"
    url_file.write_text(with_password(pg_url) + "\n")
    url_file.chmod(0o600)
    with trio.fail_after(100):
        supervisor, _port = await start_supervisor("--db-file", str(url_file))
        try:
            workers = children_of(supervisor.pid)
            assert len(workers) == 2
            for pid in [supervisor.pid, *workers]:
                assert PASSWORD not in argv_of(pid), argv_of(pid)
            assert all("--db" not in argv_of(pid).split() for pid in workers)
        finally:
            await stop(supervisor)
        # `--db` with the password works as before, but the workers still never carry it.
        supervisor, _port = await start_supervisor("--db", with_password(pg_url))
        try:
            workers = children_of(supervisor.pid)
            assert len(workers) == 2
            for pid in workers:
                assert PASSWORD not in argv_of(pid), argv_of(pid)
        finally:
            await stop(supervisor)


def test_a_db_file_that_cannot_be_read_is_one_line_and_exit_2(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    done = subprocess.run(
        [*SERVE, "--db-file", str(missing)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == ExitCode.USAGE, done.stderr
    (line,) = done.stderr.strip().splitlines()
    assert line.startswith("error: cannot read --db-file") and str(missing) in line, line
    both = subprocess.run(
        [*SERVE, "--db-file", str(missing), "--db", "x.db"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ},
    )
    assert both.returncode == ExitCode.USAGE
    assert "--db or --db-file" in both.stderr


async def test_cluster_supervisors_share_the_database_and_a_lone_one_is_refused(
    pg_url: str, tmp_path: Path
) -> None:
    # Machines of a cluster each run `serve --cluster --workers N` (docs/operations.md, Several
    # machines): their supervisors share the database; a plain `--workers` beside them is refused.
    with trio.fail_after(100):
        first, port = await start_supervisor("--cluster", "--db", pg_url)
        try:
            second, _ = await start_supervisor("--cluster", "--db", pg_url)
            assert second.returncode is None
            await stop(second)
            lone = await trio.run_process(
                [*SERVE, "--workers", "2", "--db", pg_url],
                capture_stdout=True,
                capture_stderr=True,
                check=False,
            )
            assert lone.returncode == ExitCode.DATABASE_IN_USE, lone.stderr
            (line,) = lone.stderr.decode().strip().splitlines()
            assert f"pid {first.pid}" in line and f"127.0.0.1:{port}" in line, line
        finally:
            await stop(first)
