"""The runner's view tracker, fed a seat's events and turns, agrees with the engine's own view of that seat
whenever the seat must act, in whole games of every preset."""

from typing import Any

import pytest

from bots.samples.heuristic import HeuristicBot
from bots.sdk.tracker import ViewTracker
from bots.sdk.view import BotView
from engine.actions import action_to_dict
from engine.cards import parse_card
from engine.game import Phase, new_game
from engine.ruleset import PRESETS


def comparable(view: dict[str, Any]) -> dict[str, Any]:
    """Everything but the legal actions (the message's list names every card choice; the engine's
    view counts them in `choose_cards`), and, two-handed after a double nil, the discard pile
    and the order of a redraw's cards (which three cards a redraw took, and in which order, is not
    told: engine.view_fold.UNTOLD)."""
    out = {key: value for key, value in view.items() if key not in ("legal", "choose_cards")}
    out["to_act"] = sorted(view["to_act"])  # the server's `turn` lists them in seat order
    if view["players"] == 2 and any(bid and bid.get("double_nil") for bid in view["bids"]):
        out["discards"] = None
        out["received"] = sorted(view["received"], key=parse_card)  # the redraw's order: untold
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
        turn = {"t": "turn", "version": game.version, "to_act": sorted(set(game.to_act()))}
        for seat, tracker in enumerate(trackers):
            for event in events:
                shown = event.for_seat(seat)
                if shown is not None:
                    tracker.apply(shown)
            if turn["to_act"]:  # the server's `turn` follows the events when someone must act
                tracker.apply(turn)
    assert game.is_over
    assert checked > 20


def test_messages_that_are_not_the_games_change_nothing() -> None:
    ruleset = PRESETS["standard"]
    game = new_game(ruleset, dealer=0)
    tracker = ViewTracker(ruleset)
    tracker.apply(
        {"t": "bid_made", "seat": 1, "bid": {"tricks": 3}, "text": "3"}
    )  # no snapshot yet
    assert not tracker.ready and tracker.view == {}
    tracker.snapshot(game.view(2).to_dict())
    before = tracker.view
    tracker.apply({"t": "seat_status", "seat": 1, "connected": False, "hold_ms": 1000})
    tracker.apply({"t": "clock_expired", "seat": 1, "reason": "clock", "fallback": "lowest"})
    assert tracker.view == before
