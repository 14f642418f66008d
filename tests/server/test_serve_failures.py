"""An operator's mistakes with `spades-server serve`: one line on stderr and a documented exit code,
never a traceback. The real command, in a subprocess, on 127.0.0.1."""

from __future__ import annotations

import socket
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from server.failures import ExitCode


def serve(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.cli", "serve", "--no-ladder", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def one_line_error(result: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


def test_a_busy_port_is_one_line_and_exit_code_3(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = serve("--host", "127.0.0.1", "--port", str(port), "--db", str(tmp_path / "a.db"))
    assert result.returncode == ExitCode.CANNOT_LISTEN
    assert "already in use" in one_line_error(result)


def test_a_host_that_is_no_address_is_one_line_and_exit_code_3(tmp_path: Path) -> None:
    result = serve("--host", "999.1.1.1", "--port", "0", "--db", str(tmp_path / "a.db"))
    assert result.returncode == ExitCode.CANNOT_LISTEN
    assert "999.1.1.1" in one_line_error(result)


def test_missing_tls_files_are_one_line_and_exit_code_6(tmp_path: Path) -> None:
    result = serve(
        "--port",
        "0",
        "--db",
        str(tmp_path / "a.db"),
        "--tls-cert",
        str(tmp_path / "nope.pem"),
        "--tls-key",
        str(tmp_path / "nope.key"),
    )
    assert result.returncode == ExitCode.TLS
    assert "nope.pem" in one_line_error(result)


@pytest.mark.parametrize("kind", ["not_a_database", "newer"])
def test_a_database_that_is_not_ours_is_one_line_and_exit_code_4(tmp_path: Path, kind: str) -> None:
    db = tmp_path / "other.db"
    if kind == "not_a_database":
        db.write_bytes(b"this is a text file, not SQLite" * 100)
    else:
        conn = sqlite3.connect(db)
        conn.execute("PRAGMA user_version = 999")
        conn.close()
    result = serve("--host", "127.0.0.1", "--port", "0", "--db", str(db))
    assert result.returncode == ExitCode.DATABASE
    assert str(db) in one_line_error(result) or "newer" in one_line_error(result)
