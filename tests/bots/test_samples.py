"""Every sample bot plays whole games of every preset without one illegal action."""

import random
from typing import Any

import pytest

from bots.arena.match import GameJob, Seat, play_game
from bots.registry import SAMPLES, BotSpecError, make_bot
from bots.sdk import Bot
from engine.actions import Bid
from engine.ruleset import PRESETS

# Short games: a low target (or few hands) keeps the whole matrix to a few seconds.
SHORT = {"target_score": 150}


def short_ruleset(name: str) -> dict[str, Any]:
    ruleset = PRESETS[name]
    if ruleset.target_score:
        target = 50 if ruleset.game == "hearts" else 150
        ruleset = ruleset.with_options(target_score=target)
    else:
        ruleset = ruleset.with_options(max_hands=3)
    return ruleset.to_dict()


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("pair", [("heuristic", "random"), ("random", "heuristic")])
def test_sample_bots_play_every_preset(preset: str, pair: tuple[str, str]) -> None:
    result = play_game(
        GameJob(
            index=0,
            deal_index=0,
            rotation=0,
            specs=pair,
            ruleset=short_ruleset(preset),
            seed=11,
            max_hands=12,
        )
    )
    assert result.fallbacks == 0
    assert result.hands >= 1
    assert result.winners


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_search_bot_plays_every_preset(preset: str) -> None:
    result = play_game(
        GameJob(
            index=0,
            deal_index=0,
            rotation=0,
            specs=("search,ms=5", "heuristic"),
            ruleset=short_ruleset(preset),
            seed=12,
            max_hands=2,
        )
    )
    assert result.fallbacks == 0
    assert result.hands >= 1


def test_registry() -> None:
    for name in SAMPLES:
        bot = make_bot(name, seed=1)
        assert isinstance(bot, Bot)
        assert bot.name == name
    with pytest.raises(BotSpecError):
        make_bot("no-such-bot")
    with pytest.raises(BotSpecError):
        make_bot("bots.registry:make_bot")


def _search_decisions(spec: str, seed: int) -> tuple[list[object], list[int]]:
    """One hand of plain Spades with `spec` at every seat: every decision, and the worlds each
    searched decision sampled (decisions with one sensible choice sample none)."""
    from engine.game import Phase, new_game
    from engine.ruleset import Ruleset

    ruleset = Ruleset.from_preset("standard", target_score=0, max_hands=1)
    bots = [make_bot(spec, seed + s) for s in range(4)]
    seats = [Seat(bot, s, ruleset, random.Random(s)) for s, bot in enumerate(bots)]
    game = new_game(ruleset, dealer=0)
    game.deal(b"search-worlds-test")
    decisions: list[object] = []
    worlds: list[int] = []
    for _ in range(200):  # a hand is 4 bids and 52 cards
        if game.phase is not Phase.BIDDING and game.phase is not Phase.PLAYING:
            break
        seat = game.to_act()[0]
        bots[seat].last_worlds = 0  # type: ignore[union-attr]
        action = seats[seat].decide(game)
        worlds.append(bots[seat].last_worlds)  # type: ignore[union-attr]
        decisions.append(action)
        game.apply(action)
    assert game.phase is not Phase.PLAYING
    return decisions, worlds


def test_search_with_a_fixed_number_of_worlds_is_a_function_of_its_seed() -> None:
    first = _search_decisions("search,worlds=4", seed=9)
    assert _search_decisions("search,worlds=4", seed=9) == first


@pytest.mark.parametrize("worlds", ["0", "-3", "2.5", "many"])
def test_search_refuses_a_number_of_worlds_that_is_not_a_positive_whole_number(
    worlds: str,
) -> None:
    with pytest.raises(ValueError, match="worlds"):
        make_bot(f"search,worlds={worlds}")


def test_search_with_a_fixed_number_of_worlds_samples_exactly_that_many() -> None:
    # A budget of 1 ms would allow only a world or two: the fixed count overrides the time. A bid
    # is worth the most points of any decision and costs one or two playouts a world: with
    # `worlds=N` it samples 4N worlds (or `bid_factor` x N), a card exactly N.
    decisions, worlds = _search_decisions("search,worlds=5,ms=1", seed=3)
    assert len(decisions) >= 52
    bids = [w for d, w in zip(decisions, worlds, strict=True) if isinstance(d, Bid) and w]
    cards = [w for d, w in zip(decisions, worlds, strict=True) if not isinstance(d, Bid) and w]
    assert bids and set(bids) == {20}
    assert cards and set(cards) == {5}
    decisions, worlds = _search_decisions("search,worlds=5,bid_factor=1", seed=3)
    assert set(worlds) - {0} == {5}


def test_either_half_of_the_search_can_be_switched_off_leaving_the_heuristics_choice() -> None:
    # With the card search off every card is the heuristic's and no world is sampled for it; with
    # the bid search off every bid is. Both off: the heuristic's whole hand, decision for decision.
    heuristic, _ = _search_decisions("heuristic", seed=5)
    both_off, worlds = _search_decisions("search,worlds=6,search_bids=false,search_play=false", 5)
    assert both_off == heuristic and set(worlds) == {0}
    play_off, worlds = _search_decisions("search,worlds=6,search_play=false", seed=5)
    searched = [w for d, w in zip(play_off, worlds, strict=True) if w]
    assert searched and all(isinstance(d, Bid) for d, w in zip(play_off, worlds, strict=True) if w)
    bids_off, worlds = _search_decisions("search,worlds=6,search_bids=false", seed=5)
    assert [d for d in bids_off if isinstance(d, Bid)] == [
        d for d in heuristic if isinstance(d, Bid)
    ]
    assert any(w for d, w in zip(bids_off, worlds, strict=True) if not isinstance(d, Bid))


@pytest.mark.parametrize("flag", ["search_bids", "search_play"])
def test_search_refuses_a_switch_that_is_not_true_or_false(flag: str) -> None:
    with pytest.raises((ValueError, BotSpecError), match=flag):
        make_bot(f"search,worlds=4,{flag}=maybe")


@pytest.mark.parametrize("factor", ["0", "-1", "1.5", "True"])
def test_search_refuses_a_bid_factor_that_is_not_a_positive_whole_number(factor: str) -> None:
    with pytest.raises((ValueError, BotSpecError), match="bid_factor"):
        make_bot(f"search,worlds=4,bid_factor={factor}")


def _first_bid(spec: str, seed: int, hand: str) -> Bid:
    """The bid of seat 1 (first to bid, dealer 0) holding `hand`, the other cards dealt in order."""
    from engine.cards import parse_card
    from engine.ruleset import Ruleset
    from engine.spades import SpadesGame

    ruleset = Ruleset.from_preset("standard", target_score=0, max_hands=1)
    mine = 0
    for text in hand.split():
        mine |= 1 << parse_card(text)
    rest = [card for card in range(52) if not mine >> card & 1]
    hands = [0, mine, 0, 0]
    for index, card in enumerate(rest):
        hands[(0, 2, 3)[index // 13]] |= 1 << card
    game = SpadesGame(ruleset, dealer=0)
    game.deal_fixed(hands)
    seat = Seat(make_bot(spec, seed), 1, ruleset, random.Random(1))
    for _ in range(3):
        action = seat.decide(game)
        if isinstance(action, Bid):
            return action
        game.apply(action)
    raise AssertionError("no bid")


def test_search_bids_nil_with_four_low_spades_where_the_heuristic_bids_one() -> None:
    # The heuristic never bids nil holding four spades; played out, 2-5 of spades and low side
    # cards make a nil more often than not, and the nil's 100 beats one trick's 10. The call is
    # close in some samples of the other hands, so a few seeds in four may still bid one: three
    # in four must bid nil, over 24 seeds (8 seeds were too few to tell 75 % from chance: at the
    # chain's 16 steps between worlds seeds 1-8 bid 5 nils, 1-40 bid 29).
    hand = "2S 3S 4S 5S 2H 3H 4H 2D 3D 4D 2C 3C 5C"
    assert _first_bid("heuristic", 1, hand).tricks == 1
    bids = [_first_bid("search,worlds=12", seed, hand).tricks for seed in range(1, 25)]
    assert bids.count(0) >= 18
    # A fixed number of worlds: the same seed, the same bid.
    assert [_first_bid("search,worlds=12", seed, hand).tricks for seed in range(1, 9)] == bids[:8]


@pytest.mark.parametrize("tricks", ["-1", "14", "2.5", "True"])
def test_search_refuses_dd_tricks_that_are_not_a_number_of_tricks(tricks: str) -> None:
    with pytest.raises((ValueError, BotSpecError), match="dd_tricks"):
        make_bot(f"search,worlds=4,dd_tricks={tricks}")


@pytest.mark.parametrize("preset", ["standard", "joker", "crazy"])
def test_search_scoring_its_late_worlds_double_dummy_plays_legally(preset: str) -> None:
    # Issue 42 item 4's experiment (off by default): the last 4 tricks' worlds scored by the
    # solver's tricks; every card it chooses is legal (no fallback).
    result = play_game(
        GameJob(
            index=0,
            deal_index=0,
            rotation=0,
            specs=("search,worlds=3,dd_tricks=4", "heuristic"),
            ruleset=short_ruleset(preset),
            seed=13,
            max_hands=2,
        )
    )
    assert result.fallbacks == 0 and result.hands >= 1
