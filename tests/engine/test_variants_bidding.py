"""Bidding variants: bid rules by name, blind nil and blind bids, special bids, deficient hands."""

import pytest

from engine.actions import Bid, DeclareDeficient, ExchangeCards, LookAtHand
from engine.errors import IllegalAction
from engine.events import CardsExchanged, DealDeclaredDead, HandLooked
from engine.game import Phase
from engine.records import game_records, replay
from engine.spades import SpadesGame
from tests.engine.helpers import bid_all, cards, fill_deal, spades

SPADES13 = "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"


def numbers(game: SpadesGame, seat: int) -> list[int]:
    return sorted(
        {a.tricks for a in game.legal_actions(seat) if isinstance(a, Bid) and not a.blind}
    )


def test_suicide_second_partner_must_bid_nil_unless_the_first_did() -> None:
    game = spades("suicide", first_lead="dealer")
    game.deal(b"s")
    game.apply(Bid(1, 4))
    game.apply(Bid(2, 0))
    assert numbers(game, 3) == [0]
    with pytest.raises(IllegalAction) as info:
        game.apply(Bid(3, 2))
    assert info.value.code == "bid_out_of_range" and "nil" in info.value.message
    game.apply(Bid(3, 0))
    assert 0 in numbers(game, 0) and 5 in numbers(game, 0)


def test_four_or_none() -> None:
    game = spades("four-or-none")
    game.deal(b"f")
    assert numbers(game, 1) == [0, *range(4, 14)]
    game.apply(Bid(1, 0))
    game.apply(Bid(2, 5))
    assert numbers(game, 3) == list(range(4, 14))
    game.apply(Bid(3, 4))
    assert numbers(game, 0) == [0]


def test_partnership_fourteen_makes_each_side_bid_seven() -> None:
    game = spades("partnership-fourteen")
    game.deal(b"p")
    assert numbers(game, 1) == [2, 3, 4, 5]
    game.apply(Bid(1, 2))
    game.apply(Bid(2, 4))
    assert numbers(game, 3) == [5]
    game.apply(Bid(3, 5))
    assert numbers(game, 0) == [3]


def test_mirror_bids_the_spades_held() -> None:
    game = spades("mirror")
    game.deal_fixed(fill_deal(game.ruleset, {1: SPADES13}))
    assert numbers(game, 1) == [13]
    game.apply(Bid(1, 13))
    assert numbers(game, 2) == [0]


def test_double_nil_can_be_forbidden() -> None:
    game = spades(double_nil=False)
    game.deal(b"d")
    game.apply(Bid(1, 0))
    game.apply(Bid(2, 3))
    assert 0 not in numbers(game, 3)
    with pytest.raises(IllegalAction) as info:
        game.apply(Bid(3, 0))
    assert "both partners" in info.value.message


def test_no_nil_and_minimum_bid() -> None:
    game = spades(nil=False, min_bid=2)
    game.deal(b"n")
    assert numbers(game, 1) == list(range(2, 14))


def test_special_bids_are_offered_when_enabled() -> None:
    game = spades(moe=True, bemo=True, ten_for_200=True, no_spade_trumps=True)
    game.deal_fixed(fill_deal(game.ruleset, {1: "AS 2C"}))
    legal = game.legal_actions(1)
    assert Bid(1, 0, moe="little") in legal and Bid(1, 0, moe="big") in legal
    assert Bid(1, 4, bemo="bemo") in legal and Bid(1, 4, bemo="big_bemo") in legal
    assert Bid(1, 10, ten_for_200=True) in legal
    assert Bid(1, 3, no_trumps=True) in legal
    game.apply(Bid(1, 3, no_trumps=True))
    assert game.bids[1] == Bid(1, 3, no_trumps=True)
    # No spade, no "no spade trumps" bid.
    game2 = spades(no_spade_trumps=True)
    game2.deal_fixed(fill_deal(game2.ruleset, {1: "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"}))
    assert not any(isinstance(a, Bid) and a.no_trumps for a in game2.legal_actions(1))


def test_boston_and_double_nil_exclude_each_other() -> None:
    game = spades(boston=True)
    game.deal(b"b")
    game.apply(Bid(1, 0))
    game.apply(Bid(2, 7))
    game.apply(Bid(3, 0))  # double nil by 1 and 3
    assert 6 not in numbers(game, 0) and 5 in numbers(game, 0)


def test_boston_wins_the_game_at_once() -> None:
    game = spades(boston=True)
    game.deal_fixed(fill_deal(game.ruleset, {1: SPADES13}))
    bid_all(game, {1: 13, 2: 1, 3: 0, 0: 1})
    while game.phase is Phase.PLAYING:
        game.apply(game.legal_actions(game.to_act()[0])[0])
    assert game.outcome is not None and game.outcome.reason == "boston"
    assert game.outcome.winners == (1, 3)


# -- blind nil ------------------------------------------------------------------------------------------
def test_blind_nil_needs_the_side_to_be_far_enough_behind() -> None:
    game = spades("yahoo")
    game.deal(b"y")
    assert all(game.view(s).hand is not None for s in range(4))
    game = spades("yahoo")
    game._scores = [0, 100]  # seats 0 and 2 trail by 100
    game.deal(b"y")
    assert game.view(1).hand is not None and game.view(0).hand is None
    assert game.view(2).hand is None
    assert game.spectator_view().looked == (False, True, False, True)


def _blind_game(preset: str = "yahoo", **options: object) -> SpadesGame:
    game = spades(preset, **options)
    game._scores = [0, 300]
    game._dealer = 3  # seat 0 bids first
    game.deal(b"blind")
    return game


def test_a_blind_bidder_must_choose_to_look_or_bid_blind() -> None:
    game = _blind_game()
    assert game.to_act() == (0,)
    legal = game.legal_actions(0)
    assert legal == [LookAtHand(0), Bid(0, 0, blind=True)]
    with pytest.raises(IllegalAction) as info:
        game.apply(Bid(0, 3))
    assert info.value.code == "look_first"
    events = game.apply(LookAtHand(0))
    assert isinstance(events[0], HandLooked)
    assert events[0].for_seat(1) == {"kind": "hand_looked", "seat": 0}
    assert game.view(0).hand == game.hand(0)
    with pytest.raises(IllegalAction) as info:
        game.apply(Bid(0, 0, blind=True))
    assert info.value.code == "already_looked"


def test_blind_nil_then_nil_first_exchange_of_two() -> None:
    game = _blind_game()
    events = game.apply(Bid(0, 0, blind=True))
    assert [e.kind for e in events] == ["bid_made", "hand_looked"]
    bid_all(game, {1: 3, 2: 4, 3: 3})
    assert game.phase is Phase.EXCHANGING and game.to_act() == (0,)
    mine = [c for c in range(52) if game.hand(0) >> c & 1][-2:]
    events = game.apply(ExchangeCards(0, tuple(mine)))
    exchanged = [e for e in events if isinstance(e, CardsExchanged)]
    assert exchanged and exchanged[0].for_seat(1) == {
        "kind": "cards_exchanged",
        "giver": 0,
        "receiver": 2,
        "count": 2,
    }
    assert game.view(2).received == tuple(mine)
    assert game.view(0).received == ()
    assert game.to_act() == (2,)
    back = [c for c in range(52) if game.hand(2) >> c & 1][:2]
    game.apply(ExchangeCards(2, tuple(back)))
    assert game.phase.value == "playing"
    assert game.view(0).received == tuple(back)
    assert game.hand(0).bit_count() == 13 and game.hand(2).bit_count() == 13


def test_simultaneous_exchange_keeps_cards_hidden_until_both_gave() -> None:
    game = _blind_game("standard", blind_nil=True, blind_nil_behind=100, blind_nil_exchange=1)
    game.apply(Bid(0, 0, blind=True))
    bid_all(game, {1: 3, 2: 4, 3: 3})
    assert set(game.to_act()) == {0, 2}
    card2 = game.hand(2).bit_length() - 1
    events = game.apply(ExchangeCards(2, (card2,)))
    assert [e.kind for e in events] == ["cards_given"]
    assert events[0].for_seat(0) == {"kind": "cards_given", "seat": 2, "receiver": 0, "count": 1}
    assert game.view(0).received == ()
    card0 = game.hand(0).bit_length() - 1
    events = game.apply(ExchangeCards(0, (card0,)))
    assert sum(isinstance(e, CardsExchanged) for e in events) == 2
    assert game.hand(0) >> card2 & 1 and game.hand(2) >> card0 & 1


def test_blind_bids_up_to_seven() -> None:
    game = spades(blind_bids=True)
    game.deal(b"bb")
    legal = game.legal_actions(1)
    assert LookAtHand(1) in legal
    assert {a.tricks for a in legal if isinstance(a, Bid)} == set(range(1, 8))
    game.apply(Bid(1, 7, blind=True))
    assert game.view(1).hand == game.hand(1)


# -- deficient hands ----------------------------------------------------------------------------------
def test_a_deficient_hand_kills_the_deal_and_the_next_player_deals() -> None:
    game = spades(deficient_hands=["no_spades"])
    hands = fill_deal(game.ruleset, {2: "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"})
    game.deal_fixed(hands)
    assert DeclareDeficient(2) in game.legal_actions(2)  # out of turn, before the side has bid
    assert DeclareDeficient(1) not in game.legal_actions(1)
    with pytest.raises(IllegalAction) as info:
        game.apply(DeclareDeficient(1))
    assert info.value.code == "not_deficient"
    events = game.apply(DeclareDeficient(2))
    assert isinstance(events[0], DealDeclaredDead)
    assert events[0].for_seat(None)["cards"][0] == "2C"  # type: ignore[index]
    assert game.phase is Phase.DEALING and game.dealer == 1 and game.hand_number == 0


def test_deficient_is_too_late_once_the_partner_bid() -> None:
    game = spades(deficient_hands=["no_face_cards", "one_spade"])
    game.deal_fixed(fill_deal(game.ruleset, {3: "2C 3C 4C 5C 6C 7C 8C 9C TC 2D 3D 4D 5D"}))
    game.apply(Bid(1, 3))
    assert DeclareDeficient(3) not in game.legal_actions(3)


def test_dead_deals_replay() -> None:
    game = spades(deficient_hands=["no_spades", "one_spade", "no_face_cards"])
    seed = 0
    while game.hand_number < 2 or game.phase is not Phase.DEALING:
        if game.phase is Phase.DEALING:
            seed += 1
            game.deal(seed.to_bytes(2, "big"))
            continue
        seat = game.to_act()[0]
        dead = [s for s in range(4) if DeclareDeficient(s) in game.legal_actions(s)]
        if dead:
            game.apply(DeclareDeficient(dead[0]))
            continue
        game.apply(game.legal_actions(seat)[min(3, len(game.legal_actions(seat)) - 1)])
    assert any(h.dead_deals for h in game.histories)
    assert replay(game_records(game)) == game.scores
    assert cards("2C") == 1
