"""The `spades` command line.

Every command that fails prints one line, `error: ...`, on stderr and exits non-zero (1 for a failure,
2 for a usage mistake); no traceback reaches the user. The server address and the account token are
kept in the user's config dir (client/config.py).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any, TypeVar

import trio
import typer
from rich.console import Console

from client import codes, lobby
from client.config import ClientConfig, ConfigError, Credentials, ServerAddress
from client.connection import ConnectionLost, ServerError, lone_errors
from client.journal import JournalError, find_game, list_games, read_records
from client.session import Mode, Seating, SessionError, UnfinishedGame
from engine.errors import EngineError
from engine.review import DEFAULT_BUDGET as DEFAULT_REVIEW_BUDGET
from engine.version import project_version
from protocol import messages as m
from protocol.event_messages import EventEntry, EventFormat, EventStatus
from protocol.schema import to_map
from protocol.types import BotKind

app = typer.Typer(
    name="spades",
    help="Play Spades and Hearts from your terminal.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

T = TypeVar("T")


@app.callback()
def root() -> None:
    """Keeps the app a group of subcommands even while it has few."""


@app.command()
def version() -> None:
    """Print the version and exit."""
    typer.echo(f"spades {project_version()}")


# ---------------------------------------------------------------- running things, failing cleanly


def fail(message: str, code: int = 1) -> typer.Exit:
    typer.echo(f"error: {message}", err=True)
    return typer.Exit(code)


def run(main: Callable[[], Awaitable[T]], interrupted: str | None = None) -> T:
    """Run a coroutine under trio, turning every expected failure into one line and exit 1.
    `interrupted`: what to say on Ctrl-C instead of failing (exit 0: nothing went wrong)."""
    try:
        with lone_errors():
            return trio.run(main)
    except UnfinishedGame:
        raise  # `spades play` asks what to do (a question on a terminal)
    except (ConnectionLost, SessionError, ConfigError, JournalError) as exc:
        raise fail(str(exc)) from None
    except ServerError as exc:
        raise fail(f"{exc.message} ({exc.code})") from None
    except EngineError as exc:
        raise fail(exc.message) from None
    except KeyboardInterrupt:
        if interrupted is not None:
            typer.echo(interrupted)
            raise typer.Exit(0) from None
        raise fail("interrupted", 130) from None


def server_address(config: ClientConfig) -> ServerAddress:
    try:
        address = config.current_server()
    except ConfigError as exc:
        raise fail(str(exc)) from None
    if address is None:
        raise fail(
            "no server chosen: run `spades connect HOST[:PORT]` (or `spades play` for a local game)"
        )
    return address


def ladder_server(config: ClientConfig) -> ServerAddress:
    """The server for the ladder's read-only commands: the one `spades connect` chose; else, for a
    bot author who has only run `spades-bot register`, the one server its bots were kept for
    (said on stderr, so `--json` output stays clean)."""
    try:
        chosen = config.current_server()
        kept = [] if chosen is not None else config.bot_servers()
    except ConfigError as exc:
        raise fail(str(exc)) from None
    if chosen is not None:
        return chosen
    if len(kept) == 1:
        typer.echo(
            f"(the ladder of {kept[0]}, where `spades-bot register` kept your bots;"
            " `spades connect` chooses another)",
            err=True,
        )
        return ServerAddress.parse(kept[0])
    if kept:
        raise fail(
            "no server chosen, and bots are kept for several ("
            + ", ".join(kept)
            + "): `spades connect HOST[:PORT]` chooses one"
        )
    return server_address(config)


def token_for(config: ClientConfig, address: ServerAddress) -> str | None:
    credentials = config.credentials(address.key)
    return credentials.token if credentials else None


# ---------------------------------------------------------------- servers and accounts


@app.command()
def connect(
    server: Annotated[
        str,
        typer.Argument(
            help="HOST or HOST:PORT (port 7777 if left out); tls://HOST:PORT for a TLS server."
        ),
    ],
    ca: Annotated[
        Path | None,
        typer.Option(
            help="PEM file of the CA (or self-signed certificate) a tls:// server's certificate "
            "must chain to; default: the system's CAs."
        ),
    ] = None,
) -> None:
    """Check a server answers, and remember it for the other commands."""
    config = ClientConfig()
    try:
        address = ServerAddress.parse(server)
    except ConfigError as exc:
        raise fail(str(exc), 2) from None
    if ca is not None:
        if not address.tls:
            raise fail("--ca is for a TLS server: write the address as tls://HOST:PORT", 2)
        if not ca.is_file():
            raise fail(f"no CA file at {ca}", 2)
        address = dataclasses.replace(address, ca=str(ca.resolve()))
    welcome = run(lambda: lobby.check_server(address, token_for(config, address)))
    config.set_current_server(address)
    who = f", logged in as {welcome.user}" if welcome.user else ""
    guests = "guests welcome" if welcome.guests else "accounts only"
    typer.echo(
        f"connected to {welcome.server} ({welcome.server_version}) at {address.text}{who}; {guests}"
    )


@app.command()
def register(
    name: Annotated[str, typer.Argument(help="The account name: 2-24 letters, digits, _ . -")],
) -> None:
    """Create an account on the current server and keep its token."""
    config = ClientConfig()
    address = server_address(config)
    credentials = run(lambda: lobby.register(address, name))
    config.save_credentials(address.key, credentials)
    typer.echo(f"registered {credentials.name} on {address.key}")
    typer.echo(
        f"your token (shown this once; it is a password, keep it secret): {credentials.token}"
    )
    typer.echo(
        f"it is kept in {config.token_path(address.key)}, so this machine logs in by itself;"
    )
    typer.echo(
        f"on another machine: `spades connect {address.text}` then "
        "`spades login --token TOKEN` (or `spades login` to type it unseen)"
    )


@app.command()
def login(
    token: Annotated[
        str | None, typer.Option(help="The account token (asked for when left out).")
    ] = None,
) -> None:
    """Log in with an account token (from another machine) and keep it; or check the saved one."""
    config = ClientConfig()
    address = server_address(config)
    if token is None:
        saved = config.credentials(address.key)
        token = saved.token if saved is not None else typer.prompt("token", hide_input=True)
    checked = token
    name = run(lambda: lobby.login(address, checked))
    config.save_credentials(address.key, Credentials(name, checked))
    typer.echo(f"logged in as {name} on {address.key}")


# ---------------------------------------------------------------- the lobby


@app.command()
def tables(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    game: Annotated[str | None, typer.Option(help="Only spades or hearts tables.")] = None,
) -> None:
    """List the current server's tables."""
    config = ClientConfig()
    address = server_address(config)
    if game not in (None, "spades", "hearts"):
        raise fail("--game is spades or hearts", 2)
    infos = run(lambda: lobby.list_tables(address, game))
    if as_json:
        kept = codes.known(address.key)
        shown = [lobby.table_dict(info) for info in infos]
        for row in shown:  # a private table's code, to the machine that opened or joined it
            if row.get("private") and row.get("table") in kept:
                row["code"] = kept[row["table"]]
        typer.echo(json.dumps(shown, indent=2))
        return
    if not infos:
        typer.echo(f"no tables on {address.key}: `spades create --preset standard --bots 3`")
        return
    Console(highlight=False).print(lobby.tables_view(infos, codes.known(address.key)))


def parse_options(opts: list[str]) -> dict[str, Any]:
    try:
        return lobby.parse_options(opts)
    except ValueError as exc:
        raise fail(str(exc), 2) from None


#: `--bot KIND` of `spades create` and `spades play`: the built-in bots' strength.
BotKindOption = Annotated[
    BotKind | None,
    typer.Option(
        "--bot",
        help="How the built-in bots play, weakest first: random, heuristic, search_fast"
        " (the search bot at 50 ms a decision), search (200 ms). Default: the server's own"
        " (heuristic).",
        show_default=False,
    ),
]


@app.command()
def create(  # noqa: PLR0917 - typer maps each option to a parameter
    preset: Annotated[str, typer.Option(help="A ruleset preset: standard, hearts, yahoo, ...")] = (
        "standard"
    ),
    opt: Annotated[
        list[str] | None, typer.Option(help="Override one option: name=value (repeatable).")
    ] = None,
    bots: Annotated[int, typer.Option(help="Seats to fill with built-in bots.")] = 0,
    bot: BotKindOption = None,
    private: Annotated[bool, typer.Option(help="Joining needs the join code.")] = False,
    no_watching: Annotated[
        bool, typer.Option("--no-watching", help="Take no spectators (`spectate` is refused).")
    ] = False,
    spectator_delay: Annotated[
        int,
        typer.Option(
            help="Hold spectators this many tricks (0..13) behind the play; they see each hand's"
            " deal once it is over. 0: live.",
        ),
    ] = 0,
    seat: Annotated[
        int, typer.Option(help="Your seat (with --no-sit: the seat bots leave free).")
    ] = 0,
    sit: Annotated[bool, typer.Option(help="Sit down and play (--no-sit: just open it).")] = True,
    clock: Annotated[
        int | None,
        typer.Option(
            help="Seconds each decision may take at this table (default: the server's, 30).",
            show_default=False,
        ),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            help="Your name at the table as a guest (not logged in); else one is made up."
        ),
    ] = None,
) -> None:
    """Open a table (and sit down at it)."""
    config = ClientConfig()
    address = server_address(config)
    options = parse_options(opt or [])
    try:
        request = lobby.create_request(
            preset,
            options,
            bots,
            private,
            seat,
            sit=sit,
            clock=clock,
            bot=bot,
            no_watching=no_watching,
            spectator_delay=spectator_delay,
        )
    except ValueError as exc:
        raise fail(str(exc), 2) from None
    if not sit:
        created = run(lambda: lobby.open_table(address, token_for(config, address), request))
        if created.code:
            codes.remember(address.key, created.table, created.code)
        code = f" (join code {created.code})" if created.code else ""
        typer.echo(f"opened table {created.table}{code}")
        typer.echo(lobby.free_seats_line(request, created))
        return
    play_at(config, address, Seating(Mode.CREATE, create=request), name)


@app.command()
def rules(
    preset: Annotated[str, typer.Option(help="A ruleset preset: standard, hearts, yahoo, ...")] = (
        "standard"
    ),
    opt: Annotated[
        list[str] | None, typer.Option(help="Override one option: name=value (repeatable).")
    ] = None,
) -> None:
    """Say a ruleset in words: the preset's description and each option that matters in its game
    (the engine's descriptions, as the web page shows them). Needs no server."""
    try:
        typer.echo(lobby.rules_text(preset, parse_options(opt or [])))
    except ValueError as exc:
        raise fail(str(exc), 2) from None


@app.command()
def join(
    table: Annotated[
        str, typer.Argument(help="A table id (see `spades tables`), or a server's HOST:PORT.")
    ],
    seat: Annotated[int | None, typer.Option(help="The seat you want.")] = None,
    code: Annotated[
        str | None, typer.Option(help="The join code of a private table (in either case).")
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            help="Your name at the table as a guest (not logged in); else one is made up."
        ),
    ] = None,
) -> None:
    """Sit down at a table and play.

    Given a server address instead (as `spades-server serve` prints it), remember that server and
    sit at its first public table with a free seat.
    """
    config = ClientConfig()
    if lobby.looks_like_address(table):
        try:
            address = ServerAddress.parse(table)
        except ConfigError as exc:
            raise fail(str(exc), 2) from None
        infos = run(lambda: lobby.list_tables(address, None))
        config.set_current_server(address)
        chosen = lobby.open_table_of(infos)
        if chosen is None:
            raise fail(
                f"connected to {address.key}, but no public table has a free seat: "
                "`spades create --bots 3` opens one"
            )
        table = chosen
    else:
        address = server_address(config)
    typed = codes.normal_code(code) if code is not None else None
    play_at(config, address, Seating(Mode.JOIN, table=table, seat=seat, code=typed), name)


@app.command()
def watch(
    table: Annotated[str, typer.Argument(help="The table id (see `spades tables`).")],
    code: Annotated[
        str | None, typer.Option(help="The join code of a private table (in either case).")
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(
            help="Your name at the table as a guest (not logged in); else one is made up."
        ),
    ] = None,
) -> None:
    """Watch a table being played."""
    config = ClientConfig()
    address = server_address(config)
    typed = codes.normal_code(code) if code is not None else None
    play_at(config, address, Seating(Mode.WATCH, table=table, code=typed), name)


def play_at(
    config: ClientConfig, address: ServerAddress, seating: Seating, guest_name: str | None = None
) -> None:
    from client.play import play_session

    if guest_name is None and token_for(config, address) is None:
        guest_name = _guest_name(config)
    message = run(
        lambda: play_session(address, token_for(config, address), seating, guest_name),
        interrupted="stopped; a seat you hold is kept for a while: `spades join TABLE` to return",
    )
    if message:
        typer.echo(message)


def _guest_name(config: ClientConfig) -> str | None:
    """A guest's name: the one asked for before, else (on a terminal) asked once and kept, so
    the table reads `zed~4f1c` rather than `guest-6434047386`. Enter keeps a made-up one."""
    kept = config.guest_name()
    if kept is not None or not (sys.stdin.isatty() and sys.stdout.isatty()):
        return kept or None
    answer = typer.prompt(
        "You play as a guest here (`spades register NAME` keeps a seat across a crash).\n"
        "Your name at the table (Enter: one is made up)",
        default="",
        show_default=False,
    )
    name = "".join(answer.split())[:24]
    with contextlib.suppress(ConfigError, OSError):  # else asked again next time: no more lost
        config.save_guest_name(name)
    return name or None


@app.command()
def play(
    preset: Annotated[
        str | None, typer.Option(help="A ruleset preset: standard (the default), hearts, ...")
    ] = None,
    opt: Annotated[
        list[str] | None, typer.Option(help="Override one option: name=value (repeatable).")
    ] = None,
    new: Annotated[
        bool,
        typer.Option(
            "--new",
            help="Start a new game even if one is unfinished (the server's bot plays your "
            "seat in the old one to its end).",
        ),
    ] = False,
    clock: Annotated[
        int,
        typer.Option(help="Seconds you have for each decision (the bots need none of theirs)."),
    ] = lobby.PLAY_CLOCK,
    bot: BotKindOption = None,
) -> None:
    """Play right now against three built-in bots, on a server run inside this program.

    An unfinished game is taken up again; `--preset` or `--opt` for another game says so first,
    and `--new` starts it."""
    from client.local import play_command
    from client.play import play_local

    options = parse_options(opt or [])
    try:
        request = lobby.create_request(
            preset or "standard", options, -1, False, 0, clock=clock, bot=bot
        )
    except ValueError as exc:
        raise fail(str(exc), 2) from None
    explicit = preset is not None or bool(opt) or bot is not None
    kept = f"stopped; the game is kept: `{play_command()}` takes you back to it"
    try:
        message = run(
            lambda: play_local(ClientConfig(), request, explicit=explicit, new_game=new),
            interrupted=kept,
        )
    except UnfinishedGame as exc:
        # On a terminal, a question: the README's `make play ARGS="--preset hearts"` then works
        # as written whatever is unfinished. Elsewhere (a script), the sentence and exit 1.
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise fail(str(exc)) from None
        typer.echo(f"{exc}.")
        if not typer.confirm("Start the new game now?", default=False):
            typer.echo(f"Nothing changed: `{play_command()}` goes back to the unfinished game.")
            return
        message = run(
            lambda: play_local(ClientConfig(), request, explicit=explicit, new_game=True),
            interrupted=kept,
        )
    if message:
        typer.echo(message)


# ---------------------------------------------------------------- the ladder

ladder_app = typer.Typer(
    help="The rated ladder of the current server.", no_args_is_help=True, add_completion=False
)
app.add_typer(ladder_app, name="ladder")


@ladder_app.command("standings")
def ladder_standings(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    limit: Annotated[int, typer.Option(help="At most this many lines (1..1000).")] = 20,
) -> None:
    """The ladder's standings, best first."""
    config = ClientConfig()
    address = ladder_server(config)
    if not 1 <= limit <= 1000:
        raise fail("--limit is 1..1000", 2)
    entries = run(lambda: lobby.standings(address, token_for(config, address), limit))
    if as_json:
        typer.echo(json.dumps([lobby.table_dict(entry) for entry in entries], indent=2))
        return
    if not entries:
        typer.echo(f"nobody on the ladder of {address.key} yet")
        return
    console = Console(highlight=False)
    console.print(lobby.standings_view(entries, console.width))
    console.print(lobby.STANDINGS_FOOTER, soft_wrap=True)


@ladder_app.command("matches")
def ladder_matches(
    entrant: Annotated[
        str | None, typer.Argument(help="Only this entrant's matches (an account name).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    limit: Annotated[int, typer.Option(help="At most this many matches (1..50).")] = 20,
    mine: Annotated[
        bool,
        typer.Option(
            "--mine",
            help="Only the matches of your accounts here: yours (`spades register`) and the bots"
            " made from this machine (`spades-bot register`).",
        ),
    ] = False,
) -> None:
    """The ladder's finished matches, newest first."""
    config = ClientConfig()
    address = ladder_server(config)
    if not 1 <= limit <= 50:
        raise fail("--limit is 1..50", 2)
    token = token_for(config, address)
    if mine:
        if entrant is not None:
            raise fail("give an ENTRANT or --mine, not both", 2)
        names = my_accounts(config, address)
        found = run(lambda: lobby.ladder_matches_of(address, token, names, limit))
        entrant = " and ".join(names)
    else:
        found = run(lambda: lobby.ladder_matches(address, token, entrant, limit))
    if as_json:
        typer.echo(json.dumps([lobby.table_dict(match) for match in found], indent=2))
        return
    if not found:
        whose = f" for {entrant}" if entrant else ""
        typer.echo(f"no ladder matches{whose} on {address.key} yet")
        return
    title = f"Ladder matches of {entrant}" if entrant else "Ladder matches"
    Console(highlight=False).print(lobby.matches_view(found, title))


def my_accounts(config: ClientConfig, address: ServerAddress) -> list[str]:
    """Your account on the server and the bot accounts made from this machine there."""
    saved = config.credentials(address.key)
    try:
        names = ([saved.name] if saved is not None else []) + config.bot_names(address.key)
    except ConfigError as exc:
        raise fail(str(exc)) from None
    if not names:
        raise fail(
            f"no account of yours on {address.key} here: `spades register NAME`, or"
            f" `spades-bot register NAME --server {address.key}` for a bot"
        )
    return list(dict.fromkeys(names))


@ladder_app.command("records")
def ladder_records(
    match: Annotated[str, typer.Argument(help="The match id (see `spades ladder matches`).")],
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write them to this file (default: print them)."),
    ] = None,
) -> None:
    """A finished match's hand records (every decision and its time) as JSON lines,
    for `spades replay FILE`."""
    config = ClientConfig()
    address = ladder_server(config)
    records = run(lambda: lobby.ladder_records(address, token_for(config, address), match))
    # Which seats are the reader's (her account, the bots made here): the replay marks them, so
    # an author finds her bot among the match's four (`North (my-bot)*`).
    saved = config.credentials(address.key)
    with contextlib.suppress(ConfigError):
        ours = {saved.name} if saved is not None else set()
        ours |= set(config.bot_names(address.key))
        for record in records:
            yours = sorted(ours & {str(n) for n in record.get("names") or [] if n})
            if yours:
                record["yours"] = yours
    lines = "".join(json.dumps(record, separators=(",", ":")) + "\n" for record in records)
    if output is None:
        typer.echo(lines, nl=False)
        return
    try:
        output.write_text(lines, encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot write {output}: {exc.strerror or exc}") from None
    games = len({(r.get("ladder") or {}).get("game") for r in records})
    # A match is one game; an old duplicate pair's records are its two halves.
    played = "1 game" if games == 1 else f"{games} games: both halves"
    typer.echo(
        f"wrote {len(records)} hand records of match {match} ({played}) to {output}:"
        f" `spades replay {output}` steps through them"
    )


@ladder_app.command("show")
def ladder_show(
    entrant: Annotated[str, typer.Argument(help="The entrant's account name.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """One entrant: rating, record, recent matches."""
    config = ClientConfig()
    address = ladder_server(config)
    detail = run(lambda: lobby.ladder_show(address, token_for(config, address), entrant))
    if as_json:
        shown = lobby.table_dict(detail)
        shown.pop("t", None)
        shown.pop("id", None)
        typer.echo(json.dumps(shown, indent=2))
        return
    console = Console(highlight=False)
    for line in lobby.entrant_lines(detail):
        console.print(line)
    if detail.recent:
        console.print(lobby.matches_view(list(detail.recent), "Recent matches"))


@ladder_app.command("enter")
def ladder_enter() -> None:
    """Enter the ladder with your account and play the matches it seats you in, until /quit."""
    from client.play import ladder_session

    config = ClientConfig()
    address = server_address(config)
    token = token_for(config, address)
    if token is None:
        raise fail(f"guests cannot enter the ladder: `spades register NAME` on {address.key} first")
    message = run(lambda: ladder_session(address, token))
    typer.echo(message)


@ladder_app.command("leave")
def ladder_leave() -> None:
    """Take your account off the ladder (after a match in progress), e.g. from another terminal."""
    config = ClientConfig()
    address = server_address(config)
    token = token_for(config, address)
    if token is None:
        raise fail("not logged in on this server, so not on its ladder")
    name = run(lambda: lobby.ladder_leave(address, token))
    typer.echo(f"{name} leaves the ladder of {address.key} (after any match in progress)")


# ---------------------------------------------------------------- events

events_app = typer.Typer(
    help="The current server's events (Swiss and knockout tournaments): list them, announce one.",
    add_completion=False,
    invoke_without_command=True,
)
app.add_typer(events_app, name="events")


@events_app.callback()
def events_list(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    status: Annotated[
        EventStatus | None,
        typer.Option(help="Only events in this status: registering, running, finished, cancelled."),
    ] = None,
) -> None:
    """The current server's events, newest first (`spades events create` announces one)."""
    if ctx.invoked_subcommand is not None:
        return
    from client.events import LIST_FOOTER, events_view, list_events

    config = ClientConfig()
    address = server_address(config)
    found = run(lambda: list_events(address, token_for(config, address), status))
    if as_json:
        typer.echo(json.dumps([to_map(event) for event in found], indent=2))
        return
    if not found:
        typer.echo(f"no events on {address.key}: a host announces one with `spades events create`")
        return
    console = Console(highlight=False)
    console.print(events_view(found, console.width))
    console.print(LIST_FOOTER, soft_wrap=True)


#: `--operator-token-file` of `spades events create` and `spades event --cancel`: announce or cancel
#: as the server's operator (a token `spades-server admin token` made), without `events_open`.
OperatorTokenOption = Annotated[
    Path | None,
    typer.Option(
        help="Act as the server's operator: a file holding an operator token (`spades-server"
        " admin token --out FILE`); SPADES_OPERATOR_TOKEN stands in for it.",
        show_default=False,
    ),
]
OPERATOR_TOKEN_ENV = "SPADES_OPERATOR_TOKEN"


def operator_token(path: Path | None) -> str | None:
    """The operator token from `--operator-token-file` (else SPADES_OPERATOR_TOKEN), if any."""
    if path is None:
        return os.environ.get(OPERATOR_TOKEN_ENV, "").strip() or None
    try:
        text = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise fail(f"cannot read --operator-token-file {path}: {exc.strerror or exc}", 2) from None
    if not text:
        raise fail(f"--operator-token-file {path} is empty", 2)
    return text


@events_app.command("create")
def events_create(  # noqa: PLR0917 - typer maps each option to a parameter
    name: Annotated[str, typer.Argument(help="The event's name, as players will see it.")],
    start: Annotated[
        str,
        typer.Option(
            help="When registration closes and round 1 starts: +10m (from now), 20:30 (today),"
            " or 2026-12-05 20:30.",
        ),
    ],
    format: Annotated[
        EventFormat, typer.Option(help="swiss_pairs, swiss_individual or knockout_pairs.")
    ] = EventFormat.SWISS_PAIRS,
    rounds: Annotated[
        int | None,
        typer.Option(
            help="Rounds (Swiss: needed; leave it out of a knockout: it plays as many as its"
            " field needs, and --max-entrants bounds the field).",
            show_default=False,
        ),
    ] = None,
    boards: Annotated[int, typer.Option(help="Boards (deals) a round; a knockout match's.")] = 4,
    preset: Annotated[str, typer.Option(help="A Spades preset: standard, yahoo, ...")] = (
        "standard"
    ),
    opt: Annotated[
        list[str] | None, typer.Option(help="Override one option: name=value (repeatable).")
    ] = None,
    entry: Annotated[
        EventEntry, typer.Option(help="Who may enter: people, bots or both.")
    ] = EventEntry.BOTH,
    max_entrants: Annotated[
        int | None,
        typer.Option(help="The most entrants (pairs, or players in an individual); default 64."),
    ] = None,
    clock: Annotated[
        int | None,
        typer.Option(
            help="People's seconds a decision (default: the server's).", show_default=False
        ),
    ] = None,
    no_show_grace: Annotated[
        float | None,
        typer.Option(
            help="Seconds an entrant has to be seated once its round opens (default 120).",
            show_default=False,
        ),
    ] = None,
    round_gap: Annotated[
        float | None,
        typer.Option(
            help="Seconds between a round's pairing and its tables opening (default 10).",
            show_default=False,
        ),
    ] = None,
    registration_opens: Annotated[
        str | None,
        typer.Option(
            help="When registration opens, as --start is written (default: at once); it"
            " closes at the start.",
            show_default=False,
        ),
    ] = None,
    operator_token_file: OperatorTokenOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """Announce an event: as the server's operator (--operator-token-file), or as your account
    where the server lets any account (`serve --events-open`)."""
    import time

    from client.events import create_event, create_request, event_view, parse_start

    try:
        now = time.time()
        request = create_request(
            name,
            format=format,
            rounds=rounds,
            boards=boards,
            starts_at=parse_start(start, now),
            preset=preset,
            options=parse_options(opt or []),
            entry=entry,
            max_entrants=max_entrants,
            clock=clock,
            no_show_grace=no_show_grace,
            round_gap=round_gap,
            registration_opens=(
                None if registration_opens is None else parse_start(registration_opens, now)
            ),
        )
    except ValueError as exc:
        raise fail(str(exc), 2) from None
    operator = operator_token(operator_token_file)
    config = ClientConfig()
    address = server_address(config)
    token = token_for(config, address)
    if token is None and operator is None:
        raise fail(
            f"guests cannot announce events: `spades register NAME` on {address.key} first"
            " (or --operator-token-file, as the server's operator)"
        )
    info = run(lambda: create_event(address, token, request, operator))
    if as_json:
        typer.echo(json.dumps(to_map(info), indent=2))
        return
    typer.echo(f"announced {info.summary.event} on {address.key}")
    console = Console(highlight=False)
    console.print(event_view(info, time.time(), console.width))


@app.command()
def event(  # noqa: PLR0917 - typer maps each option to a parameter
    event_id: Annotated[str, typer.Argument(metavar="EVENT", help="The event id, e.g. E1.")],
    register_me: Annotated[
        bool, typer.Option("--register", help="Enter it with your account (before it starts).")
    ] = False,
    partner: Annotated[
        str | None,
        typer.Option(
            help="--register in a pairs event: your partner's account name (who registers naming"
            " you); left out, the server partners you at the start.",
            show_default=False,
        ),
    ] = None,
    withdraw: Annotated[
        bool,
        typer.Option(
            "--withdraw", help="Leave it (after the start, your remaining rounds are forfeited)."
        ),
    ] = False,
    play_it: Annotated[
        bool,
        typer.Option(
            "--play",
            help="Check in and play each round's table here, until the event ends (or /quit).",
        ),
    ] = False,
    cancel: Annotated[
        bool, typer.Option("--cancel", help="Cancel it (its host, or the operator).")
    ] = False,
    operator_token_file: OperatorTokenOption = None,
    round_no: Annotated[
        int | None,
        typer.Option("--round", help="Show this round's tables (default: the latest).", min=1),
    ] = None,
    records: Annotated[
        bool,
        typer.Option(
            "--records",
            help="Print every board played so far as hand records (JSON lines, for `spades"
            " replay`).",
        ),
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="--records: write them to this file."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """Show an event: its entrants, a knockout's bracket, the standings and a round's tables.
    With --register, --withdraw, --play or --cancel, do that instead."""
    import time

    from client.events import event_view, show_event

    acts = [
        name
        for name, on in (
            ("--register", register_me),
            ("--withdraw", withdraw),
            ("--play", play_it),
            ("--cancel", cancel),
        )
        if on
    ]
    if len(acts) > 1:
        raise fail(f"give one of {', '.join(acts)}", 2)
    if partner is not None and not register_me:
        raise fail("--partner goes with --register", 2)
    if operator_token_file is not None and not cancel:
        raise fail("--operator-token-file goes with --cancel", 2)
    if output is not None and not records:
        raise fail("--output goes with --records", 2)
    if records and acts:
        raise fail(f"give --records or {acts[0]}, not both", 2)
    operator = operator_token(operator_token_file) if cancel else None
    config = ClientConfig()
    address = server_address(config)
    token = token_for(config, address)
    if acts:
        if token is None and operator is None:
            raise fail(
                f"guests cannot take part in events: `spades register NAME` on {address.key} first"
            )
        if play_it:
            assert token is not None
            play_event(address, token, event_id)
        else:
            event_change(address, token, event_id, acts[0], partner, operator)
        return
    if records:
        write_event_records(address, token, event_id, output)
        return
    info = run(lambda: show_event(address, token, event_id))
    if as_json:
        typer.echo(json.dumps(to_map(info), indent=2))
        return
    saved = config.credentials(address.key)
    console = Console(highlight=False)
    console.print(
        event_view(
            info,
            time.time(),
            console.width,
            round_no=round_no,
            mine=saved.name if saved is not None else None,
        )
    )


def write_event_records(
    address: ServerAddress, token: str | None, event_id: str, output: Path | None
) -> None:
    """`spades event E --records [-o FILE]`: the event's boards as `spades-hand/1` JSON lines."""
    from client.events import event_records

    found = run(lambda: event_records(address, token, event_id))
    lines = "".join(json.dumps(record, separators=(",", ":")) + "\n" for record in found)
    if output is None:
        typer.echo(lines, nl=False)
        return
    try:
        output.write_text(lines, encoding="utf-8")
    except OSError as exc:
        raise fail(f"cannot write {output}: {exc.strerror or exc}") from None
    boards = "board" if len(found) == 1 else "boards"
    typer.echo(
        f"wrote {len(found)} {boards} of {event_id} to {output}: `spades replay {output}` steps"
        " through them"
    )


def event_change(  # noqa: PLR0917 - the command's parts, handed on
    address: ServerAddress,
    token: str | None,
    event_id: str,
    act: str,
    partner: str | None,
    operator: str | None = None,
) -> None:
    """`spades event E --register/--withdraw/--cancel`: the request, then one line saying so."""
    from client.events import event_request

    request: m.EventRegister | m.EventWithdraw | m.EventCancel
    if act == "--register":
        request = m.EventRegister(event=event_id, partner=partner)
    elif act == "--withdraw":
        request = m.EventWithdraw(event=event_id)
    else:
        request = m.EventCancel(event=event_id)
    name, note = run(lambda: event_request(address, token, request, operator))
    # The server's note says what was done (with whom, what a late withdrawal costs).
    if act == "--register":
        said = note or f"registered for {event_id}"
        typer.echo(f"{name}: {said}; `spades event {event_id} --play` checks in to play its rounds")
    elif act == "--withdraw":
        typer.echo(f"{name}: {note or f'withdrawn from {event_id}'}")
    else:
        typer.echo(note or f"{event_id} is cancelled")


def play_event(address: ServerAddress, token: str, event_id: str) -> None:
    """`spades event E --play`: the play screen for each round; after the end, the final
    standings on the terminal and exit 0."""
    from client.events import ended_lines
    from client.play import event_session

    stop = (
        f"stopped; `spades event {event_id} --play` checks in again (a seat you left is held a"
        " while; past that the round is forfeited)"
    )
    session = run(lambda: event_session(address, token, event_id), interrupted=stop)
    if session.ended is None:
        typer.echo(stop)
        return
    for line in ended_lines(session.ended, session.name):
        typer.echo(line)


# ---------------------------------------------------------------- statistics


@app.command()
def stats(
    name: Annotated[
        str | None, typer.Argument(help="The account (a person's or a bot's); yours if left out.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of text.")] = False,
) -> None:
    """An account's statistics on the server: games, bids made and set, bags, nils, time a
    decision."""
    from client.stats import fetch_stats, stats_dict, stats_lines

    config = ClientConfig()
    address = server_address(config)
    token = token_for(config, address)
    if name is None and token is None:
        raise fail(f"not logged in on {address.key}: name the account (`spades stats NAME`)")
    found = run(lambda: fetch_stats(address, token, name))
    if as_json:
        typer.echo(json.dumps(stats_dict(found), indent=2))
        return
    for line in stats_lines(found):
        typer.echo(line)


# ---------------------------------------------------------------- history


@app.command()
def history(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """The games you played or watched from this machine (kept in your data dir)."""
    games = list_games()
    if as_json:
        typer.echo(json.dumps([g.to_dict() for g in games], indent=2))
        return
    if not games:
        typer.echo("no games yet: `spades play` starts one")
        return
    Console(highlight=False).print(lobby.history_view(games))


@app.command()
def replay(
    game: Annotated[
        str, typer.Argument(help="A game id from `spades history`, or a .jsonl file of hands.")
    ],
    show_all: Annotated[
        bool, typer.Option("--all", help="Print the whole game without pausing.")
    ] = False,
    analyze: Annotated[
        bool,
        typer.Option(
            "--analyze",
            help="Review every hand double-dummy: what each side could make, the cards that"
            " cost tricks (Ctrl-C stops the analysis and shows what was done).",
        ),
    ] = False,
    budget: Annotated[
        int,
        typer.Option(
            help="--analyze: positions a card's search may visit before it is left"
            " 'not analysed (budget)'",
            min=1,
        ),
    ] = DEFAULT_REVIEW_BUDGET,
) -> None:
    """Step through a recorded game, hand by hand, trick by trick."""
    from client.replay import ReplayHand, record_ruleset, run_replay, to_hand
    from client.terminal import read_key

    try:
        records = read_records(find_game(game))
        hands: list[ReplayHand] = [to_hand(record) for record in records]
    except JournalError as exc:
        raise fail(str(exc)) from None
    except (EngineError, KeyError, ValueError, TypeError, IndexError) as exc:
        raise fail(f"a hand record in {game} is malformed: {exc}") from None
    console = Console(highlight=False)
    if analyze:
        from client.review import analyze_with_bar, reviewers

        jobs = reviewers(records, [record_ruleset(r) for r in records], budget)
        reviews, finished = analyze_with_bar(jobs, Console(stderr=True))
        for hand, review in zip(hands, reviews, strict=True):
            hand.review, hand.budget = review, budget
        if not finished:
            console.print("analysis stopped (Ctrl-C): the hands show what was analysed")
    interactive = sys.stdin.isatty() and sys.stdout.isatty() and not show_all
    ask = read_key if interactive else None  # one key: `q` stops without Enter
    try:
        run_replay(hands, console.print, ask)
    except (EOFError, KeyboardInterrupt):
        typer.echo("")


PROG = "spades"


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: a typo or a missing argument is one `error:` line naming the
    help to read, never a boxed `Error:`; exits with the command's code."""
    args = sys.argv[1:] if argv is None else argv
    if not args:  # the help, and the exit code of a usage mistake
        app(args=["--help"], prog_name=PROG, standalone_mode=False)
        raise SystemExit(2)
    try:
        # Not standalone: click would print its boxed `Error:` usage; we print one line instead,
        # as every other failure is (and as `spades-bot`'s main does, bots/cli.py).
        code = app(args=args, prog_name=PROG, standalone_mode=False)
    except typer.TyperException as exc:  # click's usage errors (and the few others it raises)
        text = exc.format_message().removeprefix("Invalid value: ").strip()
        where = getattr(getattr(exc, "ctx", None), "command_path", PROG)
        exit_code = getattr(exc, "exit_code", 1)
        hint = f" (see {where} --help)" if exit_code == 2 else ""
        typer.echo(f"error: {text}{hint}", err=True)
        raise SystemExit(exit_code) from None
    except typer.Abort:
        typer.echo("error: interrupted", err=True)
        raise SystemExit(130) from None
    raise SystemExit(code if isinstance(code, int) else 0)
