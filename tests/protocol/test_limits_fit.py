"""Every preset's biggest messages fit the default limits: a legal list or a view never overflows a frame."""

import pytest

from engine.actions import action_to_dict
from engine.errors import RulesetError
from engine.game import new_game
from engine.ruleset import PRESETS
from protocol import (
    DEFAULT_LIMITS,
    DEFAULT_MAX_FRAME_SIZE,
    Sender,
    Snapshot,
    YourTurn,
    decode,
    encode,
)
from protocol.schema import from_map
from protocol.types import Action


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_first_decision_of_every_preset_fits(preset: str) -> None:
    try:
        game = new_game(PRESETS[preset])
    except RulesetError:
        pytest.skip(f"the engine for {preset} is not installed yet")
    game.deal(bytes(range(16)))
    for seat in game.to_act():
        legal = [
            from_map(Action, action_to_dict(a, with_seat=False)) for a in game.legal_actions(seat)
        ]
        turn = YourTurn(table="t1", version=game.version, seat=seat, legal=legal, deadline_ms=1)
        snapshot = Snapshot(
            table="t1", version=game.version, seat=seat, view=game.view(seat).to_dict()
        )
        for message in (turn, snapshot):
            wire = encode(message)
            assert len(wire) - 4 <= DEFAULT_MAX_FRAME_SIZE
            assert decode(wire[4:], Sender.SERVER, DEFAULT_LIMITS) == message
