"""`spades-server admin` as an operator runs it: real processes against a real server on 127.0.0.1
(port 0). The token is made on the database's machine and read from a file or the environment;
every mistake is one line on stderr and an exit code (docs/operations.md, Administer a running
server)."""

import os
import stat
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio

from protocol.messages import Announcement, Bye, Error, LoggedIn, Login, Register, Registered
from server.app import Server, local_config, running_server
from server.failures import ExitCode
from tests.server.wire_client import WireClient

CLI = [sys.executable, "-m", "server.cli"]


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    async with running_server(local_config(tmp_path / "server.db")) as srv:
        yield srv


async def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    done = await trio.run_process(
        [*CLI, *args],
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        env={**os.environ, **(env or {})},
    )
    return done.returncode, done.stdout.decode(), done.stderr.decode()


async def run_here(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """The command line in this process (on a thread: it runs its own trio loop), for the
    many cases where a new process would only cost time."""
    from typer.testing import CliRunner

    from server.cli import app

    runner = CliRunner(env={"SPADES_OPERATOR_TOKEN": None, **(env or {})})
    done = await trio.to_thread.run_sync(lambda: runner.invoke(app, list(args)))
    return done.exit_code, done.stdout, done.stderr


async def make_token_file(tmp_path: Path) -> Path:
    path = tmp_path / "operator.token"
    code, out, err = await run(
        "admin", "token", "--db", str(tmp_path / "server.db"), "--out", str(path)
    )
    assert code == 0, err
    assert out == "" and err == f"operator token written to {path} (mode 600)\n"
    return path


async def test_token_is_shown_once_or_written_for_its_owner_alone(
    server: Server, tmp_path: Path
) -> None:
    with trio.fail_after(60):
        path = await make_token_file(tmp_path)
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        assert path.read_text().startswith("op-")
        # Never overwritten.
        code, _, err = await run_here(
            "admin", "token", "--db", str(tmp_path / "server.db"), "--out", str(path)
        )
        assert code == ExitCode.USAGE and err.count("\n") == 1 and "exists" in err
        # Printed on stdout otherwise, and good at once on the running server.
        code, out, err = await run_here("admin", "token", "--db", str(tmp_path / "server.db"))
        assert code == 0 and out.startswith("op-") and "shown this once" in err
        env = {"SPADES_OPERATOR_TOKEN": out.strip()}
        code, out, err = await run(
            "admin", "--server", f"127.0.0.1:{server.port}", "sessions", env=env
        )  # a process of its own: the token from its environment
        assert code == 0, err
        assert out.splitlines()[0].split() == [
            "SESSION",
            "ACCOUNT",
            "ADDRESS",
            "TRANSPORT",
            "TABLES",
        ]
        assert "(operator)" in out and err == "1 connection; (t1): watching\n"


async def test_announce_kick_ban_unban_through_the_command_line(
    server: Server, tmp_path: Path
) -> None:
    with trio.fail_after(60):
        token = await make_token_file(tmp_path)
        admin = ["admin", "--server", f"127.0.0.1:{server.port}", "--token-file", str(token)]
        ann = await WireClient.connect(server.port)
        await ann.hello()
        registered = await ann.request(Register(name="ann"))
        assert isinstance(registered, Registered)

        code, out, err = await run(*admin, "announce", "restart at 22:00")
        assert (code, out, err) == (0, "told 2 connections\n", "")
        assert (await ann.expect(Announcement)).text == "restart at 22:00"

        code, out, _ = await run_here(*admin, "sessions")
        assert code == 0 and "ann" in out and "127.0.0.1" in out

        code, out, err = await run(*admin, "kick", "ann", "--reason", "reconnect please")
        assert (code, out) == (0, "kicked 1 connection(s)\n"), err
        assert (await ann.expect(Bye)).reason == "kicked by the operator: reconnect please"
        await ann.aclose()

        code, out, err = await run_here(*admin, "ban", "account", "ann", "--reason", "cheating")
        assert (code, out) == (0, "account ann banned; 0 connection(s) closed\n"), err
        code, out, _ = await run_here(*admin, "bans")
        assert out == "account ann  (cheating)\n"
        back = await WireClient.connect(server.port)
        await back.hello()
        refused = await back.request(Login(token=registered.token))
        assert isinstance(refused, Error) and refused.code == "banned"
        await back.aclose()

        code, out, err = await run_here(*admin, "unban", "account", "ann")
        assert (code, out) == (0, "account ann unbanned\n"), err
        again = await WireClient.connect(server.port)
        await again.hello()
        assert isinstance(await again.request(Login(token=registered.token)), LoggedIn)
        await again.aclose()


async def test_every_mistake_is_one_line_and_an_exit_code(server: Server, tmp_path: Path) -> None:
    with trio.fail_after(60):
        token = await make_token_file(tmp_path)
        wrong = tmp_path / "wrong.token"
        wrong.write_text("op-not-a-token-of-this-server\n")
        here = f"127.0.0.1:{server.port}"
        with trio.socket.socket() as probe:  # a port nobody listens on
            await probe.bind(("127.0.0.1", 0))
            closed_port = probe.getsockname()[1]
        cases: list[tuple[list[str], dict[str, str], int, str]] = [
            (["--server", here, "sessions"], {}, ExitCode.USAGE, "no operator token"),
            (
                ["--server", here, "--token-file", str(tmp_path / "none"), "sessions"],
                {},
                ExitCode.USAGE,
                "cannot read --token-file",
            ),
            (["--server", "a:b:c:d://", "sessions"], {}, ExitCode.USAGE, "--server"),
            (
                ["--server", here, "--token-file", str(wrong), "sessions"],
                {},
                ExitCode.REFUSED,
                "the server refused the operator token (bad_token",
            ),
            (
                ["--server", f"127.0.0.1:{closed_port}", "--token-file", str(token), "sessions"],
                {},
                ExitCode.UNREACHABLE,
                f"cannot reach 127.0.0.1:{closed_port}",
            ),
            (
                ["--server", here, "--token-file", str(token), "kick", "nobody"],
                {},
                ExitCode.REFUSED,
                "refused: no_such_session",
            ),
            (
                ["--server", here, "--token-file", str(token), "close", "no-such"],
                {},
                ExitCode.REFUSED,
                "refused: no_such_table",
            ),
            (
                ["--server", here, "--token-file", str(token), "close", "bad id!"],
                {},
                ExitCode.USAGE,
                "table:",
            ),
            (
                ["--server", here, "--token-file", str(token), "ban", "address", "nowhere"],
                {},
                ExitCode.USAGE,
                "is not an IP address or network",
            ),
            (
                ["--server", here, "--ca", "x.pem", "--token-file", str(token), "sessions"],
                {},
                ExitCode.USAGE,
                "--ca is for a TLS server",
            ),
        ]
        for args, _env, expected, said in cases:
            code, out, err = await run_here("admin", *args)
            assert code == expected, (args, code, err)
            assert err.startswith("error: ") and err.count("\n") == 1, (args, err)
            assert said in err, (args, err)
            assert out == ""
        # The database the token is made in must be usable: one line, exit 4.
        code, _, err = await run_here("admin", "token", "--db", str(tmp_path / "no" / "such.db"))
        assert code == ExitCode.DATABASE and err.count("\n") == 1, err


async def test_sessions_and_bans_are_read_page_by_page(
    server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import server.operator as operator_module

    # Pages of one: the command must read them all.
    monkeypatch.setattr(operator_module, "MAX_SESSIONS_LISTED", 1)
    monkeypatch.setattr(operator_module, "MAX_BANS_LISTED", 1)
    with trio.fail_after(30):
        token = await make_token_file(tmp_path)
        admin = ["admin", "--server", f"127.0.0.1:{server.port}", "--token-file", str(token)]
        players = []
        for name in ("ann", "bob"):
            client = await WireClient.connect(server.port)
            await client.hello()
            assert isinstance(await client.request(Register(name=name)), Registered)
            players.append(client)
        code, out, err = await run_here(*admin, "sessions")
        assert code == 0, err
        lines = out.splitlines()
        assert len(lines) == 4 and lines[1].split()[1:3] == ["ann", "127.0.0.1"]
        assert lines[2].split()[1] == "bob" and "(operator)" in lines[3]
        assert err == "3 connections; (t1): watching\n"
        for kind, target in (("account", "mallory"), ("address", "198.51.100.7")):
            code, _, err = await run_here(*admin, "ban", kind, target)
            assert code == 0, err
        code, out, err = await run_here(*admin, "bans")
        assert (code, out) == (0, "account mallory\naddress 198.51.100.7/32\n"), err
        for client in players:
            await client.aclose()
