"""Idle, handshaken connections: open them, hold them, check they are still held.

Commands on stdin, one JSON answer line each on stdout (for bench/connections.py):

- `open N`: open connections until this process holds N; each says `hello` and waits for `welcome`.
- `check`: send `ping` on every held connection; count those answering `pong` within a deadline.
- `quit`: close everything and exit.

    python -m bench._load.idle --port 7777
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import deque
from typing import Any

import trio

from bench._load.procs import raise_nofile
from bench._load.wire import FrameReader, connect, frame

HANDSHAKE_TIMEOUT = 20.0


class Held:
    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.reader = FrameReader()
        self.queue: deque[dict[str, Any]] = deque()

    async def next_message(self) -> dict[str, Any] | None:
        """The next whole message, or None if the server closed the connection."""
        while not self.queue:
            try:
                data = await self.stream.receive_some(4096)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return None
            if not data:
                return None
            self.queue.extend(self.reader.feed(data))
        return self.queue.popleft()


async def open_one(port: int, held: list[Held], errors: dict[str, int]) -> None:
    try:
        with trio.fail_after(HANDSHAKE_TIMEOUT):
            stream = await connect(port, attempts=5)
            conn = Held(stream)
            await stream.send_all(
                frame(
                    {
                        "t": "hello",
                        "id": 1,
                        "protocol": "1.0",
                        "client": "bench-idle/1",
                        "kind": "bot",
                    }
                )
            )
            answer = await conn.next_message()
    except (OSError, trio.TooSlowError, trio.BrokenResourceError) as exc:
        key = type(exc).__name__
        errors[key] = errors.get(key, 0) + 1
        return
    if answer is None or answer.get("t") not in ("welcome", "hello"):  # `hello`: an echo server
        key = "refused:" + str((answer or {}).get("code", "closed"))
        errors[key] = errors.get(key, 0) + 1
        await trio.aclose_forcefully(stream)
        return
    held.append(conn)


async def limited_open(
    limiter: trio.CapacityLimiter, port: int, held: list[Held], errors: dict[str, int]
) -> None:
    async with limiter:
        await open_one(port, held, errors)


async def check(held: list[Held]) -> int:
    answered = 0

    async def ping(conn: Held) -> None:
        nonlocal answered
        with trio.move_on_after(HANDSHAKE_TIMEOUT):
            try:
                await conn.stream.send_all(frame({"t": "ping", "id": 2}))
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            answer = await conn.next_message()
            if answer is not None and answer.get("t") in ("pong", "ping"):  # `ping`: an echo server
                answered += 1

    limiter = trio.CapacityLimiter(500)

    async def limited(conn: Held) -> None:
        async with limiter:
            await ping(conn)

    async with trio.open_nursery() as nursery:
        for conn in held:
            nursery.start_soon(limited, conn)
    return answered


async def run(args: argparse.Namespace) -> None:
    held: list[Held] = []
    errors: dict[str, int] = {}
    limiter = trio.CapacityLimiter(args.concurrency)
    # Bounded: one command per line, and the driver sends a handful.
    for _ in range(1000):
        line = (await trio.to_thread.run_sync(sys.stdin.readline)).strip()
        if not line or line == "quit":
            break
        word, _, arg = line.partition(" ")
        started = time.monotonic()
        if word == "open":
            wanted = int(arg)
            async with trio.open_nursery() as nursery:
                for _ in range(max(0, wanted - len(held))):
                    nursery.start_soon(limited_open, limiter, args.port, held, errors)
            answer: dict[str, Any] = {"open": len(held), "errors": errors}
        elif word == "check":
            answer = {"open": len(held), "answered": await check(held)}
        else:
            answer = {"unknown": line}
        answer["seconds"] = round(time.monotonic() - started, 2)
        print(json.dumps(answer), flush=True)
    for conn in held:
        await trio.aclose_forcefully(conn.stream)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--concurrency", type=int, default=100)
    args = parser.parse_args()
    raise_nofile()
    trio.run(run, args)


if __name__ == "__main__":
    main()
