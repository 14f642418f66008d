"""`BotView.from_seat_view` (the in-process path) gives exactly the view `BotView.from_dict` builds from
the plain form the server sends, for every seat after every action of whole games of every preset, and
keeps the same hand memory; both equal the view built through the dataclass's own `__init__`."""

import dataclasses
import random

import pytest

from bots.samples.heuristic import HeuristicBot
from bots.sdk.view import BotView, HandMemory
from engine.game import Phase, new_game
from engine.ruleset import PRESETS


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_both_paths_build_the_same_view(preset: str) -> None:
    ruleset = PRESETS[preset]
    if ruleset.target_score:
        ruleset = ruleset.with_options(target_score=120 if ruleset.game == "spades" else 40)
    game = new_game(ruleset, dealer=0)
    bots = [HeuristicBot(seed=seat) for seat in range(ruleset.players)]
    direct = [HandMemory() for _ in range(ruleset.players)]
    parsed = [HandMemory() for _ in range(ruleset.players)]
    rng = random.Random(preset)
    compared = 0
    for step in range(2500):
        if game.is_over:
            break
        if game.phase is Phase.DEALING:
            game.deal(bytes([step % 256, 2]))
            continue
        for seat in range(ruleset.players):
            engine_view = game.view(seat)
            deadline = rng.choice([None, 1.5])
            fast = BotView.from_seat_view(
                engine_view, ruleset, deadline=deadline, memory=direct[seat]
            )
            slow = BotView.from_dict(
                engine_view.to_dict(), ruleset, deadline=deadline, memory=parsed[seat]
            )
            assert fast == slow, (preset, step, seat)
            assert dataclasses.replace(fast) == fast  # built the dataclass's own way, too
            assert direct[seat] == parsed[seat], (preset, step, seat)
            compared += 1
        seat = game.to_act()[0]
        view = BotView.from_seat_view(game.view(seat), ruleset, memory=direct[seat])
        game.apply(bots[seat].decide(view))
    assert game.is_over
    assert compared > 100
