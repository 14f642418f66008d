"""Several machines, simulated on loopback: `serve --cluster` on 127.0.0.2 and on 127.0.0.3, two
separate commands sharing one PostgreSQL, behave as one server to clients (one lobby, a table of
one played and watched from the other, lobby chat across), and a second stopped cleanly hands its
tables over at once."""

import subprocess
import sys

import trio

from protocol.messages import (
    Act,
    Chat,
    ChatMessage,
    CreateTable,
    Join,
    Joined,
    ListTables,
    Register,
    Registered,
    Snapshot,
    TableChanged,
    TableCreated,
    Tables,
    YourTurn,
)
from protocol.types import ChatScope, Game
from tests.server.players import random_choice
from tests.server.wire_client import WireClient

CLI = [sys.executable, "-m", "server.cli"]


async def serve_at(host: str, url: str) -> tuple[trio.Process, int]:
    process = await trio.lowlevel.open_process(
        [
            *CLI,
            "serve",
            "--host",
            host,
            "--port",
            "0",
            "--no-web",
            "--cluster",
            "--db",
            url,
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdout is not None
    line = b""
    while not line.endswith(b"\n"):  # bounded by the caller's fail_after
        chunk = await process.stdout.receive_some(1)
        assert chunk, "the server exited before printing its address"
        line += chunk
    assert f"spades join {host}:".encode() in line, line
    return process, int(line.decode().strip().rsplit(":", 1)[1])


async def client_at(host: str, port: int, name: str) -> tuple[WireClient, Registered]:
    client = WireClient(await trio.open_tcp_stream(host, port))
    await client.hello()
    reply = await client.request(Register(name=name))
    assert isinstance(reply, Registered), reply
    return client, reply


async def until_message(client: WireClient, kind: type, table: str | None = None) -> object:
    while True:  # bounded by the caller's fail_after
        message = await client.receive()
        assert message is not None, "the connection closed"
        if isinstance(message, kind) and (
            table is None or getattr(getattr(message, "table", None), "table", table) == table
        ):
            return message


async def test_two_machines_serve_as_one(pg_url: str) -> None:
    with trio.fail_after(90):
        first, port2 = await serve_at("127.0.0.2", pg_url)
        second, port3 = await serve_at("127.0.0.3", pg_url)
        try:
            ada, _ = await client_at("127.0.0.2", port2, "ada")
            bea, bea_login = await client_at("127.0.0.3", port3, "bea")
            await bea.request(ListTables())
            created = await ada.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[2, 3], sit=0)
            )
            assert isinstance(created, TableCreated)
            table = created.table
            await until_message(bea, TableChanged, table)
            joined = await bea.request(Join(table=table))
            assert isinstance(joined, Joined) and joined.seat == 1
            await bea.expect(Snapshot)

            async def play(client: WireClient, seed: int, turns: int) -> None:
                choose = random_choice(seed)
                for _ in range(turns):
                    turn = await until_message(client, YourTurn)
                    assert isinstance(turn, YourTurn)
                    await client.send(Act(table=table, version=turn.version, action=choose(turn)))

            async with trio.open_nursery() as nursery:
                nursery.start_soon(play, ada, 1, 4)
                nursery.start_soon(play, bea, 2, 4)
            await ada.request(Chat(scope=ChatScope.LOBBY, text="from .2"))
            line = await until_message(bea, ChatMessage)
            assert isinstance(line, ChatMessage) and line.text == "from .2"
            # The first machine stops cleanly: its table is handed over to the second at once,
            # and bea (connected there) gets her seat back without doing anything.
            first.terminate()
            await first.wait()
            back = await until_message(bea, Joined)
            assert isinstance(back, Joined) and back.table == table and back.seat == 1
            await bea.expect(Snapshot)
            listing = await bea.request(ListTables())
            assert isinstance(listing, Tables) and table in {i.table for i in listing.tables}
            await ada.aclose()
            await bea.aclose()
            del bea_login
        finally:
            for process in (first, second):
                if process.returncode is None:
                    process.terminate()
                    await process.wait()
