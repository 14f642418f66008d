"""`spades-server db`: move a server's data between SQLite and PostgreSQL (`db copy`), and print
what a copy checks (`db digest`). The work is `server.storage.dbcopy`'s; this is its command line:
one line and a documented exit code (`server.failures.ExitCode`) for every mistake."""

from __future__ import annotations

import logging
import re
from typing import Annotated, NoReturn

import typer

from server.failures import ExitCode
from server.storage.target import Target, is_postgres, parse

db_app = typer.Typer(
    help="Move a server's data between SQLite and PostgreSQL, and check it.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

#: A URL of a kind `--db` does not take (`mysql://`, `http://`): not a file name either.
_OTHER_URL = re.compile(r"^[a-z][a-z0-9+.-]*://", re.IGNORECASE)


def _fail(code: ExitCode, line: str) -> NoReturn:
    typer.echo(f"error: {line}", err=True)
    raise typer.Exit(code)


def _database(flag: str, text: str) -> Target:
    if not is_postgres(text) and _OTHER_URL.match(text):
        _fail(
            ExitCode.USAGE,
            f"{flag} {text.split('://', 1)[0]}://... is neither a SQLite file nor a"
            " postgresql:// URL",
        )
    if not text.strip():
        _fail(ExitCode.USAGE, f"{flag} is empty: give a SQLite file or a postgresql:// URL")
    return parse(text)


def _explained(error: Exception) -> NoReturn:
    from server.storage import DatabaseInUse, StorageError
    from server.storage.dbcopy import CopyMismatch, TargetNotEmpty

    if isinstance(error, ValueError):
        _fail(ExitCode.USAGE, str(error))
    if isinstance(error, DatabaseInUse):
        _fail(ExitCode.DATABASE_IN_USE, str(error))
    if isinstance(error, TargetNotEmpty):
        _fail(ExitCode.TARGET_NOT_EMPTY, str(error))
    if isinstance(error, CopyMismatch):
        _fail(ExitCode.ERROR, str(error))
    if isinstance(error, StorageError):
        _fail(ExitCode.DATABASE, str(error))
    raise error


@db_app.command("copy")
def copy_command(
    source: Annotated[
        str,
        typer.Option("--from", help="The database to copy: a SQLite file or a postgresql:// URL."),
    ],
    target: Annotated[
        str,
        typer.Option(
            "--to",
            help="An empty database to copy into: a SQLite file (made if there is none) or a "
            "postgresql:// URL.",
        ),
    ],
) -> None:
    """Copy everything a server keeps into an empty database, in one transaction, and check
    each table's rows and digest. Neither database may be in use by a server."""
    from server.config import configure_logging
    from server.storage import StorageError
    from server.storage.dbcopy import copy_database
    from server.storage.target import shown

    src, dst = _database("--from", source), _database("--to", target)
    # Warnings only, on stderr: stdout is the report, and a refusal stays one line (the
    # target's migrations are the copy's own steps, not news).
    configure_logging(level=logging.WARNING)
    try:
        version, reports = copy_database(src, dst)
    except (ValueError, StorageError) as exc:
        _explained(exc)
    for report in reports:
        typer.echo(report.line())
    rows = sum(report.rows for report in reports)
    typer.echo(
        f"copied {len(reports)} tables, {rows} rows, from {shown(src)} to {shown(dst)}"
        f" (schema version {version}); every table reads back with the same rows and digest",
        err=True,
    )


@db_app.command("digest")
def digest_command(
    db: Annotated[str, typer.Option(help="A SQLite file or a postgresql:// URL.")],
) -> None:
    """Print each table's rows and digest, as `db copy` checks them (the same rows in the same
    order give the same digest on SQLite and PostgreSQL). Not beside a running server."""
    from server.storage import StorageError
    from server.storage.dbcopy import digest_database

    try:
        reports = digest_database(_database("--db", db))
    except (ValueError, StorageError) as exc:
        _explained(exc)
    for report in reports:
        typer.echo(report.line())
