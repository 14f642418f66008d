"""Where the link listens: on the address the other servers dial, not on every interface, and on
a port that is the same at every start (each worker of `--workers N` its own)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest
import trio

from server.cluster import membership
from server.cluster.link import LinkConfig
from server.cluster.node import member_of_cluster
from server.cluster.workers import worker_arguments


def free_port(host: str) -> int:
    with socket.socket() as probe:
        probe.bind((host, 0))
        return int(probe.getsockname()[1])


async def test_the_link_listens_on_the_cluster_address_only(pg_url: str) -> None:
    """`serve --host 0.0.0.0 --cluster-address 127.0.0.2`: the link binds 127.0.0.2 alone (before:
    every interface, so the LAN), on the port asked for, and says so in `cluster_workers`."""
    port = free_port("127.0.0.2")
    with trio.fail_after(30):
        async with member_of_cluster(pg_url, "0.0.0.0", "127.0.0.2", LinkConfig(port=port)) as node:
            (me,) = [w for w in await node.run_statement(membership.workers) if w.id == node.worker]
            assert me.link == f"127.0.0.2:{port}"
            stream = await trio.open_tcp_stream("127.0.0.2", port)
            await stream.aclose()
            with pytest.raises(OSError):
                await trio.open_tcp_stream("127.0.0.3", port)


def test_each_worker_has_a_link_port_of_its_own_the_same_at_every_start() -> None:
    argv = ["--port", "7777", "--link-port", "9000", "--workers", "3", "--db", "postgresql://x"]
    ports = []
    for index in range(3):
        args = worker_arguments(argv, index, 5, 9000)
        assert args.count("--link-port") == 1
        ports.append(int(args[args.index("--link-port") + 1]))
    assert ports == [9000, 9001, 9002]
    any_port = worker_arguments(argv, 2, 5, 0)  # --port 0: every worker's link on any port
    assert any_port[any_port.index("--link-port") + 1] == "0"


def test_a_secret_file_that_cannot_be_used_is_one_line_and_exit_2(tmp_path: Path) -> None:
    short = tmp_path / "short.secret"
    short.write_text("abc\n")
    for path, says in ((tmp_path / "missing", "cannot read"), (short, "holds 3 bytes")):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "server.cli",
                "serve",
                "--cluster",
                "--db",
                "postgresql://nobody@127.0.0.1:1/none",
                "--cluster-secret-file",
                str(path),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 2, done.stderr
        (line,) = done.stderr.strip().splitlines()
        assert line.startswith("error: ") and says in line, line
