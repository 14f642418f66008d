"""The protocol speaks the engine's shapes: action kinds, action maps and every event's for_seat map."""

import dataclasses
import random
from typing import Any

import pytest

from engine import actions as ea
from engine import events as ee
from engine.cards import mask_of, parse_card
from engine.game import Phase, new_game
from engine.ruleset import PRESETS, Ruleset
from protocol import GAME_EVENT_TYPES, Action, ActionKind, decode, encode, game_event
from protocol.errors import ErrorCode, ProtocolError
from protocol.schema import from_map, to_map


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
    # The server's unchecked path builds the very same message.
    assert game_event("t1", 42, seen, trusted=True) == message


def test_game_event_refuses_what_does_not_fit() -> None:
    with pytest.raises(ProtocolError) as info:
        game_event("t1", 1, {"kind": "card_played", "seat": 9, "card": "QS", "trick_number": 1})
    assert info.value.code is ErrorCode.INTERNAL
    with pytest.raises(ProtocolError):
        game_event("t1", 1, {"kind": "teleported"})
    with pytest.raises(ProtocolError) as info:  # unchecked, a missing field is still caught
        game_event("t1", 1, {"kind": "card_played", "seat": 1}, trusted=True)
    assert info.value.code is ErrorCode.INTERNAL


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_the_unchecked_path_builds_the_checked_message_over_whole_games(preset: str) -> None:
    # The server builds its events with `trusted=True` (no re-validation of the engine's maps):
    # every event of a game of each preset, as every seat and a spectator see it, comes out the same.
    rng = random.Random(preset)
    game = new_game(Ruleset.from_preset(preset, max_hands=2))
    seen_kinds = set()
    for _ in range(5000):
        if game.is_over:
            break
        if game.phase is Phase.DEALING:
            events = game.deal(rng.randbytes(32))
        else:
            seat = game.to_act()[0]
            events = game.apply(rng.choice(game.legal_actions(seat)))
        for event in events:
            for seat_or_none in [*range(game.players), None]:
                shown = event.for_seat(seat_or_none)
                if shown is not None:
                    checked = game_event("t1", game.version, shown)
                    assert game_event("t1", game.version, shown, trusted=True) == checked
                    seen_kinds.add(checked.TYPE)
    assert game.is_over
    assert {"card_played", "trick_won", "hand_scored", "game_over"} <= seen_kinds


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
