"""The operator's requests reach every server of a cluster: two `serve --cluster` processes on
127.0.0.2 and 127.0.0.3 sharing one PostgreSQL; the operator speaks to the first only, and the
players of the second hear the announcement, are kicked, banned, and see their table closed
(docs/operations.md, Administer a running server)."""

import subprocess
import sys

import trio

from protocol.messages import (
    Announce,
    Announcement,
    Ban,
    Bye,
    CloseTable,
    CreateTable,
    Error,
    HandDealt,
    Kick,
    ListSessions,
    LoggedIn,
    Login,
    Ok,
    OperatorLogin,
    Register,
    Registered,
    Sessions,
    TableClosed,
    TableCreated,
    Unban,
)
from protocol.types import Game
from server.operator import new_token
from server.storage import write_transaction
from tests.server.wire_client import WireClient

CLI = [sys.executable, "-m", "server.cli"]
WORKERS = [*CLI, "serve", "--host", "127.0.0.1", "--port", "0", "--no-web", "--no-ladder"]
WORKERS += ["--workers", "2"]


async def serve_at(host: str, url: str) -> tuple[trio.Process, int]:
    process = await trio.lowlevel.open_process(
        [*CLI, "serve", "--host", host, "--port", "0", "--no-web", "--cluster", "--db", url],
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


async def dial(host: str, port: int) -> WireClient:
    client = WireClient(await trio.open_tcp_stream(host, port))
    await client.hello()
    return client


async def next_of(client: WireClient, kind: type, table: str | None = None) -> object:
    while True:  # bounded by the caller's fail_after
        message = await client.receive()
        assert message is not None, f"the connection closed while waiting for {kind.__name__}"
        if isinstance(message, kind) and (
            table is None or getattr(getattr(message, "table", None), "table", table) == table
        ):
            return message


async def test_the_operator_of_one_server_reaches_the_whole_cluster(pg_url: str) -> None:
    token, digest = new_token()
    with write_transaction(pg_url) as tx:
        tx.add_operator_token(digest)
    with trio.fail_after(90):
        first, port2 = await serve_at("127.0.0.2", pg_url)
        second, port3 = await serve_at("127.0.0.3", pg_url)
        clients: list[WireClient] = []
        try:
            op = await dial("127.0.0.2", port2)
            clients.append(op)
            assert isinstance(await op.request(OperatorLogin(token=token)), Ok)
            bea = await dial("127.0.0.3", port3)
            clients.append(bea)
            registered = await bea.request(Register(name="bea"))
            assert isinstance(registered, Registered)
            created = await bea.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
            )
            assert isinstance(created, TableCreated)
            await bea.expect(HandDealt)

            # Every server's connections, each saying which server holds it.
            listed = await op.request(ListSessions())
            assert isinstance(listed, Sessions) and listed.total == 2, listed
            by_account = {info.account: info for info in listed.sessions}
            assert by_account["bea"].tables == [created.table]
            assert by_account[None].operator
            assert by_account["bea"].server and by_account[None].server
            assert by_account["bea"].server != by_account[None].server

            told = await op.request(Announce(text="restart at 22:00"))
            assert isinstance(told, Ok) and (told.note or "").startswith("told 1 connection here")
            heard = await next_of(bea, Announcement)
            assert isinstance(heard, Announcement) and heard.text == "restart at 22:00"

            closed = await op.request(CloseTable(table=created.table, reason="maintenance"))
            assert isinstance(closed, Ok), closed
            gone = await next_of(bea, TableClosed, created.table)
            assert isinstance(gone, TableClosed) and gone.reason == "maintenance"

            kicked = await op.request(Kick(target="bea", reason="bye now"))
            assert isinstance(kicked, Ok), kicked
            bye = await next_of(bea, Bye)
            assert isinstance(bye, Bye) and bye.reason == "kicked by the operator: bye now"

            # A ban made on the first holds on the second at once (not only at its next read).
            assert isinstance(await op.request(Ban(account="bea")), Ok)
            with trio.fail_after(3):
                while True:  # until the second has read the ban (bounded by the fail_after)
                    back = await dial("127.0.0.3", port3)
                    clients.append(back)
                    refused = await back.request(Login(token=registered.token))
                    if isinstance(refused, Error):
                        assert refused.code == "banned"
                        break
                    await trio.sleep(0.05)
            assert isinstance(await op.request(Unban(account="bea")), Ok)
            with trio.fail_after(3):
                while True:  # until the second has read the unban
                    back = await dial("127.0.0.3", port3)
                    clients.append(back)
                    if isinstance(await back.request(Login(token=registered.token)), LoggedIn):
                        break
                    await trio.sleep(0.05)
        finally:
            for client in clients:
                await trio.aclose_forcefully(client.stream)
            for process in (first, second):
                if process.returncode is None:
                    process.terminate()
                    await process.wait()


async def test_under_workers_every_connection_hears_the_operator(pg_url: str) -> None:
    """`serve --workers 2`: the kernel hands each connection to either worker; the operator's
    own lands on one, and still every connection hears the announcement and is listed."""
    token, digest = new_token()
    with write_transaction(pg_url) as tx:
        tx.add_operator_token(digest)
    with trio.fail_after(90):
        process = await trio.lowlevel.open_process(
            [*WORKERS, "--db", pg_url],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        clients: list[WireClient] = []
        try:
            assert process.stdout is not None
            line = b""
            while not line.endswith(b"\n"):  # bounded by the fail_after
                chunk = await process.stdout.receive_some(1)
                assert chunk, "the supervisor exited before printing its address"
                line += chunk
            port = int(line.decode().strip().rsplit(":", 1)[1])
            for _ in range(8):  # spread over both workers by the kernel (either may get any)
                clients.append(await dial("127.0.0.1", port))
            op = await dial("127.0.0.1", port)
            clients.append(op)
            assert isinstance(await op.request(OperatorLogin(token=token)), Ok)
            listed = await op.request(ListSessions())
            assert isinstance(listed, Sessions) and listed.total == 9, listed
            workers = {info.server for info in listed.sessions}
            assert None not in workers and 1 <= len(workers) <= 2
            assert isinstance(await op.request(Announce(text="restart soon")), Ok)
            for client in clients:
                heard = await next_of(client, Announcement)
                assert isinstance(heard, Announcement) and heard.text == "restart soon"
        finally:
            for client in clients:
                await trio.aclose_forcefully(client.stream)
            process.terminate()
            await process.wait()
