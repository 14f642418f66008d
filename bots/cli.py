"""The `spades-bot` command line."""

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


def main() -> None:
    """Console-script entry point."""
    app()
