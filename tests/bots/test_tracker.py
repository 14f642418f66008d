"""The runner's view tracker, fed a seat's events, agrees with the engine's own view of that seat
whenever the seat must act, in whole games of every preset."""

from typing import Any

import pytest

from bots.samples.heuristic import HeuristicBot
from bots.sdk.tracker import ViewTracker, _with_card
from bots.sdk.view import BotView
from engine.actions import action_to_dict
from engine.cards import mask_of, mask_text, parse_card
from engine.errors import NotationError
from engine.game import Phase, new_game
from engine.ruleset import PRESETS

FIELDS = (
    "hand",
    "hand_sizes",
    "bids",
    "trick",
    "last_trick",
    "last_winner",
    "tricks",
    "played",
    "broken",
    "scores",
    "bags",
    "points",
    "looked",
    "dealer",
    "hand_number",
    "face_up",
    "given",
    "received",
    "drawn",
    "discards",
    "pass_direction",
    "phase",
)


def comparable(view: dict[str, Any]) -> dict[str, Any]:
    out = {key: view.get(key) for key in FIELDS}
    if view.get("trick"):
        out["leader"] = view["leader"]
    return out


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_tracker_follows_the_engine(preset: str) -> None:
    ruleset = PRESETS[preset]
    if ruleset.target_score:
        ruleset = ruleset.with_options(target_score=120 if ruleset.game == "spades" else 40)
    game = new_game(ruleset, dealer=0)
    trackers = [ViewTracker(ruleset) for _ in range(ruleset.players)]
    for seat, tracker in enumerate(trackers):
        tracker.snapshot(game.view(seat).to_dict())
    bots = [HeuristicBot(seed=seat) for seat in range(ruleset.players)]
    checked = 0
    for step in range(3000):
        if game.is_over:
            break
        if game.phase is Phase.DEALING:
            events = game.deal(bytes([step % 256, 1]))
        else:
            seat = game.to_act()[0]
            truth = game.view(seat).to_dict()
            legal = [action_to_dict(a, with_seat=False) for a in game.legal_actions(seat)]
            tracked = trackers[seat].for_turn(seat, game.version, legal)
            assert comparable(tracked) == comparable(truth), (preset, step, seat)
            checked += 1
            view = BotView.from_dict(tracked, ruleset)
            events = game.apply(bots[seat].decide(view))
        for seat, tracker in enumerate(trackers):
            for event in events:
                shown = event.for_seat(seat)
                if shown is not None:
                    tracker.apply(shown)
    assert game.is_over
    assert checked > 20


def test_a_played_card_goes_in_its_place_once() -> None:
    played = mask_text(mask_of(parse_card(c) for c in ("2C", "AC", "3D", "KS")))
    assert _with_card(played, "KC") == mask_text(
        mask_of(parse_card(c) for c in ("2C", "KC", "AC", "3D", "KS"))
    )
    assert _with_card(played, "AC") == played
    assert _with_card([], "BJ") == ["BJ"]
    with pytest.raises(NotationError):
        _with_card(played, "1X")
