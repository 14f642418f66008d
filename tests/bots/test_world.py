"""The search bot's worlds: sampled hands respect what play has shown, and a world built from a real
position plays out exactly like a copy of the real game (this guards the engine coupling in world.py)."""

import dataclasses
import random
from typing import Any

import pytest

from bots.samples.heuristic import HeuristicBot
from bots.samples.search import SearchBot, equivalent_groups
from bots.samples.world import (
    build_bidding_world,
    build_world,
    finish_bidding_and_play,
    play_out,
    sample_hands,
)
from bots.sdk.view import BotView, HandMemory
from engine.game import Phase, new_game
from engine.ruleset import PRESETS, Ruleset


def positions(preset: str, seed: int, limit: int = 60) -> list[tuple[Any, BotView]]:
    """Real play positions of a heuristic game: (a copy of the game, the acting seat's view)."""
    ruleset: Ruleset = PRESETS[preset]
    game = new_game(ruleset, dealer=0)
    bot = HeuristicBot(seed=seed)
    memories = [HandMemory() for _ in range(ruleset.players)]
    out: list[tuple[Any, BotView]] = []
    for step in range(2000):
        if game.is_over or len(out) >= limit:
            break
        if game.phase is Phase.DEALING:
            game.deal(bytes([seed, step % 256, 7]))
            continue
        seat = game.to_act()[0]
        view = BotView.from_dict(game.view(seat).to_dict(), ruleset, memory=memories[seat])
        if game.phase is Phase.PLAYING and len(view.legal_cards) > 1:
            out.append((game.copy(), view))
        game.apply(bot.decide(view))
    return out


@pytest.mark.parametrize("preset", ["standard", "joker", "deuces-high", "three-player", "hearts"])
def test_world_plays_out_like_the_real_game(preset: str) -> None:
    checked = 0
    for game, view in positions(preset, seed=3):
        hands = [
            game.hand(s) if hasattr(game, "hand") else game.hand_of(s) for s in range(view.players)
        ]
        world = build_world(view, hands)
        assert world is not None
        card = view.legal_cards[-1]
        real = game.copy()
        play_out(real, card)
        play_out(world, card)
        assert world.scores == real.scores
        assert world.tricks == real.tricks if hasattr(real, "tricks") else True
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize("preset", ["standard", "hearts", "joker", "two-player"])
def test_sampled_hands_are_consistent(preset: str) -> None:
    rng = random.Random(5)
    for _game, view in positions(preset, seed=4):
        hands = sample_hands(view, rng)
        assert hands is not None
        assert hands[view.seat] == view.hand_mask
        seen = view.hand_mask | view.played_mask
        union = 0
        for seat, hand in enumerate(hands):
            assert hand.bit_count() == view.hand_sizes[seat]
            assert union & hand == 0
            union |= hand
            if seat != view.seat:
                assert hand & seen == 0
                for suit in view.voids[seat]:
                    assert hand & view.order.suit_masks[suit] == 0


class SteppingClock:
    """A clock that moves on `tick` seconds each time it is read: the bot's budget then counts clock
    reads, whatever the machine's load (the wall-time cost of a decision is bench/strength.py's)."""

    def __init__(self, tick: float) -> None:
        self.tick = tick
        self.time = 0.0
        self.reads = 0

    def __call__(self) -> float:
        self.time += self.tick
        self.reads += 1
        return self.time


def test_search_stops_when_its_budget_is_spent() -> None:
    # 30 ms at 5 ms a read: the deadline is read as passed at the sixth read after the one that
    # set it, so a card decision samples the two worlds it always finishes and five more, at most.
    bot = SearchBot(seed=1, ms=30, pace="decision")  # ms each decision, no bank
    checked = 0
    for _, view in positions("standard", seed=6, limit=25):
        clock = bot.now = SteppingClock(0.005)
        card = bot.play(view)
        assert card in view.legal_cards
        if len(equivalent_groups(view, view.legal_cards)) == 1:
            continue
        assert 2 <= bot.last_worlds <= 2 + 5
        assert clock.reads == 1 + bot.last_worlds - 1
        checked += 1
    assert checked >= 10


@pytest.mark.parametrize(
    ("ms", "seconds_left", "most_worlds"),
    [
        (200, None, 2 + 39),  # the budget: 200 ms at 5 ms a read
        (200, 0.3, 2 + 19),  # half the clock less 50 ms: 100 ms
        (200, 0.1, 2),  # no time to spare: the two worlds a decision always samples
        (30, 5.0, 2 + 5),  # a long clock leaves the budget as it is
    ],
)
def test_search_keeps_to_half_the_clock_it_has_left(
    ms: float, seconds_left: float | None, most_worlds: int
) -> None:
    bot = SearchBot(seed=2, ms=ms, pace="decision")
    checked = 0
    for _, view in positions("standard", seed=6, limit=25):
        if len(equivalent_groups(view, view.legal_cards)) == 1:
            continue
        bot.now = SteppingClock(0.005)
        bot.play(dataclasses.replace(view, deadline=seconds_left))
        assert 2 <= bot.last_worlds <= most_worlds
        checked += 1
    assert checked >= 10


def test_search_bid_keeps_to_its_budget() -> None:
    ruleset = PRESETS["standard"]
    game = new_game(ruleset, dealer=1)
    game.deal(b"bid-budget")
    heuristic = HeuristicBot(seed=1)
    bids = 0
    while game.phase is Phase.BIDDING:
        seat = game.to_act()[0]
        view = BotView.from_dict(game.view(seat).to_dict(), ruleset)
        if view.phase == "bidding" and view.legal_bids:
            bot = SearchBot(seed=seat, ms=30, pace="decision")
            bot.now = SteppingClock(0.005)
            bot.bid(view)
            assert bot.last_worlds <= 2 + 5
            bids += 1
        game.apply(heuristic.decide(view))
    assert bids == 4


def test_equivalent_cards_are_grouped() -> None:
    checked = 0
    for _, view in positions("standard", seed=8, limit=40):
        groups = equivalent_groups(view, view.legal_cards)
        assert sorted(c for g in groups for c in g) == sorted(view.legal_cards)
        for group in groups:
            assert len({view.suit_of(c) for c in group}) == 1
            low, high = min(group, key=view.power), max(group, key=view.power)
            between = [
                c
                for c in view.cards_still_out
                if view.suit_of(c) == view.suit_of(low)
                and view.power(low) < view.power(c) < view.power(high)
            ]
            assert between == []
            checked += len(group) > 1
    assert checked > 0


def test_bidding_world_stands_at_my_bid() -> None:
    ruleset = PRESETS["standard"]
    game = new_game(ruleset, dealer=1)
    game.deal(b"bidding-world")
    bot = HeuristicBot(seed=1)
    seen = 0
    while game.phase is Phase.BIDDING:
        seat = game.to_act()[0]
        view = BotView.from_dict(game.view(seat).to_dict(), ruleset)
        hands = [game.hand(s) for s in range(4)]  # type: ignore[attr-defined]
        world = build_bidding_world(view, hands)
        assert world is not None
        assert world.phase is Phase.BIDDING and world.to_act() == (seat,)
        assert world.bids == game.bids  # type: ignore[attr-defined]
        finish_bidding_and_play(world.copy())
        choice = SearchBot(seed=2, ms=20).bid(view)
        assert choice in view.legal_bids
        seen += 1
        game.apply(bot.decide(view))
    assert seen == 4
