"""A table that runs in another server of the cluster, as this server's sessions see it, and a
connection of another server, as this server's tables see it.

The hop is a forward: a session always stays in the server its client reached. A command for a
table another server runs (`RemoteTable`) crosses the link to that server as a plain map
(`command_to_wire`), where it is rebuilt around a `RemotePeer` standing for the session and put in
the table's inbox as any other; whatever the table delivers to that peer crosses back and is
delivered to the session (which numbers the events, keeps its seat map from `joined`, and so on,
as for its own server's tables). The table still decides everything: which seat the connection
holds, whether its act is for that seat.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from protocol.messages import ChatMessage, Message, TableCreated
from protocol.types import TableInfo
from protocol.wire import from_wire, to_wire
from server.accounts import Account
from server.peers import Peer, SharedEvent
from server.table_commands import (
    ActCommand,
    ChatCommand,
    CloseUnoccupiedCommand,
    Command,
    JoinCommand,
    LeaveCommand,
    LeaveReason,
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


def _account(account: Account) -> list[Any]:
    return [account.id, account.name, account.is_bot, account.is_guest]


def _account_from(data: list[Any]) -> Account:
    return Account(int(data[0]), str(data[1]), bool(data[2]), bool(data[3]))


def command_to_wire(table_id: str, command: Command) -> dict[str, Any]:
    """The command as a map that crosses the link; its peer travels as its id."""
    base: dict[str, Any] = {"table": table_id}
    if isinstance(command, CloseUnoccupiedCommand):  # the lobby's own: never forwarded
        raise ValueError("a table's own sweep is not forwarded")
    base["peer"] = command.peer.peer_id
    base["rid"] = command.request_id
    if isinstance(command, ActCommand):
        return {**base, "k": "act", "version": command.version, "action": command.action}
    if isinstance(command, JoinCommand):
        return {
            **base,
            "k": "join",
            "account": _account(command.account),
            "seat": command.seat,
            "takeover": command.takeover,
            "reattach": command.reattach,
            "created": None if command.created is None else to_wire(command.created),
        }
    if isinstance(command, SpectateCommand):
        return {**base, "k": "spectate"}
    if isinstance(command, LeaveCommand):
        return {**base, "k": "leave", "reason": command.reason.value}
    if isinstance(command, ChatCommand):
        return {**base, "k": "chat", "message": to_wire(command.message)}
    raise ValueError(f"no wire form for {command!r}")  # pragma: no cover


def command_from_wire(data: dict[str, Any], peer: Peer) -> Command:
    """The command a link map carries, from `peer` (the sender's session, as this server sees
    it). Raises `ValueError` or `KeyError` for a map no server of ours sends."""
    kind = data["k"]
    rid = data.get("rid")
    if kind == "act":
        return ActCommand(
            peer=peer, version=int(data["version"]), action=dict(data["action"]), request_id=rid
        )
    if kind == "join":
        created = data.get("created")
        made = None
        if created is not None:
            message = from_wire(created)
            assert isinstance(message, TableCreated)
            made = message
        return JoinCommand(
            peer=peer,
            account=_account_from(data["account"]),
            seat=data.get("seat"),
            request_id=rid,
            takeover=bool(data.get("takeover")),
            reattach=bool(data.get("reattach")),
            created=made,
        )
    if kind == "spectate":
        return SpectateCommand(peer=peer, request_id=rid)
    if kind == "leave":
        return LeaveCommand(peer=peer, request_id=rid, reason=LeaveReason(data["reason"]))
    if kind == "chat":
        line = from_wire(data["message"])
        if not isinstance(line, ChatMessage):
            raise ValueError("a chat command carries a chat message")
        return ChatCommand(peer=peer, message=line, request_id=rid)
    raise ValueError(f"no command {kind!r}")


class RemotePeer:
    """A session of another server (`origin`), as this server's tables and ladder hold it.

    What is delivered to it goes back over the link (`send`). It is connected until its server
    says the session has gone, or the link to that server is lost (then the tables hold its
    seats for the reconnect grace, as for a dropped connection).
    """

    __slots__ = ("_send", "alive", "local_id", "origin")

    def __init__(self, local_id: str, origin: str, send: Callable[[RemotePeer, Message], None]):
        self.local_id = local_id  # the session's id in its own server
        self.origin = origin
        self._send = send
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
            self._send(self, shared.message)

    def __repr__(self) -> str:
        return f"RemotePeer({self.peer_id!r})"
