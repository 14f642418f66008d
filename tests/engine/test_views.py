"""Views: what a seat, and a spectator, may see — and the plain form the server sends."""

import json

from engine.actions import Bid, ExchangeCards, LookAtHand
from engine.cards import mask_text
from engine.game import Phase
from engine.views import PublicView, SeatView
from tests.engine.helpers import bid_all, spades


def test_seat_view_holds_its_hand_and_public_facts_only() -> None:
    game = spades()
    game.deal(b"views")
    view = game.view(2)
    assert isinstance(view, SeatView) and view.hand == game.hand(2)
    data = view.to_dict()
    json.dumps(data)
    assert data["hand"] == mask_text(game.hand(2))
    assert data["legal"] == []  # seat 1 bids first
    assert game.view(1).to_dict()["legal"][0] == {"kind": "bid", "tricks": 0, "blind": False}
    spectator = game.spectator_view()
    assert isinstance(spectator, PublicView) and not isinstance(spectator, SeatView)
    assert "hand" not in spectator.to_dict()
    assert spectator.hand_sizes == (13, 13, 13, 13)


def test_views_follow_the_play() -> None:
    game = spades()
    game.deal(b"follow")
    bid_all(game, {1: 3, 2: 4, 3: 2, 0: 4})
    view = game.spectator_view()
    assert view.phase == "playing" and view.to_act == (1,)
    assert [b.tricks if b else None for b in view.bids] == [4, 3, 4, 2]
    for _ in range(5):
        seat = game.to_act()[0]
        game.apply(game.legal_actions(seat)[0])
    view = game.spectator_view()
    assert len(view.last_trick) == 4 and view.last_winner == view.leader
    assert len(view.trick) == 1 and view.trick_number == 2
    assert view.played.bit_count() == 5
    assert view.tricks[view.last_winner] == 1


def test_an_unlooked_seat_sees_no_hand_and_must_choose() -> None:
    game = spades(blind_nil=True, blind_nil_behind=0)
    game.deal(b"blind-view")
    view = game.view(1)
    assert view.hand is None and view.looked[1] is False
    assert view.to_dict()["hand"] is None
    assert [a for a in view.legal] == [LookAtHand(1), Bid(1, 0, blind=True)]
    game.apply(LookAtHand(1))
    assert game.view(1).hand == game.hand(1)


def test_exchange_views_count_the_cards_to_choose() -> None:
    game = spades("yahoo")
    game._scores = [0, 200]
    game._dealer = 3
    game.deal(b"choose")
    game.apply(Bid(0, 0, blind=True))
    bid_all(game, {1: 3, 2: 4, 3: 3})
    assert game.phase is Phase.EXCHANGING
    assert game.view(0).choose_cards == (2,) and game.view(0).legal == ()
    assert game.view(2).choose_cards == ()
    two = tuple(c for c in range(52) if game.hand(0) >> c & 1)[:2]
    game.apply(ExchangeCards(0, two))
    assert game.view(0).given == two and game.view(2).received == two
    assert game.spectator_view().to_dict()["to_act"] == [2]


def test_game_over_view_names_the_winners() -> None:
    game = spades(target_score=10)
    game._scores = [0, 0]
    while not game.is_over:
        game.deal(game.version.to_bytes(4, "big"))
        bid_all(game, {0: 1, 1: 1, 2: 1, 3: 1})
        while game.phase is Phase.PLAYING:
            game.apply(game.legal_actions(game.to_act()[0])[0])
    assert game.outcome is not None
    assert game.spectator_view().winners == game.outcome.winners
    assert game.spectator_view().to_dict()["phase"] == "game_over"
