"""Every console script is a typer app with --help on every command."""

import subprocess
import sys

import pytest
import typer
from typer.main import get_command
from typer.testing import CliRunner

from bots.cli import app as bot_app
from client.cli import app as client_app
from server.cli import app as server_app

APPS: dict[str, typer.Typer] = {
    "spades": client_app,
    "spades-server": server_app,
    "spades-bot": bot_app,
}


def command_paths(command: object, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Every command path of a (possibly nested) typer app; groups carry a `commands` mapping."""
    paths = [prefix]
    subcommands: dict[str, object] = getattr(command, "commands", {})
    for name, sub in subcommands.items():
        paths.extend(command_paths(sub, (*prefix, name)))
    return paths


@pytest.mark.parametrize("name", sorted(APPS))
def test_every_command_has_help(name: str) -> None:
    runner = CliRunner()
    app = APPS[name]
    for path in command_paths(get_command(app)):
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        assert "Usage" in result.output


@pytest.mark.parametrize("name", sorted(APPS))
def test_version_command(name: str) -> None:
    result = CliRunner().invoke(APPS[name], ["version"])
    assert result.exit_code == 0
    assert result.output.startswith(name + " ")


def test_console_scripts_are_installed() -> None:
    for name in APPS:
        bindir = sys.executable.rsplit("/", 1)[0]
        out = subprocess.run(
            [f"{bindir}/{name}", "--help"], check=False, capture_output=True, text=True, timeout=60
        )
        assert out.returncode == 0, out.stderr
