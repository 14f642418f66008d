"""What every bot must do on the wire, judged from the proxy's timeline: each rule is a function of
the timeline that returns the problems it found, each with the docs/protocol.md section to read.

The rules hold in every scenario; a scenario says which refusals and which expired clocks it
provoked itself (`Allowance`), and adds its own checks on top.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bots.conformance import claims
from bots.conformance.report import Problem
from protocol.errors import ErrorCode
from protocol.messages import (
    Act,
    Bye,
    ClockExpired,
    Error,
    Hello,
    Joined,
    Message,
    Ping,
    Pong,
    Reply,
    Request,
    YourTurn,
)
from protocol.schema import to_map
from protocol.types import Action
from server.conformance.proxy import Entry, Source, Timeline

#: Messages that cross a peer's `bye` on the wire (sent before it was read) arrive within this.
IN_FLIGHT = 1.0
#: How long a bot has to answer the kit's `ping`.
PONG_WITHIN = 2.0

SECTION_OF_CODE: dict[str, claims.Section] = {
    ErrorCode.ILLEGAL_ACTION.value: claims.ACT,
    ErrorCode.STALE_VERSION.value: claims.DECISIONS,
    ErrorCode.NOT_YOUR_TURN.value: claims.ACT_ORDER,
    ErrorCode.NOT_SEATED.value: claims.SEATS,
    ErrorCode.RATE_LIMITED.value: claims.RATE,
    ErrorCode.UNEXPECTED_MESSAGE.value: claims.CONNECTION,
    ErrorCode.NOT_AUTHENTICATED.value: claims.ACCOUNTS,
    ErrorCode.BAD_TOKEN.value: claims.HANDSHAKE,
    ErrorCode.TIMEOUT.value: claims.TIME,
}


@dataclass(frozen=True)
class Allowance:
    """What a scenario provoked on purpose, so the rules do not hold it against the bot."""

    refusals: frozenset[str] = frozenset()
    clock_expiries: int = 0


@dataclass
class Seen:
    """The timeline, read per connection."""

    timeline: Timeline
    links: dict[int, list[Entry]] = field(default_factory=dict)

    @classmethod
    def of(cls, timeline: Timeline) -> Seen:
        seen = cls(timeline)
        for entry in timeline.entries:
            seen.links.setdefault(entry.link, []).append(entry)
        return seen

    def from_bot(self, link: int) -> list[Entry]:
        return [e for e in self.links.get(link, []) if e.source is Source.BOT and e.message]

    def to_bot(self, link: int) -> list[Entry]:
        """What reached the bot: the server's forwarded messages and the kit's own."""
        return [
            e
            for e in self.links.get(link, [])
            if e.message is not None
            and (
                (e.source is Source.SERVER and e.forwarded)
                or (e.source is Source.KIT and e.to is Source.BOT)
            )
        ]

    def bot_seat(self) -> tuple[str, int] | None:
        """The table and seat the bot sat at (its first `joined` with a seat)."""
        for entries in self.links.values():
            for e in entries:
                if (
                    e.source is Source.SERVER
                    and isinstance(e.message, Joined)
                    and e.message.seat is not None
                ):
                    return e.message.table, e.message.seat
        return None


def plain(action: Action) -> dict[str, Any]:
    """An action as a comparable map: absent, nil, false and "" fields left out (nil means false),
    cards in a fixed order (a pass of the same cards in another order is the same pass)."""
    out: dict[str, Any] = {}
    for key, value in to_map(action).items():
        if value in (None, False, ""):
            continue
        out[key] = tuple(sorted(value)) if key == "cards" else getattr(value, "value", value)
    return out


def check_all(seen: Seen, allowance: Allowance) -> list[Problem]:
    problems: list[Problem] = []
    for link in sorted(seen.links):
        problems += handshake_first(seen, link)
        problems += well_formed(seen, link)
        problems += ids_not_reused(seen, link)
        problems += nothing_after_own_bye(seen, link)
        problems += nothing_after_servers_bye(seen, link)
        problems += acts_answer_turns(seen, link)
        problems += pings_answered(seen, link)
    problems += refusals(seen, allowance)
    problems += clocks_kept(seen, allowance)
    return _unique(problems)


def _unique(problems: Iterable[Problem]) -> list[Problem]:
    out: list[Problem] = []
    for p in problems:
        if p not in out:
            out.append(p)
    return out


def _counted(problems: list[Problem]) -> list[Problem]:
    """The first of several problems of one rule, saying how many there were."""
    if len(problems) <= 1:
        return problems
    first = problems[0]
    return [Problem(f"{first.text} ({len(problems)} times in all)", first.section)]


def handshake_first(seen: Seen, link: int) -> list[Problem]:
    for entry in seen.from_bot(link):
        message = entry.message
        if isinstance(message, Ping | Pong | Bye):
            continue
        if not isinstance(message, Hello):
            return [
                Problem(
                    f"connection {link}: the bot's first message was {message.TYPE if message else '?'}, "
                    "not hello",
                    claims.HANDSHAKE,
                )
            ]
        major = message.protocol.split(".")[0]
        if major != "1":
            return [
                Problem(f"the bot said hello with protocol {message.protocol}", claims.VERSIONING)
            ]
        return []
    return []


def well_formed(seen: Seen, link: int) -> list[Problem]:
    out = []
    for entry in seen.links.get(link, []):
        if entry.source is Source.BOT and entry.problem and entry.message is None:
            if entry.problem.startswith("bad frame"):
                out.append(Problem(f"the bot sent a {entry.problem}", claims.FRAMING))
            elif not entry.problem.endswith("closed"):
                out.append(
                    Problem(
                        f"the bot sent a message its server must refuse: {entry.problem}",
                        claims.ENVELOPE,
                    )
                )
    return out


def ids_not_reused(seen: Seen, link: int) -> list[Problem]:
    pending: set[int] = set()
    out = []
    for entry in seen.links.get(link, []):
        message = entry.message
        if entry.source is Source.BOT and isinstance(message, Request) and message.id is not None:
            if message.id in pending:
                out.append(
                    Problem(
                        f"the bot sent {message.TYPE} with id {message.id}, an id still waiting for its reply",
                        claims.REQUESTS,
                    )
                )
            pending.add(message.id)
        elif (
            entry.source is Source.SERVER and isinstance(message, Reply) and message.id is not None
        ):
            pending.discard(message.id)
    return _counted(out)


def nothing_after_own_bye(seen: Seen, link: int) -> list[Problem]:
    said = False
    for entry in seen.from_bot(link):
        if said:
            return [
                Problem(
                    f"the bot sent {entry.message.TYPE if entry.message else '?'} after its own bye",
                    claims.BYE,
                )
            ]
        said = isinstance(entry.message, Bye)
    return []


def nothing_after_servers_bye(seen: Seen, link: int) -> list[Problem]:
    bye_at = next((e.at for e in seen.to_bot(link) if isinstance(e.message, Bye)), None)
    if bye_at is None:
        return []
    late = [e for e in seen.from_bot(link) if e.at > bye_at + IN_FLIGHT]
    if late:
        kinds = sorted({e.message.TYPE for e in late if e.message})
        return [
            Problem(
                f"the bot sent {', '.join(kinds)} on a connection after the server's bye: nothing "
                "follows a bye",
                claims.CONNECTION,
            )
        ]
    return []


def acts_answer_turns(seen: Seen, link: int) -> list[Problem]:
    """Each act names a version a `your_turn` on this connection named, and one of its legal actions."""
    turns: dict[tuple[str, int], YourTurn] = {}
    out: list[Problem] = []
    bot_entries = {id(e) for e in seen.from_bot(link)}
    for entry in seen.links.get(link, []):
        message = entry.message
        if entry.source is Source.SERVER and entry.forwarded and isinstance(message, YourTurn):
            turns[(message.table, message.version)] = message
        elif id(entry) in bot_entries and isinstance(message, Act):
            turn = turns.get((message.table, message.version))
            if turn is None:
                out.append(
                    Problem(
                        f"the bot acted at version {message.version} of {message.table}, which no "
                        "your_turn it was sent on that connection named",
                        claims.YOUR_TURN,
                    )
                )
            elif plain(message.action) not in [plain(a) for a in turn.legal]:
                out.append(
                    Problem(
                        f"the bot acted {plain(message.action)}, which is not in its your_turn's legal",
                        claims.ACT,
                    )
                )
    unknown = [p for p in out if "no your_turn" in p.text]
    outside = [p for p in out if "no your_turn" not in p.text]
    return _counted(unknown) + _counted(outside)


def pings_answered(seen: Seen, link: int) -> list[Problem]:
    out = []
    pongs = [e for e in seen.from_bot(link) if isinstance(e.message, Pong)]
    for entry in seen.to_bot(link):
        if entry.source is Source.KIT and isinstance(entry.message, Ping):
            rid = entry.message.id
            answered = [
                p
                for p in pongs
                if isinstance(p.message, Pong) and p.message.id == rid and p.at >= entry.at
            ]
            if not answered or answered[0].at - entry.at > PONG_WITHIN:
                out.append(
                    Problem(f"the bot did not answer ping {rid} with pong {rid}", claims.PING)
                )
    return out


def refusals(seen: Seen, allowance: Allowance) -> list[Problem]:
    """Every error the server sent the bot that the scenario did not provoke (one line for each
    kind of request and code)."""
    out: list[Problem] = []
    grouped: dict[tuple[str, str], list[Problem]] = {}
    for entries in seen.links.values():
        asked: dict[int, Message] = {}
        for entry in entries:
            message = entry.message
            if (
                entry.source is Source.BOT
                and isinstance(message, Request)
                and message.id is not None
            ):
                asked[message.id] = message
            if not (
                entry.source is Source.SERVER and entry.forwarded and isinstance(message, Error)
            ):
                continue
            if message.code in allowance.refusals:
                continue
            what = asked.get(message.id) if message.id is not None else None
            about = f"the bot's {what.TYPE}" if what is not None else "the bot"
            key = (about, message.code)
            if key not in grouped:
                grouped[key] = []
            grouped[key].append(
                Problem(
                    f"the server refused {about}: {message.code} ({message.message})",
                    SECTION_OF_CODE.get(message.code, claims.ERRORS),
                )
            )
    for group in grouped.values():
        out += _counted(group)
    return out


def clocks_kept(seen: Seen, allowance: Allowance) -> list[Problem]:
    where = seen.bot_seat()
    if where is None:
        return []
    table, seat = where
    expired: list[int] = []
    for link in seen.links:
        for entry in seen.to_bot(link):
            message = entry.message
            if (
                isinstance(message, ClockExpired)
                and message.table == table
                and message.seat == seat
                and message.reason == "clock"
                and message.version not in expired
            ):
                expired.append(message.version)
    if len(expired) > allowance.clock_expiries:
        return [
            Problem(
                f"the bot's clock ran out {len(expired) - allowance.clock_expiries} time(s) (at "
                f"version {', '.join(map(str, expired))}): the server played for it; answer each "
                "your_turn within its deadline_ms",
                claims.CLOCKS,
            )
        ]
    return []


def kinds_met(seen: Seen) -> set[str]:
    """The action kinds the bot was offered in its `your_turn`s."""
    kinds: set[str] = set()
    for link in seen.links:
        for entry in seen.to_bot(link):
            if isinstance(entry.message, YourTurn):
                kinds |= {a.kind.value for a in entry.message.legal}
    return kinds


def kinds_chosen(seen: Seen) -> set[str]:
    return {
        e.message.action.kind.value
        for link in seen.links
        for e in seen.from_bot(link)
        if isinstance(e.message, Act)
    }


def bot_requests(seen: Seen, kind: type[Message]) -> Sequence[Entry]:
    return [
        e for link in sorted(seen.links) for e in seen.from_bot(link) if isinstance(e.message, kind)
    ]
