"""The link between the servers of a cluster: one connection from each server to each other it
has something to say to, carrying the messages of `server.cluster.link_protocol`, in order.

Each server listens for the others' links (`Links.serve`: on `--link-host`/`--link-port`, by
default the address the others dial; its address is published in `cluster_workers.link`) and
reads what they send; what it sends to one goes out on its own connection to that one
(`Links.send`), opened on first need. A link carries only what the servers say to each other
(commands for a table, what a table delivers to a connection, a session gone, a login's resume,
a ladder request and its answer), never a client's bytes as such.

Nothing is obeyed before the handshake (`link_protocol`: both sides prove they hold the
cluster's secret, the dialer's worker id is then checked to be a live member) has ended, within
`HANDSHAKE_TIMEOUT`; at most `MAX_HANDSHAKES` are under way at once. A refused link is logged
(`link_refused`, with the other side's address and the reason) and closed. With TLS configured
(`serve --tls-cert/--tls-key`) the link is TLS too: the listener presents the certificate, and
the dialer checks the other's chain against that same file (the servers of a cluster share one
certificate, or its CA).

The reader never waits on what it is told: `handle` must not block (the node hands table
commands to a bounded queue per table and answers ladder requests from tasks of their own).
What is queued for one other server is bounded (`QUEUE` frames): a link that falls that far
behind is deemed stuck and dropped as lost.

A link that fails (the other server died or stopped) is reported to `on_lost` with the other's
id; sends to it meanwhile are dropped (there is nobody to give them to: its sessions are gone too,
and its tables are taken over from the store).
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Awaitable, Callable, Collection
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import cast

import structlog
import trio

from server.cluster.link_protocol import (
    MAX_FRAME,
    Established,
    LinkConnection,
    LinkError,
    Phase,
    Proof,
    Role,
    merge,
)
from server.quotas import Bucket, network_of

log = structlog.get_logger("server.cluster")

#: Frames queued for one other server before the link is deemed stuck (and dropped as lost).
QUEUE = 65536
CONNECT_TIMEOUT = 5.0
#: Seconds a link has, from its first byte, to prove itself (both sides).
HANDSHAKE_TIMEOUT = 5.0
#: Incoming links in their handshake at once, and from one address (an IPv6 /64); more are
#: closed at once. A stranger holding slots costs the cluster's servers a few seconds' wait at
#: most (the deadline), and only from addresses the firewall should not let through anyway.
MAX_HANDSHAKES = 128
MAX_HANDSHAKES_PER_ADDRESS = 8
#: Refusals logged (a warning each): a burst, then one a second; the rest are counted and the
#: count logged with the next one that is (`suppressed`), so a flood cannot fill the logs.
REFUSALS_LOGGED_BURST = 20
REFUSALS_LOGGED_PER_SECOND = 1.0
#: Frames a writer sends in one `send_all`.
BATCH = 512

Handler = Callable[[str, Established], None]
Connector = Callable[[str], Awaitable[trio.abc.Stream]]


@dataclass(frozen=True)
class LinkConfig:
    """Where this server listens for the others' links, and how they are kept private.

    `host`: the address to bind (None: the address the others dial, `--cluster-address`);
    `port`: 0 for any. `secret_file`: the cluster's secret from a file instead of the database.
    `tls_server`/`tls_client`: the contexts of a TLS link (both or neither). `connect`: how to
    reach another server's link (tests: memory streams; None: TCP)."""

    host: str | None = None
    port: int = 0
    secret_file: Path | None = None
    tls_server: ssl.SSLContext | None = None
    tls_client: ssl.SSLContext | None = None
    connect: Connector | None = None


@asynccontextmanager
async def _closed_at_once(stream: trio.abc.Stream) -> AsyncIterator[trio.abc.Stream]:
    """`stream`, closed at once when done (no TLS goodbye that could wait on the other side)."""
    try:
        yield stream
    finally:
        await trio.aclose_forcefully(stream)


class _Outgoing:
    def __init__(self, peer: str) -> None:
        self.peer = peer
        self.send, self.receive = trio.open_memory_channel[Established](QUEUE)
        self.lost = False
        self.conn: LinkConnection | None = None


class Links:
    """This server's links: the listener for the others', and a connection to each other.

    `secret` gives the cluster's secret (asked at each handshake: it may be rotated);
    `is_member` says whether a worker id is a live member of the cluster; `address_of` gives a
    worker's link address (`host:port`). `on_undelivered` is given what was queued for a link
    that failed before it was sent (the link is dialled again on the next `send`).
    `member_hosts` gives the addresses the cluster's servers publish (never refused for want of
    handshake room). `connect`
    opens a stream to an address (a test's memory streams; by default TCP, with TLS when
    `tls_client` is given)."""

    def __init__(
        self,
        worker: str,
        secret: Callable[[], bytes],
        *,
        handle: Handler,
        on_lost: Callable[[str], None],
        address_of: Callable[[str], Awaitable[str | None]],
        is_member: Callable[[str], Awaitable[bool]],
        tls_server: ssl.SSLContext | None = None,
        tls_client: ssl.SSLContext | None = None,
        connect: Connector | None = None,
        max_frame: int = MAX_FRAME,
        on_undelivered: Callable[[str, list[Established]], None] = lambda peer, lost: None,
        member_hosts: Callable[[], Collection[str]] = frozenset,
    ) -> None:
        self.worker = worker
        self._secret = secret
        self._handle = handle
        self._on_lost = on_lost
        self._address_of = address_of
        self._is_member = is_member
        self._on_undelivered = on_undelivered
        self._member_hosts = member_hosts
        self._tls_server = tls_server
        self._tls_client = tls_client
        self._connect = connect or self._connect_tcp
        self._max_frame = max_frame
        self._out: dict[str, _Outgoing] = {}
        self._nursery: trio.Nursery | None = None
        self._handshakes = 0
        self._handshakes_from: dict[str, int] = {}
        self._refusals_logged = Bucket(
            REFUSALS_LOGGED_PER_SECOND, REFUSALS_LOGGED_BURST, REFUSALS_LOGGED_BURST, 0.0
        )
        self._refusals_unlogged = 0
        self.sent = 0  # frames sent, for tests and stats
        self.refused = 0  # incoming links refused, for tests and stats

    def start(self, nursery: trio.Nursery) -> None:
        """Where the writers (one per other server) run; `serve` does this too."""
        self._nursery = nursery

    async def serve(
        self,
        host: str,
        port: int,
        nursery: trio.Nursery,
        *,
        task_status: trio.TaskStatus[int] = trio.TASK_STATUS_IGNORED,
    ) -> None:
        """Listen for the others' links on `host`:`port` (0: any); `started` with the port."""
        self._nursery = nursery
        listeners = await trio.open_tcp_listeners(port, host=host)
        task_status.started(listeners[0].socket.getsockname()[1])
        await trio.serve_listeners(self._accept_tcp, listeners, handler_nursery=nursery)

    async def _accept_tcp(self, stream: trio.SocketStream) -> None:
        try:
            host, port = stream.socket.getpeername()[:2]
            address = f"{host}:{port}"
        except OSError:
            address = "?"
        wrapped: trio.abc.Stream = stream
        if self._tls_server is not None:
            wrapped = trio.SSLStream(stream, self._tls_server, server_side=True)
        await self.accept(wrapped, address)

    async def accept(self, stream: trio.abc.Stream, address: str) -> None:
        """One incoming link, from `address`: its handshake, then everything it says, until it
        closes or breaks the protocol."""
        network = network_of(address.rpartition(":")[0] or address)
        try:
            await self._accepted(stream, address, network)
        except Exception:  # a bug must not stop the server: this link ends, the next is new
            log.exception("link_failed", peer=address)
        finally:
            # At once: a TLS goodbye to a peer that does not read could wait for ever.
            await trio.aclose_forcefully(stream)

    async def _accepted(self, stream: trio.abc.Stream, address: str, network: str) -> None:
        """`accept`'s work (which closes the stream after it)."""
        # The cluster's own servers' addresses are never turned away for want of room: strangers
        # filling the slots (from many addresses) cannot cut the servers off from each other.
        if network not in self._member_hosts() and (
            self._handshakes >= MAX_HANDSHAKES
            or self._handshakes_from.get(network, 0) >= MAX_HANDSHAKES_PER_ADDRESS
        ):
            self._refuse(address, None, "too many links in their handshake")
            return
        self._handshakes += 1
        self._handshakes_from[network] = self._handshakes_from.get(network, 0) + 1
        try:
            conn = await self._listener_handshake(stream, address)
        finally:
            self._handshakes -= 1
            left = self._handshakes_from.pop(network) - 1
            if left:
                self._handshakes_from[network] = left
        if conn is None:
            return
        origin = conn.peer
        assert origin is not None
        log.info("link_accepted", peer=address, worker=origin)
        try:
            await self._read(stream, conn, origin)
        finally:
            self._on_lost(origin)

    async def _listener_handshake(
        self, stream: trio.abc.Stream, address: str
    ) -> LinkConnection | None:
        conn = LinkConnection(Role.LISTENER, self.worker, self._secret(), max_frame=self._max_frame)
        reason = "no handshake in time"
        with trio.move_on_after(HANDSHAKE_TIMEOUT):
            try:
                await self._next(stream, conn)  # Hello
                await stream.send_all(conn.challenge())
                message = await self._next(stream, conn)
                assert isinstance(message, Proof)
                assert conn.peer is not None
                if not await self._is_member(conn.peer):
                    self._refuse(address, conn.peer, "not a live member of the cluster")
                    return None
                await stream.send_all(conn.accept())
                return conn
            except LinkError as exc:
                reason = str(exc)
            except (trio.BrokenResourceError, trio.ClosedResourceError, OSError) as exc:
                reason = f"the connection failed: {type(exc).__name__}"
        self._refuse(address, conn.peer, reason)
        return None

    def _refuse(self, address: str, claimed: str | None, reason: str) -> None:
        self.refused += 1
        if not self._refusals_logged.take(trio.current_time()):
            self._refusals_unlogged += 1
            return
        suppressed, self._refusals_unlogged = self._refusals_unlogged, 0
        log.warning(
            "link_refused", peer=address, claimed=claimed, reason=reason, suppressed=suppressed
        )

    async def _next(self, stream: trio.abc.Stream, conn: LinkConnection) -> object:
        """The next message of a handshake (raises `LinkError`, also for a closed stream)."""
        while True:  # bounded by the handshake's deadline
            message = conn.next_message()
            if message is not None:
                return message
            data = await stream.receive_some(1 << 16)
            if not data:
                raise LinkError("the other side closed the link")
            conn.receive_data(bytes(data))

    async def _read(self, stream: trio.abc.Stream, conn: LinkConnection, origin: str) -> None:
        try:
            while True:
                try:
                    data = await stream.receive_some(1 << 16)
                except (trio.BrokenResourceError, trio.ClosedResourceError):
                    return
                conn.receive_data(bytes(data))
                while (message := conn.next_message()) is not None:
                    # The phase table lets only the cluster's messages through once established.
                    try:
                        self._handle(origin, cast(Established, message))
                    except LinkError:
                        raise
                    except Exception:  # a bug here must not stop the server: this link ends
                        log.exception("link_handler_failed", worker=origin)
                        return
                if not data:
                    return
        except LinkError as exc:
            log.warning("link_closed", worker=origin, reason=str(exc))

    # ---------------------------------------------------------------- sending

    def send(self, peer: str, message: Established) -> None:
        """Queue `message` for server `peer` (never blocks). Dropped if that link is lost."""
        out = self._out.get(peer)
        if out is None or out.lost:
            if self._nursery is None:
                return
            out = _Outgoing(peer)
            self._out[peer] = out
            self._nursery.start_soon(self._write, out)
        try:
            out.send.send_nowait(message)
            self.sent += 1
        except (trio.BrokenResourceError, trio.ClosedResourceError):
            pass  # the link is closing (this server stops, or the other died)
        except trio.WouldBlock:
            log.error("link_stuck", peer=peer)
            self._lose(out)

    def queued(self) -> dict[str, int]:
        """Each connected peer's maps waiting to be written (for the metrics: the link's lag)."""
        return {
            peer: out.send.statistics().current_buffer_used
            for peer, out in self._out.items()
            if not out.lost
        }

    def _lose(self, out: _Outgoing) -> None:
        if out.lost:
            return
        out.lost = True
        out.send.close()
        if self._out.get(out.peer) is out:
            del self._out[out.peer]
        self._on_lost(out.peer)

    async def _connect_tcp(self, address: str) -> trio.abc.Stream:
        host, _, port = address.rpartition(":")
        stream: trio.abc.Stream = await trio.open_tcp_stream(host.strip("[]"), int(port))
        if self._tls_client is not None:
            # The peer's identity is its proof of the secret; the chain check keeps the link
            # private to holders of the cluster's certificate (no name to check: an address).
            stream = trio.SSLStream(stream, self._tls_client, server_hostname=None)
        return stream

    async def _write(self, out: _Outgoing) -> None:
        address: str | None = None
        try:
            address = await self._address_of(out.peer)
            if address is None:
                raise OSError(f"no address for {out.peer}")
            with trio.fail_after(CONNECT_TIMEOUT):
                stream = await self._connect(address)
            async with _closed_at_once(stream):
                conn = LinkConnection(
                    Role.DIALER,
                    self.worker,
                    self._secret(),
                    expect=out.peer,
                    max_frame=self._max_frame,
                )
                with trio.fail_after(HANDSHAKE_TIMEOUT):
                    await stream.send_all(conn.hello())
                    await self._next(stream, conn)  # Challenge (verified)
                    await stream.send_all(conn.prove())
                    await self._next(stream, conn)  # Accepted
                assert conn.phase is Phase.ESTABLISHED
                out.conn = conn
                while True:
                    try:
                        first = await out.receive.receive()
                    except trio.EndOfChannel:
                        return
                    batch = [first]
                    while len(batch) < BATCH:
                        try:
                            batch.append(out.receive.receive_nowait())
                        except (trio.WouldBlock, trio.EndOfChannel):
                            break
                    await stream.send_all(b"".join(conn.send(m) for m in merge(batch)))
        except LinkError as exc:
            log.warning("link_refused", peer=address, claimed=out.peer, reason=str(exc))
        except (OSError, trio.TooSlowError, trio.BrokenResourceError, ValueError) as exc:
            log.warning("link_lost", peer=out.peer, error=str(exc) or type(exc).__name__)
        finally:
            self._lose(out)
            # What was queued and never sent: its senders may be owed an answer.
            undelivered = []
            while True:  # bounded: the queue is closed, so it only empties
                try:
                    undelivered.append(out.receive.receive_nowait())
                except (trio.WouldBlock, trio.EndOfChannel, trio.ClosedResourceError):
                    break
            out.receive.close()
            if undelivered:
                self._on_undelivered(out.peer, undelivered)
