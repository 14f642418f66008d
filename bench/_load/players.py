"""Lean random players over the real protocol: K tables of four seats, each seat its own connection.

For each table: four connections say `hello` (kind bot) and `guest`; seat 0 opens a Spades table
(`create_table`, sitting at seat 0), seats 1-3 `join` it. Then, on `go`, every `your_turn` is answered
with `act` carrying a uniformly random entry of `legal` and the turn's version (what the `random` sample
bot does, without the SDK's view tracking). Modes:

- `flat`: act as soon as the turn arrives;
- `paced`: each table acts at most `--rate` times a second (on a fixed schedule per table).

For every action it times the span from sending `act` to the moment all four seats have received an
event of the new version (same process, same clock). Protocol on stdin/stdout, for bench/server.py:
prints `ready N` once set up, waits for `go START_EPOCH`, counts only inside
[START + warmup, START + warmup + duration], then prints one JSON line of counts and latency samples.

    python -m bench._load.players --port 7777 --tables 8 --mode flat --warmup 2 --duration 10
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any

import trio

from bench._load.procs import raise_nofile
from bench._load.wire import RECEIVE_CHUNK, FrameReader, connect, frame

SEATS = 4
GAME_OPTIONS = {"target_score": 0, "max_hands": 1000}  # a game outlasts any bench run


@dataclass
class Window:
    """When counting starts and stops (epoch seconds)."""

    begin: float = float("inf")  # acting starts (the warm-up before `start` is not counted)
    start: float = float("inf")
    stop: float = float("inf")

    def inside(self, now: float) -> bool:
        return self.start <= now < self.stop


@dataclass
class Totals:
    actions: int = 0  # `ok` answers to `act` inside the window
    hands: int = 0  # `hand_scored` seen by seat 0 inside the window
    events: int = 0  # frames received by all seats inside the window
    errors: dict[str, int] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)
    late_ms: list[float] = field(default_factory=list)  # paced: how far behind schedule acts went
    games_over: int = 0


class Seat:
    """One seat's connection and what it is waiting for."""

    def __init__(self, table: Table, index: int, stream: trio.SocketStream) -> None:
        self.table = table
        self.index = index
        self.stream = stream
        self.reader = FrameReader()
        self.next_id = 1
        self.replies: dict[int, trio.MemorySendChannel[dict[str, Any]]] = {}

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send a request and wait for its reply (during set-up, while the reader runs)."""
        rid = self.next_id
        self.next_id += 1
        send, receive = trio.open_memory_channel[dict[str, Any]](1)
        self.replies[rid] = send
        await self.stream.send_all(frame({"t": message["t"], "id": rid, **message}))
        with trio.fail_after(60):
            reply = await receive.receive()
        return reply

    async def read(self, totals: Totals, window: Window) -> None:
        """Read frames until the connection ends; hand turns to the table, note what arrives."""
        table = self.table
        while True:
            try:
                data = await self.stream.receive_some(RECEIVE_CHUNK)
            except (trio.BrokenResourceError, trio.ClosedResourceError):
                return
            if not data:
                return
            now = time.time()
            counting = window.inside(now)
            for message in self.reader.feed(data):
                kind = message.get("t")
                if counting:
                    totals.events += 1
                rid = message.get("id")
                if rid is not None and rid in self.replies:
                    self.replies.pop(rid).send_nowait(message)
                    continue
                if kind == "ok":
                    if counting:
                        totals.actions += 1
                    continue
                if kind == "error":
                    code = str(message.get("code"))
                    totals.errors[code] = totals.errors.get(code, 0) + 1
                    if code == "rate_limited":
                        table.retry(self.index)
                    continue
                version = message.get("version")
                if version is None:
                    continue
                table.seen(self.index, version, now, counting, totals)
                if kind == "your_turn":
                    table.turn(self.index, version, message["legal"])
                elif kind == "hand_scored" and self.index == 0 and counting:
                    totals.hands += 1
                elif kind == "game_over" and self.index == 0:
                    totals.games_over += 1


class Table:
    """Four seats and the task that acts for whichever of them is to act."""

    def __init__(self, number: int, rng: random.Random) -> None:
        self.number = number
        self.rng = rng
        self.table_id = ""
        self.seats: list[Seat] = []
        self.turns: dict[int, tuple[int, list[Any]]] = {}
        self.last_turn: dict[int, tuple[int, list[Any]]] = {}
        self.wake = trio.Event()
        self.pending: tuple[float, int, set[int]] | None = None  # sent at, version wanted, seen by
        self.next_id = 10_000

    def turn(self, seat: int, version: int, legal: list[Any]) -> None:
        self.turns[seat] = (version, legal)
        self.last_turn[seat] = (version, legal)
        self.wake.set()

    def retry(self, seat: int) -> None:
        """An `act` was refused as rate limited: the turn stands; take it again."""
        if seat in self.last_turn and seat not in self.turns:
            self.turns[seat] = self.last_turn[seat]
            self.wake.set()

    def seen(self, seat: int, version: int, now: float, counting: bool, totals: Totals) -> None:
        pending = self.pending
        if pending is None or version < pending[1]:
            return
        pending[2].add(seat)
        if len(pending[2]) == SEATS:
            if counting:
                totals.latencies_ms.append(round((now - pending[0]) * 1000, 3))
            self.pending = None

    async def act(self, mode: str, rate: float, window: Window, totals: Totals) -> None:
        """Answer turns until the window closes: at once (flat), or on the table's schedule (paced)."""
        period = 1.0 / rate if mode == "paced" else 0.0
        slot = window.begin - (self.rng.random() * period if period else 0.0)
        await trio.sleep(max(0.0, window.begin - time.time()))
        while True:
            await self.wake.wait()
            self.wake = trio.Event()
            if time.time() >= window.stop:
                return
            while self.turns:
                seat, (version, legal) = self.turns.popitem()
                if period:
                    slot += period
                    now = time.time()
                    if slot > now:
                        await trio.sleep(slot - now)
                    elif window.inside(now):
                        totals.late_ms.append(round((now - slot) * 1000, 3))
                        if now - slot > period:
                            slot = now  # far behind: do not try to catch up in a burst
                choice = legal[self.rng.randrange(len(legal))]
                self.next_id += 1
                data = frame(
                    {
                        "t": "act",
                        "id": self.next_id,
                        "table": self.table_id,
                        "version": version,
                        "action": choice,
                    }
                )
                self.pending = (time.time(), version + 1, set())
                try:
                    await self.seats[seat].stream.send_all(data)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return


async def set_up(table: Table, port: int, totals: Totals, window: Window, nursery: Any) -> None:
    for index in range(SEATS):
        seat = Seat(table, index, await connect(port))
        table.seats.append(seat)
        nursery.start_soon(seat.read, totals, window)
    for seat in table.seats:
        welcome = await seat.request(
            {"t": "hello", "protocol": "1.0", "client": "bench-random/1", "kind": "bot"}
        )
        assert welcome["t"] == "welcome", welcome
        logged = await seat.request({"t": "guest"})
        assert logged["t"] == "logged_in", logged
    created = await table.seats[0].request(
        {
            "t": "create_table",
            "game": "spades",
            "preset": "standard",
            "options": GAME_OPTIONS,
            "sit": 0,
        }
    )
    assert created["t"] == "table_created", created
    table.table_id = created["table"]
    for seat in table.seats[1:]:
        joined = await seat.request({"t": "join", "table": table.table_id, "seat": seat.index})
        assert joined["t"] == "joined", joined


async def run(args: argparse.Namespace) -> dict[str, Any]:
    totals = Totals()
    window = Window()
    rng = random.Random(args.seed)
    tables = [Table(n, random.Random(rng.getrandbits(64))) for n in range(args.tables)]
    setup_started = time.time()
    async with trio.open_nursery() as nursery:
        limiter = trio.CapacityLimiter(args.setup_concurrency)

        async def one(table: Table) -> None:
            async with limiter:
                await set_up(table, args.port, totals, window, nursery)

        async with trio.open_nursery() as setups:
            for table in tables:
                setups.start_soon(one, table)
        setup_s = time.time() - setup_started
        print(f"ready {len(tables)}", flush=True)
        line = await trio.to_thread.run_sync(sys.stdin.readline)
        word, _, start_text = line.strip().partition(" ")
        if word != "go":
            nursery.cancel_scope.cancel()
            return {"aborted": line.strip()}
        window.begin = float(start_text)
        window.start = window.begin + args.warmup
        window.stop = window.start + args.duration
        async with trio.open_nursery() as actors:
            for table in tables:
                actors.start_soon(table.act, args.mode, args.rate, window, totals)
            await trio.sleep(max(0.0, window.stop - time.time()) + 0.05)
            actors.cancel_scope.cancel()
        # Let the last answers arrive, then hang up.
        await trio.sleep(0.2)
        nursery.cancel_scope.cancel()
    return {
        "tables": len(tables),
        "setup_s": round(setup_s, 2),
        "actions": totals.actions,
        "hands": totals.hands,
        "events": totals.events,
        "errors": totals.errors,
        "games_over": totals.games_over,
        "latencies_ms": totals.latencies_ms,
        "late_ms": totals.late_ms,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--tables", type=int, required=True)
    parser.add_argument("--mode", choices=["flat", "paced"], default="flat")
    parser.add_argument("--rate", type=float, default=10.0, help="paced: actions/s per table")
    parser.add_argument("--warmup", type=float, default=2.0)
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--setup-concurrency", type=int, default=16)
    args = parser.parse_args()
    raise_nofile()
    result = trio.run(run, args)
    print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
