"""The terminal client's picture is the engine's view: fed what the server sends (the engine's events
through the wire's message classes, `turn`, `your_turn`), a seat's and a spectator's `TableState`
hold `game.view(seat)` / `game.spectator_view()` after every message batch, in whole games of every
preset (the engine's fold does the work: tests/engine/test_view_fold.py). And every game event the
protocol carries is one the client handles."""

import dataclasses
import inspect

import pytest

from client import state as client_state
from client.state import TableState
from engine.actions import action_to_dict
from engine.game import Phase
from engine.ruleset import PRESETS
from engine.view_fold import HANDLED
from engine.views import PublicView, SeatView
from protocol import messages as m
from tests.client.engine_table import EngineTable


def comparable(view: PublicView | None, truth: PublicView) -> PublicView | None:
    if view is None:
        return None
    view = dataclasses.replace(view, to_act=tuple(sorted(view.to_act)))  # `turn`'s order
    if isinstance(view, SeatView):
        view = dataclasses.replace(view, legal=(), choose_cards=())
        if truth.players == 2 and not truth.looked[view.seat]:
            view = dataclasses.replace(view, hand=None)  # engine.view_fold.UNTOLD
        if truth.players == 2:
            view = dataclasses.replace(view, received=tuple(sorted(view.received)))
    if truth.players == 2 and any(bid is not None and bid.double_nil for bid in truth.bids):
        view = dataclasses.replace(view, discards=0)
    return view


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_seats_picture_is_the_engines_view(preset: str) -> None:
    ruleset = PRESETS[preset].with_options(max_hands=2)
    table = EngineTable(ruleset)
    state = TableState(ruleset=ruleset)  # the session sets it from the lobby's table info
    checked = 0
    for hand in range(2):
        table.deal(bytes([hand, 7]) * 8)
        for _ in range(200):
            for message in table.take():
                state.apply(message, 0.0)
            truth = table.game.view(0)
            assert comparable(state.current, truth) == comparable(truth, truth), (preset, checked)
            assert state.current is not None and state.view == state.current.to_dict()
            checked += 1
            if not table.others_until_mine():
                break
            seat = table.seat
            assert seat is not None
            table.act(action_to_dict(table.game.legal_actions(seat)[0], with_seat=False))
        if table.game.is_over:
            break
    assert checked > 10


@pytest.mark.parametrize("preset", ["standard", "hearts", "two-player", "joker"])
def test_a_spectators_picture_is_the_engines_view(preset: str) -> None:
    ruleset = PRESETS[preset].with_options(max_hands=1)
    table = EngineTable(ruleset, seat=None)
    state = TableState(ruleset=ruleset)
    for step in range(400):
        game = table.game
        if game.is_over:
            break
        if game.phase is Phase.DEALING:
            table.deal(bytes([step % 256, 3]) * 8)
        else:
            table._tell(game.apply(game.legal_actions(game.to_act()[0])[0]))
        for message in table.take():
            state.apply(message, 0.0)
        truth = game.spectator_view()
        assert comparable(state.current, truth) == comparable(truth, truth), (preset, step)
    assert table.game.is_over


def test_every_game_event_of_the_protocol_is_handled() -> None:
    events = {
        cls
        for _, cls in inspect.getmembers(m, inspect.isclass)
        if issubclass(cls, m.GameEvent) and getattr(cls, "TYPE", None) in HANDLED
    }
    assert {cls.TYPE for cls in events} == HANDLED
    assert set(client_state._OWN) <= events
    assert all(client_state._handler(cls) is TableState._event for cls in events)


def test_our_own_actions_event_ends_our_turn_and_anothers_does_not() -> None:
    """The reader may apply the events of our action before the task that sent it reads its `ok`:
    our own event ends the turn then; another seat's pass in the same simultaneous phase does not."""
    ruleset = PRESETS["hearts"]
    table = EngineTable(ruleset)
    state = TableState(ruleset=ruleset)
    table.deal(b"our-own-turn")
    for message in table.take():
        state.apply(message, 0.0)
    assert table.others_until_mine()
    for message in table.take():
        state.apply(message, 0.0)
    assert state.turn is not None and "pass" in state.turn.kinds()
    other = next(seat for seat in table.game.to_act() if seat != 0)
    table._tell(table.game.apply(table.game.legal_actions(other)[0]))
    for message in table.take():
        state.apply(message, 0.0)
    assert state.turn is not None  # another seat passed: ours is still to make
    table.act(action_to_dict(table.game.legal_actions(0)[0], with_seat=False))
    mine = [msg for msg in table.take() if isinstance(msg, m.CardsGiven) and msg.seat == 0]
    assert mine
    state.apply(mine[0], 0.0)
    assert state.turn is None
