"""The operator's messages: a connection proves it is the server's operator (``operator_login``,
with a token made on the machine that holds the database), then announces, lists who is connected,
kicks, bans and unbans, and closes tables; everyone connected gets ``announcement``.

Declared as in ``protocol.messages`` (one frozen dataclass each, registered by ``t``) and apart from
it because they are one concern, the operator's (docs/protocol.md, Operator; the server's side is
``server.operator``, the command line ``spades-server admin``). ``protocol.messages`` re-exports
them. Only the envelope, the schema and the wire types are imported here, so there is no cycle.
"""

from dataclasses import dataclass, field
from typing import Annotated

from protocol.envelope import Event, Reply, Request, Sender, register
from protocol.schema import Doc, Length
from protocol.types import Count, Label, Name, TableId, Text, Token

C, S = Sender.CLIENT, Sender.SERVER

#: At most this many sessions in one `sessions` page, and bans in one `bans` page: at their
#: longest they fit one frame of the default size (tests/server/test_reply_bounds.py).
MAX_SESSIONS_LISTED = 32
MAX_BANS_LISTED = 48
#: At most this many tables a `SessionInfo` names where it sits, and where it watches.
MAX_TABLES_LISTED = 4
MAX_WATCHED_LISTED = 8

Reason = Annotated[str, Length(1, 200)]
#: An IP address, or a network in CIDR form (`192.0.2.0/24`, `2001:db8::/64`).
Address = Annotated[str, Length(1, 64)]


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionInfo:
    """One connection, as `sessions` lists it."""

    session: Annotated[Label, Doc("the session id (`welcome.session`): `kick` takes it")]
    account: Annotated[Name | None, Doc("the logged-in account (or guest); nil: none yet")] = None
    address: Annotated[Address, Doc("the peer's network address")]
    transport: Annotated[Label, Doc("`tcp` (TLS or not) or `websocket` (the web page)")]
    tables: Annotated[
        Annotated[list[TableId], Length(0, MAX_TABLES_LISTED)],
        Doc(f"the tables where it holds a seat (the first {MAX_TABLES_LISTED})"),
    ] = field(default_factory=list)
    watching: Annotated[
        Annotated[list[TableId], Length(0, MAX_WATCHED_LISTED)],
        Doc(f"the tables it watches (the first {MAX_WATCHED_LISTED})"),
    ] = field(default_factory=list)
    operator: Annotated[bool, Doc("whether it is an operator's connection")] = False
    server: Annotated[
        Label | None, Doc("in a cluster: the server it is connected to (its worker id)")
    ] = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BanInfo:
    """One ban, as `bans` lists it."""

    account: Annotated[Name | None, Doc("the banned account, or nil for an address ban")] = None
    address: Annotated[Address | None, Doc("the banned address or network, or nil")] = None
    reason: Annotated[Reason | None, Doc("why, as the operator said")] = None


def _one_target(account: str | None, address: str | None) -> tuple[str, str] | None:
    if (account is None) == (address is None):
        return ("account", "give exactly one of account and address")
    return None


@register("operator_login", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class OperatorLogin(Request):
    """Make this connection the operator's, by an operator token (`spades-server admin token`
    made it on the machine that holds the database). Answered with ``ok``; a token the server
    does not know is refused ``bad_token``, and counts against the address as a wrong account
    token does (``rate_limited`` with ``retry_ms`` once there are too many). The other operator requests need it first
    (``not_operator``). The connection need not log in to an account."""

    token: Annotated[Token, Doc("the operator token")]


@register("announce", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Announce(Request):
    """Operator: tell every connection of this server (this one too) ``text``, as
    ``announcement``. Answered with ``ok``, whose ``note`` says how many were told."""

    text: Annotated[Text, Doc("what to say")]


@register("announcement", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class Announcement(Event):
    """The server's operator says something to everyone connected (a restart coming, say)."""

    text: Annotated[Text, Doc("what the operator said")]


@register("list_sessions", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class ListSessions(Request):
    """Operator: who is connected to this server (in a cluster, to every server: the first page
    waits 1 s for the others' lists, kept for the pages after it on this connection), a page at
    a time. Answered with ``sessions``."""

    offset: Annotated[Count, Doc("skip this many (the page before's end); 0: from the first")] = 0


@register("sessions", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class Sessions(Reply):
    """One page of the connections of this server that have said ``hello``, oldest first: ask
    again with ``offset`` for the next while ``offset`` + the page's length is below ``total``."""

    sessions: Annotated[
        Annotated[list[SessionInfo], Length(0, MAX_SESSIONS_LISTED)],
        Doc(f"the connections from `offset` on (at most {MAX_SESSIONS_LISTED})"),
    ]
    total: Annotated[Count, Doc("how many there are in all")]


@register("kick", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Kick(Request):
    """Operator: close a connection (by its session id) or every connection of an account (by its
    name). Each is sent ``bye`` with the reason, then closed; its seats are held for its return
    as after any dropped connection. Answered with ``ok``, or ``no_such_session`` (a lone server
    only: in a cluster the other servers may hold the connections)."""

    target: Annotated[Label, Doc("a session id, or an account name")]
    reason: Annotated[Reason | None, Doc("why, for the player")] = None


@register("ban", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Ban(Request):
    """Operator: ban an account or an address (or network) from this server: its live connections
    are sent ``error`` ``banned`` and closed; from then on it is refused ``banned`` (a login,
    ``hello.token``, ``guest`` or ``register`` of it, or a new connection from the address). Bans
    are stored: they hold after a restart and on every server of the database. Answered ``ok``."""

    account: Annotated[Name | None, Doc("the account to ban")] = None
    address: Annotated[Address | None, Doc("an IP address or CIDR network to ban")] = None
    reason: Annotated[Reason | None, Doc("why, said to the banned")] = None

    def invariant(self) -> tuple[str, str] | None:
        """Exactly one of account and address."""
        return _one_target(self.account, self.address)


@register("unban", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Unban(Request):
    """Operator: lift a ban. Answered with ``ok`` (whose ``note`` says if there was none)."""

    account: Annotated[Name | None, Doc("the account")] = None
    address: Annotated[Address | None, Doc("the address or network, as it was banned")] = None

    def invariant(self) -> tuple[str, str] | None:
        """Exactly one of account and address."""
        return _one_target(self.account, self.address)


@register("list_bans", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class ListBans(Request):
    """Operator: the bans in force, a page at a time. Answered with ``bans``."""

    offset: Annotated[Count, Doc("skip this many (the page before's end); 0: from the first")] = 0


@register("bans", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class Bans(Reply):
    """One page of the bans in force, oldest first (paged as ``sessions`` is)."""

    bans: Annotated[
        Annotated[list[BanInfo], Length(0, MAX_BANS_LISTED)],
        Doc(f"the bans from `offset` on (at most {MAX_BANS_LISTED})"),
    ]
    total: Annotated[Count, Doc("how many there are in all")]


@register("close_table", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class CloseTable(Request):
    """Operator: close a table of this server now. A game in play ends unfinished (stored as
    aborted: no results, no ratings); everyone at the table and in the lobby gets
    ``table_closed`` with the reason. Answered with ``ok``, or ``no_such_table`` (a lone server
    only: in a cluster the server running the table closes it)."""

    table: Annotated[TableId, Doc("the table")]
    reason: Annotated[Reason | None, Doc("why, for its players")] = None
