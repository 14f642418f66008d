"""The operator's start-up (issue 38 item 4): a busy port is told before anything is created, and
under `--log-format json` every line on stderr is JSON, a refusal and a crash included. The real
command, in a subprocess, on 127.0.0.1 (and a throwaway PostgreSQL where the database is the point).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest

from server.failures import ExitCode

CLI = [sys.executable, "-m", "server.cli"]

# `serve` with a bug planted in it (the server's task raises at once), run as the real command.
CRASHING = """
import sys
import server.app

async def broken(*args, **kwargs):
    raise RuntimeError("a planted bug")

server.app.serve = broken
from server.cli import app
app(sys.argv[1:], prog_name="spades-server")
"""


@contextmanager
def busy_port() -> Iterator[int]:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        yield taken.getsockname()[1]


def serve(*args: str, program: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*(program or CLI), "serve", "--no-ladder", "--host", "127.0.0.1", *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def json_lines(stderr: str) -> list[dict[str, Any]]:
    """Every line of stderr as a JSON object (fails on the first that is not one)."""
    records = []
    for line in stderr.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            raise AssertionError(f"not a JSON line: {line!r}\n{stderr}") from None
        assert isinstance(record, dict), line
        records.append(record)
    return records


def test_a_busy_port_is_told_before_the_database_is_made(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    with busy_port() as port:
        result = serve("--port", str(port), "--no-web", "--db", str(folder / "s.db"))
    assert result.returncode == ExitCode.CANNOT_LISTEN, result.stderr
    # One line: no migrations logged before it, and nothing on disk (no database, no lock file).
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: cannot listen on 127.0.0.1:"), lines
    assert "already in use" in lines[0]
    assert list(folder.iterdir()) == []


def test_a_busy_web_port_is_told_before_the_database_is_made(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    with busy_port() as web_port:
        result = serve("--port", "0", "--web-port", str(web_port), "--db", str(folder / "s.db"))
    assert result.returncode == ExitCode.CANNOT_LISTEN, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"127.0.0.1:{web_port}" in lines[0], lines
    assert list(folder.iterdir()) == []


@pytest.mark.parametrize("flags", [[], ["--cluster"]], ids=["lone", "cluster"])
def test_a_busy_port_leaves_a_postgresql_database_untouched(pg_url: str, flags: list[str]) -> None:
    with busy_port() as port:
        result = serve("--port", str(port), "--no-web", "--db", pg_url, *flags)
    assert result.returncode == ExitCode.CANNOT_LISTEN, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "already in use" in lines[0], lines
    with psycopg.connect(pg_url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE schemaname NOT IN ('pg_catalog',"
            " 'information_schema')"
        ).fetchone()
    assert row == (0,), "the database was migrated before the port was tried"


def test_under_json_a_refusal_is_one_json_line(tmp_path: Path) -> None:
    with busy_port() as port:
        result = serve(
            "--port", str(port), "--no-web", "--db", str(tmp_path / "s.db"), "--log-format", "json"
        )
    assert result.returncode == ExitCode.CANNOT_LISTEN
    (record,) = json_lines(result.stderr)
    assert record["level"] == "error" and record["exit_code"] == ExitCode.CANNOT_LISTEN, record
    assert "already in use" in record["error"], record
    # A usage mistake too: a value out of range, an option that does not exist, a value that is
    # no number (the last two found by the command-line parser, before `serve` runs).
    usage = serve("--port", "99999", "--log-format", "json")
    assert usage.returncode == ExitCode.USAGE
    (record,) = json_lines(usage.stderr)
    assert "99999" in record["error"], record
    for wrong in (["--bogus"], ["--port", "many"]):
        usage = serve(*wrong, "--log-format=json")
        assert usage.returncode == ExitCode.USAGE, usage.stderr
        (record,) = json_lines(usage.stderr)
        assert record["exit_code"] == ExitCode.USAGE and wrong[0] in record["error"], record


def test_under_json_a_crash_is_json_lines_with_its_traceback(tmp_path: Path) -> None:
    db = str(tmp_path / "s.db")
    args = ("--port", "0", "--no-web", "--db", db)
    crashed = serve(*args, "--log-format", "json", program=[sys.executable, "-c", CRASHING])
    assert crashed.returncode == ExitCode.ERROR, crashed.stderr
    records = json_lines(crashed.stderr)
    (crash,) = [r for r in records if r.get("event") == "crashed"]
    assert crash["level"] == "critical", crash
    assert "Traceback" in crash["exception"] and "RuntimeError: a planted bug" in crash["exception"]
    # For people (the default), the traceback as Python prints it: a bug reported as one.
    console = serve(*args, program=[sys.executable, "-c", CRASHING])
    assert console.returncode == ExitCode.ERROR
    assert "Traceback" in console.stderr and "RuntimeError: a planted bug" in console.stderr
