"""Renders the parts of docs/protocol.md that come from the declarations, and keeps its examples honest.

``docs/protocol.md`` holds generated blocks between ``<!-- gen:NAME -->`` and ``<!-- /gen -->`` (field
tables, the error table, the types table) and examples: a ```` ```json ```` block holding one message as
readable text, followed by a ```` ```hex ```` block with its exact frame. :func:`sync` rewrites both
from the code (the hex from the JSON); the tests check that the document equals its sync, so it cannot
drift. Run ``python -m protocol.docs docs/protocol.md`` after changing a message or an example.
"""

import dataclasses
import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any, Final

from protocol.errors import ERROR_CODES
from protocol.messages import GAME_EVENT_TYPES, MESSAGE_TYPES, Message, Sender
from protocol.schema import describe, schema_of, to_plain
from protocol.types import NAMED_TYPES
from protocol.wire import encode, from_wire, to_wire

GEN_BLOCK: Final = re.compile(
    r"(<!-- gen:(?P<name>[\w:.-]+) -->\n)(?P<body>.*?)(<!-- /gen -->)", re.S
)
EXAMPLE: Final = re.compile(r"```json\n(?P<json>.*?)```\n```hex\n(?P<hex>.*?)```", re.S)
HEX_BYTES_PER_LINE: Final = 32

#: The reference's sections and the messages each holds, in reading order (a test checks it covers
#: every registered type exactly once).
GROUPS: Final[dict[str, tuple[str, ...]]] = {
    "Handshake": ("hello", "welcome"),
    "Accounts": ("register", "registered", "login", "guest", "logged_in"),
    "Lobby": (
        "list_tables",
        "tables",
        "create_table",
        "table_created",
        "join",
        "spectate",
        "joined",
        "leave",
        "chat",
        "chat_message",
        "table_changed",
        "table_closed",
    ),
    "Playing": (
        "snapshot",
        "turn",
        "your_turn",
        "act",
        "clock_expired",
        "seat_lost",
        "seat_status",
    ),
    "Deal commitments": ("deal_commitment", "deal_seed"),
    # In the engine's order of declaration (engine/events.py): a new event needs no line here.
    "Game events": tuple(GAME_EVENT_TYPES),
    "Ladder": (
        "ladder_enter",
        "ladder_leave",
        "ladder_standings",
        "standings",
        "ladder_matches",
        "matches",
        "ladder_show",
        "entrant",
        "ladder_records",
        "match_records",
        "match_started",
        "match_ended",
    ),
    "Events": (
        "event_create",
        "events",
        "event_list",
        "event_show",
        "event_info",
        "event_register",
        "event_withdraw",
        "event_play",
        "event_cancel",
        "event_records",
        "hand_records",
        "event_round",
        "event_ended",
    ),
    "Player statistics": ("stats", "player_stats"),
    "Hand review": ("review", "hand_review"),
    "Operator": (
        "operator_login",
        "announce",
        "announcement",
        "list_sessions",
        "sessions",
        "kick",
        "ban",
        "unban",
        "list_bans",
        "bans",
        "close_table",
    ),
    "Connection": ("ok", "error", "ping", "pong", "bye", "service_paused"),
}

_ARROWS: Final = {
    Sender.CLIENT: "client → server",
    Sender.SERVER: "server → client",
    Sender.EITHER: "either way",
}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _prose(docstring: str | None) -> str:
    """A class docstring as markdown: RST double backticks become single ones."""
    return inspect.cleandoc(docstring or "").replace("``", "`")


def field_table(cls: type) -> str:
    """The markdown table of a wire type's fields, in wire order."""
    rows = ["| field | type | required | meaning |", "| --- | --- | --- | --- |"]
    if isinstance(cls, type) and issubclass(cls, Message):
        rows.append(f'| `t` | `"{cls.TYPE}"` | yes | the message type |')
    declared = {f.name: f for f in dataclasses.fields(cls)}
    for spec in schema_of(cls).fields:
        f = declared[spec.name]
        if spec.required:
            required = "yes"
        elif spec.omit_none:
            required = "no"
        else:
            default = f.default_factory() if callable(f.default_factory) else f.default
            required = f"no (default `{json.dumps(to_plain(default))}`)"
        rows.append(
            f"| `{spec.name}` | {_cell(describe(spec.annotation))} | {required} | {_cell(spec.doc)} |"
        )
    return "\n".join(rows)


def message_section(cls: type[Message]) -> str:
    """A message's direction, role, description and field table."""
    return f"*{_ARROWS[cls.SENDER]}, {cls.ROLE.value}.* {_prose(cls.__doc__)}\n\n{field_table(cls)}"


def struct_section(cls: type) -> str:
    """A nested structure's description and field table."""
    return f"{_prose(cls.__doc__)}\n\n{field_table(cls)}"


def message_index() -> str:
    """Every message type: its direction, role and first sentence."""
    rows = ["| `t` | group | direction | role | what it is |", "| --- | --- | --- | --- | --- |"]
    for group, name in ((g, n) for g, names in GROUPS.items() for n in names):
        cls = MESSAGE_TYPES[name]
        first = _prose(cls.__doc__).split("\n\n")[0].replace("\n", " ").split(". ")[0].rstrip(".")
        rows.append(
            f"| [`{name}`](#{name}) | {group} | {_ARROWS[cls.SENDER]} | {cls.ROLE.value} "
            f"| {_cell(first)} |"
        )
    return "\n".join(rows)


def error_table() -> str:
    """Every error code, whether it closes the connection, and when it is sent."""
    rows = ["| code | closes the connection | meaning |", "| --- | --- | --- |"]
    for code, info in ERROR_CODES.items():
        rows.append(
            f"| `{code.value}` | {'yes' if info.closes else 'no'} | {_cell(info.meaning)} |"
        )
    return "\n".join(rows)


def types_table() -> str:
    """The named field types and what they stand for."""
    rows = ["| type | wire form | meaning |", "| --- | --- | --- |"]
    for name, (annotation, meaning) in NAMED_TYPES.items():
        # Describe the underlying form, not the name itself.
        args = getattr(annotation, "__metadata__", ())
        base = getattr(annotation, "__origin__", annotation)
        form = describe(_unnamed(base, args))
        rows.append(f"| `{name}` | {_cell(form)} | {_cell(meaning)} |")
    return "\n".join(rows)


def phase_table() -> str:
    """What each side may send in each phase of a connection (``protocol.phases.MAY_SEND``)."""
    from protocol.phases import MAY_SEND

    order = [name for names in GROUPS.values() for name in names]

    def cell(kinds: frozenset[type[Message]], side: Sender) -> str:
        if not kinds:
            return "nothing"
        sends = {c for c in MESSAGE_TYPES.values() if c.SENDER in (side, Sender.EITHER)}
        left_out = sends - kinds
        if len(left_out) < len(kinds):
            names = sorted((c.TYPE for c in left_out), key=order.index)
            return "everything it sends but " + ", ".join(f"`{n}`" for n in names)
        return ", ".join(f"`{n}`" for n in sorted((c.TYPE for c in kinds), key=order.index))

    rows = ["| phase | the client may send | the server may send |", "| --- | --- | --- |"]
    for phase, sides in MAY_SEND.items():
        rows.append(
            f"| `{phase.value}` | {cell(sides[Sender.CLIENT], Sender.CLIENT)} "
            f"| {cell(sides[Sender.SERVER], Sender.SERVER)} |"
        )
    return "\n".join(rows)


def _unnamed(base: Any, markers: tuple[Any, ...]) -> Any:
    from typing import Annotated

    from protocol.schema import Named

    kept = tuple(marker for marker in markers if not isinstance(marker, Named))
    return Annotated[(base, *kept)] if kept else base


def render(name: str) -> str:
    """The body of one generated block, by its name."""
    from protocol import event_messages, operator_messages
    from protocol import types as wire_types
    from protocol.game_events import BidInfo

    structs: dict[str, type] = {
        "Action": wire_types.Action,
        "BidInfo": BidInfo,
        "Clock": wire_types.Clock,
        "ServerLimits": wire_types.ServerLimits,
        "SeatInfo": wire_types.SeatInfo,
        "TableInfo": wire_types.TableInfo,
        "Standing": wire_types.Standing,
        "MatchResult": wire_types.MatchResult,
        "LadderMatch": wire_types.LadderMatch,
        "LadderHalf": wire_types.LadderHalf,
        "RatingMove": wire_types.RatingMove,
        "EventSummary": event_messages.EventSummary,
        "EventEntrant": event_messages.EventEntrant,
        "EventRound": event_messages.EventRound,
        "EventTable": event_messages.EventTable,
        "EventBoard": event_messages.EventBoard,
        "EventStanding": event_messages.EventStanding,
        "EventMatch": event_messages.EventMatch,
        "SessionInfo": operator_messages.SessionInfo,
        "BanInfo": operator_messages.BanInfo,
    }
    kind, _, arg = name.partition(":")
    if kind == "message":
        return message_section(MESSAGE_TYPES[arg])
    if kind == "struct":
        return struct_section(structs[arg])
    if kind == "errors":
        return error_table()
    if kind == "types":
        return types_table()
    if kind == "index":
        return message_index()
    if kind == "phases":
        return phase_table()
    raise KeyError(f"no generated block called {name!r}")


def example_message(text: str) -> Message:
    """The message an example's JSON stands for (validated as any received message would be)."""
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("an example is one JSON object")
    return from_wire(data)


def example_json(message: Message) -> str:
    """A message as the docs show it: JSON in wire order, broken over lines only where it must be."""
    return _fit(to_wire(message), 0) + "\n"


def _fit(value: Any, indent: int, used: int = 0, width: int = 100) -> str:
    """Compact JSON if it fits on the line (``used`` columns are taken already); else one entry per line,
    each indented two more than ``indent``, recursively."""
    compact = json.dumps(value, ensure_ascii=False)
    if used + len(compact) <= width or not isinstance(value, dict | list) or not value:
        return compact
    inner = indent + 2
    pad = " " * inner
    if isinstance(value, dict):
        items = []
        for key, item in value.items():
            head = f"{pad}{json.dumps(key)}: "
            items.append(head + _fit(item, inner, len(head), width))
        return "{\n" + ",\n".join(items) + "\n" + " " * indent + "}"
    items = [pad + _fit(item, inner, inner, width) for item in value]
    return "[\n" + ",\n".join(items) + "\n" + " " * indent + "]"


def hex_lines(data: bytes) -> str:
    """A frame in hex: the 4-byte length prefix on its own line, then the body, 32 bytes a line."""
    body = data[4:]
    lines = [data[:4].hex()]
    lines += [
        body[i : i + HEX_BYTES_PER_LINE].hex() for i in range(0, len(body), HEX_BYTES_PER_LINE)
    ]
    return "\n".join(lines) + "\n"


def parse_hex(text: str) -> bytes:
    """The bytes of a hex block (whitespace ignored)."""
    return bytes.fromhex("".join(text.split()))


def sync(text: str) -> str:
    """The document with every generated block and every example's hex rewritten from the code."""

    def regenerate(match: re.Match[str]) -> str:
        return f"{match.group(1)}{render(match.group('name'))}\n{match.group(4)}"

    def rehex(match: re.Match[str]) -> str:
        message = example_message(match.group("json"))
        return f"```json\n{example_json(message)}```\n```hex\n{hex_lines(encode(message))}```"

    return EXAMPLE.sub(rehex, GEN_BLOCK.sub(regenerate, text))


def main(argv: list[str] | None = None) -> int:
    """``python -m protocol.docs PATH [--check]``: rewrite PATH in place, or exit 1 if it is stale."""
    args = sys.argv[1:] if argv is None else argv
    if not args:
        print("usage: python -m protocol.docs docs/protocol.md [--check]", file=sys.stderr)
        return 2
    path = Path(args[0])
    text = path.read_text(encoding="utf-8")
    fresh = sync(text)
    if "--check" in args:
        return 0 if fresh == text else 1
    path.write_text(fresh, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
