"""`spades-server admin`: the operator's commands against a running server (docs/operations.md,
"Administer a running server"), and `admin token`, which makes the operator token they need.

The token is made on the machine that holds the database (`admin token --db`): the database keeps
its SHA-256 digest only, and the token is shown once (or written to a file only its owner may
read). The other commands read it from `--token-file` or `SPADES_OPERATOR_TOKEN`, never from the
command line (where `ps` would show it). Every mistake is one line on stderr and an exit code
(`server.failures.ExitCode`).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn, TypeVar

import trio
import typer

from server.config import DEFAULT_PORT
from server.failures import ExitCode

if TYPE_CHECKING:
    from protocol.messages import Reply, Request
    from server.admin_client import ServerAddress

TOKEN_ENV = "SPADES_OPERATOR_TOKEN"
T = TypeVar("T")

admin_app = typer.Typer(
    help="The operator's hand on a running server: announce, sessions, kick, ban, close.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)


def _fail(code: ExitCode, line: str) -> NoReturn:
    typer.echo(f"error: {line}", err=True)
    raise typer.Exit(code)


@dataclass
class _Target:
    server: str
    token_file: Path | None
    ca: str | None
    timeout: float


@admin_app.callback()
def admin_root(
    ctx: typer.Context,
    server: Annotated[
        str,
        typer.Option(
            help=f"The server: HOST or HOST:PORT (port {DEFAULT_PORT} if left out), "
            "tls://HOST:PORT for a TLS server.",
        ),
    ] = f"127.0.0.1:{DEFAULT_PORT}",
    token_file: Annotated[
        Path | None,
        typer.Option(
            help=f"A file holding the operator token (else ${TOKEN_ENV}); `admin token` makes one."
        ),
    ] = None,
    ca: Annotated[
        str | None,
        typer.Option(help="PEM file of the CA (or self-signed certificate) of a tls:// server."),
    ] = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the server's answer.")] = 10.0,
) -> None:
    """Options every command but `token` uses: where the server is and the operator token."""
    ctx.obj = _Target(server, token_file, ca, timeout)


def _token(target: _Target) -> str:
    if target.token_file is not None:
        try:
            text = target.token_file.read_text(encoding="utf-8").strip()
        except OSError as exc:
            _fail(ExitCode.USAGE, f"cannot read --token-file {target.token_file}: {exc.strerror}")
        if not text:
            _fail(ExitCode.USAGE, f"--token-file {target.token_file} is empty")
        return text
    text = os.environ.get(TOKEN_ENV, "").strip()
    if not text:
        _fail(
            ExitCode.USAGE,
            f"no operator token: give --token-file FILE or set {TOKEN_ENV}"
            " (spades-server admin token --db DB makes one)",
        )
    return text


def _address(target: _Target) -> ServerAddress:
    from server.admin_client import ServerAddress

    try:
        address = ServerAddress.parse(target.server, DEFAULT_PORT)
    except ValueError as exc:
        _fail(ExitCode.USAGE, f"--server {exc}")
    if target.ca is not None and not address.tls:
        _fail(ExitCode.USAGE, "--ca is for a TLS server: write --server tls://HOST:PORT")
    return address


def _run(target: _Target, address: ServerAddress, work: Callable[[], Awaitable[T]]) -> T:
    """Run `work` within the timeout; one line and an exit code for what goes wrong."""
    from server.admin_client import AdminError, Refused, Unreachable, within

    try:
        return trio.run(within, target.timeout, work, address)
    except Unreachable as exc:
        _fail(ExitCode.UNREACHABLE, str(exc))
    except Refused as exc:
        if exc.code == "bad_token":
            _fail(ExitCode.REFUSED, f"the server refused the operator token ({exc})")
        _fail(ExitCode.REFUSED, f"refused: {exc}")
    except AdminError as exc:
        _fail(ExitCode.USAGE, str(exc))


def _ask(ctx: typer.Context, request: Request) -> Reply:
    """Send `request` as the operator; its reply, or one line and an exit code."""
    from server.admin_client import operate

    target: _Target = ctx.obj
    address = _address(target)
    token = _token(target)
    return _run(target, address, lambda: operate(address, token, request, ca=target.ca))


def _pages(
    ctx: typer.Context, page: Callable[[int], Request], count: Callable[[Reply], tuple[int, int]]
) -> list[Reply]:
    """Every page of a listing, on one connection."""
    from server.admin_client import every_page

    target: _Target = ctx.obj
    address = _address(target)
    token = _token(target)
    return _run(target, address, lambda: every_page(address, token, page, count, ca=target.ca))


def _note(reply: Reply) -> None:
    from protocol.messages import Ok

    assert isinstance(reply, Ok)
    typer.echo(reply.note or "done")


@admin_app.command("token")
def token_command(
    db: Annotated[
        str | None, typer.Option(help="SQLite database file, or a PostgreSQL URL.")
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Write the token to this new file (readable by its owner only) instead of "
            "printing it."
        ),
    ] = None,
) -> None:
    """Make an operator token for the server of this database. Run it on the machine that holds
    the database: the database keeps the token's digest only; the token is shown this once."""
    from server.config import default_db_path
    from server.operator import new_token
    from server.storage import StorageError, write_transaction
    from server.storage.target import Target, is_postgres

    # As `serve --db` reads it: a PostgreSQL URL, a SQLite file, or the default file.
    target: Target = default_db_path() if db is None else db if is_postgres(db) else Path(db)
    if out is not None and out.exists():
        _fail(ExitCode.USAGE, f"--out {out} exists: give a new file (a token is never overwritten)")
    token, digest = new_token()
    if out is not None:
        try:
            # Made readable by its owner alone from the first byte (no window where it is not).
            fd = os.open(out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except OSError as exc:
            _fail(ExitCode.USAGE, f"cannot create --out {out}: {exc.strerror}")
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write(token + "\n")
    try:
        with write_transaction(target) as tx:
            tx.add_operator_token(digest)
    except StorageError as exc:
        if out is not None:
            out.unlink(missing_ok=True)
        _fail(ExitCode.DATABASE, str(exc))
    if out is None:
        typer.echo(token)
        typer.echo(
            "the operator token, shown this once: keep it (e.g. in a file only you read)", err=True
        )
    else:
        typer.echo(f"operator token written to {out} (mode 600)", err=True)


@admin_app.command("announce")
def announce_command(
    ctx: typer.Context, text: Annotated[str, typer.Argument(help="What to tell everyone.")]
) -> None:
    """Tell every connection of the server TEXT (an `announcement` each client shows)."""
    from protocol.messages import Announce

    _check_length("TEXT", text, 500)
    _note(_ask(ctx, Announce(text=text)))


@admin_app.command("sessions")
def sessions_command(ctx: typer.Context) -> None:
    """List the server's connections: session, account, address, transport, tables."""
    from protocol.messages import ListSessions, Sessions

    def count(reply: Reply) -> tuple[int, int]:
        assert isinstance(reply, Sessions)
        return len(reply.sessions), reply.total

    pages = _pages(ctx, lambda offset: ListSessions(offset=offset), count)
    listed = [s for page in pages if isinstance(page, Sessions) for s in page.sessions]
    # In a cluster each line says which server holds the connection.
    clustered = any(s.server is not None for s in listed)
    head = ["SESSION", "ACCOUNT", "ADDRESS", "TRANSPORT", *(["SERVER"] if clustered else [])]
    rows = [[*head, "TABLES"]]
    for s in listed:
        tables = [*s.tables, *(f"({t})" for t in s.watching)]
        account = s.account or "-"
        if s.operator:
            account = f"{s.account} (operator)" if s.account else "(operator)"
        server = [s.server or "-"] if clustered else []
        rows.append([s.session, account, s.address, s.transport, *server, " ".join(tables) or "-"])
    widths = [max(len(row[i]) for row in rows) for i in range(len(head))]
    for row in rows:
        padded = [cell.ljust(width) for cell, width in zip(row[:-1], widths, strict=True)]
        typer.echo("  ".join([*padded, row[-1]]))
    plural = "" if len(listed) == 1 else "s"
    typer.echo(f"{len(listed)} connection{plural}; (t1): watching", err=True)


@admin_app.command("kick")
def kick_command(
    ctx: typer.Context,
    target: Annotated[str, typer.Argument(help="A session id (admin sessions) or an account.")],
    reason: Annotated[str | None, typer.Option(help="Why, for the player.")] = None,
) -> None:
    """Close a connection, or every connection of an account (its seats are held for it)."""
    from protocol.messages import Kick

    _check_length("TARGET", target, 64)
    _check_length("--reason", reason, 200)
    _note(_ask(ctx, Kick(target=target, reason=reason)))


class BanKind(StrEnum):
    account = "account"
    address = "address"


def _ban_target(kind: BanKind, target: str) -> tuple[str | None, str | None]:
    """(account, address): the one `kind` names, checked."""
    if kind is BanKind.address:
        from server.bans import network

        try:
            return None, network(target)
        except ValueError as exc:
            _fail(ExitCode.USAGE, str(exc))
    _check_length("NAME", target, 32)
    return target, None


@admin_app.command("ban")
def ban_command(
    ctx: typer.Context,
    kind: Annotated[BanKind, typer.Argument(help="account or address")],
    target: Annotated[str, typer.Argument(help="The account's name, or an IP address or CIDR.")],
    reason: Annotated[str | None, typer.Option(help="Why, told to the banned.")] = None,
) -> None:
    """Ban an account or an address (or network): its connections are closed, and it is refused
    `banned` from then on, on every server of the database, after restarts too."""
    from protocol.messages import Ban

    _check_length("--reason", reason, 200)
    account, address = _ban_target(kind, target)
    _note(_ask(ctx, Ban(account=account, address=address, reason=reason)))


@admin_app.command("unban")
def unban_command(
    ctx: typer.Context,
    kind: Annotated[BanKind, typer.Argument(help="account or address")],
    target: Annotated[str, typer.Argument(help="The account's name, or the address as banned.")],
) -> None:
    """Lift a ban."""
    from protocol.messages import Unban

    account, address = _ban_target(kind, target)
    _note(_ask(ctx, Unban(account=account, address=address)))


@admin_app.command("bans")
def bans_command(ctx: typer.Context) -> None:
    """List the bans in force."""
    from protocol.messages import Bans, ListBans

    def count(reply: Reply) -> tuple[int, int]:
        assert isinstance(reply, Bans)
        return len(reply.bans), reply.total

    pages = _pages(ctx, lambda offset: ListBans(offset=offset), count)
    listed = [ban for page in pages if isinstance(page, Bans) for ban in page.bans]
    for ban in listed:
        what = f"account {ban.account}" if ban.account is not None else f"address {ban.address}"
        typer.echo(what + (f"  ({ban.reason})" if ban.reason else ""))
    typer.echo(f"{len(listed)} bans", err=True)


@admin_app.command("close")
def close_command(
    ctx: typer.Context,
    table: Annotated[str, typer.Argument(help="The table's id.")],
    reason: Annotated[str | None, typer.Option(help="Why, for its players.")] = None,
) -> None:
    """Close a table now: a game in play ends unfinished (aborted); its players are told why."""
    from protocol.messages import CloseTable

    _check_length("--reason", reason, 200)
    _note(_ask(ctx, CloseTable(table=table, reason=reason)))


def _check_length(what: str, text: str | None, most: int) -> None:
    if text is not None and not 1 <= len(text) <= most:
        _fail(ExitCode.USAGE, f"{what} is 1 to {most} characters")
