"""Event streams the engine generates, for the page's reducer (tests/web/js/view_fold.test.mjs): for
every preset and the option mixes of the Python fold's test (tests/engine/test_view_fold.py, whose
random choice reaches every event), a random game told to one seat and to a spectator as the server
tells them (a snapshot, each event's wire map, `turn`), with the engine's own view after each action,
which the page's picture must equal (but for `legal` and `choose_cards`, which `your_turn` gives,
and what `engine.view_fold.UNTOLD` lists)."""

from __future__ import annotations

import random
from typing import Any

from engine.game import Phase, new_game
from engine.ruleset import PRESETS, Ruleset
from tests.engine.test_view_fold import RULESETS, choose

TABLE = "t1"
MIXES: dict[str, Ruleset] = {
    **RULESETS,
    "hearts-jack": PRESETS["hearts"].with_options(hearts_jack_of_diamonds=True),
}


def wire(event: dict[str, Any], version: int) -> dict[str, Any]:
    """An event's wire map as `protocol.wire.game_event_frames` writes it (nil fields left out)."""
    out: dict[str, Any] = {"t": event["kind"], "seq": 0, "table": TABLE, "version": version}
    out.update((k, v) for k, v in event.items() if v is not None and k != "kind")
    return out


def stream(name: str, seat: int | None, seed: int) -> dict[str, Any]:
    ruleset = MIXES[name].with_options(max_hands=2)
    rng = random.Random(seed)
    game = new_game(ruleset)
    first = game.view(seat) if seat is not None else game.spectator_view()
    steps: list[dict[str, Any]] = [
        {
            "messages": [
                {"t": "snapshot", "seq": 0, "table": TABLE, "version": game.version, "seat": seat,
                 "view": first.to_dict()}
            ],
            "view": first.to_dict(),
        }
    ]  # fmt: skip
    for _ in range(1000):  # a bound: a game of two hands takes far fewer
        if game.is_over:
            break
        dealing = game.phase is Phase.DEALING
        events = game.deal(rng.randbytes(16)) if dealing else game.apply(choose(game, rng))
        messages = []
        for event in events:
            shown = event.for_seat(seat)
            if shown is not None:
                messages.append(wire(shown, game.version))
        to_act = sorted(set(game.to_act()))
        if to_act and not game.is_over:
            messages.append(
                {"t": "turn", "seq": 0, "table": TABLE, "version": game.version, "to_act": to_act,
                 "deadline_ms": [30000] * len(to_act), "bank_ms": [0] * len(to_act)}
            )  # fmt: skip
        truth = game.view(seat) if seat is not None else game.spectator_view()
        steps.append({"messages": messages, "view": truth.to_dict()})
    assert game.is_over, (name, seed)
    return {"name": name, "seat": seat, "rules": ruleset.to_dict(), "steps": steps}


def event_streams() -> list[dict[str, Any]]:
    """A seat's and a spectator's stream of one random game of each preset and mix."""
    return [
        stream(name, seat, seed=index)
        for index, name in enumerate(sorted(MIXES))
        for seat in (index % MIXES[name].players, None)
    ]
