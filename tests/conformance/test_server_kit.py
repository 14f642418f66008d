"""The server kit (`spades-bot conformance`) against this project's server, and its command line.

The server passes every scenario but the disagreements listed in KNOWN, each found by the kit and
reported to be decided (fix the server or the document). KNOWN is strict: a disagreement that is
gone fails this test until its line is removed, so the list cannot outlive its cause.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from dataclasses import replace
from functools import partial
from pathlib import Path

import pytest
import trio
from typer.testing import CliRunner

from bots.cli import app as bot_app
from bots.cli import main as bot_main
from bots.conformance.report import Verdict
from bots.conformance.server_kit import CHECKS, check_server
from bots.conformance.target import KIT_ACCOUNTS
from server.app import Server, local_config, running_server
from server.config import Limits

# (scenario, the start of the failure's sentence): what docs/protocol.md says and the server does not.
KNOWN: set[tuple[str, str]] = set()


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    # The kit registers a fresh account for every player it needs, all from 127.0.0.1.
    limits = replace(Limits(), max_registrations_per_address=KIT_ACCOUNTS)
    async with running_server(local_config(tmp_path / "server.db", limits=limits)) as srv:
        yield srv


async def test_the_server_passes_the_server_kit(server: Server) -> None:
    with trio.fail_after(100):
        outcomes = await check_server("127.0.0.1", server.port)
    assert [o.name for o in outcomes] == [name for name, _, _ in CHECKS]
    found = {(o.name, p.text) for o in outcomes for p in o.failures}
    unexpected = [
        f for f in found if not any(f[0] == k[0] and f[1].startswith(k[1]) for k in KNOWN)
    ]
    gone = [k for k in KNOWN if not any(f[0] == k[0] and f[1].startswith(k[1]) for f in found)]
    assert unexpected == [], unexpected
    assert gone == [], f"fixed: remove these from KNOWN: {gone}"
    skipped = [o.name for o in outcomes if o.verdict is Verdict.SKIP]
    assert skipped == []


async def test_a_server_with_a_ladder_refuses_entries_without_an_account(tmp_path: Path) -> None:
    async with running_server(local_config(tmp_path / "ladder.db", ladder=True)) as srv:
        with trio.fail_after(60):
            (outcome,) = await check_server("127.0.0.1", srv.port, ["ladder-queries"])
    assert outcome.verdict is Verdict.PASS, outcome.failures
    assert outcome.notes == []  # not_authenticated itself was checked


async def _run_cli(*args: str) -> tuple[int, str, str]:
    done = await trio.run_process(
        [str(Path(sys.executable).parent / "spades-bot"), *args],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def test_the_command_prints_a_table_and_exits_0_when_all_pass(server: Server) -> None:
    with trio.fail_after(60):
        code, out, err = await _run_cli(
            "conformance", "--server", f"127.0.0.1:{server.port}", "--only", "full-hand,bye"
        )
    assert code == 0, out + err
    assert "full-hand  pass" in out and "bye        pass" in out
    assert "2 passed, 0 failed, 0 skipped" in out


async def test_a_server_that_breaks_the_document_fails_with_the_section_to_read() -> None:
    # A "server" that hangs up on every connection: every check fails, naming what to read.
    async def hang_up(stream: trio.SocketStream) -> None:
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, hang_up, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        with trio.fail_after(60):
            code, out, _err = await _run_cli(
                "conformance", "--server", f"127.0.0.1:{port}", "--only", "handshake,accounts"
            )
        nursery.cancel_scope.cancel()
    assert code == 1
    assert "handshake  FAIL" in out
    assert "read: docs/protocol.md#" in out
    assert "0 passed, 2 failed" in out


def test_usage_mistakes_are_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        bot_main(["conformance", "--only", "nope"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("error: no scenario nope") and err.count("\n") == 1
    result = CliRunner().invoke(bot_app, ["conformance", "--list"])
    assert result.exit_code == 0
    assert all(name in result.output for name, _, _ in CHECKS)
