"""docs/deploy/: the systemd unit is valid (`systemd-analyze verify`, where it exists), restarts
after what a restart mends and not after what it cannot (server/failures.py), keeps the password
off the command line, and starts `serve` with flags `serve` has."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from server.cli import app
from server.failures import ExitCode

DEPLOY = Path(__file__).resolve().parents[2] / "docs" / "deploy"
UNIT = DEPLOY / "spades-server.service"
ENV = DEPLOY / "spades-server.env"
PROGRAM = "/opt/spades/.venv/bin/spades-server"  # where docs/deploy/README.md installs it


def directives(text: str) -> dict[str, list[str]]:
    """`Section.Key` -> every value given (systemd allows a key more than once)."""
    found: dict[str, list[str]] = {}
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
            continue
        key, _, value = line.partition("=")
        found.setdefault(f"{section}.{key.strip()}", []).append(value.strip())
    return found


UNIT_DIRECTIVES = directives(UNIT.read_text(encoding="utf-8"))


def one(key: str) -> str:
    (value,) = UNIT_DIRECTIVES[key]
    return value


def test_systemd_analyze_verify_accepts_the_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed here (Debian: apt-get install systemd)")
    # verify also checks that the program exists: the one this test runs from stands in for the
    # installed one, and nothing else of the unit is changed.
    here = Path(sys.executable).parent / "spades-server"
    if not here.exists():
        pytest.skip(f"no spades-server beside {sys.executable} (make .venv/.installed)")
    text = UNIT.read_text(encoding="utf-8")
    assert text.count(PROGRAM) == 1
    unit = tmp_path / UNIT.name
    unit.write_text(text.replace(PROGRAM, str(here)), encoding="utf-8")
    verified = subprocess.run(
        [analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60, check=False
    )
    assert verified.returncode == 0, verified.stderr
    assert UNIT.name not in verified.stdout + verified.stderr  # not a warning about it either


def test_the_restart_policy_follows_the_exit_codes() -> None:
    assert one("Service.Restart") == "on-failure"
    never = {ExitCode(int(code)) for code in one("Service.RestartPreventExitStatus").split()}
    # A restart cannot mend a wrong flag, an address that is not ours or taken, a database another
    # server holds, or a certificate that does not load.
    assert never == {
        ExitCode.USAGE,
        ExitCode.CANNOT_LISTEN,
        ExitCode.DATABASE_IN_USE,
        ExitCode.TLS,
    }
    # Restarted: a crash (1), and a database not usable yet (4: PostgreSQL at boot or restarting),
    # bounded by the start limit. 7 is `db copy`'s, 8 and 9 `admin`'s: serve never exits with them.
    # A new exit code must be placed here and in the unit (docs/deploy/README.md says why each is
    # where it is).
    restarted = {ExitCode.ERROR, ExitCode.DATABASE}
    not_serves = {ExitCode.TARGET_NOT_EMPTY, ExitCode.UNREACHABLE, ExitCode.REFUSED}
    assert set(ExitCode) == {ExitCode.OK} | not_serves | never | restarted
    assert int(one("Unit.StartLimitBurst")) >= 2
    assert one("Service.KillMode") == "mixed"  # SIGTERM to the supervisor, which stops workers


def test_the_password_is_never_on_the_command_line() -> None:
    command = one("Service.ExecStart")
    assert not re.search(r"postgres(ql)?://[^@/\s]*:[^@/\s]*@", command), command
    assert one("Service.EnvironmentFile").lstrip("-") == "/etc/spades/spades-server.env"
    env = directives(ENV.read_text(encoding="utf-8"))
    assert ".PGPASSWORD" in env  # libpq reads it; the example file says where it goes


def test_the_unit_starts_serve_with_flags_serve_has() -> None:
    program, command, *args = shlex.split(one("Service.ExecStart"))
    assert program == PROGRAM and command == "serve"
    flags = [arg for arg in args if arg.startswith("--")]
    assert {"--db", "--log-format"} <= set(flags)
    shown = CliRunner().invoke(app, ["serve", "--help"], terminal_width=200)
    assert shown.exit_code == 0
    for flag in flags:
        assert flag in shown.stdout, f"serve has no {flag}"


def test_the_unit_is_hardened() -> None:
    expected = {
        "Service.NoNewPrivileges": "yes",
        "Service.ProtectSystem": "strict",
        "Service.ProtectHome": "yes",
        "Service.PrivateTmp": "yes",
        "Service.DynamicUser": "yes",
        "Service.StateDirectory": "spades",
        "Service.LimitNOFILE": "65536",
        "Service.CapabilityBoundingSet": "",
    }
    for key, value in expected.items():
        assert UNIT_DIRECTIVES.get(key) == [value], key
