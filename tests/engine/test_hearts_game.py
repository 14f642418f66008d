"""HeartsGame as a Game: hand histories and their replay, views, copies, versions, the search path
(`legal_play_mask`, `play_to_end`) against the checked one, three-handed play, malformed actions."""

import random
from typing import Any

import pytest

from engine.actions import PassCards, PlayCard
from engine.cards import cards_in, mask_of, parse_card
from engine.errors import IllegalAction
from engine.game import Game, Phase, new_game
from engine.hearts import HeartsGame
from engine.ruleset import Ruleset
from tests.engine.hearts_helpers import (
    MOON_DEAL,
    MOON_PREFERENCES,
    c,
    canonical,
    hearts,
    lowest,
    no_pass_game,
    play_out_hand,
    refuse,
    scripted_play,
)

# -- histories, replay, views, copies ------------------------------------------------------------------


def test_hand_history_holds_the_deal_passes_and_plays_and_replays() -> None:
    game = hearts(target_score=10_000)
    rng = random.Random(5)
    for number in range(4):
        game.deal(b"history %d" % number)
        play_out_hand(game, rng)
    replay = hearts(target_score=10_000)
    for history in game.histories:
        assert history.players == 4
        assert history.sides == ((0,), (1,), (2,), (3,))
        assert history.bids == ()
        assert len(history.plays) == 52
        assert len({card for _, card in history.plays}) == 52
        assert sum(history.tricks) == 13
        assert history.score_after == tuple(
            b + d for b, d in zip(history.score_before, history.score_delta, strict=True)
        )
        passes = 0 if history.hand_number == 4 else 4
        assert len(history.transfers) == passes
        assert len(history.actions) == 52 + passes
        assert replay.dealer == history.dealer
        replay.deal(history.seed)
        assert tuple(replay.hand(seat) for seat in range(4)) == history.deal
        for action in history.actions:
            replay.apply(action)
        assert replay.histories[-1] == history
    assert replay.scores == game.scores


def test_views_never_show_another_seats_cards() -> None:
    game = hearts()
    game.deal(b"views")
    dealt = [game.hand(seat) for seat in range(4)]
    for seat in range(4):
        game.apply(PassCards(seat, lowest(dealt[seat], 3)))
    rng = random.Random(1)
    for _ in range(20):
        seat = game.to_act()[0]
        game.apply(rng.choice(game.legal_actions(seat)))
    played = game.spectator_view().played
    for seat in range(4):
        view = game.view(seat)
        assert view.hand == game.hand(seat)
        known = dealt[seat] | mask_of(view.received) | played
        shown = [parse_card(t) for t in _card_strings(view.to_dict())]
        assert all(known >> card & 1 for card in shown)
    spectator = _card_strings(game.spectator_view().to_dict())
    assert all(played >> parse_card(t) & 1 for t in spectator)
    with pytest.raises(IllegalAction):
        game.view(4)


def _card_strings(data: Any) -> list[str]:
    found: list[str] = []
    if isinstance(data, dict):
        for value in data.values():
            found += _card_strings(value)
    elif isinstance(data, list):
        for value in data:
            found += _card_strings(value)
    elif isinstance(data, str) and len(data) == 2:
        found.append(data)
    return found


def test_copy_is_independent() -> None:
    game = hearts()
    game.deal(b"copy")
    for seat in range(4):
        game.apply(PassCards(seat, lowest(game.hand(seat), 3)))
    twin = game.copy()
    before = canonical(game)
    rng = random.Random(3)
    for _ in range(30):
        seat = twin.to_act()[0]
        twin.apply(rng.choice(twin.legal_actions(seat)))
    assert canonical(game) == before
    assert twin.version == game.version + 30


def test_legal_mask_and_play_card_agree_with_legal_actions() -> None:
    game = no_pass_game(MOON_DEAL)
    assert game.legal_play_mask(0) == 0
    seat = game.to_act()[0]
    assert [a.card for a in game.legal_actions(seat) if isinstance(a, PlayCard)] == cards_in(
        game.legal_play_mask(seat)
    )
    events = game.play_card(c("2C"))
    assert events[0].to_dict()["card"] == "2C"
    assert game.legal_actions(1) == []


def test_version_counts_deals_and_actions() -> None:
    game = no_pass_game(MOON_DEAL)
    assert game.version == 1
    scripted_play(game, MOON_PREFERENCES)
    assert game.version == 53


def test_three_handed_hearts_sets_the_two_of_diamonds_aside() -> None:
    game = new_game(Ruleset.from_preset("hearts", players=3, hearts_pass_cycle=["left", "right"]))
    assert isinstance(game, HeartsGame)
    game.deal(b"three")
    hands = [game.hand(seat) for seat in range(3)]
    assert all(hand.bit_count() == 17 for hand in hands)
    assert not sum(hands) & (1 << c("2D"))
    rng = random.Random(0)
    play_out_hand(game, rng)
    history = game.histories[0]
    assert history.set_aside == 1 << c("2D")
    assert len(history.plays) == 51
    assert sum(history.score_delta) in (26, 52, -26)


def test_play_to_end_matches_playing_card_by_card() -> None:
    for number in range(5):
        game = hearts(hearts_queen_breaks=number % 2 == 0, hearts_must_break=number != 3)
        game.deal(b"fast %d" % number)
        for seat in range(4):
            game.apply(PassCards(seat, lowest(game.hand(seat), 3)))
        rng = random.Random(number)
        for _ in range(rng.randrange(0, 30)):
            seat = game.to_act()[0]
            game.apply(rng.choice(game.legal_actions(seat)))
        slow, fast, fastest = game.copy(), game.copy(), game.copy()

        def choose(mask: int, seed: int = number) -> int:
            cards = cards_in(mask)
            return cards[(len(cards) * 7 + seed) % len(cards)]

        while slow.phase is Phase.PLAYING:
            seat = slow.to_act()[0]
            slow.apply(PlayCard(seat, choose(slow.legal_play_mask(seat))))
        while fast.phase is Phase.PLAYING:
            fast.play_fast(choose(fast.legal_play_mask(fast.to_act()[0])))
        fastest.play_to_end(choose)
        assert canonical(fast) == canonical(slow)
        assert canonical(fastest) == canonical(slow)
        assert fastest.histories[-1] == slow.histories[-1]


def test_passing_views_list_no_pass_combinations() -> None:
    game = hearts()
    game.deal(b"legal")
    assert game.view(0).legal == ()
    assert game.view(0).choose_cards == (3,)
    assert game.view(0).to_dict()["choose_cards"] == [3]
    assert len(game.legal_actions(0)) == 286
    game.apply(PassCards(0, lowest(game.hand(0), 3)))
    assert game.view(0).choose_cards == ()
    assert game.view(1).choose_cards == (3,)


def test_hearts_game_is_a_game() -> None:
    # mypy checks this assignment against the Game protocol; the test runs it too.
    game: Game = HeartsGame(Ruleset.from_preset("hearts"))
    assert game.copy().phase is Phase.DEALING


def test_malformed_actions_are_refused_not_crashed_on() -> None:
    game = hearts()
    game.deal(b"odd")
    refuse(game, PassCards(0, ("2C", "3C", "4C")), "card_not_in_hand")  # type: ignore[arg-type]
    refuse(game, PassCards(0, 5), "wrong_pass_count")  # type: ignore[arg-type]
    refuse(game, PassCards("0", (1, 2, 3)), "bad_seat")  # type: ignore[arg-type]
    for seat in range(4):
        game.apply(PassCards(seat, lowest(game.hand(seat), 3)))
    turn = game.to_act()[0]
    refuse(game, PlayCard(turn, "QS"), "card_not_in_hand")  # type: ignore[arg-type]
    refuse(game, PlayCard("x", 0), "bad_seat")  # type: ignore[arg-type]
    refuse(game, PlayCard(turn, 60), "card_not_in_hand")
