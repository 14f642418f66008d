"""The raw limit: a bare trio server and clients relaying table-shaped msgpack frames, with no game.

Server (`--role server`): one task per connection reading length-prefixed frames and unpacking each
with msgpack, and one writer task per connection draining a bounded outbox (the shape of the real
server without rules, validation or storage). A `join` frame puts the connection at a table's seat; an
`act` frame (the size of a real `act`) makes one `card_played`-sized event, packed per recipient with its
own `seq`, for each of the table's four seats. A `hello` frame is answered with a small `welcome` (so
bench/connections.py can compare idle connections with the real server's), a `ping` with a `pong`.

`--role echo` is a bare trio echo server instead (one task per connection), the floor for idle
connections.

Clients (`--role clients`): K tables of four connections; the seat after the one that acted answers each
event with the next `act`, so each table has one action in flight, as at a real table. Same stdin/stdout
protocol as `bench._load.players`: `ready N`, then `go START_EPOCH`, then one JSON line.
"""

from __future__ import annotations

import argparse
import json
import random
import signal
import string
import sys
import time
from typing import Any

import msgpack
import trio

from bench._load.procs import raise_nofile
from bench._load.wire import HEADER, RECEIVE_CHUNK, FrameReader, connect, frame

SEATS = 4
OUTBOX = 256
CARDS = [rank + suit for suit in "CDHS" for rank in "23456789TJQKA"]

# ------------------------------------------------------------------------------------------ server


class RelayConnection:
    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.send, self.receive = trio.open_memory_channel[bytes](OUTBOX)
        self.seq = 0

    def deliver(self, data: bytes) -> None:
        try:
            self.send.send_nowait(data)
        except trio.WouldBlock:
            self.send.close()  # a slow consumer is dropped, as the real server does

    async def writer(self) -> None:
        async with self.receive:
            async for data in self.receive:
                try:
                    await self.stream.send_all(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return


class RelayTable:
    def __init__(self, table_id: str) -> None:
        self.table_id = table_id
        self.seats: list[RelayConnection | None] = [None] * SEATS
        self.version = 0


class RelayServer:
    def __init__(self) -> None:
        self.tables: dict[str, RelayTable] = {}

    async def handle(self, stream: trio.SocketStream) -> None:
        conn = RelayConnection(stream)
        reader = FrameReader()
        table: RelayTable | None = None
        async with trio.open_nursery() as nursery:
            nursery.start_soon(conn.writer)
            while True:
                try:
                    data = await stream.receive_some(RECEIVE_CHUNK)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    break
                if not data:
                    break
                for message in reader.feed(data):
                    kind = message.get("t")
                    if kind == "act" and table is not None:
                        self.act(table, message)
                    elif kind == "join":
                        table_id = str(message["table"])
                        table = self.tables.setdefault(table_id, RelayTable(table_id))
                        table.seats[int(message["seat"]) % SEATS] = conn
                    elif kind == "hello":
                        conn.deliver(
                            frame({"t": "welcome", "id": message.get("id"), "session": "relay"})
                        )
                    elif kind == "ping":
                        conn.deliver(frame({"t": "pong", "id": message.get("id")}))
            conn.send.close()
            nursery.cancel_scope.cancel()

    @staticmethod
    def act(table: RelayTable, message: dict[str, Any]) -> None:
        table.version += 1
        action = message.get("action") or {}
        for seat_conn in table.seats:
            if seat_conn is None:
                continue
            seat_conn.seq += 1
            body = msgpack.packb(
                {
                    "t": "card_played",
                    "seq": seat_conn.seq,
                    "table": table.table_id,
                    "version": table.version,
                    "seat": message.get("seat", 0),
                    "card": action.get("card", "2C"),
                    "trick_number": table.version // 4 % 13 + 1,
                }
            )
            seat_conn.deliver(HEADER.pack(len(body)) + body)


async def echo(stream: trio.SocketStream) -> None:
    """A bare trio echo handler: one task per connection, bytes back as they came."""
    while True:
        try:
            data = await stream.receive_some(RECEIVE_CHUNK)
            if not data:
                return
            await stream.send_all(data)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return


async def serve(role: str) -> None:
    relay = RelayServer()
    handler = echo if role == "echo" else relay.handle
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    async with trio.open_nursery() as nursery:
        nursery.start_soon(trio.serve_listeners, handler, listeners)
        print(f"port {port}", flush=True)
        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async for _ in signals:
                break
        nursery.cancel_scope.cancel()


# ----------------------------------------------------------------------------------------- clients


class ClientTable:
    def __init__(self, number: int, rng: random.Random) -> None:
        alphabet = string.ascii_letters + string.digits
        self.table_id = "".join(rng.choice(alphabet) for _ in range(8))
        self.rng = rng
        self.streams: list[trio.SocketStream] = []
        self.pending: tuple[float, int, set[int]] | None = None
        self.next_id = 0

    def act_frame(self, seat: int, version: int) -> bytes:
        self.next_id += 1
        # The fields and sizes of a real `act`, plus the seat (the relay has no sessions to know it).
        return frame(
            {
                "t": "act",
                "id": self.next_id,
                "table": self.table_id,
                "version": version,
                "action": {"kind": "play", "card": CARDS[self.rng.randrange(52)]},
                "seat": seat,
            }
        )


async def seat_reader(
    table: ClientTable, seat: int, window: dict[str, float], totals: dict[str, Any]
) -> None:
    stream = table.streams[seat]
    reader = FrameReader()
    latencies: list[float] = totals["latencies_ms"]
    while True:
        try:
            data = await stream.receive_some(RECEIVE_CHUNK)
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            return
        if not data:
            return
        now = time.time()
        counting = window["start"] <= now < window["stop"]
        for message in reader.feed(data):
            version = message["version"]
            pending = table.pending
            if pending is not None and version >= pending[1]:
                pending[2].add(seat)
                if len(pending[2]) == SEATS:
                    if counting:
                        latencies.append(round((now - pending[0]) * 1000, 3))
                    table.pending = None
            if seat == 0 and counting:
                totals["actions"] += 1
            if message["seat"] % SEATS == (seat - 1) % SEATS and now < window["stop"]:
                table.pending = (time.time(), version + 1, set())
                await stream.send_all(table.act_frame(seat, version))


async def clients(args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(args.seed)
    tables = [ClientTable(n, random.Random(rng.getrandbits(64))) for n in range(args.tables)]
    window = {"start": float("inf"), "stop": float("inf")}
    totals: dict[str, Any] = {"actions": 0, "latencies_ms": []}
    started = time.time()
    async with trio.open_nursery() as nursery:
        limiter = trio.CapacityLimiter(32)

        async def set_up(table: ClientTable) -> None:
            async with limiter:
                for seat in range(SEATS):
                    stream = await connect(args.port)
                    table.streams.append(stream)
                    await stream.send_all(
                        frame({"t": "join", "table": table.table_id, "seat": seat})
                    )

        async with trio.open_nursery() as setups:
            for table in tables:
                setups.start_soon(set_up, table)
        setup_s = time.time() - started
        await trio.sleep(0.2)  # let the relay register every join
        print(f"ready {len(tables)}", flush=True)
        line = await trio.to_thread.run_sync(sys.stdin.readline)
        word, _, begin = line.strip().partition(" ")
        if word != "go":
            nursery.cancel_scope.cancel()
            return {"aborted": line.strip()}
        window["start"] = float(begin) + args.warmup
        window["stop"] = window["start"] + args.duration
        for table in tables:
            for seat in range(SEATS):
                nursery.start_soon(seat_reader, table, seat, window, totals)
        await trio.sleep(max(0.0, float(begin) - time.time()))
        for table in tables:
            table.pending = (time.time(), 1, set())
            await table.streams[0].send_all(table.act_frame(0, 0))
        await trio.sleep(max(0.0, window["stop"] - time.time()) + 0.2)
        nursery.cancel_scope.cancel()
    return {"tables": len(tables), "setup_s": round(setup_s, 2), **totals}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--role", choices=["server", "echo", "clients"], required=True)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--tables", type=int, default=1)
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    raise_nofile()
    if args.role in ("server", "echo"):
        trio.run(serve, args.role)
        return
    print(json.dumps(trio.run(clients, args)), flush=True)


if __name__ == "__main__":
    main()
