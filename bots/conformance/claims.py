"""The ordering and precedence claims of docs/protocol.md, as data the kit checks servers (and bots)
against. `tests/protocol/test_doc_claims.py` reads the same lists out of the document's sentences
and checks they are these, so neither the kit nor the document can drift from the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

DOCUMENT: Final = "docs/protocol.md"


@dataclass(frozen=True, slots=True)
class Section:
    """A place in the document to read: its heading and, if any, the bold lead of a paragraph."""

    heading: str
    paragraph: str = ""

    @property
    def anchor(self) -> str:
        """The GitHub-style anchor of the heading."""
        text = self.heading.lower().replace("`", "")
        kept = "".join(ch for ch in text if ch.isalnum() or ch in " -_")
        return "#" + kept.replace(" ", "-")

    def __str__(self) -> str:
        where = f"{DOCUMENT}{self.anchor}"
        return f"{where} ({self.paragraph})" if self.paragraph else where


FRAMING = Section("Framing")
ENVELOPE = Section("Messages and the envelope")
HANDSHAKE = Section("Handshake")
ACCOUNTS = Section("Accounts")
SEATS = Section("Accounts, connections and seats")
GUEST = Section("`guest`")
LOBBY = Section("Lobby")
LIST_TABLES = Section("`list_tables`")
CREATE_TABLE = Section("`create_table`")
JOIN = Section("`join`", "Refusals, first that applies")
SPECTATE = Section("`spectate`")
LEAVE = Section("`leave`")
CHAT = Section("`chat`")
LOBBY_NOTICES = Section("`table_changed`", "Who hears lobby notices")
TABLE_CLOSES = Section("`table_closed`", "When a table closes")
PLAYING = Section("Playing")
DECISIONS = Section("Playing", "A seat's decision")
ACT_ORDER = Section("Playing", "Which refusal wins")
TURN = Section("`turn`")
YOUR_TURN = Section("`your_turn`")
ACT = Section("`act`")
SEAT_STATUS = Section("`seat_status`", "When a player drops")
SEAT_LOST = Section("`seat_lost`")
GAME_OVER = Section("`game_over`")
FAIR_DEALS = Section("Fair deals")
CONNECTION = Section("Connection")
REQUESTS = Section("Connection", "Requests and replies")
PING = Section("`ping`")
BYE = Section("`bye`")
ERRORS = Section("Errors")
LIMITS = Section("Limits and clocks")
RATE = Section("Limits and clocks", "Rate")
TIME = Section("Limits and clocks", "Time")
WHOSE_CLOCK = Section("Limits and clocks", "Whose clock")
CLOCKS = Section("Limits and clocks", "Clocks")
LADDER = Section("Ladder")
VERSIONING = Section("Versioning")
WRITING = Section("Writing a client")

#: "Which refusal wins": an `act` is checked in this order; the first that applies is the answer.
ACT_REFUSALS: Final = (
    "no_such_table",
    "not_seated",
    "not_your_turn",
    "stale_version",
    "illegal_action",
)

#: `join`'s refusals, first that applies (the ladder's own rule answers `table_full` too).
JOIN_REFUSALS: Final = (
    "no_such_table",
    "rate_limited",  # too many wrong join codes lately (not provoked by the kit)
    "private_table",
    "already_seated",
    "seat_held",
    "table_full",
    "seat_taken",
)

#: After an `act` is applied, what its connection receives, in this order ("Playing").
AFTER_ACT: Final = ("ok", "events", "turn", "your_turn")

#: `leave` and a table `chat`: for a table that does not exist, and one the connection is not at.
LEAVE_AND_CHAT_REFUSALS: Final = ("no_such_table", "not_seated")

#: `game_over.reason`'s documented values.
GAME_OVER_REASONS: Final = ("target", "hands", "boston", "floor", "draw")

#: What a `hello.token` resume (and `login`'s) is followed by, for each seat it gives back.
RESUME: Final = ("joined", "snapshot", "turn", "your_turn")
