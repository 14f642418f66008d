"""Why `spades-server serve` (or `db copy`) could not run, as one line and a documented exit code.

An operator's mistake (a busy port, a host that does not resolve, a database another server holds,
a certificate that does not load) is told in one sentence on stderr, with an exit code a script can
test (docs/operations.md, "Exit codes"), never as a traceback. Errors raised inside the server's
task groups arrive wrapped in exception groups; `explain` finds the one that matters.
"""

from __future__ import annotations

import errno
import socket
import sys
from dataclasses import dataclass
from enum import IntEnum

import structlog

from server.config import LogFormat
from server.storage import StorageError
from server.storage.errors import DatabaseInUse
from server.tls import TLSConfigError


class ExitCode(IntEnum):
    """What `spades-server` exits with (docs/operations.md, "Exit codes")."""

    OK = 0
    ERROR = 1  # anything else that stopped the server (its log says more)
    USAGE = 2  # a flag or an argument is wrong
    CANNOT_LISTEN = 3  # the address cannot be listened on: in use, not ours, not allowed
    DATABASE = 4  # the database cannot be used: no such folder, not a database, too new
    DATABASE_IN_USE = 5  # another running server holds the database
    TLS = 6  # the certificate or key cannot be loaded
    TARGET_NOT_EMPTY = 7  # `db copy`: the target database already holds rows
    UNREACHABLE = 8  # `admin`: the server cannot be reached, or did not answer in time
    REFUSED = 9  # `admin`: the server refused the request (the operator token, a target)


@dataclass(frozen=True)
class Failure:
    code: ExitCode
    line: str


def tell(line: str, code: int, log_format: LogFormat | str) -> None:
    """Say why `serve` stops, on stderr: `line` for people; under `--log-format json` one JSON
    object (`cannot_serve`, with `error` and `exit_code`), since every line of that log is JSON.
    Logging must be configured (`server.config.configure_logging`) for the JSON form."""
    if LogFormat(log_format) is LogFormat.json:
        structlog.get_logger("server.cli").error(
            "cannot_serve", error=line.removeprefix("error: "), exit_code=int(code)
        )
    else:
        print(line, file=sys.stderr, flush=True)


def leaves(error: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or the error itself."""
    if isinstance(error, BaseExceptionGroup):
        return [leaf for inner in error.exceptions for leaf in leaves(inner)]
    return [error]


def explain(error: BaseException, host: str, port: int) -> Failure | None:
    """The one line for an error that stopped `serve`, or None if it is not an operator's mistake
    (a bug: let it be reported as one)."""
    for leaf in leaves(error):
        found = _explain_one(leaf, host, port)
        if found is not None:
            return found
    return None


def _explain_one(error: BaseException, host: str, port: int) -> Failure | None:
    # The web port's own failure names its port (server/web/: WebPortError.web_port), the
    # metrics port's its whole address (server/web/ops_port.py: OpsPortError.address).
    where = getattr(error, "address", None) or f"{host}:{getattr(error, 'web_port', port)}"
    if isinstance(error, TLSConfigError):
        return Failure(ExitCode.TLS, f"error: {error}")
    if isinstance(error, DatabaseInUse):
        return Failure(ExitCode.DATABASE_IN_USE, f"error: {error}")
    if isinstance(error, StorageError):
        return Failure(ExitCode.DATABASE, f"error: {error}")
    if isinstance(error, socket.gaierror):
        reason = error.strerror or str(error)
        return Failure(
            ExitCode.CANNOT_LISTEN,
            f"error: cannot listen on {where}: the host {host!r} is not an address here ({reason})",
        )
    if isinstance(error, OSError):
        if error.errno == errno.EADDRINUSE:
            why = "the address is already in use (is another server running?)"
        elif error.errno in (errno.EACCES, errno.EPERM):
            why = "permission denied (ports below 1024 need privileges; try --port 7777)"
        elif error.errno == errno.EADDRNOTAVAIL:
            why = f"{host} is not an address of this machine"
        else:
            why = error.strerror or str(error)
        return Failure(ExitCode.CANNOT_LISTEN, f"error: cannot listen on {where}: {why}")
    return None
