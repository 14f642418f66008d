"""The `spades` command line."""

import typer

from engine.version import project_version

app = typer.Typer(
    name="spades",
    help="Play Spades and Hearts from your terminal.",
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
    typer.echo(f"spades {project_version()}")


def main() -> None:
    """Console-script entry point."""
    app()
