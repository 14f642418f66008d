"""Error codes and the exceptions the protocol package raises.

Every way a peer can get the protocol wrong, and every reason the server refuses a request, has a code
here. The codes travel in the ``error`` message, so they are part of the wire contract: add codes, never
rename or remove one. ``docs/protocol.md`` renders its error table from ``ERROR_CODES``.

:class:`ProtocolError` carries a code; its two kinds say whose fault it is, as h11's do:
:class:`RemoteProtocolError` (the peer's bytes or messages) and :class:`LocalProtocolError` (our own
code tried to send what the protocol forbids).
"""

from dataclasses import dataclass
from enum import StrEnum


class ErrorCode(StrEnum):
    """The ``code`` of an ``error`` message and of a :class:`ProtocolError`."""

    # The stream: fatal, the connection is closed after the error is sent.
    BAD_FRAME = "bad_frame"
    FRAME_TOO_LARGE = "frame_too_large"
    BAD_MSGPACK = "bad_msgpack"
    # One well-framed message that does not fit its schema: answered, the connection goes on.
    NOT_A_MAP = "not_a_map"
    UNKNOWN_TYPE = "unknown_type"
    UNEXPECTED_MESSAGE = "unexpected_message"
    MISSING_FIELD = "missing_field"
    INVALID_FIELD = "invalid_field"
    # Session and accounts.
    VERSION_MISMATCH = "version_mismatch"
    NOT_AUTHENTICATED = "not_authenticated"
    ALREADY_AUTHENTICATED = "already_authenticated"
    BAD_TOKEN = "bad_token"
    NAME_TAKEN = "name_taken"
    BAD_NAME = "bad_name"
    GUESTS_DISABLED = "guests_disabled"
    RATE_LIMITED = "rate_limited"
    SERVER_FULL = "server_full"
    # Lobby and tables.
    NO_SUCH_TABLE = "no_such_table"
    BAD_OPTIONS = "bad_options"
    TABLE_FULL = "table_full"
    TABLE_LIMIT = "table_limit"
    SEAT_TAKEN = "seat_taken"
    PRIVATE_TABLE = "private_table"
    ALREADY_SEATED = "already_seated"
    NOT_SEATED = "not_seated"
    SEAT_HELD = "seat_held"
    NO_WATCHING = "no_watching"
    # Game actions.
    NOT_YOUR_TURN = "not_your_turn"
    STALE_VERSION = "stale_version"
    ILLEGAL_ACTION = "illegal_action"
    # Ladder.
    NOT_ON_LADDER = "not_on_ladder"
    ALREADY_ON_LADDER = "already_on_ladder"
    LADDER_LIMIT = "ladder_limit"
    NO_SUCH_ENTRANT = "no_such_entrant"
    NO_SUCH_MATCH = "no_such_match"
    # Player statistics.
    NO_SUCH_ACCOUNT = "no_such_account"
    # Events.
    NO_SUCH_EVENT = "no_such_event"
    EVENT_CLOSED = "event_closed"
    NOT_REGISTERED = "not_registered"
    ALREADY_REGISTERED = "already_registered"
    EVENT_FULL = "event_full"
    NOT_ALLOWED = "not_allowed"
    BAD_EVENT = "bad_event"
    # Hand review.
    NOT_REVIEWABLE = "not_reviewable"
    REVIEW_BUSY = "review_busy"
    # The server itself.
    TIMEOUT = "timeout"
    SLOW_CONSUMER = "slow_consumer"
    INTERNAL = "internal"
    SHUTTING_DOWN = "shutting_down"
    # The operator's (docs/protocol.md, Operator).
    BANNED = "banned"
    NOT_OPERATOR = "not_operator"
    NO_SUCH_SESSION = "no_such_session"


@dataclass(frozen=True, slots=True)
class ErrorInfo:
    """What the documentation says about one code: whether it ends the connection, and when it is sent."""

    closes: bool
    meaning: str


ERROR_CODES: dict[ErrorCode, ErrorInfo] = {
    ErrorCode.BAD_FRAME: ErrorInfo(
        True, "A length prefix of 0, or the stream ended inside a frame."
    ),
    ErrorCode.FRAME_TOO_LARGE: ErrorInfo(
        True, "A length prefix above the frame size limit; refused before the body is read."
    ),
    ErrorCode.BAD_MSGPACK: ErrorInfo(
        True,
        "The frame body is not exactly one msgpack value within the limits: bad bytes, trailing "
        "bytes, ext types, non-string or duplicate map keys, a size or nesting limit exceeded.",
    ),
    ErrorCode.NOT_A_MAP: ErrorInfo(False, "The frame holds a msgpack value that is not a map."),
    ErrorCode.UNKNOWN_TYPE: ErrorInfo(
        False, "The `t` field names no message type; `detail` is that `t` (at most 40 characters)."
    ),
    ErrorCode.UNEXPECTED_MESSAGE: ErrorInfo(
        False,
        "A message the receiver never accepts from this side, or not in this phase (see Connection: "
        "anything but `hello` or `ping` before `hello`, a second `hello`, a reply to no request, "
        "anything after `bye`); `detail` is its type.",
    ),
    ErrorCode.MISSING_FIELD: ErrorInfo(False, "A required field is absent; `detail` names it."),
    ErrorCode.INVALID_FIELD: ErrorInfo(
        False, "A field has the wrong type, range or enum value; `detail` names it."
    ),
    ErrorCode.VERSION_MISMATCH: ErrorInfo(
        True, "The client's protocol major version differs from the server's."
    ),
    ErrorCode.NOT_AUTHENTICATED: ErrorInfo(
        False, "The request needs an account (log in or register first)."
    ),
    ErrorCode.ALREADY_AUTHENTICATED: ErrorInfo(False, "The session is already logged in."),
    ErrorCode.BAD_TOKEN: ErrorInfo(False, "The token matches no account."),
    ErrorCode.NAME_TAKEN: ErrorInfo(False, "Another account has this name."),
    ErrorCode.BAD_NAME: ErrorInfo(False, "The name is not allowed (length or characters)."),
    ErrorCode.GUESTS_DISABLED: ErrorInfo(False, "This server does not allow guest play."),
    ErrorCode.RATE_LIMITED: ErrorInfo(
        False,
        "Too many messages, or too many of one kind of request (open tables, guest accounts,"
        " registered accounts, wrong join codes, wrong tokens); `welcome.limits` says how many"
        " messages are allowed, and `retry_ms` (when the server knows) how long to wait before the request would be"
        " accepted.",
    ),
    ErrorCode.SERVER_FULL: ErrorInfo(True, "The server has no room for another session."),
    ErrorCode.NO_SUCH_TABLE: ErrorInfo(False, "No table has this id (or it has closed)."),
    ErrorCode.BAD_OPTIONS: ErrorInfo(
        False, "Unknown game or preset, or ruleset options the engine refuses; `detail` says which."
    ),
    ErrorCode.TABLE_FULL: ErrorInfo(
        False, "The table has no free seat (or no room for spectators)."
    ),
    ErrorCode.TABLE_LIMIT: ErrorInfo(
        False, "The server has as many open tables as it may; try again when one has closed."
    ),
    ErrorCode.SEAT_TAKEN: ErrorInfo(False, "The seat asked for is occupied."),
    ErrorCode.PRIVATE_TABLE: ErrorInfo(False, "The table is private and the join code is wrong."),
    ErrorCode.ALREADY_SEATED: ErrorInfo(False, "The session already has a seat at a table."),
    ErrorCode.NOT_SEATED: ErrorInfo(
        False,
        "The request needs a seat at this table, and this connection holds none there (or no longer:"
        " `message` says why).",
    ),
    ErrorCode.SEAT_HELD: ErrorInfo(
        False,
        "Another live connection of this account holds the seat; `join` with `takeover` to move it"
        " to this connection.",
    ),
    ErrorCode.NO_WATCHING: ErrorInfo(
        False, "The table was opened with `no_watching`: it takes no spectators."
    ),
    ErrorCode.NOT_YOUR_TURN: ErrorInfo(False, "It is not this seat's turn to act."),
    ErrorCode.STALE_VERSION: ErrorInfo(
        False,
        "The action's `version` is older than the start of the seat's decision, or one the game has "
        "not reached: it was decided on an older state (or resent) and is not applied.",
    ),
    ErrorCode.ILLEGAL_ACTION: ErrorInfo(
        False,
        "The engine refused the action; `detail` is the engine's code, `message` its sentence.",
    ),
    ErrorCode.NOT_ON_LADDER: ErrorInfo(
        False, "The account is not entered on the ladder (or the server runs no ladder)."
    ),
    ErrorCode.ALREADY_ON_LADDER: ErrorInfo(
        False, "The account is already entered on the ladder (one entry per account)."
    ),
    ErrorCode.LADDER_LIMIT: ErrorInfo(
        False, "This network address already has as many entrants on the ladder as it may."
    ),
    ErrorCode.NO_SUCH_ENTRANT: ErrorInfo(False, "No account has this name."),
    ErrorCode.NO_SUCH_ACCOUNT: ErrorInfo(False, "No account has this name (`stats`)."),
    ErrorCode.NOT_REVIEWABLE: ErrorInfo(
        False,
        "`review`: the server will not analyse this hand (not four-handed Spades, its deal does not"
        " come from its seed, its play is not finished, or it is too large); `message` says why.",
    ),
    ErrorCode.REVIEW_BUSY: ErrorInfo(
        False,
        "`review`: this connection's previous review is not answered yet, or the server (or this"
        " network address) is reviewing as many hands as it may; `retry_ms` says when to try again.",
    ),
    ErrorCode.NO_SUCH_MATCH: ErrorInfo(
        False,
        "No ladder match has this id, or it is still being played (its records are sent once it"
        " has ended).",
    ),
    ErrorCode.NO_SUCH_EVENT: ErrorInfo(False, "No event has this id."),
    ErrorCode.EVENT_CLOSED: ErrorInfo(
        False,
        "The event takes no more of this: its registration is not open yet (`registration_opens`)"
        " or closed at the start (`event_register`, `event_withdraw` of a pair not formed), or it"
        " is over (finished or cancelled).",
    ),
    ErrorCode.NOT_REGISTERED: ErrorInfo(
        False, "The account is not an entrant of this event (`event_withdraw`, `event_play`)."
    ),
    ErrorCode.ALREADY_REGISTERED: ErrorInfo(
        False,
        "The account is already registered for this event, or the partner named is already in"
        " another pair of it.",
    ),
    ErrorCode.EVENT_FULL: ErrorInfo(False, "The event has as many entrants as its host allowed."),
    ErrorCode.NOT_ALLOWED: ErrorInfo(
        False,
        "The account may not do this: announce an event (only the operator, unless the"
        " server's `events_open` is set; an account at most 4 not over at once), cancel one it"
        " did not announce, or enter one open only to people or only to bots; `message` says"
        " which.",
    ),
    ErrorCode.BAD_EVENT: ErrorInfo(
        False,
        "The event's settings do not fit together (a preset or option the engine refuses, too"
        " many rounds for the format, a start in the past); `message` says how.",
    ),
    ErrorCode.TIMEOUT: ErrorInfo(
        True,
        "The handshake did not finish in time, or the connection sent no whole message for "
        "`welcome.limits.idle_timeout_ms`.",
    ),
    ErrorCode.SLOW_CONSUMER: ErrorInfo(
        True,
        "The peer did not read its messages fast enough. Never received: the server, its queue for the "
        "peer full, closes the connection without a word (the code names the reason in its log); "
        "reconnect and resync.",
    ),
    ErrorCode.INTERNAL: ErrorInfo(False, "A bug in the server; the request was not carried out."),
    ErrorCode.SHUTTING_DOWN: ErrorInfo(
        True,
        "The server is stopping: a connection that arrives meanwhile is refused with it. The"
        " connections already open are sent `bye` instead.",
    ),
    ErrorCode.BANNED: ErrorInfo(
        True,
        "The server's operator banned this account or this network address: a login,"
        " `hello.token`, `guest` or `register` of it, or a connection from the address, is refused"
        " with it (and a live connection of it is closed with it when the ban is made); `message`"
        " says why, if the operator did.",
    ),
    ErrorCode.NOT_OPERATOR: ErrorInfo(
        False, "An operator's request on a connection that has not sent a good `operator_login`."
    ),
    ErrorCode.NO_SUCH_SESSION: ErrorInfo(
        False, "`kick` names no connection of this server: no session id, no connected account."
    ),
}


def closes_connection(code: str) -> bool:
    """Whether an ``error`` with this code ends the connection (the table's "closes"); a code this
    version does not know does not (read it as the refusal of one request)."""
    try:
        return ERROR_CODES[ErrorCode(code)].closes
    except ValueError:
        return False


class ProtocolError(Exception):
    """A peer broke the protocol, or a request cannot be carried out; the one exception of this package.

    ``fatal`` says whose bytes can no longer be trusted: when it is true the stream is out of step (a bad
    length prefix, a frame too large, undecodable msgpack) and the decoder that raised it stays broken,
    raising the same error again on every call; the connection must be closed (after sending ``error``).
    When it is false a single well-framed message was refused: the decoder has already consumed it and
    the next call goes on with the following frame; answer ``error`` and keep the connection.

    ``request_id`` is the ``id`` of the refused request when it could be read, so the ``error`` reply can
    carry it; ``detail`` is a machine-readable precision (the offending field, an engine code).
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        fatal: bool = False,
        request_id: int | None = None,
        detail: str | None = None,
    ) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message
        self.fatal = fatal
        self.request_id = request_id
        self.detail = detail


class RemoteProtocolError(ProtocolError):
    """The peer broke the protocol: raised by ``protocol.connection.Connection.next_event``.

    ``fatal`` and the rest mean what they mean on :class:`ProtocolError`. ``received`` is the refused
    message when it was well formed (a reply that answers no request of ours, a message sent after the
    peer's ``bye``), so a caller can log it, or a test tool keep it; the connection has not acted on it.
    """

    def __init__(
        self,
        code: ErrorCode,
        message: str,
        *,
        fatal: bool = False,
        request_id: int | None = None,
        detail: str | None = None,
        received: object = None,
    ) -> None:
        super().__init__(code, message, fatal=fatal, request_id=request_id, detail=detail)
        self.received = received

    @classmethod
    def of(cls, error: ProtocolError) -> "RemoteProtocolError":
        """The same refusal, said to be the peer's fault (a decoder's error about the peer's bytes)."""
        if isinstance(error, RemoteProtocolError):
            return error
        return cls(
            error.code,
            error.message,
            fatal=error.fatal,
            request_id=error.request_id,
            detail=error.detail,
        )


class LocalProtocolError(ProtocolError):
    """Our own code tried to send what the protocol forbids now (a bug on this side, not the peer's):
    raised by ``Connection.send``, which leaves the connection's state unchanged and returns no bytes.

    ``code`` says what the peer would have answered (``unexpected_message`` for a message out of its
    phase, ``invalid_field`` or ``missing_field`` for one that breaks its schema).
    """
