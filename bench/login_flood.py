"""A bot table and valid logins while 64 connections of one address flood the server with wrong tokens.

One run, one server (`spades-server serve` in a subprocess on 127.0.0.1, its SQLite store in a fresh
file, no ladder, no web port). Before it starts, accounts are written into its database: the flood's
target, stored the way servers before issue 37 stored every token (PBKDF2, 20,000 rounds: the slow
hash, the worst case a flood can aim at); an owner with a token as made now (HMAC: the usual case);
and a supply of old-hash accounts, one for each timed old-hash login (a first login of an account
made by an older server is checked on the server's hashing thread; each is used once, so none is
checked twice).

A spectator (a guest from 127.0.0.1) opens a Spades table of four built-in bots (target 100,000, so
the game runs throughout) and counts the events it is sent. Then `--cycles` pairs of phases of
`--duration` seconds, and a last quiet one (quiet, flooded, quiet, flooded, ..., quiet: the shared
machine's drift falls on both kinds alike):

- quiet: the table's events a second, and from 127.0.0.3 every `--login-every` seconds a valid
  `login`, in turn the owner's (new hash) and a fresh old-hash account's (a fresh connection each,
  timed from `login` sent to `logged_in` read);
- flooded: the same, while a child process holds `--flooders` connections from 127.0.0.2, each
  sending `login` with a wrong token for the target as fast as it is answered (the logins are
  timed from the flood's start, its first burst included; the table once the flood is up, after
  `--settle` seconds).

`ratio` = the flooded phases' events a second / the quiet phases'. The goals (issue 37): ratio >= 0.8
and a valid login's p99 <= 100 ms while flooded (judged for each kind of hash). The flood's answers
are tallied by code (each `bad_token` on the target cost a hash; `rate_limited` ones cost none), and
the machine's load average is printed beside the figures.
Prints one JSON object on its last line (bench/report.py).

    .venv/bin/python bench/login_flood.py [--cycles 3] [--duration 10] [--flooders 64] [--login-every 0.1]
"""

from __future__ import annotations

import argparse
import json
import secrets
import socket
import sys
import tempfile
import time
from collections import Counter, deque
from pathlib import Path
from typing import Any

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._load.drive import summarize_latency
from bench._load.procs import cpu_seconds
from bench._load.wire import FrameReader, frame
from bench.report import emit
from protocol.messages import PROTOCOL_VERSION_TEXT
from server import accounts
from server.storage import Tx, open_store
from tests.hostile.proc import ServerProcess

FLOODER = "127.0.0.2"
OWNER = "127.0.0.3"
REPLY_TIMEOUT = 30.0


class Lean:
    """A lean client (no validation: the server is what is measured) from a chosen source address."""

    def __init__(self, stream: trio.SocketStream) -> None:
        self.stream = stream
        self.reader = FrameReader()
        self.pending: deque[dict[str, Any]] = deque()
        self.next_id = 1

    @classmethod
    async def connect(cls, port: int, source: str) -> Lean:
        sock = trio.socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            await sock.bind((source, 0))
            await sock.connect(("127.0.0.1", port))
        except BaseException:
            sock.close()
            raise
        return cls(trio.SocketStream(sock))

    async def send(self, message: dict[str, Any]) -> int:
        rid = self.next_id
        self.next_id += 1
        await self.stream.send_all(frame({**message, "id": rid}))
        return rid

    async def receive(self) -> dict[str, Any] | None:
        while not self.pending:
            data = await self.stream.receive_some(65536)
            if not data:
                return None
            self.pending.extend(self.reader.feed(data))
        return self.pending.popleft()

    async def reply(self, rid: int) -> dict[str, Any]:
        """The reply to request `rid` (anything else read meanwhile is dropped)."""
        with trio.fail_after(REPLY_TIMEOUT):
            while True:  # bounded by the deadline
                message = await self.receive()
                if message is None:
                    raise ConnectionError("the server closed the connection")
                if message.get("id") == rid and "seq" not in message:
                    return message

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        return await self.reply(await self.send(message))

    async def hello(self) -> None:
        hello = {
            "t": "hello",
            "protocol": PROTOCOL_VERSION_TEXT,
            "client": "bench",
            "kind": "human",
        }
        welcome = await self.request(hello)
        assert welcome["t"] == "welcome", welcome

    async def aclose(self) -> None:
        with trio.CancelScope(shield=True):
            await trio.aclose_forcefully(self.stream)


# ---------------------------------------------------------------- the flooding child process


async def flood(port: int, token: str, connections: int, seconds: float) -> dict[str, int]:
    tally: Counter[str] = Counter()

    async def one() -> None:
        peer = await Lean.connect(port, FLOODER)
        try:
            await peer.hello()
            deadline = trio.current_time() + seconds
            while trio.current_time() < deadline:  # bounded by the clock
                with trio.move_on_at(deadline):
                    # ("ping": not a login at all, for comparison: any message as fast as
                    # answered.)
                    ask: dict[str, Any] = {"t": "login", "token": token}
                    if token == "ping":
                        ask = {"t": "ping"}
                    elif token.startswith("op-"):  # the operator's login, with a wrong token
                        ask = {"t": "operator_login", "token": token}
                    reply = await peer.request(ask)
                    tally[str(reply.get("code", reply["t"]))] += 1
        finally:
            await peer.aclose()

    async with trio.open_nursery() as nursery:
        for _ in range(connections):
            nursery.start_soon(one)
    return dict(tally)


# ---------------------------------------------------------------- the measuring process


async def make_accounts(db: Path, old_ones: int) -> tuple[str, str, list[str]]:
    """The flood's target (old hash), the owner (new hash) and `old_ones` old-hash accounts:
    their tokens."""
    async with open_store(db) as store:

        async def old(name: str) -> str:
            secret = secrets.token_urlsafe(24)
            salt = secrets.token_bytes(16)
            digest = accounts.legacy_digest(secret, salt)

            def write(tx: Tx) -> int:
                return tx.insert_account(name, salt, digest, is_bot=False, is_guest=False)

            return f"{await store.call(write)}.{secret}"

        target = await old("target")
        _owner, owner = await accounts.register(store, "owner")
        return target, owner, [await old(f"old{i}") for i in range(old_ones)]


class Spectator:
    """Watches a table of four built-in bots and counts the events it is sent."""

    def __init__(self, peer: Lean) -> None:
        self.peer = peer
        self.events = 0
        self.closed = False

    @classmethod
    async def open(cls, port: int) -> Spectator:
        peer = await Lean.connect(port, "127.0.0.1")
        await peer.hello()
        assert (await peer.request({"t": "guest"}))["t"] == "logged_in"
        created = await peer.request(
            {
                "t": "create_table",
                "game": "spades",
                "preset": "standard",
                "options": {"target_score": 100_000},
                "bots": [0, 1, 2, 3],
            }
        )
        assert created["t"] == "table_created", created
        await peer.send({"t": "spectate", "table": created["table"]})
        return cls(peer)

    async def count(self) -> None:
        while True:  # until the connection closes or the task is cancelled
            message = await self.peer.receive()
            if message is None:
                self.closed = True
                return
            if "seq" in message:
                self.events += 1


class Logins:
    """Valid logins from OWNER, in turn the owner's (new hash) and a fresh old-hash account's."""

    def __init__(self, port: int, owner: str, old: list[str], every: float) -> None:
        self.port = port
        self.owner = owner
        self.old = old
        self.every = every

    async def one(self, token: str) -> float:
        peer = await Lean.connect(self.port, OWNER)
        try:
            await peer.hello()
            start = time.perf_counter()
            reply = await peer.request({"t": "login", "token": token})
            assert reply["t"] == "logged_in", reply
            return (time.perf_counter() - start) * 1000
        finally:
            await peer.aclose()

    async def until(self, deadline: float) -> dict[str, list[float]]:
        """Timed logins until `deadline`: ms from `login` sent to `logged_in`, by hash."""
        samples: dict[str, list[float]] = {"new": [], "old": []}
        while trio.current_time() < deadline:  # bounded by the clock (and the old accounts)
            samples["new"].append(await self.one(self.owner))
            await trio.sleep(self.every)
            if not self.old:
                raise RuntimeError("out of old-hash accounts: raise the supply")
            samples["old"].append(await self.one(self.old.pop()))
            await trio.sleep(self.every)
        return samples


def loadavg() -> list[str]:
    """The machine's load averages (1, 5, 15 min): how shared the two cores were."""
    return Path("/proc/loadavg").read_text().split()[:3]


class Tally:
    """What a kind of phase (flooded or not) added up to over the run."""

    def __init__(self) -> None:
        self.events = 0
        self.seconds = 0.0
        self.cpu = 0.0
        self.per_phase: list[float] = []
        self.samples: dict[str, list[float]] = {"new": [], "old": []}

    def add(self, events: int, seconds: float, cpu: float, samples: dict[str, list[float]]) -> None:
        self.events += events
        self.seconds += seconds
        self.cpu += cpu
        self.per_phase.append(round(events / seconds, 1))
        for kind, values in samples.items():
            self.samples[kind] += values

    def figures(self) -> dict[str, Any]:
        return {
            "events_per_s": round(self.events / self.seconds, 1),
            "events_per_s_by_phase": self.per_phase,
            "server_cpu_share": round(self.cpu / self.seconds, 3),
            "login_new_hash": summarize_latency(self.samples["new"]),
            "login_old_hash": summarize_latency(self.samples["old"]),
        }


async def phase(
    server: ServerProcess, spectator: Spectator, logins: Logins, seconds: float, tally: Tally
) -> None:
    """One phase: the table's events and timed logins for `seconds`, added to `tally`."""
    events0, cpu0, start = spectator.events, cpu_seconds(server.pid), trio.current_time()
    samples = await logins.until(start + seconds)
    elapsed = trio.current_time() - start
    tally.add(spectator.events - events0, elapsed, cpu_seconds(server.pid) - cpu0, samples)


async def measure(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    db = workdir / "flood.db"
    # One old-hash login every two `login_every`s over every phase and settle, with room.
    seconds = (2 * args.cycles + 1) * args.duration + args.cycles * args.settle
    supply = int(seconds / (2 * args.login_every) * 1.5) + 20
    target, owner, old = await make_accounts(db, supply)
    target_id, _dot, secret = target.partition(".")
    wrong = {
        "wrong": f"{target_id}.{'A' * len(secret)}",  # the target's id, a wrong secret
        "unknown": f"{10**9}.{'A' * len(secret)}",  # an id of no account
        "malformed": "x" * len(target),  # not even a token's form
        "ping": "ping",  # no login: `ping`s as fast as answered, for comparison
        "operator": "op-" + "A" * 43,  # `operator_login` with a token the server does not know
    }[args.flood_token]
    load_before = loadavg()
    quiet, flooded = Tally(), Tally()
    answers: Counter[str] = Counter()
    with ServerProcess(db, "--no-ladder", "--no-web", workdir=workdir) as server:
        logins = Logins(server.port, owner, old, args.login_every)
        spectator = await Spectator.open(server.port)
        child = [
            sys.executable,
            __file__,
            "--flood-child",
            f"{server.port} {wrong} {args.flooders} {args.settle + args.duration}",
        ]

        async def run_flood() -> None:
            done = await trio.run_process(child, capture_stdout=True, check=True)
            answers.update(json.loads(done.stdout.decode().strip().splitlines()[-1]))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(spectator.count)
            await trio.sleep(args.warmup)  # the table is under way
            # Quiet and flooded phases in turn, quiet first and last, so drift shows in both.
            for _cycle in range(args.cycles):
                await phase(server, spectator, logins, args.duration, quiet)
                async with trio.open_nursery() as flooding:
                    flooding.start_soon(run_flood)
                    # The logins are timed from the flood's start, its first burst included ...
                    first = await logins.until(trio.current_time() + args.settle)
                    # ... and the table once the connections are up.
                    await phase(server, spectator, logins, args.duration, flooded)
                for kind, values in first.items():
                    flooded.samples[kind] += values
            await phase(server, spectator, logins, args.duration, quiet)
            nursery.cancel_scope.cancel()
        await spectator.peer.aclose()
        alive = server.alive()
    unflooded_figures, flooded_figures = quiet.figures(), flooded.figures()
    base = unflooded_figures["events_per_s"]
    ratio = round(flooded_figures["events_per_s"] / base, 3) if base else None
    new_p99 = flooded_figures["login_new_hash"]["p99_ms"]
    old_p99 = flooded_figures["login_old_hash"]["p99_ms"]
    return {
        "bench": "login_flood",
        "flooders": args.flooders,
        "flood_from": FLOODER,
        "login_from": OWNER,
        "phase_s": args.duration,
        "cycles": args.cycles,
        "flood_token": args.flood_token,
        "flood_target_hash": "pbkdf2-20000 (the old stored hash, the worst case)",
        "unflooded": unflooded_figures,
        "flooded": flooded_figures,
        "flood_answers": dict(answers),
        "ratio": ratio,
        "login_p99_ms_flooded_new_hash": new_p99,
        "login_p99_ms_flooded_old_hash": old_p99,
        "goals": {
            "ratio_at_least_0_8": ratio is not None and ratio >= 0.8,
            "login_p99_at_most_100_ms_new_hash": new_p99 <= 100.0,
            "login_p99_at_most_100_ms_old_hash": old_p99 <= 100.0,
        },
        "loadavg_before": load_before,
        "loadavg_after": loadavg(),
        "spectator_dropped": spectator.closed,
        "server_alive": alive,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds of each phase")
    parser.add_argument("--cycles", type=int, default=3, help="quiet-then-flooded pairs")
    parser.add_argument("--flooders", type=int, default=64)
    parser.add_argument(
        "--flood-token",
        choices=["wrong", "unknown", "malformed", "operator", "ping"],
        default="wrong",
        help="the target's id with a wrong secret, an id of no account, no token at all, a wrong"
        " operator token (operator_login), or (for comparison) no login: pings",
    )
    parser.add_argument("--login-every", type=float, default=0.1)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--settle", type=float, default=2.0, help="flood seconds before measuring")
    parser.add_argument("--flood-child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.flood_child is not None:
        port, token, connections, seconds = args.flood_child.split()
        tally = trio.run(flood, int(port), token, int(connections), float(seconds))
        print(json.dumps(tally), flush=True)
        return
    with tempfile.TemporaryDirectory(prefix="login-flood-") as tmp:
        figures = trio.run(measure, args, Path(tmp))
    emit(figures)


if __name__ == "__main__":
    main()
