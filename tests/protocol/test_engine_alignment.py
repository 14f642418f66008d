"""The protocol speaks the engine's shapes: action kinds, action maps and every event's for_seat map.

The server sends the engine's maps as bytes without building or checking a message
(`game_event_frames`, `your_turn_frames`) and turns a decoded `act` into the engine's action without
checking it again (`Action.engine_action`): these tests are what holds the two sides together. They
are generated from the engine's own classes (every `Event` subclass and every member of the `Action`
union, found by introspection, their fields drawn by name), so a new engine event or field fails here
until the protocol declares it, and over whole games of every preset.
"""

import dataclasses
import random
import typing
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import actions as ea
from engine import events as ee
from engine.cards import mask_of, parse_card
from engine.errors import IllegalAction
from engine.game import Phase, new_game
from engine.ruleset import PRESETS, Ruleset
from protocol import GAME_EVENT_TYPES, Action, ActionKind, decode, encode, game_event
from protocol.codec import pack_body
from protocol.errors import ErrorCode, ProtocolError
from protocol.messages import YourTurn
from protocol.schema import from_map, to_map
from protocol.wire import EventFrames, game_event_frames, your_turn_frames
from tests.protocol.strategies import struct_strategy


def cards(*texts: str) -> tuple[int, ...]:
    return tuple(parse_card(text) for text in texts)


def mask(*texts: str) -> int:
    return mask_of(cards(*texts))


SEED = "00ff" * 8
DIGEST = "ab" * 32

SAMPLE_EVENTS: list[ee.Event] = [
    ee.HandDealt(
        hand_number=1,
        dealer=3,
        hands=(mask("QS", "2C"), mask("AH"), mask("TD"), mask("BJ")),
        face_up=(0, mask("AH"), 0, 0),
        hidden=(2,),
        hand_type="regular",
        commitment=DIGEST,
    ),
    ee.HandLooked(seat=2, cards=mask("TD", "3C")),
    ee.CardDrawn(seat=0, card=parse_card("5H")),
    ee.DrawResolved(seat=0, kept=True, taken=parse_card("5H"), discarded=parse_card("6H")),
    ee.CardsDiscarded(seat=1, cards=cards("2D", "3D")),
    ee.BidMade(seat=1, bid=ea.Bid(seat=1, tricks=0, blind=True)),
    ee.BidMade(seat=2, bid=ea.Bid(seat=2, tricks=4, bemo="big_bemo", no_trumps=True)),
    ee.CardsGiven(seat=0, receiver=2, cards=cards("AS", "KS")),
    ee.CardsExchanged(giver=0, receiver=2, cards=cards("AS", "KS")),
    ee.CardsPassed(giver=1, receiver=2, cards=cards("QS", "AH", "KH")),
    ee.CardPlayed(seat=3, card=parse_card("QS"), trick_number=7),
    ee.SpadesBroken(seat=3),
    ee.TrickWon(seat=1, trick_number=7, plays=((0, 1), (1, 51), (2, 3), (3, 4))),
    ee.ClaimMade(seat=0, cards=mask("AS", "KS"), held=False, penalty="exposed"),
    ee.DealDeclaredDead(seat=2, cards=mask("2C", "3C"), reason="no_spades", next_dealer=0),
    ee.HandScored(
        hand_number=3,
        sides=((0, 2), (1, 3)),
        tricks=(3, 4, 3, 3),
        before=(100, 50),
        delta=(61, -40),
        after=(161, 10),
        bags_after=(1, 0),
        seed=SEED,
        notes=("north-south made 6",),
    ),
    ee.GameOver(winners=(0, 2), scores=(512, 300), reason="target_reached"),
]


def test_action_kinds_are_the_engines() -> None:
    assert {kind.value for kind in ActionKind} == set(ea.ACTION_KINDS)


def test_every_engine_event_kind_has_a_message() -> None:
    kinds = {
        cls.kind
        for cls in vars(ee).values()
        # Shared bases (like the one for cards handed over face down) keep the base's kind.
        if isinstance(cls, type) and issubclass(cls, ee.Event) and cls.kind != ee.Event.kind
    }
    assert kinds == set(GAME_EVENT_TYPES)
    assert {type(event).kind for event in SAMPLE_EVENTS} == kinds


@pytest.mark.parametrize("event", SAMPLE_EVENTS, ids=lambda e: type(e).kind)
@pytest.mark.parametrize("seat", [0, 1, 2, 3, None])
def test_engine_events_become_messages(event: ee.Event, seat: int | None) -> None:
    seen = event.for_seat(seat)
    if seen is None:
        return
    message = game_event("t1", 42, seen)
    assert seen["kind"] == message.TYPE
    assert (message.table, message.version, message.seq) == ("t1", 42, 0)
    wire = to_map(message)
    # Field for field: the message says exactly what the engine's map says (absent = nil).
    for key, value in seen.items():
        if key != "kind":
            assert wire.get(key) == value, key
    for key in set(wire) - set(seen):
        assert key in {"seq", "table", "version"}, key
    assert decode(encode(message)[4:]) == message
    # The server's unchecked path sends the very same bytes.
    assert game_event_frames("t1", 42, seen).frame(0) == encode(message)


def test_game_event_refuses_what_does_not_fit() -> None:
    with pytest.raises(ProtocolError) as info:
        game_event("t1", 1, {"kind": "card_played", "seat": 9, "card": "QS", "trick_number": 1})
    assert info.value.code is ErrorCode.INTERNAL
    with pytest.raises(ProtocolError):
        game_event("t1", 1, {"kind": "teleported"})
    with pytest.raises(ProtocolError) as info:  # unchecked, a kind with no message is still caught
        game_event_frames("t1", 1, {"kind": "teleported"})
    assert info.value.code is ErrorCode.INTERNAL


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_unchecked_path_sends_the_checked_bytes_over_whole_games(preset: str) -> None:
    # The server sends its events and `your_turn`s straight from the engine's maps: every event of
    # a game of each preset, as every seat and a spectator see it, and every seat's legal actions
    # at every step, are the bytes of the checked message.
    rng = random.Random(preset)
    game = new_game(Ruleset.from_preset(preset, max_hands=2))
    seen_kinds = set()
    for _ in range(5000):
        if game.is_over:
            break
        if game.phase is Phase.DEALING:
            events = game.deal(rng.randbytes(32))
        else:
            for seat in set(game.to_act()):
                legal = game.legal_actions(seat)
                maps = [ea.action_to_dict(action, with_seat=False) for action in legal]
                sent = your_turn_frames(
                    "t1", game.version, seat=seat, legal=maps, deadline_ms=900, bank_ms=50
                )
                turn = YourTurn(
                    table="t1",
                    version=game.version,
                    seat=seat,
                    legal=[from_map(Action, shape) for shape in maps],
                    deadline_ms=900,
                    bank_ms=50,
                )
                assert sent.frame(3) == encode(dataclasses.replace(turn, seq=3))
                assert (sent.kind, sent.table, sent.version) == (YourTurn, "t1", game.version)
            seat = game.to_act()[0]
            events = game.apply(rng.choice(game.legal_actions(seat)))
        for event in events:
            for seat_or_none in [*range(game.players), None]:
                shown = event.for_seat(seat_or_none)
                if shown is not None:
                    checked = game_event("t1", game.version, shown)
                    assert game_event_frames("t1", game.version, shown).frame(0) == encode(checked)
                    seen_kinds.add(checked.TYPE)
    assert game.is_over
    assert {"card_played", "trick_won", "hand_scored", "game_over"} <= seen_kinds


# ---- generated from the engine's classes ----------------------------------------------------------

SEATS = st.integers(0, 3)
CARD = st.integers(0, 53)
MASK = st.integers(0, 2**54 - 1)
CARD_TUPLE = st.lists(CARD, min_size=0, max_size=13, unique=True).map(tuple)
INTS = st.lists(st.integers(-1000, 1000), min_size=1, max_size=4).map(tuple)
WORD = st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), max_size=64)
HEX64 = st.text("0123456789abcdef", min_size=64, max_size=64)
BOOLS = st.booleans()


def _bid(seat: int) -> st.SearchStrategy[ea.Bid]:
    return st.builds(
        ea.Bid,
        seat=st.just(seat),
        tricks=st.integers(0, 13),
        blind=BOOLS,
        no_trumps=BOOLS,
        moe=st.sampled_from(ea.MOES),
        bemo=st.sampled_from(ea.BEMOS),
        ten_for_200=BOOLS,
        double_nil=BOOLS,
    )


# What each engine field may hold, by name (a `CardMask` and a `Card` are both ints: the name says
# which). A field not named here fails `field_strategy` below: declare it, and the protocol's side.
ACTION_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "seat": SEATS,
    "tricks": st.integers(0, 13),
    "blind": BOOLS,
    "no_trumps": BOOLS,
    "moe": st.sampled_from(ea.MOES),
    "bemo": st.sampled_from(ea.BEMOS),
    "ten_for_200": BOOLS,
    "double_nil": BOOLS,
    "card": CARD,
    "cards": st.lists(CARD, min_size=1, max_size=13, unique=True).map(tuple),
    "keep": BOOLS,
}
EVENT_FIELDS: dict[str, st.SearchStrategy[Any]] = {
    "seat": SEATS,
    "dealer": SEATS,
    "giver": SEATS,
    "receiver": SEATS,
    "next_dealer": SEATS,
    "hand_number": st.integers(1, 2**31 - 1),
    "trick_number": st.integers(1, 18),
    "hands": st.lists(MASK, min_size=2, max_size=4).map(tuple),
    "face_up": st.lists(MASK, min_size=2, max_size=4).map(tuple),
    "hidden": st.lists(SEATS, max_size=4, unique=True).map(tuple),
    "hand_type": WORD,
    "commitment": HEX64,
    "pass_direction": st.sampled_from([None, "left", "right", "across", "none"]),
    "card": CARD,
    "taken": CARD,
    "discarded": CARD,
    "kept": BOOLS,
    "held": BOOLS,
    "penalty": WORD,
    "reason": WORD,
    "plays": st.lists(st.tuples(SEATS, CARD), max_size=4).map(tuple),
    "sides": st.lists(
        st.lists(SEATS, min_size=1, max_size=2).map(tuple), min_size=1, max_size=4
    ).map(tuple),
    "tricks": INTS,
    "before": INTS,
    "delta": INTS,
    "after": INTS,
    "bags_after": INTS,
    "winners": st.lists(SEATS, min_size=1, max_size=2).map(tuple),
    "scores": INTS,
    "seed": HEX64,
    "notes": st.lists(st.text(max_size=200), max_size=3).map(tuple),
}
CARD_SETS = {"cards": (CARD_TUPLE, MASK)}  # a tuple of cards, or a mask, as the class declares


def _engine_event_classes() -> list[type[ee.Event]]:
    return sorted(
        (
            cls
            for cls in vars(ee).values()
            if isinstance(cls, type) and issubclass(cls, ee.Event) and cls.kind != ee.Event.kind
        ),
        key=lambda cls: cls.kind,
    )


def field_strategy(cls: type, name: str, table: dict[str, st.SearchStrategy[Any]]) -> Any:
    if name == "bid":
        return SEATS.flatmap(_bid)
    if name in CARD_SETS and cls is not None:
        declared = typing.get_type_hints(cls)[name]
        as_tuple, as_mask = CARD_SETS[name]
        return as_tuple if typing.get_origin(declared) is tuple else as_mask
    assert name in table, f"{cls.__name__}.{name}: say what it may hold here, then declare it"
    return table[name]


def _built(cls: type, table: dict[str, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    fields = {f.name: field_strategy(cls, f.name, table) for f in dataclasses.fields(cls)}
    return st.builds(cls, **fields)


ENGINE_EVENTS = st.one_of([_built(cls, EVENT_FIELDS) for cls in _engine_event_classes()])
ENGINE_ACTIONS = st.one_of([_built(cls, ACTION_FIELDS) for cls in typing.get_args(ea.Action)])


def test_the_generators_cover_every_engine_class() -> None:
    assert {cls.kind for cls in _engine_event_classes()} == set(GAME_EVENT_TYPES)
    assert {ea.action_kind(cls.__new__(cls)) for cls in typing.get_args(ea.Action)} == set(
        ea.ACTION_KINDS
    )


@settings(max_examples=400)
@given(event=ENGINE_EVENTS, version=st.integers(0, 2**40), seq=st.integers(0, 2**40))
def test_every_engine_event_is_sent_as_its_checked_message(
    event: ee.Event, version: int, seq: int
) -> None:
    for seat in [0, 1, 2, 3, None]:
        shown = event.for_seat(seat)
        if shown is None:
            continue
        checked = game_event("t1", version, shown)  # raises if the map does not fit its message
        sent = game_event_frames("t1", version, shown)
        assert sent.frame(seq) == encode(dataclasses.replace(checked, seq=seq))
        assert sent.kind is type(checked)
        assert sent.message == checked  # what a built-in bot or a test decodes from the bytes


@settings(max_examples=300)
@given(action=ENGINE_ACTIONS)
def test_every_engine_action_is_the_protocols(action: ea.Action) -> None:
    shape: dict[str, Any] = ea.action_to_dict(action, with_seat=False)
    wire = from_map(Action, shape)
    assert pack_body(to_map(wire)) == pack_body(shape)  # the same bytes in `your_turn.legal`
    assert wire.engine_action(action.seat) == action


@given(wire=struct_strategy(Action), seat=SEATS)
def test_a_decoded_action_always_becomes_the_engines(wire: Action, seat: int) -> None:
    # Checked once, as it was decoded: turning it into the engine's action never raises, and it is
    # the action the engine's own parser reads from the same map (which also refuses a card listed
    # twice, which the rules refuse too).
    action = wire.engine_action(seat)
    try:
        parsed = ea.action_from_dict(to_map(wire), seat=seat)
    except IllegalAction as exc:
        assert exc.message == "the same card is listed twice"
        assert isinstance(action, ea.ExchangeCards | ea.PassCards | ea.Discard)
        assert len(set(action.cards)) < len(action.cards)
        return
    assert action == parsed


def test_event_frames_from_a_body_pass_it_through() -> None:
    played = game_event_frames(
        "t1", 9, {"kind": "card_played", "seat": 2, "card": "QS", "trick_number": 3}
    )
    again = EventFrames.from_body(played.body())
    assert again is not None
    assert (again.kind, again.table, again.version) == (played.kind, "t1", 9)
    assert again.frame(77) == played.frame(77)
    assert again.message == played.message


SAMPLE_ACTIONS: list[ea.Action] = [
    ea.Bid(seat=0, tricks=4),
    ea.Bid(seat=0, tricks=0, blind=True),
    ea.Bid(seat=0, tricks=0, moe="little"),
    ea.Bid(seat=0, tricks=10, ten_for_200=True, bemo="bemo", no_trumps=True),
    ea.Bid(seat=0, tricks=0, double_nil=True),
    ea.LookAtHand(seat=1),
    ea.PlayCard(seat=2, card=parse_card("QS")),
    ea.ExchangeCards(seat=0, cards=cards("AS", "KS")),
    ea.PassCards(seat=0, cards=cards("QS", "AH", "KH")),
    ea.Claim(seat=3),
    ea.DeclareDeficient(seat=3),
    ea.KeepDrawn(seat=0, keep=False),
    ea.Discard(seat=3, cards=cards("2D", "3D")),
]


@pytest.mark.parametrize("action", SAMPLE_ACTIONS, ids=ea.action_kind)
def test_actions_round_trip_through_the_engine(action: ea.Action) -> None:
    shape: dict[str, Any] = ea.action_to_dict(action, with_seat=False)
    ours = from_map(Action, shape)
    assert to_map(ours) == shape
    assert ea.action_from_dict(to_map(ours), seat=action.seat) == action


def test_action_is_a_frozen_dataclass() -> None:
    assert dataclasses.is_dataclass(Action)
