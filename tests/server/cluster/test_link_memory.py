"""The link (`server.cluster.link.Links`) and the hop (`ClusterNode` with `RemoteTable` and
`RemotePeer`) over trio's memory streams, on the autojump clock: no sockets, no PostgreSQL.

Each in-test server's `Links` is dialled through `Net.connect`, which hands the other end of a
memory stream pair to the dialled server's `accept` (what its TCP listener does with a socket)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import msgpack
import structlog
import trio
import trio.testing

from protocol.connection import Connection
from protocol.messages import (
    Act,
    CardPlayed,
    CreateTable,
    Error,
    Joined,
    LadderStandings,
    Message,
    Ok,
    Register,
    Sender,
    Snapshot,
    TableChanged,
    TableCreated,
    YourTurn,
)
from protocol.types import Action, ActionKind, Game
from protocol.wire import decode, encode, game_event_frames, your_turn_frames
from server.app import running_server
from server.cluster.link import (
    HANDSHAKE_TIMEOUT,
    MAX_HANDSHAKES_PER_ADDRESS,
    LinkConfig,
    Links,
)
from server.cluster.link_protocol import (
    Deliver,
    Gone,
    LinkConnection,
    Role,
)
from server.cluster.node import SECRET_REFRESH, ClusterNode
from server.cluster.remote import RemoteTable
from server.config import Limits
from server.peers import SharedEvent
from server.ports import Client
from server.table_commands import SpectateCommand
from tests.protocol.test_connection import HELLO, WELCOME
from tests.server.cluster.heard import Heard
from tests.server.unit.memory import MemoryClient, MemoryListener, memory_config

SECRET = b"k" * 32


class Net:
    """Where the in-test servers' links are, by worker id."""

    def __init__(self, nursery: trio.Nursery) -> None:
        self.nursery = nursery
        self.accepting: dict[str, Any] = {}  # worker id -> its `accept`

    async def connect(self, address: str) -> trio.abc.Stream:
        mine, theirs = trio.testing.memory_stream_pair()
        self.nursery.start_soon(self.accepting[address], theirs, f"memory:{address}")
        return mine


def links(
    net: Net,
    worker: str,
    heard: Heard,
    *,
    secret: bytes = SECRET,
    members: set[str] | None = None,
    max_frame: int = 1 << 20,
    member_hosts: frozenset[str] | set[str] = frozenset(),
) -> Links:
    async def address_of(other: str) -> str | None:
        return other

    async def is_member(other: str) -> bool:
        return members is None or other in members

    made = Links(
        worker,
        lambda: secret,
        handle=heard.handle,
        on_lost=heard.on_lost,
        address_of=address_of,
        is_member=is_member,
        connect=net.connect,
        max_frame=max_frame,
        member_hosts=lambda: member_hosts,
    )
    made.start(net.nursery)
    net.accepting[worker] = made.accept
    return made


async def test_a_handshake_then_messages_from_the_proven_worker(
    autojump_clock: trio.abc.Clock,
) -> None:
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            net = Net(nursery)
            heard_a, heard_b = Heard(), Heard()
            a = links(net, "a", heard_a)
            links(net, "b", heard_b)
            a.send("b", Gone("s1"))
            a.send("b", Gone("s2"))
            await heard_b.until(lambda: len(heard_b.messages) == 2)
            assert heard_b.messages == [("a", Gone("s1")), ("a", Gone("s2"))]
            nursery.cancel_scope.cancel()


async def test_a_server_with_another_secret_is_refused_and_logged(
    autojump_clock: trio.abc.Clock,
) -> None:
    with trio.fail_after(60), structlog.testing.capture_logs() as logs:
        async with trio.open_nursery() as nursery:
            net = Net(nursery)
            heard_a, heard_b = Heard(), Heard()
            a = links(net, "a", heard_a, secret=b"x" * 32)
            b = links(net, "b", heard_b)
            a.send("b", Gone("s1"))
            await heard_a.until(lambda: heard_a.lost == ["b"])  # the dialer gives up on it
            await trio.testing.wait_all_tasks_blocked()  # and the listener has closed its end
            assert heard_b.messages == [] and heard_b.lost == []
            nursery.cancel_scope.cancel()
    refusals = [e for e in logs if e["event"] == "link_refused"]
    # Each side finds the other out: the dialer checks the listener's proof first.
    assert any("wrong proof" in e["reason"] for e in refusals), refusals
    assert b.refused == 1  # the listener closed it too, having obeyed nothing


async def test_a_proven_server_that_is_not_a_live_member_is_refused(
    autojump_clock: trio.abc.Clock,
) -> None:
    with trio.fail_after(60), structlog.testing.capture_logs() as logs:
        async with trio.open_nursery() as nursery:
            net = Net(nursery)
            heard_a, heard_b = Heard(), Heard()
            a = links(net, "a", heard_a)
            b = links(net, "b", heard_b, members={"c"})  # "a" was declared dead
            a.send("b", Gone("s1"))
            await heard_a.until(lambda: heard_a.lost == ["b"])
            assert heard_b.messages == [] and b.refused == 1
            nursery.cancel_scope.cancel()
    (refused,) = [e for e in logs if e["event"] == "link_refused" and e["peer"] == "memory:b"]
    assert refused["claimed"] == "a" and refused["reason"] == "not a live member of the cluster"


async def test_a_silent_connection_is_closed_at_the_handshake_deadline(
    autojump_clock: trio.abc.Clock,
) -> None:
    with trio.fail_after(60), structlog.testing.capture_logs() as logs:
        async with trio.open_nursery() as nursery:
            net = Net(nursery)
            b = links(net, "b", Heard())
            start = trio.current_time()
            stream = await net.connect("b")
            assert await stream.receive_some() == b""  # closed by the server
            assert trio.current_time() - start >= HANDSHAKE_TIMEOUT
            assert b.refused == 1
            nursery.cancel_scope.cancel()
    assert [e["reason"] for e in logs if e["event"] == "link_refused"] == ["no handshake in time"]


async def established(
    net: Net, to: str, worker: str = "a"
) -> tuple[trio.abc.Stream, LinkConnection]:
    """A link to `to`, dialled by hand and past its handshake (as a server would)."""
    stream = await net.connect(to)
    conn = LinkConnection(Role.DIALER, worker, SECRET, expect=to)
    await stream.send_all(conn.hello())
    for _ in range(2):  # the challenge, then accepted
        while (message := conn.next_message()) is None:  # bounded by the test's fail_after
            conn.receive_data(bytes(await stream.receive_some()))
        if message.TYPE == "challenge":
            await stream.send_all(conn.prove())
    return stream, conn


async def test_a_malformed_map_closes_the_link_and_nothing_after_it_is_obeyed(
    autojump_clock: trio.abc.Clock,
) -> None:
    with trio.fail_after(60), structlog.testing.capture_logs() as logs:
        async with trio.open_nursery() as nursery:
            net = Net(nursery)
            heard = Heard()
            links(net, "b", heard)
            stream, conn = await established(net, "b")
            first = conn.send(Gone("s1"))  # (each frame is numbered as it is made)
            bad = conn.seal(b"\x82\xa1t\xa4gone\xa4peer\x05")  # {"t": "gone", "peer": 5}
            await stream.send_all(first + bad + conn.send(Gone("s2")))
            await heard.until(lambda: heard.lost == ["a"])
            assert heard.messages == [("a", Gone("s1"))]
            assert await stream.receive_some() == b""
            nursery.cancel_scope.cancel()
    (closed,) = [e for e in logs if e["event"] == "link_closed"]
    assert closed["worker"] == "a" and "gone.peer: expected an id" in closed["reason"]


async def test_an_oversize_frame_is_refused_before_it_is_read(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Before the handshake a frame may hold 1 KiB (a stranger cannot make a server buffer more);
    after it, the link's limit."""
    with trio.fail_after(60), structlog.testing.capture_logs() as logs:
        async with trio.open_nursery() as nursery:
            net = Net(nursery)
            heard = Heard()
            b = links(net, "b", heard, max_frame=4096)
            stream = await net.connect("b")
            await stream.send_all((2048).to_bytes(4, "big") + b"x" * 100)
            assert await stream.receive_some() == b""
            assert b.refused == 1
            stream, conn = await established(net, "b")
            await stream.send_all(conn.send(Gone("s1")) + (8192).to_bytes(4, "big") + b"x" * 100)
            assert await stream.receive_some() == b""
            assert heard.messages == [("a", Gone("s1"))] and heard.lost == ["a"]
            nursery.cancel_scope.cancel()
    (refused,) = [e for e in logs if e["event"] == "link_refused"]
    assert "above the limit of 1024" in refused["reason"]
    (closed,) = [e for e in logs if e["event"] == "link_closed"]
    assert "above the limit of 4112" in closed["reason"]  # 4096 and the tag


async def test_one_address_holds_only_a_few_handshakes_and_refusals_are_not_all_logged(
    autojump_clock: trio.abc.Clock,
) -> None:
    with trio.fail_after(60), structlog.testing.capture_logs() as logs:
        async with trio.open_nursery() as nursery:
            net = Net(nursery)
            b = links(net, "b", Heard())
            silent = [await net.connect("b") for _ in range(MAX_HANDSHAKES_PER_ADDRESS)]
            await trio.testing.wait_all_tasks_blocked()
            start = trio.current_time()
            for _ in range(30):  # the same address again: closed at once
                extra = await net.connect("b")
                assert await extra.receive_some() == b""
            assert trio.current_time() == start
            for stream in silent:  # the first ones until the deadline
                assert await stream.receive_some() == b""
            assert b.refused == 30 + MAX_HANDSHAKES_PER_ADDRESS
            nursery.cancel_scope.cancel()
    logged = [e for e in logs if e["event"] == "link_refused"]
    assert logged[0]["reason"] == "too many links in their handshake"
    assert len(logged) < 30 + MAX_HANDSHAKES_PER_ADDRESS  # a burst, then one a second
    # Each logged one counts those left out before it (the last few wait for the next).
    assert 0 < sum(e["suppressed"] for e in logged) + len(logged) <= b.refused


# ---------------------------------------------------------------- the hop, node to node


class Collecting:
    """A connection of one server, as its tables and the link see it: keeps what it is told."""

    def __init__(self, peer_id: str) -> None:
        self.peer_id = peer_id
        self.connected = True
        self.received: list[Message] = []
        self.changed = trio.Event()

    def deliver(self, message: Message) -> None:
        self.received.append(message)
        self.changed.set()
        self.changed = trio.Event()

    def deliver_shared(self, shared: SharedEvent) -> None:
        self.deliver(shared.message)

    async def until(self, kind: type, check: Any = lambda message: True) -> Any:
        while True:  # bounded by the test's fail_after
            for message in self.received:
                if isinstance(message, kind) and check(message):
                    return message
            await self.changed.wait()


class MemoryNode(ClusterNode):
    """A cluster node whose membership is a set (no PostgreSQL) and whose links are in memory."""

    def __init__(self, worker: str, net: Net, members: set[str]) -> None:
        super().__init__("postgresql://unused", "127.0.0.1", link=LinkConfig(connect=net.connect))
        self.worker = self.links.worker = worker
        self.members = members
        self._secret = SECRET
        self._addresses = {m: m for m in members}
        self._nursery = net.nursery  # what `running` sets (with the database)
        self.links.start(net.nursery)
        net.accepting[worker] = self.links.accept

    async def _is_member(self, worker: str) -> bool:
        return worker in self.members

    async def _address_of(self, worker: str) -> str | None:
        return worker if worker in self.members else None


@asynccontextmanager
async def memory_server() -> AsyncIterator[tuple[Any, MemoryListener]]:
    listener = MemoryListener()
    config = memory_config(limits=Limits(idle_timeout=0, write_timeout=0), ladder=False)
    async with running_server(config, listeners=[listener]) as server:
        yield server, listener


async def test_a_remote_session_watches_a_table_through_the_hop() -> None:
    """B's session spectates A's table: the command crosses as a typed message, A's table holds a
    `RemotePeer` for it, and what the table says comes back as bytes, decoded once at B."""
    with trio.fail_after(60):
        async with memory_server() as (server, listener), trio.open_nursery() as nursery:
            owner = await MemoryClient.connect(listener)
            await owner.hello()
            await owner.request(Register(name="ada"))
            created = await owner.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
            )
            assert isinstance(created, TableCreated)
            net = Net(nursery)
            node_a = MemoryNode("a", net, {"a", "b"})
            node_a.lobby = server.lobby  # A runs the table (not attached: no store of its own)
            node_b = MemoryNode("b", net, {"a", "b"})
            watcher = Collecting("w1")
            node_b.remember(watcher)
            table = server.lobby.tables[created.table]
            remote = RemoteTable(created.table, table.config, None, "a", node_b.forward)
            remote.submit(SpectateCommand(peer=watcher, request_id=9))
            joined = await watcher.until(Joined)
            assert joined.id == 9 and joined.seat is None
            await watcher.until(Snapshot)
            assert any(p.peer_id == "w1@b" for p in table.spectators)
            await owner.aclose()
            nursery.cancel_scope.cancel()


class SlowLadder:
    """A ladder whose every answer takes until `release` is set."""

    def __init__(self) -> None:
        self.release = trio.Event()
        self.asked = 0

    async def handle(self, client: Client, request: Any) -> Message:
        self.asked += 1
        await self.release.wait()
        return Error(id=request.id, code="internal", message="late")

    def connection_closed(self, peer: Any) -> None:
        pass


async def test_a_slow_ladder_never_blocks_the_link(autojump_clock: trio.abc.Clock) -> None:
    """Ladder requests wait on the ladder in tasks of their own (32 at most; more are refused at
    once): what B says after them (a session gone) is obeyed at once."""
    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            net = Net(nursery)
            node_a = MemoryNode("a", net, {"a", "b"})
            node_b = MemoryNode("b", net, {"a", "b"})
            slow = SlowLadder()
            node_a.ladder.service = slow
            node_a.ladder.here = True
            node_b.ladder.worker = "a"
            held = node_a.peer_at("b", "s1")  # a session of B's that A holds
            answers: list[Message | None] = []

            async def ask(n: int) -> None:
                client = Client(peer=Collecting(f"s{n}"), account=None, owner="127.0.0.1")
                answers.append(await node_b.ladder.ask(client, LadderStandings(id=n)))

            for n in range(33):
                nursery.start_soon(ask, n)
            await trio.testing.wait_all_tasks_blocked()
            (refused,) = answers  # the 33rd, refused at once; 32 wait on the ladder
            assert isinstance(refused, Error) and refused.code == "server_full"
            assert slow.asked == 32
            node_b.links.send("a", Gone("s1"))
            await trio.testing.wait_all_tasks_blocked()
            assert not held.alive  # obeyed while the ladder still thinks
            slow.release.set()
            await trio.testing.wait_all_tasks_blocked()
            assert len(answers) == 33
            assert all(isinstance(a, Error) and a.message == "late" for a in answers[1:])
            nursery.cancel_scope.cancel()


async def test_bytes_that_are_no_message_close_the_link_that_sent_them(
    autojump_clock: trio.abc.Clock,
) -> None:
    """A delivery is decoded once, at the edge, for all the sessions it names; bytes no server
    sends close the link (logged) instead of reaching a session or raising in the reader."""
    with trio.fail_after(60), structlog.testing.capture_logs() as logs:
        async with trio.open_nursery() as nursery:
            net = Net(nursery)
            MemoryNode("a", net, {"a", "b"})
            node_b = MemoryNode("b", net, {"a", "b"})
            first, second = Collecting("w1"), Collecting("w2")
            node_b.remember(first)
            node_b.remember(second)
            stream, conn = await established(net, "b")
            pong = b"\x81\xa1t\xa4pong"  # {"t": "pong"}
            await stream.send_all(
                conn.send(Deliver(("w1", "w2", "gone"), pong))
                + conn.send(Deliver(("w1",), b"\x81\xa1t\xa4nope"))
                + conn.send(Deliver(("w2",), pong))
            )
            assert await stream.receive_some() == b""
            assert [m.TYPE for m in first.received] == ["pong"]
            assert [m.TYPE for m in second.received] == ["pong"]
            nursery.cancel_scope.cancel()
    (closed,) = [e for e in logs if e["event"] == "link_closed"]
    assert "deliver.body" in closed["reason"]


async def test_a_secret_rotated_in_the_database_is_used_for_the_next_links(
    autojump_clock: trio.abc.Clock,
) -> None:
    """The kept secret is read again every `SECRET_REFRESH` seconds: after a rotation, links opened
    from then on prove the new one (a server still on the old one is refused)."""
    with trio.fail_after(120):
        async with trio.open_nursery() as nursery:
            net = Net(nursery)
            node_a = MemoryNode("a", net, {"a", "b"})
            heard_b = Heard()
            links(net, "b", heard_b, secret=b"n" * 32)  # already on the new secret
            kept = {"secret": SECRET}

            async def run_statement(fn: Any) -> Any:
                return kept["secret"]  # what `secret.kept` reads from the row

            node_a.run_statement = run_statement  # type: ignore[method-assign]
            nursery.start_soon(node_a._keep_secret)
            node_a.links.send("b", Gone("s1"))
            await trio.testing.wait_all_tasks_blocked()  # (memory streams: the handshake is over)
            assert node_a._secret == SECRET and node_a.links.refused == 0
            assert heard_b.messages == []  # refused: a is still on the old secret
            kept["secret"] = b"n" * 32  # UPDATE cluster_secret ...
            await trio.sleep(SECRET_REFRESH)
            node_a.links.send("b", Gone("s2"))
            await heard_b.until(lambda: heard_b.messages == [("a", Gone("s2"))])
            nursery.cancel_scope.cancel()


async def test_a_seat_given_back_over_the_link_is_held_again_when_that_session_goes() -> None:
    """A login at B gives the account's held seat at A's table to B's session (`Resume`); when
    that session goes (`Gone`), A's table hears it and holds the seat for the grace again."""
    with trio.fail_after(20):
        async with memory_server() as (server, listener), trio.open_nursery() as nursery:
            ada = await MemoryClient.connect(listener)
            await ada.hello()
            await ada.request(Register(name="ada"))
            created = await ada.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2], sit=0)
            )
            assert isinstance(created, TableCreated)
            table = server.lobby.tables[created.table]
            account = table.seats[0].account
            assert account is not None
            lobby = Collecting("lobby")  # hears every change of the table's seats
            server.lobby.listen(lobby, None)

            def seat(connected: bool) -> Any:
                return lambda m: (
                    m.table.table == created.table
                    and m.table.seats[0].player == "ada"
                    and m.table.seats[0].connected is connected
                )

            await ada.aclose()  # her seat is held for her
            await lobby.until(TableChanged, seat(connected=False))
            lobby.received.clear()
            net = Net(nursery)
            node_a = MemoryNode("a", net, {"a", "b"})
            node_a.lobby = server.lobby
            node_b = MemoryNode("b", net, {"a", "b"})
            elsewhere = Collecting("s9")
            node_b.remember(elsewhere, account)
            assert table.resumable_by(account.id)
            node_b.resume(elsewhere, account)
            back = await elsewhere.until(Joined)
            assert back.seat == 0
            await lobby.until(TableChanged, seat(connected=True))
            lobby.received.clear()
            node_b.forget(elsewhere)
            await lobby.until(TableChanged, seat(connected=False))
            assert table.seats[0].holder is None
            assert table.seats[0].dropped_at is not None  # held for the grace, as for any drop
            nursery.cancel_scope.cancel()


async def test_the_clusters_own_addresses_are_never_turned_away_for_want_of_room(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Strangers holding every handshake slot do not cut the servers off from each other: an
    address a live server published is let in past the caps (and must still prove itself)."""
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            net = Net(nursery)
            heard_b = Heard()
            # The test's streams all come from "memory": here, a live server's address.
            b = links(net, "b", heard_b, member_hosts={"memory"})
            silent = [await net.connect("b") for _ in range(MAX_HANDSHAKES_PER_ADDRESS + 4)]
            a = links(net, "a", Heard())
            a.send("b", Gone("s1"))
            await heard_b.until(lambda: heard_b.messages == [("a", Gone("s1"))])
            assert b.refused == 0 and len(silent) > MAX_HANDSHAKES_PER_ADDRESS
            nursery.cancel_scope.cancel()


class KeepingShared(Collecting):
    """A connection that keeps each event as it was handed over (its bytes), never decoding it."""

    def __init__(self, peer_id: str) -> None:
        super().__init__(peer_id)
        self.shared: list[SharedEvent] = []

    def deliver_shared(self, shared: SharedEvent) -> None:
        self.shared.append(shared)
        self.changed.set()
        self.changed = trio.Event()

    async def until_shared(self, count: int) -> None:
        while len(self.shared) < count:  # bounded by the test's fail_after
            await self.changed.wait()


def _never_decoded(body: bytes, *args: Any) -> Message:
    raise AssertionError(f"an event was decoded at the receiving server: {body[:40]!r}")


async def test_an_event_crosses_the_link_as_its_bytes_and_is_never_decoded(
    autojump_clock: trio.abc.Clock, monkeypatch: Any
) -> None:
    """A's table tells B's sessions an event and a `your_turn`: the bytes A's own sessions would
    get cross once for all of B's (one `Deliver` naming them all) and reach them undecoded, each
    session splicing in its own `seq`; a reply (`ok`) is still decoded, once."""
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            net = Net(nursery)
            node_a = MemoryNode("a", net, {"a", "b"})
            node_b = MemoryNode("b", net, {"a", "b"})
            first, second = KeepingShared("w1"), KeepingShared("w2")
            node_b.remember(first)
            node_b.remember(second)
            sent: list[bytes] = []
            send = node_a.links.send

            def spy(worker: str, message: Any) -> None:
                if isinstance(message, Deliver):
                    sent.append(message.body)
                send(worker, message)

            monkeypatch.setattr(node_a.links, "send", spy)
            played = game_event_frames(
                "t1", 12, {"kind": "card_played", "seat": 2, "card": "QS", "trick_number": 3}
            )
            turn = your_turn_frames(
                "t1",
                12,
                seat=3,
                legal=[{"kind": "play", "card": "2C"}, {"kind": "play", "card": "AS"}],
                deadline_ms=900,
                bank_ms=0,
            )
            monkeypatch.setattr("server.cluster.node.decode", _never_decoded)
            shared = SharedEvent(played)
            for peer in (node_a.peer_at("b", "w1"), node_a.peer_at("b", "w2")):
                peer.deliver_shared(shared)
            node_a.peer_at("b", "w2").deliver_shared(SharedEvent(turn))
            await first.until_shared(1)
            await second.until_shared(2)
            # One body for both sessions (the writer's `merge`), the very bytes of A's frames.
            assert sent[0] is sent[1] and sent[0] == played.body()
            for keeper in (first, second):
                got = keeper.shared[0].frames()
                assert got.kind is CardPlayed and (got.table, got.version) == ("t1", 12)
                assert got.frame(41) == played.frame(41)
            passed = second.shared[1].frames()
            assert (passed.kind, passed.table, passed.version) == (YourTurn, "t1", 12)
            assert passed.frame(5) == turn.frame(5)
            # What a session does with it: its own `seq` spliced in, the turn owed for its act.
            proto = Connection(Sender.SERVER)
            proto.receive_data(encode(HELLO))
            proto.next_event()
            proto.send(WELCOME)
            assert proto.send_event(passed) == turn.frame(1)
            act = Act(id=2, table="t1", version=12, action=Action(kind=ActionKind.PLAY, card="AS"))
            assert proto.answers_turn(act)
            # A reply is decoded (once) and delivered as a message.
            monkeypatch.setattr("server.cluster.node.decode", decode)
            node_a.peer_at("b", "w1").deliver(Ok(id=4))
            ok = await first.until(Ok)
            assert ok.id == 4
            nursery.cancel_scope.cancel()


async def test_an_event_body_that_does_not_start_as_an_event_closes_the_link(
    autojump_clock: trio.abc.Clock,
) -> None:
    """Passed through undecoded, an event's body is still read as far as its envelope: bytes whose
    `seq` is no number close the link (logged), and reach no session."""
    with trio.fail_after(60), structlog.testing.capture_logs() as logs:
        async with trio.open_nursery() as nursery:
            net = Net(nursery)
            MemoryNode("a", net, {"a", "b"})
            node_b = MemoryNode("b", net, {"a", "b"})
            watcher = KeepingShared("w1")
            node_b.remember(watcher)
            stream, conn = await established(net, "b")
            bad = msgpack.packb({"t": "card_played", "seq": "one", "table": "t1", "version": 1})
            await stream.send_all(conn.send(Deliver(("w1",), bad)))
            assert await stream.receive_some() == b""
            assert watcher.shared == [] and watcher.received == []
            nursery.cancel_scope.cancel()
    (closed,) = [e for e in logs if e["event"] == "link_closed"]
    assert "deliver.body" in closed["reason"]
