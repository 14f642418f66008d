"""The link port of a real `serve --cluster` pair (127.0.0.2 and 127.0.0.3 over one PostgreSQL)
attacked as issue 37 found it could be: a raw socket that claims to be a server.

(a) `{"hello": "evil"}`, then a `join` with `takeover` naming a registered player, then her bid:
    before, the player got `seat_lost` and the bid was stored as hers.
(b) the same with the other real server's worker id in `hello` (it is in the logs and in
    `cluster_workers`) and a guest of that server named as the peer: before, the guest was handed
    the victim's seat and cards.

Now the link obeys nothing before a server has proved it holds the cluster's secret: both are
refused, the connection closed, and the refusal logged with the attacker's address."""

import json
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import msgpack
import psycopg
import trio

from protocol.framing import frame
from protocol.messages import (
    Act,
    CreateTable,
    Guest,
    Joined,
    ListTables,
    Message,
    Register,
    Registered,
    SeatLost,
    Snapshot,
    Spectate,
    TableCreated,
    Tables,
    YourTurn,
)
from protocol.types import Game
from server.cluster.link_protocol import PROOF_SIZE, LinkConnection, Proof, Role, encode
from tests.server.wire_client import WireClient

CLI = [sys.executable, "-m", "server.cli"]


class Logged:
    """A server process's JSON log lines as they come (its stderr, read by a task of its own)."""

    def __init__(self) -> None:
        self.lines: list[dict[str, Any]] = []
        self.changed = trio.Event()

    async def read(self, stream: trio.abc.ReceiveStream) -> None:
        buffer = b""
        while chunk := await stream.receive_some(65536):  # ends when the process does
            buffer += chunk
            *whole, buffer = buffer.split(b"\n")
            for line in whole:
                try:
                    self.lines.append(json.loads(line))
                except ValueError:
                    continue  # not one of ours (a warning of the runtime's)
            self.changed.set()
            self.changed = trio.Event()

    async def wait_for(self, event: str, reason: str = "", **fields: object) -> dict[str, Any]:
        """The first line of `event` with these `fields`, whose reason says `reason`."""
        while True:  # bounded by the caller's fail_after
            for line in self.lines:
                if (
                    line.get("event") == event
                    and all(line.get(k) == v for k, v in fields.items())
                    and reason in line.get("reason", "")
                ):
                    return line
            await self.changed.wait()


async def serve_at(
    host: str, url: str, nursery: trio.Nursery, *extra: str
) -> tuple[trio.Process, int, Logged]:
    process = await trio.lowlevel.open_process(
        [
            *CLI,
            "serve",
            "--host",
            host,
            "--port",
            "0",
            "--no-web",
            "--no-ladder",
            "--cluster",
            "--log-format",
            "json",
            "--db",
            url,
            *extra,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None
    logged = Logged()
    nursery.start_soon(logged.read, process.stderr)
    line = b""
    while not line.endswith(b"\n"):  # bounded by the caller's fail_after
        chunk = await process.stdout.receive_some(1)
        assert chunk, "the server exited before printing its address"
        line += chunk
    assert f"spades join {host}:".encode() in line, line
    return process, int(line.decode().strip().rsplit(":", 1)[1]), logged


def workers(url: str) -> dict[str, tuple[str, str, int]]:
    """host -> (worker id, link host, link port), from `cluster_workers` (as an attacker on the
    database's side, or reading the logs, would know them)."""
    found = {}
    with psycopg.connect(url, autocommit=True) as conn:
        for worker, link in conn.execute("SELECT id, link FROM cluster_workers WHERE alive = 1"):
            host, _, port = str(link).rpartition(":")
            found[host] = (str(worker), host, int(port))
    return found


def pack(data: dict[str, Any]) -> bytes:
    return frame(msgpack.packb(data, use_bin_type=True))


def account_id(url: str, name: str) -> int:
    """A registered player's account id (a small integer: an attacker guesses it)."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT id FROM accounts WHERE name = %s", (name,)).fetchone()
    assert row is not None
    return int(row[0])


def attack_frames(worker: str, table: str, peer: str, victim: list[Any], version: int) -> bytes:
    account = victim
    join = {
        "table": table,
        "peer": peer,
        "rid": None,
        "k": "join",
        "account": account,
        "seat": 0,
        "takeover": True,
        "reattach": False,
        "created": None,
    }
    act = {
        "table": table,
        "peer": peer,
        "rid": None,
        "k": "act",
        "version": version,
        "action": {"kind": "bid", "seat": 0, "tricks": 13, "blind": False},
    }
    return b"".join(
        [pack({"hello": worker}), pack({"k": "cmd", "c": join}), pack({"k": "cmd", "c": act})]
    )


async def closed_by_server(stream: trio.SocketStream) -> bool:
    """Read until the server closes the connection; False if it kept it open for 5 s."""
    async with stream:
        with trio.move_on_after(5):
            try:
                while await stream.receive_some(65536):
                    pass
            except trio.BrokenResourceError:
                pass
            return True
    return False


async def nothing_before_reply(client: WireClient, kind: type) -> list[Message]:
    """Everything the client received up to the answer of a fresh request (in order: what the
    server sent it before)."""
    reply = await client.request(ListTables())
    assert isinstance(reply, Tables), reply
    seen = [m for m in client.received if isinstance(m, kind)]
    return seen


async def test_a_forged_link_is_refused_and_obeys_nothing(pg_url: str) -> None:
    with trio.fail_after(90):
        async with trio.open_nursery() as logs:
            first, port2, log2 = await serve_at("127.0.0.2", pg_url, logs)
            second, port3, log3 = await serve_at("127.0.0.3", pg_url, logs)
            try:
                victim = WireClient(await trio.open_tcp_stream("127.0.0.2", port2))
                await victim.hello()
                login = await victim.request(Register(name="victim"))
                assert isinstance(login, Registered)
                created = await victim.request(
                    CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
                )
                assert isinstance(created, TableCreated)
                turn = await victim.expect(YourTurn)
                known = workers(pg_url)
                account = [account_id(pg_url, "victim"), "victim", False, False]
                _, link_host, link_port = known["127.0.0.2"]
                worker3 = known["127.0.0.3"][0]

                # (a): a made-up server.
                raw = await trio.open_tcp_stream(link_host, link_port)
                await raw.send_all(attack_frames("evil", created.table, "x", account, turn.version))
                attacker = f"127.0.0.1:{raw.socket.getsockname()[1]}"
                assert await closed_by_server(raw), "the link kept a forged peer's connection"
                refused = await log2.wait_for("link_refused", peer=attacker)
                assert refused["reason"] == "unknown message type 'None' (phase hello)", refused
                assert await nothing_before_reply(victim, SeatLost) == []

                # (b): the other real server's id, and a guest of that server as the peer: the
                # frames of before, then the same speaking today's handshake with a made-up proof.
                guest = WireClient(await trio.open_tcp_stream("127.0.0.3", port3))
                await guest.hello()
                await guest.request(Guest())
                guest_port = guest.stream.socket.getsockname()[1]  # type: ignore[attr-defined]
                connected = await log3.wait_for("connected", peer=f"127.0.0.1:{guest_port}")
                frames = attack_frames(
                    worker3, created.table, connected["session"], account, turn.version
                )
                raw = await trio.open_tcp_stream(link_host, link_port)
                attacker = f"127.0.0.1:{raw.socket.getsockname()[1]}"
                await raw.send_all(frames)
                assert await closed_by_server(raw), "the link kept a forged peer's connection"
                await log2.wait_for("link_refused", peer=attacker)

                raw = await trio.open_tcp_stream(link_host, link_port)
                attacker = f"127.0.0.1:{raw.socket.getsockname()[1]}"
                hello = LinkConnection(Role.DIALER, worker3, b"a guess at the secret", expect="x")
                await raw.send_all(hello.hello())
                await raw.receive_some(65536)  # the challenge (a proof the attacker cannot use)
                await raw.send_all(encode(Proof(secrets.token_bytes(PROOF_SIZE))))
                await raw.send_all(frames)
                assert await closed_by_server(raw), "the link kept a forged peer's connection"
                refused = await log2.wait_for("link_refused", peer=attacker)
                assert refused["claimed"] == worker3 and "wrong proof" in refused["reason"]
                assert await nothing_before_reply(guest, Joined) == []
                assert await nothing_before_reply(victim, SeatLost) == []

                # The seat is still the victim's, and so is the bid: hers is taken.
                rid = await victim.send(
                    Act(table=created.table, version=turn.version, action=turn.legal[0])
                )
                next_turn = await victim.expect(YourTurn)
                assert next_turn.version > turn.version
                assert rid is not None
                for client in (victim, guest):
                    await client.aclose()
            finally:
                for process in (first, second):
                    if process.returncode is None:
                        process.terminate()
                        await process.wait()
            logs.cancel_scope.cancel()


async def test_servers_given_one_secret_file_link_and_a_stranger_with_another_does_not(
    pg_url: str, tmp_path: Path
) -> None:
    """`--cluster-secret-file`: two servers with the same file play as one (a table of one
    watched from the other); a third with another file is refused by both, and logged."""
    ours, theirs = tmp_path / "ours.secret", tmp_path / "theirs.secret"
    ours.write_text(secrets.token_hex(32) + "\n")
    theirs.write_text(secrets.token_hex(32) + "\n")
    with trio.fail_after(90):
        async with trio.open_nursery() as logs:
            started = [
                await serve_at(host, pg_url, logs, "--cluster-secret-file", str(file))
                for host, file in (("127.0.0.2", ours), ("127.0.0.3", ours), ("127.0.0.4", theirs))
            ]
            try:
                (_, port2, log2), (_, port3, _), (_, port4, log4) = started
                owner = WireClient(await trio.open_tcp_stream("127.0.0.2", port2))
                await owner.hello()
                await owner.request(Register(name="owner"))
                created = await owner.request(
                    CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
                )
                assert isinstance(created, TableCreated)
                watcher = WireClient(await trio.open_tcp_stream("127.0.0.3", port3))
                await watcher.hello()
                await watcher.request(Guest())
                reply = await watcher.request(Spectate(table=created.table))
                assert isinstance(reply, Joined), reply
                await watcher.expect(Snapshot)
                # The stranger's server cannot reach .2's table: its link is refused at both ends
                # (each finds the other's proof wrong, or the other gone), and the request that
                # waited for it is answered.
                stranger = WireClient(await trio.open_tcp_stream("127.0.0.4", port4))
                await stranger.hello()
                await stranger.request(Guest())
                refused = await stranger.request(Spectate(table=created.table))
                assert refused.TYPE == "error" and refused.code == "no_such_table", refused  # type: ignore[attr-defined]
                assert "cannot be reached" in refused.message  # type: ignore[attr-defined]
                worker4 = workers(pg_url)["127.0.0.4"][0]
                worker2 = workers(pg_url)["127.0.0.2"][0]
                await log4.wait_for("link_refused", "wrong proof", claimed=worker2)
                await log2.wait_for("link_refused", claimed=worker4)
                for client in (owner, watcher, stranger):
                    await client.aclose()
            finally:
                for process, _, _ in started:
                    if process.returncode is None:
                        process.terminate()
                        await process.wait()
            logs.cancel_scope.cancel()
