"""/healthz, /readyz and /metrics (server/health.py, server/metrics.py): on the web port and on the
operator's port of their own, against a real server on 127.0.0.1 (ports 0) after real play, with
the exposition checked by Prometheus's own `promtool check metrics`."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import trio
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from protocol.messages import (
    Act,
    CreateTable,
    Error,
    Guest,
    Join,
    LoggedIn,
    Snapshot,
    TableCreated,
)
from protocol.types import Action, ActionKind, Game
from server.app import Server, local_config, running_server
from server.cli import app
from server.cluster.workers import worker_arguments
from server.config import DEFAULT_METRICS_PORT, Limits
from tests.hostile.proc import ServerProcess, server_command
from tests.server.players import play_until_over, random_choice
from tests.server.wire_client import WireClient
from tests.web.ws_client import WSClient

HEADERS_END = b"\r\n\r\n"


async def http(
    port: int, path: str, method: str = "GET", host: str = "127.0.0.1"
) -> tuple[int, dict[str, str], bytes]:
    """One request on a fresh connection (`Connection: close`); the status, headers and body."""
    stream = await trio.open_tcp_stream("127.0.0.1", port)
    async with stream:
        request = f"{method} {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
        await stream.send_all(request.encode())
        data = b""
        for _ in range(10_000):  # until the server closes (bounded: a reply is small)
            chunk = await stream.receive_some(65536)
            if not chunk:
                break
            data += chunk
    head, _, body = data.partition(HEADERS_END)
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    return int(lines[0].split()[1]), headers, body


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of an exposition, by name and sorted labels."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(
    seen: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    return seen[(name, tuple(sorted(labels.items())))]


def need_promtool() -> str:
    """Debian's `promtool` (package `prometheus`): skipped without it, unless it is required
    (`.ci/run` sets SPADES_REQUIRE_PROMTOOL=1 and installs it)."""
    found = shutil.which("promtool")
    if found is None:
        missing = "no promtool (apt-get install prometheus)"
        if os.environ.get("SPADES_REQUIRE_PROMTOOL"):
            pytest.fail(missing)
        pytest.skip(missing)
    return found


def promtool_check(text: bytes) -> None:
    """`promtool check metrics` accepts the exposition: no errors and no lint problems."""
    checked = subprocess.run(
        [need_promtool(), "check", "metrics"],
        check=False,
        input=text,
        capture_output=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout.decode() + checked.stderr.decode()
    assert checked.stdout.strip() == b"", checked.stdout.decode()


@pytest.fixture
async def ops_server(tmp_path: Path) -> AsyncIterator[Server]:
    """A server with its web page and its operator's port, both on 127.0.0.1 (ports 0)."""
    config = local_config(tmp_path / "server.db", web_port=0, metrics_port=0)
    async with running_server(config) as srv:
        assert srv.web_port and srv.metrics_port
        yield srv


async def test_healthz_and_readyz_answer_on_both_ports(ops_server: Server) -> None:
    with trio.fail_after(10):
        for port in (ops_server.web_port, ops_server.metrics_port):
            assert port is not None
            status, headers, body = await http(port, "/healthz")
            assert (status, body) == (200, b"ok\n")
            assert headers["content-type"] == "text/plain; charset=utf-8"
            status, _, body = await http(port, "/readyz")
            assert (status, body) == (200, b"ready\n")
            status, headers, body = await http(port, "/metrics", method="HEAD")
            assert status == 200 and body == b""
            assert headers["content-type"] == "text/plain; version=0.0.4; charset=utf-8"


async def test_the_operators_port_serves_nothing_else(ops_server: Server) -> None:
    port = ops_server.metrics_port
    assert port is not None
    with trio.fail_after(10):
        assert (await http(port, "/"))[0] == 404
        assert (await http(port, "/index.html"))[0] == 404
        status, _, _ = await http(port, "/ws")  # no WebSocket here, upgrade or not
        assert status == 404
        assert (await http(port, "/metrics", method="POST"))[0] == 405


async def test_metrics_move_with_play_and_pass_promtool(ops_server: Server) -> None:
    server = ops_server
    assert server.web_port is not None and server.metrics_port is not None
    with trio.fail_after(60):
        before = samples((await http(server.metrics_port, "/metrics"))[2].decode())
        assert value(before, "spades_actions_total", source="player") == 0
        assert value(before, "spades_tables", state="playing") == 0
        # One player over TCP with three built-in bots, a whole (short) game of Hearts.
        client = await WireClient.connect(server.port)
        await client.hello()
        assert isinstance(await client.request(Guest(name="metered")), LoggedIn)
        created = await client.request(
            CreateTable(
                game=Game.HEARTS,
                preset="hearts",
                options={"target_score": 20},
                bots=[1, 2, 3],
                sit=0,
            )
        )
        assert isinstance(created, TableCreated)
        await client.expect(Snapshot)
        # A refusal: a bid in a game of Hearts, for a version still to come.
        refused = await client.request(
            Act(table=created.table, version=10_000, action=Action(kind=ActionKind.BID, tricks=3))
        )
        assert isinstance(refused, Error)
        # A watcher over the web port's WebSocket.
        ws = await WSClient.connect(server.web_port)
        await ws.hello()
        mid = samples((await http(server.web_port, "/metrics"))[2].decode())
        assert value(mid, "spades_connections", transport="tcp") == 1
        assert value(mid, "spades_connections", transport="websocket") == 1
        assert value(mid, "spades_sessions", kind="human") == 1  # the WebSocket is not logged in
        assert value(mid, "spades_tables", state="playing") == 1
        assert value(mid, "spades_refusals_total", code=refused.code) == 1
        await play_until_over(client, created.table, random_choice(3))
        status, _, body = await http(server.metrics_port, "/metrics")
        assert status == 200
        after = samples(body.decode())
        player = value(after, "spades_actions_total", source="player")
        bots = value(after, "spades_actions_total", source="bot")
        assert player >= 13 and bots >= 39  # at least a hand each
        # Every act of the player and the bots has its latency observed, and every commit its time.
        assert value(after, "spades_act_to_delivered_seconds_count") == player + bots
        assert value(after, "spades_store_commit_seconds_count") == server.store.batches > 0
        assert value(after, "spades_store_batches_total") == server.store.batches
        assert value(after, "spades_tables", state="finished") == 1
        assert value(after, "spades_connections_accepted_total", transport="tcp") == 1
        assert value(after, "spades_connections_accepted_total", transport="websocket") == 1
        assert value(after, "spades_ready") == 1
        assert value(after, "spades_store_reachable") == 1
        assert ("spades_link_peers", ()) not in after  # not a cluster
        assert ("process_open_fds", ()) in after
        # Nothing secret: no account name, token, table id.
        text = body.decode()
        assert "metered" not in text and created.table not in text
        promtool_check(body)
        await client.aclose()
        await ws.aclose()


async def test_two_servers_in_one_process_count_apart(tmp_path: Path) -> None:
    with trio.fail_after(30):
        async with (
            running_server(local_config(tmp_path / "a.db", metrics_port=0)) as a,
            running_server(local_config(tmp_path / "b.db", metrics_port=0)) as b,
        ):
            assert a.metrics_port is not None and b.metrics_port is not None
            client = await WireClient.connect(a.port)
            await client.hello()
            await client.request(Join(table="nope"))  # refused: no such table
            seen_a = samples((await http(a.metrics_port, "/metrics"))[2].decode())
            seen_b = samples((await http(b.metrics_port, "/metrics"))[2].decode())
            assert value(seen_a, "spades_connections", transport="tcp") == 1
            assert value(seen_b, "spades_connections", transport="tcp") == 0
            assert sum(v for (n, _), v in seen_a.items() if n == "spades_refusals_total") == 1
            assert sum(v for (n, _), v in seen_b.items() if n == "spades_refusals_total") == 0
            await client.aclose()


async def test_readyz_is_503_while_the_store_is_unreachable(ops_server: Server) -> None:
    port = ops_server.metrics_port
    assert port is not None
    with trio.fail_after(10):
        ops_server.store.reachable = False  # as the writer says when a batch finds it gone
        status, _, body = await http(port, "/readyz")
        assert (status, body) == (503, b"not ready: the database cannot be reached\n")
        assert (await http(port, "/healthz"))[0] == 200  # alive all the same
        seen = samples((await http(port, "/metrics"))[2].decode())
        assert value(seen, "spades_ready") == 0 and value(seen, "spades_store_reachable") == 0
        ops_server.store.reachable = True
        assert (await http(port, "/readyz"))[0] == 200


async def test_readyz_is_503_while_the_server_shuts_down(tmp_path: Path) -> None:
    config = local_config(tmp_path / "server.db", metrics_port=0)
    with trio.fail_after(20):
        async with running_server(config) as server:
            port = server.metrics_port
            assert port is not None
            # A client that reads nothing holds the shutdown for its flush (about a second),
            # while the operator's port still answers.
            held = await trio.open_tcp_stream("127.0.0.1", server.port)
            server.request_stop()
            status, _, body = await http(port, "/readyz")
            assert (status, body) == (503, b"not ready: the server is shutting down\n")
            await held.aclose()


METRICS_LINE = re.compile(rb"spades-server metrics: http://127\.0\.0\.1:(\d+)/metrics")


async def test_serve_without_the_page_answers_on_the_metrics_port(tmp_path: Path) -> None:
    server = ServerProcess(tmp_path / "served.db", "--no-web", "--no-ladder", "--metrics-port", "0")
    with server, trio.fail_after(60):
        found = METRICS_LINE.search(server.stdout_path.read_bytes())
        assert found is not None, server.stdout_path.read_text()
        port = int(found.group(1))
        status, _, body = await http(port, "/healthz")
        assert (status, body) == (200, b"ok\n")
        status, _, body = await http(port, "/readyz")
        assert (status, body) == (200, b"ready\n")
        status, _, body = await http(port, "/metrics")
        assert status == 200 and b"spades_ready 1.0" in body
        assert server.stop() == 0


def test_serve_refuses_a_bad_metrics_port() -> None:
    result = CliRunner().invoke(app, ["serve", "--metrics-port", "70000"])
    assert result.exit_code == 2
    assert "--metrics-port 70000 is not in 0..65535" in result.output


def test_each_worker_gets_a_metrics_port_of_its_own() -> None:
    argv = ["--db", "postgresql://x@h/db", "--workers", "3"]
    first, second = worker_arguments(argv, 0, 9), worker_arguments(argv, 2, 9)
    assert "--metrics-port" not in first  # the web page answers for it
    assert second[-3:] == [
        "--metrics-port",
        str(DEFAULT_METRICS_PORT + 2),
        "--metrics-port-optional",
    ]
    given = ["--workers=2", "--metrics-port", "9100", "--no-web"]
    assert worker_arguments(given, 0, 9)[-2:] == ["--metrics-port", "9100"]
    assert worker_arguments(given, 1, 9)[-2:] == ["--metrics-port", "9101"]
    assert worker_arguments(["--metrics-port=0"], 1, 9)[-2:] == ["--metrics-port", "0"]


async def test_the_checks_answer_for_the_names_the_host_check_admits(ops_server: Server) -> None:
    with trio.fail_after(10):
        for port in (ops_server.web_port, ops_server.metrics_port):
            assert port is not None
            for host in ("127.0.0.1", f"127.0.0.1:{port}", "localhost", f"[::1]:{port}"):
                assert (await http(port, "/healthz", host=host))[0] == 200, host
            # Another site's name (DNS rebinding) is refused, as for the page.
            assert (await http(port, "/metrics", host="evil.example"))[0] == 421


def test_a_busy_metrics_port_is_one_line_and_exit_3_before_the_database(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = subprocess.run(
            [
                *server_command(),
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-web",
                "--no-ladder",
                "--metrics-port",
                str(port),
                "--db",
                str(tmp_path / "busy.db"),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 3, done.stderr
    assert done.stderr.strip().splitlines() == [
        f"error: cannot listen on 127.0.0.1:{port}: the address is already in use"
        " (is another server running?)"
    ], done.stderr
    assert not (tmp_path / "busy.db").exists()  # told before the database is touched


async def test_readyz_is_503_while_the_server_is_full(tmp_path: Path) -> None:
    config = local_config(tmp_path / "server.db", metrics_port=0, limits=Limits(max_connections=1))
    with trio.fail_after(10):
        async with running_server(config) as server:
            assert server.metrics_port is not None
            client = await WireClient.connect(server.port)
            await client.hello()  # the one connection allowed
            status, _, body = await http(server.metrics_port, "/readyz")
            assert (status, body) == (
                503,
                b"not ready: the server has no room for another connection\n",
            )
            await client.aclose()


async def test_a_busy_default_metrics_port_is_logged_and_the_server_serves_on(
    tmp_path: Path,
) -> None:
    with socket.socket() as busy, trio.fail_after(20):
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        config = local_config(tmp_path / "server.db", metrics_port=port, metrics_port_optional=True)
        async with running_server(config) as server:
            assert server.metrics_port is None
            client = await WireClient.connect(server.port)
            await client.hello()
            await client.aclose()


async def test_without_its_page_the_checks_move_to_the_default_metrics_port(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The web port was wanted on its default port, which was taken: the checks are served on
    the default metrics port instead (here any free port, for the test)."""
    monkeypatch.setattr("server.app.DEFAULT_METRICS_PORT", 0)
    with socket.socket() as busy, trio.fail_after(20):
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        config = local_config(
            tmp_path / "server.db", web_port=busy.getsockname()[1], web_port_optional=True
        )
        async with running_server(config) as server:
            assert server.web_port is None and server.metrics_port is not None
            status, _, body = await http(server.metrics_port, "/readyz")
            assert (status, body) == (200, b"ready\n")


def test_a_busy_default_metrics_port_adds_nothing_to_a_refusal(tmp_path: Path) -> None:
    """The default port taken is logged once the server is up: a refusal before that (here a
    database folder that does not exist) stays the one line it is."""
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        done = subprocess.run(
            [
                *server_command(),
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-web",
                "--metrics-port",
                str(busy.getsockname()[1]),
                "--metrics-port-optional",  # as the default port is
                "--db",
                str(tmp_path / "missing" / "server.db"),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 4, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "does not exist" in done.stderr
