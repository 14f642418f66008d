"""`spades-server serve` flags for big hosts: --max-connections, --max-per-address, --max-tables,
and the soft limit on open files raised to the hard one at start."""

from __future__ import annotations

import resource
from pathlib import Path

import trio

from protocol.messages import CreateTable, Error, Guest, TableCreated
from protocol.types import Game
from tests.hostile.proc import ServerProcess
from tests.server.wire_client import WireClient


def _lower_soft_nofile() -> None:
    """In the child before exec: a soft limit below the hard one, for the server to raise."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(256, hard), hard))


def _nofile_limits(pid: int) -> tuple[str, str]:
    for line in Path(f"/proc/{pid}/limits").read_text().splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return soft, hard
    raise AssertionError("no open-files line in /proc/PID/limits")


async def test_the_connection_and_table_caps_are_flags_and_the_fd_limit_is_raised(
    tmp_path: Path,
) -> None:
    server = ServerProcess(
        tmp_path / "flags.db",
        "--max-connections",
        "3",
        "--max-per-address",
        "2",
        "--max-tables",
        "1",
        "--no-ladder",
        preexec=_lower_soft_nofile,
    )
    with server, trio.fail_after(60):
        soft, hard = _nofile_limits(server.pid)
        assert soft == hard, (soft, hard)
        first = await WireClient.connect(server.port)
        second = await WireClient.connect(server.port)
        third = await WireClient.connect(server.port)  # a third from 127.0.0.1: over 2
        try:
            await first.hello()
            await second.hello()
            refused = await third.expect(Error)
            assert refused.code == "server_full", refused
            await first.request(Guest())
            made = await first.request(CreateTable(game=Game.HEARTS, preset="hearts", bots=[1, 2]))
            assert isinstance(made, TableCreated), made
            await second.request(Guest())
            refused_table = await second.request(
                CreateTable(game=Game.HEARTS, preset="hearts", bots=[1, 2])
            )
            assert isinstance(refused_table, Error), refused_table
            assert refused_table.code == "table_limit", refused_table
        finally:
            for client in (first, second, third):
                await client.aclose()


def test_the_caps_must_be_positive() -> None:
    from typer.testing import CliRunner

    from server.cli import app

    result = CliRunner().invoke(app, ["serve", "--max-connections", "0"])
    assert result.exit_code == 2 and "--max-connections" in result.output
