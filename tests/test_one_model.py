"""A new event is declared once, in the engine: the protocol's message, its checks, the docs' field
table and the view fold all follow from the class (issue 40: a new event touches the engine, the
document's row and the page, and no other Python file).

The proof runs in a fresh interpreter: a hypothetical event is declared exactly as engine/events.py
declares its own (a frozen dataclass with annotated fields, its `to_dict` and `fold`, `@register`),
entered into `engine.events` as if written there, before anything else is imported; then the
repository's modules, untouched, are imported and asked about it. The fresh process keeps the
hypothetical kind out of this one's registries.
"""

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from engine import events as ev
from engine.event_fields import Notation
from protocol.game_events import wire_type

ROOT = Path(__file__).resolve().parent.parent

HYPOTHETICAL = textwrap.dedent(
    '''
    from dataclasses import dataclass
    from typing import Annotated, ClassVar

    from engine import events as ev
    from engine.cards import card_text
    from engine.event_fields import CardNo, Doc, SeatNo, Word
    from engine.fold_step import FoldStep


    @ev.register
    @dataclass(frozen=True, slots=True)
    class CardShown(ev.Event):
        """A seat showed one card of its hand to everybody."""

        kind: ClassVar[str] = "card_shown"
        seat: Annotated[SeatNo, Doc("who showed it")]
        card: Annotated[CardNo, Doc("the card, now public")]
        why: Annotated[Word, Doc("the rule that asked for it")]

        def to_dict(self) -> ev.EventDict:
            return {"kind": self.kind, "seat": self.seat, "card": card_text(self.card), "why": self.why}

        @staticmethod
        def fold(s: FoldStep) -> None:
            seat, card = int(s.event["seat"]), s.event["card"]
            from engine.cards import parse_card

            s.set_at("exposed", seat, s.now("exposed")[seat] | 1 << parse_card(card))


    CardShown.__module__ = "engine.events"
    ev.CardShown = CardShown  # as if written in engine/events.py
    '''
)

CHECKS = textwrap.dedent(
    """
    import json

    import protocol
    from engine.cards import parse_card
    from engine.game import new_game
    from engine.ruleset import PRESETS
    from engine.view_fold import HANDLED, fold
    from protocol import MESSAGE_TYPES, GAME_EVENT_TYPES, decode, encode, game_event
    from protocol import messages
    from protocol.docs import EXAMPLE, GEN_BLOCK, GROUPS, example_message, field_table, hex_lines, sync
    from protocol.envelope import Sender
    from protocol.phases import MAY_SEND, Phase
    from protocol.errors import ProtocolError
    from protocol.wire import MessageDecoder, game_event_frames
    from protocol.framing import frame
    from protocol.codec import pack_body

    event = CardShown(seat=2, card=parse_card("QS"), why="shown")

    # The protocol declares it: registered under its kind, named like the engine's class.
    cls = MESSAGE_TYPES["card_shown"]
    assert GAME_EVENT_TYPES["card_shown"] is cls is messages.CardShown is protocol.CardShown
    assert cls.__doc__ == CardShown.__doc__
    assert cls in MAY_SEND[Phase.OPEN][Sender.SERVER]  # a connection's phase table lets it through
    table = field_table(cls)
    for row in (
        "| `seat` | Seat | yes | who showed it |",
        "| `card` | Card | yes | the card, now public |",
        "| `why` | str (0..64 chars) | yes | the rule that asked for it |",
    ):
        assert row in table, table

    # The schema checks it: the engine's map becomes the message, and its bytes are the unchecked
    # path's; a map that does not fit is refused, and so is a received frame that does not.
    shown = event.for_seat(None)
    message = game_event("t1", 5, shown)
    assert (message.seat, message.card, message.why) == (2, "QS", "shown")
    assert decode(encode(message)[4:]) == message
    assert game_event_frames("t1", 5, shown).frame(0) == encode(message)
    try:
        game_event("t1", 5, {**shown, "seat": 9})
    except ProtocolError as exc:
        assert exc.code.value == "internal", exc.code
    else:
        raise AssertionError("a seat out of range was accepted")
    decoder = MessageDecoder(Sender.SERVER)
    bad = {"t": "card_shown", "seq": 1, "table": "t1", "version": 5, "seat": 1, "card": "ZZ", "why": ""}
    decoder.receive_data(frame(pack_body(bad)))
    try:
        decoder.next_message()
    except ProtocolError as exc:
        assert exc.code.value == "invalid_field" and "card" in str(exc), exc
    else:
        raise AssertionError("a card that is no card was accepted")

    # The fold calls it: a seat's view and a spectator's show the card exposed.
    ruleset = PRESETS["standard"]
    game = new_game(ruleset, dealer=0)
    game.deal(b"one model")
    assert "card_shown" in HANDLED
    for view in (game.view(1), game.spectator_view()):
        after = fold(view, {**shown, "version": 9}, ruleset)
        assert after.exposed[2] == view.exposed[2] | 1 << parse_card("QS"), after.exposed
        assert after.version == 9

    # The document: its section (the heading, an empty generated block and an example's JSON) is
    # all a writer adds; `sync` fills the field table and the example's bytes.
    assert "card_shown" in GROUPS["Game events"]
    text = open("docs/protocol.md", encoding="utf-8").read()
    example = json.dumps({"t": "card_shown", "seq": 3, "table": "t7", "version": 9, "seat": 2,
                          "card": "QS", "why": "shown"})
    row = ("#### `card_shown`\\n\\n<!-- gen:message:card_shown -->\\n<!-- /gen -->\\n\\n"
           "```json\\n" + example + "\\n```\\n```hex\\n```\\n\\n")
    at = text.index("#### `card_played`")
    synced = sync(text[:at] + row + text[at:])
    blocks = {m.group("name") for m in GEN_BLOCK.finditer(synced)}
    assert "message:card_shown" in blocks
    assert "| `why` | str (0..64 chars) | yes | the rule that asked for it |" in synced
    hexes = [m.group("hex") for m in EXAMPLE.finditer(synced) if '"card_shown"' in m.group("json")]
    assert hexes == [hex_lines(encode(example_message(example)))]
    print("one model: ok")
    """
)


def test_a_new_event_declared_in_the_engine_alone_is_declared_checked_folded_and_documented() -> (
    None
):
    done = subprocess.run(
        [sys.executable, "-c", HYPOTHETICAL + CHECKS],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "one model: ok" in done.stdout


def test_an_event_without_its_fold_is_refused_where_it_is_declared() -> None:
    # Not a registered event, so this process's registries are untouched.
    class Unfolded(ev.Event):
        kind = "unfolded"

    with pytest.raises(ValueError, match="no fold"):
        ev.register(Unfolded)
    assert "unfolded" not in ev.EVENT_TYPES


def test_a_kind_declared_twice_is_refused() -> None:
    class Again(ev.CardPlayed):
        kind = "card_played"

    with pytest.raises(ValueError, match="declared twice"):
        ev.register(Again)


def test_a_field_the_protocol_cannot_say_fails_naming_it() -> None:
    from typing import Annotated

    with pytest.raises(TypeError, match="float"):
        wire_type(float)
    with pytest.raises(TypeError, match="Colour"):
        wire_type(Annotated[int, Notation("Colour")])
