"""What the lobby asks of the cluster (`server.cluster.node.ClusterNode`), where a lone server's
lobby would stop at its own tables. Kept apart so the lobby depends on this alone."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from protocol.messages import ChatMessage
    from protocol.types import TableInfo, TableStatus
    from server.accounts import Account
    from server.cluster.remote import RemoteTable
    from server.peers import Peer
    from server.table_commands import TableConfig


class LobbyCluster(Protocol):
    def remote_table(self, table_id: str, code: str | None) -> RemoteTable | None:
        """Another server's table of this id: known, or to be looked up in the store (its
        commands wait for that; `code`, the join code a session gave, is checked when it is
        found). A known table's code is the lobby's to check (`Lobby.find`, with its limit on
        wrong codes), as for its own tables: this is also every other request's lookup, which
        gives no code."""
        ...

    def listing(
        self, game: str | None, status: TableStatus | None, open_seats: bool, after: str
    ) -> list[TableInfo]:
        """The other servers' tables the filters keep, in table id order from `after` on (a
        listing's page ends at one of them and the next starts there)."""
        ...

    async def opening(self, table_id: str) -> None:
        """One of ours is about to run: it is ours in the store first."""
        ...

    def published(self, table_id: str, info: TableInfo | None, config: TableConfig | None) -> None:
        """One of ours changed (its listing line) or closed (None): tell the other servers."""
        ...

    def chat(self, line: ChatMessage) -> None:
        """A lobby chat line said here: the other servers' members hear it too."""
        ...

    def resume(self, peer: Peer, account: Account) -> None:
        """A login here: the other servers give back the seats they hold for the account."""
        ...

    def forget(self, peer: Peer) -> None:
        """Our connection is gone: the servers that held it are told."""
        ...
