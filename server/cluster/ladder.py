"""`ClusterLadder`: the one ladder of a cluster, run by one server and asked of by the others.

The ladder runs in the server that holds its advisory lock (`LADDER_LOCK`; another takes it when
that one dies, since the lock dies with its connection). Every other server's sessions ask it
over the link: `ask` sends the request and waits for its answer (`LADDER_TIMEOUT`), `request`
is the ladder's server taking one (answered from a task of its own, at most `LADDER_IN_FLIGHT`
at once, so the link's reader never waits for the ladder). While no server runs it, the stored ladder answers
(`archive`, the `NoLadder` desk).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

import psycopg
import structlog
import trio

from protocol.errors import ErrorCode
from protocol.messages import Error, Message
from server.accounts import Account
from server.cluster import membership
from server.cluster.link_protocol import Established, LadderAnswer, LadderAsk
from server.cluster.membership import UNREACHABLE
from server.cluster.remote import RemotePeer
from server.peers import Peer
from server.ports import Client, LadderDesk, LadderRequest
from server.storage.postgres import connect

log = structlog.get_logger("server.cluster")

#: The advisory lock the ladder's server holds (any fixed pair of numbers).
LADDER_LOCK = (0x73706164, 2)
#: Seconds a forwarded ladder request may wait for its answer.
LADDER_TIMEOUT = 30.0
#: Forwarded ladder requests answered at once; more are refused at once (try again).
LADDER_IN_FLIGHT = 32


class LadderNode(Protocol):
    """What the cluster ladder needs of this server's node (`server.cluster.node.ClusterNode`)."""

    url: str
    worker: str

    async def run_statement(self, fn: Callable[[psycopg.Connection[Any]], Any]) -> Any: ...

    def send_to(self, worker: str, message: Established) -> None: ...

    def peer_at(self, origin: str, local_id: str) -> RemotePeer: ...

    def remember(self, peer: Peer, account: Account | None = None) -> None: ...


class ClusterLadder:
    """Where the cluster's ladder runs, and the way to it (see the module's doc)."""

    def __init__(self, node: LadderNode) -> None:
        self.node = node
        self.here = False  # this server runs it
        self._worker: str | None = None
        self.found = trio.Event()  # set once it is known where the ladder runs
        self.service: LadderDesk | None = None  # the ladder service, where it runs here
        self._calls = itertools.count(1)
        self._waiting: dict[int, tuple[trio.Event, list[Message]]] = {}
        self._in_flight = 0  # forwarded requests being answered here

    @property
    def worker(self) -> str | None:
        """The server that runs the ladder, as far as this one knows."""
        return self._worker

    @worker.setter
    def worker(self, worker: str | None) -> None:
        self._worker = worker
        if worker is not None:
            self.found.set()

    async def keep(self, start: Callable[[], Awaitable[LadderDesk | None]]) -> None:
        """Run the ladder here once this server holds its lock (at once, or when the server
        that ran it dies); until then, find where it runs.

        The lock goes with its connection, and PostgreSQL's restart ends every connection: the
        server that ran the ladder keeps its mark (`cluster_workers.ladder`) meanwhile and takes
        the lock again once the database is back, and no other server tries for the lock while
        a live server has that mark (a dead one loses it when declared dead), so the ladder
        never runs twice."""
        node = self.node
        conn: psycopg.Connection[Any] | None = None
        try:
            while True:  # until the lock is ours (bounded by the server's life)
                try:
                    conn = await self._connected(conn)
                    if await self._ours_to_take() and await self._take(conn):
                        break
                except UNREACHABLE:
                    pass  # the database is down: tried again in a moment
                await trio.sleep(membership.RENEW_EVERY)
            self.service = await start()
            self.here = True
            self.worker = node.worker
            await self._announce()
            while True:  # the lock is held while this connection lives: see that it does
                await trio.sleep(membership.RENEW_EVERY)
                try:
                    if conn.broken or conn.closed:
                        conn = await self._connected(conn)
                        if not await self._take(conn):
                            log.error("ladder_lock_lost", worker=node.worker)
                            continue
                        log.warning("ladder_lock_held_again", worker=node.worker)
                        await self._announce()
                    else:
                        await trio.to_thread.run_sync(conn.execute, "SELECT 1")
                except UNREACHABLE:
                    pass
        finally:
            if conn is not None:
                conn.close()

    async def _connected(self, conn: psycopg.Connection[Any] | None) -> psycopg.Connection[Any]:
        if conn is not None and not (conn.broken or conn.closed):
            return conn
        if conn is not None:
            conn.close()
        node = self.node
        return await trio.to_thread.run_sync(
            lambda: connect(node.url, purpose=f"spades-server ladder {node.worker}")
        )

    async def _ours_to_take(self) -> bool:
        """No other live server runs the ladder (it may have stopped, or be dead)."""
        running = [w for w in await self.node.run_statement(membership.workers) if w.ladder]
        self.worker = running[0].id if running else None
        return not running or running[0].id == self.node.worker

    async def _take(self, conn: psycopg.Connection[Any]) -> bool:
        row = await trio.to_thread.run_sync(
            lambda: conn.execute("SELECT pg_try_advisory_lock(%s, %s)", LADDER_LOCK).fetchone()
        )
        return row is not None and bool(row[0])

    async def _announce(self) -> None:
        node = self.node
        try:
            await node.run_statement(lambda c: membership.run_ladder(c, node.worker))
            await node.run_statement(
                lambda c: c.execute(
                    "SELECT pg_notify(%s, %s)",
                    (membership.LOBBY_CHANNEL, json.dumps({"ladder": 1, "worker": node.worker})),
                )
            )
        except UNREACHABLE as exc:  # the others find it in `cluster_workers` when they look
            log.warning("ladder_not_announced", error=" ".join(str(exc).split()))

    def desk(self, archive: LadderDesk) -> LadderDesk:
        """The desk this server's sessions ask: the ladder here, or forwarded to its server;
        `archive` (the stored ladder) while no server runs it."""
        return _ClusterLadderDesk(self, archive)

    def connection_closed(self, peer: Peer) -> None:
        """A connection is gone: the ladder here forgets it (its entries, its seat)."""
        if self.service is not None and self.here:
            self.service.connection_closed(peer)

    def request(self, origin: str, message: LadderAsk, nursery: trio.Nursery) -> None:
        """A ladder request another server forwarded (the ladder runs here): answered from a task
        of its own (never blocking the link), or refused at once when too many are under way."""
        if self._in_flight >= LADDER_IN_FLIGHT:
            self._reply(
                origin,
                message,
                Error(
                    id=getattr(message.request, "id", None),
                    code=ErrorCode.SERVER_FULL.value,
                    message="the ladder is answering too many requests; try again",
                ),
            )
            return
        self._in_flight += 1
        nursery.start_soon(self.serve_request, origin, message)

    async def serve_request(self, origin: str, message: LadderAsk) -> None:
        """Answer a ladder request another server forwarded (the ladder runs here)."""
        try:
            peer = self.node.peer_at(origin, message.peer)
            request = message.request
            if self.service is None:
                reply: Message = Error(
                    id=getattr(request, "id", None),
                    code=ErrorCode.INTERNAL.value,
                    message="the ladder is moving to another server; try again",
                )
            else:
                client = Client(peer=peer, account=message.account, owner=message.owner)
                reply = await self.service.handle(client, request)  # type: ignore[arg-type]
            self._reply(origin, message, reply)
        finally:
            self._in_flight -= 1

    def _reply(self, origin: str, message: LadderAsk, reply: Message) -> None:
        self.node.send_to(origin, LadderAnswer(message.call, reply))

    def answered(self, message: LadderAnswer) -> None:
        """The ladder's server answered one of our forwarded requests."""
        waiting = self._waiting.get(message.call)
        if waiting is not None:
            waiting[1].append(message.reply)
            waiting[0].set()

    async def ask(self, client: Client, request: LadderRequest) -> Message | None:
        """Forward `request` to the ladder's server and wait for its answer (None: the ladder
        runs here, nowhere known, or did not answer in time)."""
        worker = self.worker
        if worker is None or worker == self.node.worker:
            return None
        self.node.remember(client.peer, client.account)
        call = next(self._calls)
        done = trio.Event()
        answers: list[Message] = []
        self._waiting[call] = (done, answers)
        self.node.send_to(
            worker, LadderAsk(call, client.peer.peer_id, client.account, client.owner, request)
        )
        try:
            with trio.move_on_after(LADDER_TIMEOUT):
                await done.wait()
        finally:
            del self._waiting[call]
        return answers[0] if answers else None


class _ClusterLadderDesk:
    def __init__(self, ladder: ClusterLadder, archive: LadderDesk) -> None:
        self.ladder = ladder
        self.archive = archive

    async def handle(self, client: Client, request: LadderRequest) -> Message:
        if self.ladder.service is not None and self.ladder.here:
            return await self.ladder.service.handle(client, request)
        answer = await self.ladder.ask(client, request)
        if answer is not None:
            return answer
        return await self.archive.handle(client, request)

    def connection_closed(self, peer: Peer) -> None:
        self.ladder.connection_closed(peer)
