"""docs/protocol.md is generated where it can be and checked where it cannot: it cannot drift."""

import dataclasses
import hashlib
import json
import re
from pathlib import Path
from typing import Any

import pytest

from engine.game import Phase as GamePhase
from engine.game import new_game
from engine.ruleset import Ruleset
from protocol import (
    DEFAULT_LIMITS,
    DEFAULT_MAX_FRAME_SIZE,
    ERROR_CODES,
    MESSAGE_TYPES,
    ErrorCode,
    MessageDecoder,
    Sender,
    encode,
)
from protocol.connection import Connection
from protocol.docs import EXAMPLE, GEN_BLOCK, GROUPS, example_message, parse_hex, sync
from protocol.messages import Act, DealCommitment, DealSeed, Event, Reply, Request, YourTurn
from protocol.phases import Phase
from protocol.wire import from_wire, to_wire

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
TEXT = DOC.read_text(encoding="utf-8")
EXAMPLES = [(m.group("json"), m.group("hex")) for m in EXAMPLE.finditer(TEXT)]


def test_document_is_in_sync_with_the_code() -> None:
    # Field tables, error and type tables, and every example's hex are what the code renders now.
    # If this fails after a deliberate change, run: python -m protocol.docs docs/protocol.md
    assert sync(TEXT) == TEXT


@pytest.mark.parametrize(("shown", "hex_text"), EXAMPLES, ids=lambda x: x[:40])
def test_example_bytes_decode_to_the_shown_message(shown: str, hex_text: str) -> None:
    data = parse_hex(hex_text)
    expected = example_message(shown)
    decoder = MessageDecoder(Sender.EITHER)
    decoder.receive_data(data)
    decoded = decoder.next_message()
    assert decoded == expected
    assert decoder.next_message() is None
    assert encode(decoded) == data
    # The text shows exactly the wire map, in wire order.
    shown_map = json.loads(shown)
    assert list(shown_map.items()) == list(to_wire(expected).items())


def test_every_message_type_is_documented_with_an_example() -> None:
    blocks = {m.group("name") for m in GEN_BLOCK.finditer(TEXT)}
    examples = {json.loads(shown)["t"] for shown, _ in EXAMPLES}
    for name in MESSAGE_TYPES:
        assert f"message:{name}" in blocks, name
        assert name in examples, name
        assert f"#### `{name}`" in TEXT, name


def test_groups_cover_every_type_once() -> None:
    listed = [name for names in GROUPS.values() for name in names]
    assert sorted(listed) == sorted(MESSAGE_TYPES)
    assert len(listed) == len(set(listed))


def test_documented_limits_are_the_defaults() -> None:
    limits = DEFAULT_LIMITS
    prose = " ".join(TEXT.split())
    assert f"(64 KiB = {DEFAULT_MAX_FRAME_SIZE} by default" in prose
    assert (
        f"strings up to {limits.max_str_len} bytes, arrays up to {limits.max_array_len} items, "
        f"maps up to {limits.max_map_len} entries, nesting up to {limits.max_depth} levels" in prose
    )


def test_every_error_code_is_documented() -> None:
    assert set(ERROR_CODES) == set(ErrorCode)
    for code in ErrorCode:
        assert f"| `{code.value}` |" in TEXT


# ---- The walk-through of a whole hand -----------------------------------------------------------


def sequence_entries() -> list[tuple[str, Any]]:
    match = re.search(r"```sequence\n(.*?)```", TEXT, re.S)
    assert match is not None
    entries: list[Any] = []
    for line in match.group(1).splitlines():
        if line.startswith("# "):
            entries.append(("#", line[2:]))
        elif line[:3] in ("C> ", "S> "):
            entries.append([line[0], line[3:]])
        else:
            assert line.startswith(" "), line
            entries[-1][1] += "\n" + line
    return [(e[0], e[1] if e[0] == "#" else json.loads(e[1])) for e in entries]


def test_sequence_is_a_valid_conversation() -> None:
    entries = sequence_entries()
    seq = 0
    elided = False
    pending: list[int] = []
    turn_version: int | None = None
    commitment = seed = None
    types = []
    for who, entry in entries:
        if who == "#":
            elided = elided or "…" in str(entry)
            continue
        assert isinstance(entry, dict)
        sender = Sender.CLIENT if who == "C" else Sender.SERVER
        message = from_wire(entry, sender)  # valid, from the right side
        assert to_wire(message) == entry and list(to_wire(message)) == list(entry)
        types.append(message.TYPE)
        if isinstance(message, Request) and sender is Sender.CLIENT:
            assert message.id is not None
            pending.append(message.id)
        if isinstance(message, Reply):
            assert message.id == pending.pop(0), "replies come in request order"
        if isinstance(message, Event):
            if elided:
                assert message.seq > seq
                elided = False
            else:
                assert message.seq == seq + 1, message
            seq = message.seq
        if isinstance(message, YourTurn):
            turn_version = message.version
        if isinstance(message, Act):
            assert message.version == turn_version
            assert message.action in _last_legal(entries, message)
        if isinstance(message, DealCommitment):
            commitment = message.commitment
        if isinstance(message, DealSeed):
            seed = message.seed
    assert pending == []
    assert types[0] == "hello" and types[-1] == "game_over"
    assert seed is not None and commitment is not None
    assert hashlib.sha256(bytes.fromhex(seed)).hexdigest() == commitment


def test_sequence_plays_through_a_client_and_a_server_connection() -> None:
    # Every line of the walk-through is something the phase table lets its side send then, and
    # the other side takes it (replies matched to their requests, events in `seq` order).
    client, server = Connection(Sender.CLIENT), Connection(Sender.SERVER)
    for who, entry in sequence_entries():
        if who == "#":
            continue
        sender, receiver = (client, server) if who == "C" else (server, client)
        message = from_wire(entry)
        receiver.receive_data(sender.send(message))
        got = receiver.next_event()
        if isinstance(message, Event):  # the server numbers its own (the text leaves tricks out)
            message = dataclasses.replace(message, seq=server.seq)
        assert got == message
    assert client.pending == {} and client.phase is Phase.OPEN


def _last_legal(entries: list[Any], act: Act) -> list[Any]:
    legal: list[Any] = []
    for who, entry in entries:
        if who == "S" and entry.get("t") == "your_turn":
            legal = from_wire(entry).legal  # type: ignore[attr-defined]
        if who == "C" and entry.get("t") == "act" and entry.get("id") == act.id:
            return legal
    return legal


def test_sequence_deal_is_the_engines() -> None:
    # The hand dealt in the walk-through is what the engine deals from the revealed seed.
    entries: list[dict[str, Any]] = [e for who, e in sequence_entries() if who != "#"]
    create = next(e for e in entries if e.get("t") == "create_table")
    dealt = next(e for e in entries if e.get("t") == "hand_dealt")
    seed = next(e for e in entries if e.get("t") == "deal_seed")["seed"]
    game = new_game(Ruleset.from_preset(create["preset"], **create["options"]))
    events = game.deal(bytes.fromhex(seed))
    seen = events[0].for_seat(0)
    assert seen is not None
    assert seen["cards"] == dealt["cards"]
    assert seen["commitment"] == dealt["commitment"]


# ---- Game views ---------------------------------------------------------------------------------


def view_table_fields(title: str) -> list[str]:
    start = TEXT.index(title)
    rows: list[str] = []
    for line in TEXT[start:].splitlines()[2:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        rows.append(line)
    return [re.sub(r"[`| ]", "", row.split("|")[1]) for row in rows[2:]]


def test_view_tables_match_the_engine() -> None:
    game = new_game(Ruleset.from_preset("hearts"))
    game.deal(bytes(8))
    public = list(game.spectator_view().to_dict())
    seated = [key for key in game.view(0).to_dict() if key not in public]
    assert view_table_fields("Public fields (every view):") == public
    assert view_table_fields("A seated player's view adds:") == seated


def test_view_phases_are_the_engines() -> None:
    row = next(line for line in TEXT.splitlines() if line.startswith("| `phase` | str |"))
    assert set(re.findall(r"`([a-z_]+)`", row)) - {"phase"} == {phase.value for phase in GamePhase}


def documented_shuffle(seed: bytes, deck: list[str]) -> list[str]:
    """The shuffle exactly as "Fair deals" describes it, written from the text, not from engine/."""

    def words() -> Any:
        counter = 0
        while True:
            block = hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()
            for i in range(0, 32, 8):
                yield int.from_bytes(block[i : i + 8], "big")
            counter += 1

    stream = words()

    def below(n: int) -> int:
        limit = 2**64 - (2**64 % n)
        while (w := next(stream)) >= limit:
            pass
        return int(w % n)

    cards = list(deck)
    for i in range(len(cards) - 1, 0, -1):
        j = below(i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def test_fair_deal_recipe_reproduces_the_walk_through_deal() -> None:
    entries: list[dict[str, Any]] = [e for who, e in sequence_entries() if who != "#"]
    dealt = next(e for e in entries if e.get("t") == "hand_dealt")
    seed = bytes.fromhex(next(e for e in entries if e.get("t") == "deal_seed")["seed"])
    deck = [rank + suit for suit in "CDHS" for rank in "23456789TJQKA"]
    shuffled = documented_shuffle(seed, deck)
    players, dealer, seat = 4, dealt["dealer"], 0
    # Card i goes to seat (dealer + 1 + i) mod players.
    mine = [card for i, card in enumerate(shuffled) if (dealer + 1 + i) % players == seat]
    assert sorted(mine, key=deck.index) == dealt["cards"]
