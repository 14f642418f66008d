"""The `spades-bot` command line.

Every command that fails prints one line, `error: ...`, on stderr and exits non-zero (2 for a usage
mistake, 1 for a failure), as `spades` does; no traceback and no box reaches the user.
"""

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from engine.version import project_version

app = typer.Typer(
    name="spades-bot",
    help="Run bots against a server, or pit them against each other in the local arena.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


@app.callback()
def root() -> None:
    """Keeps the app a group of subcommands even while it has few."""


@app.command()
def version() -> None:
    """Print the version and exit."""
    typer.echo(f"spades-bot {project_version()}")


@app.command()
def new(
    name: Annotated[str, typer.Argument(help="the bot's name, e.g. my-bot")],
    directory: Annotated[
        Path, typer.Option("--dir", help="where to write the file", file_okay=False)
    ] = Path("."),
    force: Annotated[bool, typer.Option("--force", help="overwrite an existing file")] = False,
) -> None:
    """Write a runnable bot skeleton, NAME.py, ready for `spades-bot arena` and `spades-bot run`."""
    from bots.skeleton import class_name, module_name, write_skeleton

    try:
        path = write_skeleton(name, directory, overwrite=force)
    except FileExistsError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from None
    spec = f"{module_name(name)}:{class_name(name)}"
    typer.echo(f"wrote {path}")
    typer.echo(f"try it:  spades-bot arena {spec} random --games 20")


@app.command()
def arena(  # noqa: PLR0917 - typer maps each option to a parameter
    bots: Annotated[
        list[str],
        typer.Argument(
            help="2 bots (they alternate seats: teams in Spades) or one per seat; "
            "a sample name (random, heuristic, search), or module:Class, options as ,key=value"
        ),
    ],
    games: Annotated[int, typer.Option(help="games to play", min=1)] = 100,
    preset: Annotated[str, typer.Option(help="ruleset preset, e.g. standard, hearts")] = "standard",
    option: Annotated[
        list[str] | None,
        typer.Option("--option", "-o", help="ruleset override NAME=VALUE, e.g. target_score=200"),
    ] = None,
    seed: Annotated[int, typer.Option(help="run seed: the same seed deals the same cards")] = 0,
    jobs: Annotated[int, typer.Option(help="worker processes (0 = all cores)", min=0)] = 1,
    duplicate: Annotated[
        bool, typer.Option(help="play every deal twice with the seats swapped (games rounded up)")
    ] = False,
    record: Annotated[
        Path | None, typer.Option(help="write every hand as a JSON hand record, one per line")
    ] = None,
    max_hands: Annotated[
        int, typer.Option(help="stop a game after this many hands (best score wins)", min=1)
    ] = 200,
    json_output: Annotated[
        bool, typer.Option("--json", help="print the results as one JSON object")
    ] = False,
) -> None:
    """Play engine-only games between bots and print win rates and points per hand with 95 % intervals."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

    from bots.arena.pool import default_jobs
    from bots.arena.report import as_json, render
    from bots.arena.run import ArenaConfig, check_specs, figures, run_games
    from bots.registry import BotSpecError
    from engine.errors import RulesetError
    from engine.ruleset import Ruleset

    try:
        ruleset = Ruleset.from_preset(preset, **_options(option or []))
    except RulesetError as exc:
        raise typer.BadParameter(str(exc)) from None
    if duplicate and games % 2:
        games += 1
    config = ArenaConfig(
        specs=tuple(bots),
        ruleset=ruleset,
        games=games,
        seed=seed,
        jobs=jobs or default_jobs(),
        duplicate=duplicate,
        record=record,
        max_hands=max_hands,
    )
    try:
        check_specs(config)
    except (BotSpecError, ValueError) as exc:
        raise typer.BadParameter(str(exc)) from None
    console = Console(stderr=json_output)
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        MofNCompleteColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        transient=json_output,
    ) as progress:
        task = progress.add_task("games", total=games)
        results = run_games(config, lambda _result: progress.advance(task))
    summary = figures(config, results)
    if json_output:
        typer.echo(as_json(summary))
    else:
        render(summary, console, hearts=ruleset.game == "hearts")


@app.command()
def register(
    name: Annotated[
        str, typer.Argument(help="the bot account's name: 2-24 letters, digits, _ . -")
    ],
    server: Annotated[
        str,
        typer.Option(
            help="the server, HOST[:PORT] (port 7777 if left out)", envvar="SPADES_SERVER"
        ),
    ] = "127.0.0.1:7777",
    tls: Annotated[bool, typer.Option(help="speak TLS (a server run with --tls-cert)")] = False,
    ca: Annotated[
        str | None, typer.Option(help="PEM file the server's TLS certificate chains to")
    ] = None,
) -> None:
    """Make a bot account on a server, print its token once, and keep it for `spades-bot run`."""
    import trio

    from bots.sdk.credentials import BotCredentials, BotTokens, CredentialsError, server_key
    from bots.sdk.register import register_bot
    from bots.sdk.runlog import clock_text
    from bots.sdk.runner import RunnerError, parse_address

    if ca is not None and not tls:
        raise typer.BadParameter("--ca goes with --tls")
    try:
        host, port = parse_address(server)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    try:
        registered = trio.run(lambda: register_bot(host, port, name, tls=tls, ca=ca))
    except RunnerError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    key = server_key(host, port)
    try:
        kept = BotTokens().save(key, BotCredentials(registered.name, registered.token))
    except (OSError, CredentialsError) as exc:
        kept = None
        typer.echo(f"warning: could not keep the token ({exc}): copy it now", err=True)
    kind = "a bot account" if registered.bot else "a PERSON's account (the server made it so)"
    typer.echo(f"registered {registered.name} on {key}: {kind}")
    if registered.clock is not None:
        typer.echo(f"its seats play on the bot clock: {clock_text(registered.clock)}")
    typer.echo(f"its token (shown this once; it is a password, keep it secret): {registered.token}")
    if kept is not None:
        typer.echo(
            f"kept in {kept}: `spades-bot run BOT --server {server} --ladder` plays as"
            f" {registered.name} with it"
        )
    typer.echo(
        "elsewhere, give it as `--token TOKEN` or in SPADES_TOKEN (either wins over the kept one)"
    )


@app.command()
def run(  # noqa: PLR0917 - typer maps each option to a parameter
    ctx: typer.Context,
    bot: Annotated[
        str, typer.Argument(help="module:Class, or a sample name (random, heuristic, search)")
    ],
    server: Annotated[
        str,
        typer.Option(
            help="the server, HOST[:PORT] (port 7777 if left out)", envvar="SPADES_SERVER"
        ),
    ] = "127.0.0.1:7777",
    tls: Annotated[bool, typer.Option(help="speak TLS (a server run with --tls-cert)")] = False,
    ca: Annotated[
        str | None, typer.Option(help="PEM file the server's TLS certificate chains to")
    ] = None,
    token: Annotated[
        str,
        typer.Option(
            help="the bot account's token (default: the one `spades-bot register` kept for"
            " this server)",
            envvar="SPADES_TOKEN",
        ),
    ] = "",
    account: Annotated[
        str | None,
        typer.Option(
            help="play as this bot registered from this machine (default: the last one"
            " registered on the server)"
        ),
    ] = None,
    table: Annotated[
        str | None, typer.Option(help="take a seat at this table", envvar="SPADES_TABLE")
    ] = None,
    seat: Annotated[int | None, typer.Option(help="the seat wanted (default: any free)")] = None,
    ladder: Annotated[bool, typer.Option(help="enter the rated ladder instead")] = False,
    event: Annotated[
        str | None,
        typer.Option(
            help="take part in this event instead (E1): register if need be, play every round,"
            " stop when it ends"
        ),
    ] = None,
    partner: Annotated[
        str | None,
        typer.Option(
            help="--event of pairs: the partner's account, registering (it names this bot too)"
        ),
    ] = None,
    games: Annotated[
        int | None,
        typer.Option(
            help="stop after this many games at a table, or matches on the ladder (0: keep"
            " playing; default: 1 game at a table, no limit on the ladder)",
            min=0,
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option(help="the bot's random seed")] = None,
    retry_forever: Annotated[
        bool,
        typer.Option(
            "--retry-forever",
            help="never give up reaching the server (by default: 10 s for the first connection,"
            " 120 s to get a lost one back)",
        ),
    ] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="log every decision")] = False,
) -> None:
    """Take a seat at a table (--table), enter the ladder (--ladder) or take part in an event
    (--event) and play until done.

    The runner reconnects by itself after a drop and answers every turn before its deadline.
    SPADES_SERVER, SPADES_TOKEN and SPADES_TABLE stand in for --server, --token and --table
    (the flags win); without either token, the one `spades-bot register` kept is used.
    """
    import logging

    import trio

    from bots.registry import BotSpecError, make_bot
    from bots.sdk.runlog import event_end_line, game_over_line
    from bots.sdk.runner import (
        BotRunner,
        RunnerConfig,
        RunnerError,
        Terminated,
        parse_address,
        run_until_terminated,
    )

    if (ladder or event is not None) and _from_environment(ctx, "table"):
        table = None  # --ladder or --event, flags, win over SPADES_TABLE
    if [table is not None, ladder, event is not None].count(True) != 1:
        raise typer.BadParameter("give exactly one of --table ID, --ladder and --event EVENT")
    if partner is not None and event is None:
        raise typer.BadParameter("--partner goes with --event")
    if ca is not None and not tls:
        raise typer.BadParameter("--ca goes with --tls")
    try:
        host, port = parse_address(server)
        player = make_bot(bot, seed)
    except (ValueError, BotSpecError) as exc:
        raise typer.BadParameter(str(exc)) from None
    if account is not None and token and not _from_environment(ctx, "token"):
        raise typer.BadParameter("give --token or --account, not both")
    if not token or account is not None:  # --account, a flag, wins over SPADES_TOKEN
        token = _kept_token(host, port, account)
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        format="%(asctime)s %(levelname)s %(message)s",
    )
    config = RunnerConfig(
        host=host,
        port=port,
        token=token,
        table=table,
        seat=seat,
        ladder=ladder,
        event=event,
        partner=partner,
        games=games if games is not None else (0 if ladder or event else 1),
        tls=tls,
        ca=ca,
        retry_forever=retry_forever,
    )
    try:
        runner = BotRunner(player, config)
        stats = trio.run(run_until_terminated, runner)
    except RunnerError as exc:
        hint = " (--retry-forever keeps trying)" if exc.gave_up else ""
        typer.echo(f"error: {exc}{hint}", err=True)
        raise typer.Exit(1) from None
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    except Terminated:
        raise typer.Exit(143) from None  # 128 + SIGTERM, as a shell reports it
    for game in stats.games:
        typer.echo(game_over_line(game))
    for match in stats.matches:
        typer.echo(_match_line(match))
    if stats.event_end is not None:
        typer.echo(event_end_line(stats.event_end, runner.runlog.user))
    typer.echo(stats.summary())


def _kept_token(host: str, port: int, account: str | None) -> str:
    """The token `spades-bot register` kept for the server: `account`'s, else its default's."""
    from bots.sdk.credentials import BotTokens, CredentialsError, server_key

    key = server_key(host, port)
    tokens = BotTokens()
    try:
        kept = tokens.find(key, account)
        names = tokens.names(key)
    except CredentialsError as exc:
        raise typer.BadParameter(str(exc)) from None
    if kept is None:
        if account is not None:
            known = f" (kept for {key}: {', '.join(names)})" if names else ""
            raise typer.BadParameter(f"no bot {account!r} was registered on {key} here{known}")
        raise typer.BadParameter(
            f"give --token (or set SPADES_TOKEN), or make a bot account first:"
            f" spades-bot register NAME --server {key}"
        )
    typer.echo(f"playing as {kept.name} (its token kept in {tokens.path(key)})", err=True)
    return kept.token


def _match_line(match: dict[str, object]) -> str:
    """One ladder match as the run saw it end."""
    text = f"match {match['match']} over"
    if "place" in match:
        text += (
            f": place {match['place']}, {match['score']} points, rating"
            f" {match['rating_before']:.2f} -> {match['rating_after']:.2f}"
        )
    if "forfeited" in match:
        text += f" (forfeited: {match['forfeited']})"
    return text


@app.command()
def conformance(
    server: Annotated[
        str, typer.Option(help="the server to check, HOST[:PORT]", envvar="SPADES_SERVER")
    ] = "127.0.0.1:7777",
    only: Annotated[
        list[str] | None,
        typer.Option("--only", help="run only these scenarios (repeat, or a comma list)"),
    ] = None,
    list_scenarios: Annotated[
        bool, typer.Option("--list", help="list the scenarios and what each checks")
    ] = False,
) -> None:
    """Check a server against docs/protocol.md: a table of scenarios; exit 0 only if all pass."""
    from bots.conformance import server_cli
    from bots.sdk.runner import parse_address

    if list_scenarios:
        typer.echo(server_cli.list_scenarios())
        return
    try:
        host, port = parse_address(server)
        code = server_cli.run(host, port, only or [])
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None
    except server_cli.Unreachable as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    raise typer.Exit(code)


@app.command()
def analyze(
    records: Annotated[
        Path,
        typer.Argument(
            help="hand records, one JSON object a line (`spades-bot arena --record`,"
            " `spades ladder records`)",
            dir_okay=False,
        ),
    ],
    as_json: Annotated[
        bool, typer.Option("--json", help="print the analysis as one JSON object")
    ] = False,
    budget: Annotated[
        int,
        typer.Option(
            help="positions a card's search may visit before it is left 'not analysed (budget)'",
            min=1,
        ),
    ] = 60_000,
) -> None:
    """Review every hand double-dummy: the cards that cost their side tricks, and the tricks each
    seat's play lost, per hand and in total (Ctrl-C stops and reports what was analysed)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from bots.analyze import RecordsError, jobs_of, read_records, report, run, text_lines

    try:
        jobs = jobs_of(read_records(records), budget)
    except RecordsError as exc:
        typer.echo(f"error: {exc}", err=True)
        raise typer.Exit(1) from None
    total = sum(job.reviewer.positions for job in jobs if job.reviewer is not None)
    bar = (TextColumn("analysing"), BarColumn(), MofNCompleteColumn(), TextColumn("positions"))
    with Progress(*bar, console=Console(stderr=True), transient=True) as progress:
        task = progress.add_task("analysing", total=total)
        finished = run(jobs, lambda: progress.advance(task))
    if as_json:
        typer.echo(json.dumps(report(jobs, finished, budget)))
    else:
        for line in text_lines(jobs, finished):
            typer.echo(line)


def _from_environment(ctx: typer.Context, name: str) -> bool:
    """Whether the parameter `name` got its value from its environment variable, not a flag."""
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "ENVIRONMENT"


def _options(pairs: list[str]) -> dict[str, object]:
    """`name=value` pairs as ruleset overrides: ints, booleans, comma lists, else text."""
    out: dict[str, object] = {}
    for pair in pairs:
        name, sep, raw = pair.partition("=")
        if not sep:
            raise typer.BadParameter(f"{pair!r}: write ruleset options as NAME=VALUE")
        value: object = raw
        if raw.lower() in ("true", "false"):
            value = raw.lower() == "true"
        elif raw.lstrip("-").isdigit():
            value = int(raw)
        elif "," in raw:
            value = [part for part in raw.split(",") if part]
        out[name.strip()] = value
    return out


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point: a usage mistake is one `error:` line naming the help to read,
    as every other failure is (see the module's docstring); exits with the command's code."""
    args = sys.argv[1:] if argv is None else argv
    if not args:  # the help, and the exit code of a usage mistake
        app(args=["--help"], prog_name="spades-bot", standalone_mode=False)
        raise SystemExit(2)
    try:
        # Not standalone: click would print its multi-line usage box; we print one line instead.
        code = app(args=args, prog_name="spades-bot", standalone_mode=False)
    except typer.TyperException as exc:  # click's usage errors (and the few others it raises)
        text = exc.format_message().removeprefix("Invalid value: ").strip()
        where = getattr(getattr(exc, "ctx", None), "command_path", "spades-bot")
        exit_code = getattr(exc, "exit_code", 1)
        hint = f" (see {where} --help)" if exit_code == 2 else ""
        typer.echo(f"error: {text}{hint}", err=True)
        raise SystemExit(exit_code) from None
    except typer.Abort:
        typer.echo("error: interrupted", err=True)
        raise SystemExit(130) from None
    raise SystemExit(code if isinstance(code, int) else 0)
