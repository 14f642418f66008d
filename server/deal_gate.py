"""What a spectator of twin tables may see: a deal only once both tables have played it (the
ladder's twins, `server.ladder`), or every table of an event's round has (`server.events`: one gate
of as many tables as the round has).

Twins (`server.ladder.duplicate`) are dealt the same cards at two tables at once. A spectator of the
table that is ahead would otherwise watch deals the other table's entrants have still to play, and
could tell them. So each twin table's spectators are told through a `HeldPeer`: everything the table
tells them (the snapshot they get on arrival, the deals' events, turns, chat) is held, in order, and
let through deal by deal, as soon as the other table has played that deal too (it is dealing a later
one, or its game is over or its table gone). The table that is behind is watched live: the deals it
plays have been played at the other table already. Players are told as at any table (they sit at
one table only, and no entrant plays a deal twice); a match played alone has no gate at all.

One `DealGate` serves a pair of twins (or an event's round). It learns where each table is from the
tables' own policies (`server.planned_table.PlannedTablePolicy.seed`, called as a table deals) and
from the service that runs them (a game over, a table ended); the held messages are then delivered
to the spectators' connections from whichever task said so. Delivering never blocks
(`Peer.deliver`), and every call here comes from the server's one event loop, so nothing needs a
lock.
"""

from __future__ import annotations

from collections import deque

from protocol.messages import ChatMessage, Message
from server.peers import Peer, SharedEvent

#: Held chat lines past this many are dropped for that spectator (a deal's own messages are
#: bounded by the game; chat is only bounded by time).
MAX_HELD_CHAT = 256


class DealGate:
    """Where each of twin tables is (the deal it is on, whether it is done), and its spectators."""

    def __init__(self, tables: int = 2) -> None:
        self._dealing = [-1] * tables  # the deal each table is on (-1: not dealt yet)
        self._done = [False] * tables  # its game is over or its table has ended
        self._watchers: list[dict[str, HeldPeer]] = [{} for _ in range(tables)]

    def dealing(self, table: int, deal: int) -> None:
        """`table` is dealing deal number `deal` (so it has played every deal before it)."""
        self._dealing[table] = max(self._dealing[table], deal)
        self._release_all()

    def finished(self, table: int) -> None:
        """`table` plays no more deals (its game is over, or its table ended)."""
        self._done[table] = True
        self._release_all()

    def cleared(self, table: int, deal: int) -> bool:
        """Whether `table`'s spectators may see deal `deal`: every other table has played it."""
        if deal < 0:
            return True  # before the first deal there is nothing to hide
        return all(
            self._done[other] or self._dealing[other] > deal
            for other in range(len(self._dealing))
            if other != table
        )

    def watcher(self, table: int, peer: Peer) -> HeldPeer:
        """The peer `peer` watches `table` through (the same one if it watches already)."""
        held = self._watchers[table].get(peer.peer_id)
        if held is None or held.peer is not peer:
            held = HeldPeer(peer, self, table)
            self._watchers[table][peer.peer_id] = held
        return held

    def gone(self, table: int, peer: Peer) -> None:
        """`peer` no longer watches `table`: what was held for it is dropped."""
        held = self._watchers[table].pop(peer.peer_id, None)
        if held is not None:
            held.drop()

    def held(self, table: int) -> int:
        """How many messages are held for `table`'s spectators (for tests and logs)."""
        return sum(len(w.queue) for w in self._watchers[table].values())

    def deal_of(self, table: int) -> int:
        return self._dealing[table]

    def _release_all(self) -> None:
        for watchers in self._watchers:
            for held in list(watchers.values()):
                held.release()


class HeldPeer:
    """A spectator of one twin table, as the table sees it: what is delivered to it is held until
    the gate clears its deal, then passed on to the spectator's own connection in order.

    It stands for that connection in the table's set of spectators, so it compares and hashes as the
    connection does (a `leave` or a disconnect from the connection finds it there)."""

    __slots__ = ("_chat", "gate", "peer", "queue", "table")

    def __init__(self, peer: Peer, gate: DealGate, table: int) -> None:
        self.peer = peer
        self.gate = gate
        self.table = table
        self.queue: deque[tuple[int, Message | SharedEvent]] = deque()  # (deal, what)
        self._chat = 0  # chat lines held

    @property
    def peer_id(self) -> str:
        return self.peer.peer_id

    @property
    def connected(self) -> bool:
        return self.peer.connected

    def deliver(self, message: Message) -> None:
        self._hold(message)

    def deliver_shared(self, shared: SharedEvent) -> None:
        self._hold(shared)

    def _hold(self, what: Message | SharedEvent) -> None:
        deal = self.gate.deal_of(self.table)
        if not self.queue and self.gate.cleared(self.table, deal):
            self._pass(what)  # nothing waiting and nothing to hide: live
            return
        if _is_chat(what):
            if self._chat >= MAX_HELD_CHAT:
                return  # a spectator held long misses some chat, never a deal's event
            self._chat += 1
        self.queue.append((deal, what))

    def release(self) -> None:
        """Pass on, in order, everything whose deal the gate has cleared."""
        queue = self.queue
        while queue and self.gate.cleared(self.table, queue[0][0]):
            _deal, what = queue.popleft()
            if _is_chat(what):
                self._chat -= 1
            self._pass(what)

    def _pass(self, what: Message | SharedEvent) -> None:
        if isinstance(what, SharedEvent):
            self.peer.deliver_shared(what)
        else:
            self.peer.deliver(what)

    def drop(self) -> None:
        self.queue.clear()
        self._chat = 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, HeldPeer):
            return other.peer is self.peer
        return other is self.peer

    def __hash__(self) -> int:
        return hash(self.peer)


def _is_chat(what: Message | SharedEvent) -> bool:
    # A shared event's kind, not its message: a game event's frames hold no message object, and
    # decoding one to ask would cost a check per event per held spectator.
    kind = what.kind if isinstance(what, SharedEvent) else type(what)
    return issubclass(kind, ChatMessage)
