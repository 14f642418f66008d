"""The web port under slow connections from many addresses: is a newcomer still served?

Issue 37 item 7. For each count of attacking addresses (127.0.0.2, 127.0.0.3, ...: the client
socket bound to each), every address opens as many slow connections as the port lets it (each
answers one request, so it surely counts, then sends half a request head and stops), up to 64
each. Then a newcomer on 127.0.0.200 asks for the page `--requests` times, one after another;
the bench counts its answers by status and times them. The port is `serve_web` itself, with the
default `WebLimits` (128 slots) but a 60 s head deadline so the slow connections outlast the
run; it runs in this process, with the clients (the latencies include their work).

Prints a line per count and one JSON object on its last line (bench/report.py).

    .venv/bin/python bench/web_slots.py [--addresses 0,5,10,40] [--requests 200]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from server.web import WebLimits, serve_web

NEWCOMER = "127.0.0.200"
MOST_PER_ADDRESS = 64  # tries per attacking address (the old share was 32, the new 16)


async def no_session(stream: trio.abc.Stream, peer: str) -> None:
    await stream.aclose()


async def hold(port: int, source: str) -> trio.SocketStream | None:
    """A slow connection from `source`, counted for sure; None if the port refused it."""
    stream = await trio.open_tcp_stream("127.0.0.1", port, local_address=source)
    try:
        await stream.send_all(b"GET /icon.svg HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        data = b""
        while b"</svg>" not in data:
            chunk = await stream.receive_some(65536)
            data += chunk
            if not chunk or data.startswith(b"HTTP/1.1 503"):
                await stream.aclose()
                return None
        await stream.send_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")
    except trio.BrokenResourceError:
        await stream.aclose()
        return None
    return stream


async def page(port: int) -> tuple[str, float]:
    """The newcomer's GET /: its status ("reset" if the connection was reset) and seconds."""
    start = time.perf_counter()
    stream = await trio.open_tcp_stream("127.0.0.1", port, local_address=NEWCOMER)
    data = b""
    async with stream:
        try:
            await stream.send_all(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
            while chunk := await stream.receive_some(65536):
                data += chunk
        except trio.BrokenResourceError:
            pass
    status = data[9:12].decode() if data.startswith(b"HTTP/1.1 ") else "reset"
    return status, time.perf_counter() - start


async def run(addresses: int, requests: int) -> dict[str, Any]:
    async with trio.open_nursery() as nursery:
        port = await nursery.start(
            partial(
                serve_web,
                no_session,
                host="127.0.0.1",
                port=0,
                tls=None,
                max_message_bytes=65536,
                session_nursery=nursery,
                limits=WebLimits(request_timeout=60),
            )
        )
        held: list[trio.SocketStream] = []
        with trio.fail_after(120):
            for n in range(2, 2 + addresses):
                for _ in range(MOST_PER_ADDRESS):
                    stream = await hold(port, f"127.0.0.{n}")
                    if stream is None:
                        break
                    held.append(stream)
            answers = [await page(port) for _ in range(requests)]
        for stream in held:
            await trio.aclose_forcefully(stream)
        nursery.cancel_scope.cancel()
    times = sorted(seconds for _, seconds in answers)
    statuses = Counter(status for status, _ in answers)
    return {
        "addresses": addresses,
        "slow_connections_accepted": len(held),
        "newcomer": dict(statuses),
        "newcomer_served": statuses["200"] / requests,
        "p50_ms": round(times[len(times) // 2] * 1000, 1),
        "p99_ms": round(times[min(len(times) - 1, len(times) * 99 // 100)] * 1000, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--addresses", default="0,5,10,40", help="counts of attacking addresses")
    parser.add_argument("--requests", type=int, default=200, help="the newcomer's requests")
    args = parser.parse_args()
    rows = []
    for count in (int(x) for x in args.addresses.split(",")):
        row = trio.run(run, count, args.requests)
        rows.append(row)
        print(
            f"{count:3} addresses: {row['slow_connections_accepted']:3} slow connections held; "
            f"newcomer {row['newcomer']} p50 {row['p50_ms']} ms p99 {row['p99_ms']} ms",
            flush=True,
        )
    emit({"bench": "web_slots", "requests": args.requests, "rows": rows})


if __name__ == "__main__":
    main()
