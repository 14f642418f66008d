"""`serve --workers N --metrics-port P`: each worker answers /healthz, /readyz and /metrics of its
own (worker i on P + i; P = 0: any free port each), and the supervisor prints every address."""

import re
import subprocess

import trio

from tests.server.cluster.test_workers import CLI, stop
from tests.server.test_health_metrics import http, samples, value

WORKER_LINE = re.compile(r"spades-server worker metrics: http://127\.0\.0\.1:(\d+)/metrics")


async def test_each_worker_answers_on_a_metrics_port_of_its_own(pg_url: str) -> None:
    with trio.fail_after(90):
        process = await trio.lowlevel.open_process(
            [
                *CLI,
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                "0",
                "--no-web",
                "--no-ladder",
                "--workers",
                "2",
                "--metrics-port",
                "0",
                "--db",
                pg_url,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert process.stdout is not None
        try:
            text = ""
            while len(WORKER_LINE.findall(text)) < 2:  # bounded by fail_after
                chunk = await process.stdout.receive_some(4096)
                assert chunk, f"the supervisor exited: {text!r}"
                text += chunk.decode()
            assert "listening with 2 workers" in text.splitlines()[0], text
            ports = [int(p) for p in WORKER_LINE.findall(text)]
            assert len(set(ports)) == 2
            for port in ports:
                status, _, body = await http(port, "/readyz")
                assert (status, body) == (200, b"ready\n")
                seen = samples((await http(port, "/metrics"))[2].decode())
                assert value(seen, "spades_cluster_lease_held") == 1
        finally:
            await stop(process)
        assert process.returncode == 0
