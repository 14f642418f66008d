"""The view fold (engine/view_fold.py) follows the engine: for every preset (Hearts included) and a few
option mixes no preset covers (TRAM claims, deficient hands, the blind nil exchange both ways), random
legal games, every seat and a spectator starting from a snapshot taken at a random point, after EVERY
action (its events folded as that seat receives them, then the `turn` that follows) the folded view
equals `game.view(seat)` / `game.spectator_view()`, but for `legal` and `choose_cards` (`your_turn`
says those). The snapshot goes through its plain map (`view_from_dict`) as a wire snapshot does."""

import dataclasses
import inspect
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import events as ev
from engine.actions import Action, Bid, Claim, DeclareDeficient
from engine.errors import EngineError
from engine.game import Game, Phase, new_game
from engine.ruleset import PRESETS, Ruleset
from engine.view_fold import (
    HANDLED,
    UnknownEvent,
    fold,
    fold_turn,
    view_from_dict,
)
from engine.views import PublicView, SeatView

RULESETS: dict[str, Ruleset] = {
    **PRESETS,
    "tram-exposed": PRESETS["standard"].with_options(tram=True, tram_penalty="exposed"),
    "tram-forfeit": PRESETS["standard"].with_options(tram=True, tram_penalty="forfeit_tricks"),
    "deficient": PRESETS["standard"].with_options(
        deficient_hands=["no_face_cards", "one_spade", "no_spades"]
    ),
    # Blind nil at any score, so that random games exchange often, in both orders.
    "exchange-nil-first": PRESETS["yahoo"].with_options(blind_nil_behind=0),
    "exchange-simultaneous": PRESETS["yahoo"].with_options(
        blind_nil_behind=0, blind_nil_exchange_order="simultaneous"
    ),
    "hearts+three": PRESETS["hearts"].with_options(players=3, hearts_pass_cycle=["left", "right"]),
}
MAX_HANDS = 3
MAX_STEPS = 1_500


def comparable(view: PublicView, truth: PublicView) -> PublicView:
    """The view without what only `your_turn` tells (the legal actions), and without what
    `view_fold.UNTOLD` says no event tells (two-handed double nil's unseen draw and redraw), with
    the seats to act in seat order (as the server's `turn` lists them; the engine's own order may
    differ in a simultaneous phase)."""
    view = dataclasses.replace(view, to_act=tuple(sorted(view.to_act)))
    if isinstance(view, SeatView):
        view = dataclasses.replace(view, legal=(), choose_cards=())
        if truth.players == 2 and not truth.looked[view.seat]:
            view = dataclasses.replace(view, hand=None)
        if truth.players == 2:
            view = dataclasses.replace(view, received=tuple(sorted(view.received)))
    if truth.players == 2 and any(bid is not None and bid.double_nil for bid in truth.bids):
        view = dataclasses.replace(view, discards=0)
    return view


def choose(game: Game, rng: random.Random) -> Action:
    """A random legal action of a random seat to act; half the time, when there is one, an action that
    leads somewhere rare (a blind bid and its exchange, a deficient hand, a claim), so that random
    games reach every event."""
    seat = game.to_act()[rng.randrange(len(game.to_act()))]
    legal = game.legal_actions(seat)
    rare = [
        action
        for action in legal
        if isinstance(action, DeclareDeficient | Claim)
        or (isinstance(action, Bid) and action.blind)
    ]
    if rare and rng.random() < 0.5:
        return rare[rng.randrange(len(rare))]
    return legal[rng.randrange(len(legal))]


def follow(name: str, seed: int, snapshot_at: int) -> int:
    """Play one random game of `name`, checking every viewer from step `snapshot_at` on; returns the
    number of checks made."""
    ruleset = RULESETS[name].with_options(max_hands=MAX_HANDS)
    rng = random.Random(seed)
    game = new_game(ruleset)
    seats: list[int | None] = [*range(ruleset.players), None]
    views: list[PublicView] | None = None
    checks = 0
    for step in range(MAX_STEPS):
        if game.is_over:
            break
        # Two-handed, a snapshot during a blind draw has no hand to start from (view_fold.UNTOLD):
        # take it at the next deal instead.
        late = ruleset.players == 2 and game.phase is not Phase.DEALING
        if views is None and step >= snapshot_at and not late:
            views = [
                view_from_dict(
                    game.view(s).to_dict() if s is not None else game.spectator_view().to_dict()
                )
                for s in seats
            ]
        dealing = game.phase is Phase.DEALING
        events = game.deal(rng.randbytes(16)) if dealing else game.apply(choose(game, rng))
        if views is None:
            continue
        for index, seat in enumerate(seats):
            view = views[index]
            for event in events:
                shown = event.for_seat(seat)
                if shown is not None:
                    view = fold(view, shown, ruleset)
            view = fold_turn(view, game.version, sorted(set(game.to_act())))  # as `turn` lists them
            truth = game.view(seat) if seat is not None else game.spectator_view()
            assert comparable(view, truth) == comparable(truth, truth), (
                name,
                seed,
                step,
                seat,
                [e.kind for e in events],
            )
            views[index] = view
            checks += 1
    assert game.is_over
    return checks


@pytest.mark.parametrize("name", sorted(RULESETS))
@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
@given(seed=st.integers(0, 2**32 - 1), snapshot_at=st.sampled_from([0, 0, 1, 5, 17, 40, 90]))
def test_the_fold_of_a_seats_events_is_the_engines_view(
    name: str, seed: int, snapshot_at: int
) -> None:
    checks = follow(name, seed, snapshot_at)
    assert checks > 0 or snapshot_at > 0  # a short game may end before a late snapshot


def test_every_event_kind_is_folded() -> None:
    kinds = {
        cls.kind
        for _, cls in inspect.getmembers(ev, inspect.isclass)
        if issubclass(cls, ev.Event)
        and cls.kind != ev.Event.kind
        and not cls.__name__.startswith("_")
    }
    assert kinds == HANDLED


def test_an_unknown_event_fails_loudly_and_changes_nothing() -> None:
    game = new_game(PRESETS["standard"], dealer=0)
    view = game.view(0)
    with pytest.raises(UnknownEvent) as caught:
        fold(view, {"kind": "card_vanished", "seat": 1}, PRESETS["standard"])
    assert isinstance(caught.value, EngineError)
    assert "card_vanished" in str(caught.value)
    assert game.view(0) == view


def test_a_wire_map_names_its_kind_t_and_carries_the_version() -> None:
    ruleset = PRESETS["standard"]
    game = new_game(ruleset, dealer=0)
    view = game.view(1)
    (dealt,) = game.deal(b"wire")
    shown = dealt.for_seat(1)
    assert shown is not None
    wire = {"t": shown.pop("kind"), "version": 7, "table": "t1", **shown}
    folded = fold(view, wire, ruleset)
    assert folded.version == 7
    assert folded.hand == game.view(1).hand
