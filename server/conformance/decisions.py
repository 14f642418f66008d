"""Which kinds of decision a bot meets in a game, found by playing the same table with the engine
alone: the kinds a scenario must make the bot meet (those that come up in every trial game)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping

from engine.actions import Action, action_to_dict
from engine.game import Phase, new_game
from engine.ruleset import Ruleset

EnginePolicy = Callable[[list[Action], random.Random], Action]


def any_legal(legal: list[Action], rng: random.Random) -> Action:
    return rng.choice(legal)


def blind_nil_when_offered(legal: list[Action], rng: random.Random) -> Action:
    for action in legal:
        shown = action_to_dict(action)
        if shown["kind"] == "bid" and shown.get("tricks") == 0 and shown.get("blind"):
            return action
    return legal[0]


def kinds_for_seat(
    ruleset: Ruleset,
    seat: int,
    policies: Mapping[int, EnginePolicy] | None = None,
    *,
    games: int = 6,
    seed: int = 0,
) -> frozenset[str]:
    """The action kinds `seat` is offered in every one of `games` trial games of `ruleset`, the
    other seats playing `policies` (any legal action by default)."""
    rng = random.Random(seed)
    policies = policies or {}
    always: set[str] | None = None
    for _ in range(games):
        game = new_game(ruleset)
        seen: set[str] = set()
        for _step in range(10_000):
            if game.is_over:
                break
            if game.phase is Phase.DEALING:
                game.deal(rng.randbytes(16))
                continue
            actor = game.to_act()[0]
            legal = game.legal_actions(actor)
            if actor == seat:
                seen |= {str(action_to_dict(a)["kind"]) for a in legal}
            game.apply(policies.get(actor, any_legal)(legal, rng))
        always = seen if always is None else always & seen
    return frozenset(always or ())
