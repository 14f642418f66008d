"""A table that runs in another server of the cluster, as this server's sessions see it, and a
connection of another server, as this server's tables see it.

The hop is a forward: a session always stays in the server its client reached. A command for a
table another server runs (`RemoteTable`) crosses the link to that server as a plain map
(`command_to_link`), where it is rebuilt around a `RemotePeer` standing for the session and put in
the table's inbox as any other; whatever the table delivers to that peer crosses back and is
delivered to the session (which numbers the events, keeps its seat map from `joined`, and so on,
as for its own server's tables). An event crosses as the bytes the table's own sessions are sent
(`EventFrames.body`) and passes through the other server undecoded. The table still decides
everything: which seat the connection holds, whether its act is for that seat.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from protocol.messages import Message
from protocol.types import TableInfo
from server.cluster.link_protocol import (
    Forward,
    ForwardAct,
    ForwardChat,
    ForwardJoin,
    ForwardLeave,
    ForwardSpectate,
)
from server.peers import Peer, SharedEvent
from server.table_commands import (
    ActCommand,
    ChatCommand,
    CloseUnoccupiedCommand,
    Command,
    JoinCommand,
    LeaveCommand,
    SpectateCommand,
    TableConfig,
)


@dataclass(eq=False)
class RemoteTable:
    """A table another server runs: what a session needs of it (its id and configuration, for the
    join code), and where to forward its commands."""

    table_id: str
    config: TableConfig | None  # None while it is looked up (`pending`)
    info: TableInfo | None
    owner: str  # the id of the server that runs it ("" while it is looked up)
    forward: Callable[[RemoteTable, Command], None]  # hands a command to the link
    code: str | None = None  # the join code a session gave, checked once the table is found

    @property
    def pending(self) -> bool:
        """Not yet heard of here: the store says who runs it (a table opened a moment ago)."""
        return self.config is None

    def submit(self, command: Command) -> None:
        self.forward(self, command)


def command_to_link(table_id: str, command: Command) -> Forward:
    """The command as the link carries it to the table's server; its peer travels as its id."""
    if isinstance(command, CloseUnoccupiedCommand):  # the lobby's own: never forwarded
        raise ValueError("a table's own sweep is not forwarded")
    peer, rid = command.peer.peer_id, command.request_id
    if isinstance(command, ActCommand):
        return ForwardAct(table_id, peer, rid, command.version, command.action)
    if isinstance(command, JoinCommand):
        return ForwardJoin(
            table_id,
            peer,
            rid,
            command.account,
            command.seat,
            command.takeover,
            command.reattach,
            command.created,
        )
    if isinstance(command, SpectateCommand):
        return ForwardSpectate(table_id, peer, rid)
    if isinstance(command, LeaveCommand):
        return ForwardLeave(table_id, peer, rid, command.reason)
    if isinstance(command, ChatCommand):
        return ForwardChat(table_id, peer, rid, command.message)
    raise ValueError(f"no link form for {command!r}")  # pragma: no cover


def command_from_link(message: Forward, peer: Peer) -> Command:
    """The command a link message carries, from `peer` (the sender's session, as this server
    sees it: named within the sending server's own, `RemotePeer`). The message was checked as
    it arrived (`link_protocol.decode`)."""
    rid = message.rid
    if isinstance(message, ForwardAct):
        return ActCommand(peer=peer, version=message.version, action=message.action, request_id=rid)
    if isinstance(message, ForwardJoin):
        return JoinCommand(
            peer=peer,
            account=message.account,
            seat=message.seat,
            request_id=rid,
            takeover=message.takeover,
            reattach=message.reattach,
            created=message.created,
        )
    if isinstance(message, ForwardSpectate):
        return SpectateCommand(peer=peer, request_id=rid)
    if isinstance(message, ForwardLeave):
        return LeaveCommand(peer=peer, request_id=rid, reason=message.reason)
    return ChatCommand(peer=peer, message=message.message, request_id=rid)


class RemotePeer:
    """A session of another server (`origin`), as this server's tables and ladder hold it.

    What is delivered to it goes back over the link (`send`). It is connected until its server
    says the session has gone, or the link to that server is lost (then the tables hold its
    seats for the reconnect grace, as for a dropped connection).
    """

    __slots__ = ("_send", "_send_shared", "alive", "local_id", "origin")

    def __init__(
        self,
        local_id: str,
        origin: str,
        send: Callable[[RemotePeer, Message], None],
        send_shared: Callable[[RemotePeer, SharedEvent], None],
    ):
        self.local_id = local_id  # the session's id in its own server
        self.origin = origin
        self._send = send
        self._send_shared = send_shared  # an event's bytes, as the table's sessions get them
        self.alive = True

    @property
    def peer_id(self) -> str:
        return f"{self.local_id}@{self.origin}"

    @property
    def connected(self) -> bool:
        return self.alive

    def deliver(self, message: Message) -> None:
        if self.alive:
            self._send(self, message)

    def deliver_shared(self, shared: SharedEvent) -> None:
        if self.alive:
            self._send_shared(self, shared)

    def __repr__(self) -> str:
        return f"RemotePeer({self.peer_id!r})"
