"""Deck and play variants: Joker Spades, Deuces High, three- and two-handed, face-up deals, first leads,
Crazy Spades hand types, TRAM claims."""

import itertools
import random

import pytest

from engine.actions import Bid, Claim, Discard, KeepDrawn, LookAtHand, PlayCard
from engine.cards import BIG_JOKER, LITTLE_JOKER, cards_in, parse_card
from engine.deal import shuffled
from engine.errors import IllegalAction
from engine.events import ClaimMade, DrawResolved
from engine.game import Phase, new_game
from engine.ordering import card_order
from engine.ruleset import CRAZY_SCHEDULE, PRESETS
from engine.spades import SpadesGame
from tests.engine.helpers import bid_all, cards, fill_deal, spades

C = parse_card


def test_joker_order_and_suit() -> None:
    order = card_order("jokers")
    assert order.trick_winner_index([C("AS"), LITTLE_JOKER, BIG_JOKER]) == 2
    assert order.trick_winner_index([C("AS"), LITTLE_JOKER, C("KS")]) == 1
    assert order.trick_winner_index([C("2H"), LITTLE_JOKER, C("AH")]) == 1
    assert order.suit[BIG_JOKER] == 3 and order.deck.bit_count() == 54


def test_deuces_high_order_and_membership() -> None:
    order = card_order("deuces_high")
    ranked = [C("2S"), C("2D"), C("2C"), C("2H"), C("AS"), C("KS"), C("3S")]
    for higher, lower in itertools.pairwise(ranked):
        assert order.trick_winner_index([lower, higher]) == 1
    # The 2D is a spade: it trumps a diamond lead and does not follow diamonds.
    assert order.trick_winner_index([C("AD"), C("2D")]) == 1
    assert order.suit[C("2D")] == 3 and not order.suit_masks[1] >> C("2D") & 1


def test_deuces_high_follow_suit_uses_the_spade_membership() -> None:
    game = spades("deuces-high")
    hands = fill_deal(game.ruleset, {1: "3S 2C AC KC", 2: "2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD"})
    game.deal_fixed(hands)
    bid_all(game, {1: 3, 2: 3, 3: 3, 0: 3})
    game.apply(PlayCard(1, C("AC")))
    # Seat 2 has no clubs (its 2D is a spade): it may play anything, the 2D included.
    assert game.legal_play_mask(2) == game.hand(2)


def test_joker_dealer_takes_two_and_discards_two() -> None:
    game = spades("joker")
    game.deal(b"j")
    assert game.phase is Phase.DISCARDING and game.to_act() == (0,)
    assert game.hand(0).bit_count() == 15 and game.hand(1).bit_count() == 13
    with pytest.raises(IllegalAction):
        game.apply(Bid(1, 3))
    two = tuple(cards_in(game.hand(0))[:2])
    events = game.apply(Discard(0, two))
    assert events[0].for_seat(1) == {"kind": "cards_discarded", "seat": 0, "count": 2}
    assert game.hand(0).bit_count() == 13 and game.phase.value == "bidding"
    assert game.to_act() == (1,)


def test_three_handed_deal_and_the_two_of_clubs_leads() -> None:
    game = spades("three-player")
    game.deal(b"three")
    deck = shuffled(b"three", list(range(52)))
    assert [game.hand(s).bit_count() for s in range(3)] == [17, 17, 17]
    set_aside = deck[51]
    bid_all(game, {1: 5, 2: 5, 0: 5})
    leader = game.to_act()[0]
    lead = C("3C") if set_aside == C("2C") else C("2C")
    assert game.hand(leader) >> lead & 1
    assert game.legal_play_mask(leader) == 1 << lead
    with pytest.raises(IllegalAction) as info:
        game.apply(PlayCard(leader, cards_in(game.hand(leader) & ~(1 << lead))[0]))
    assert info.value.code == "must_lead_card"


def test_three_handed_three_of_clubs_leads_when_the_two_is_set_aside() -> None:
    game = spades("three-player")
    hands = fill_deal(game.ruleset, {2: "3C"}, set_aside="2C")
    game.deal_fixed(hands, set_aside=cards("2C"))
    bid_all(game, {1: 5, 2: 5, 0: 5})
    assert game.to_act() == (2,) and game.legal_play_mask(2) == cards("3C")


def test_two_handed_draw() -> None:
    game = spades("two-player", two_player_double_nil=False)
    game.deal(b"two")
    stock = shuffled(b"two", list(range(52)))
    assert game.phase is Phase.DRAWING and game.to_act() == (1,)
    assert game.view(1).drawn == stock[0] and game.view(0).drawn is None
    events = game.apply(KeepDrawn(1, True))
    resolved = events[0]
    assert isinstance(resolved, DrawResolved)
    assert (resolved.taken, resolved.discarded) == (stock[0], stock[1])
    assert "taken" not in resolved.for_seat(0)  # type: ignore[operator]
    assert game.spectator_view().discards == 1 << stock[1]
    assert game.to_act() == (0,)
    game.apply(KeepDrawn(0, False))
    assert game.hand(0) == 1 << stock[3]
    while game.phase is Phase.DRAWING:
        game.apply(KeepDrawn(game.to_act()[0], True))
    assert game.hand(0).bit_count() == game.hand(1).bit_count() == 13
    assert game.phase is Phase.BIDDING and game.to_act() == (1,)
    bid_all(game, {1: 4, 0: 4})
    assert game.to_act() == (1,)


def test_two_handed_double_nil_is_bid_before_the_draw() -> None:
    game = spades("two-player")
    game.deal(b"dn")
    assert game.to_act() == (1,)
    assert game.legal_actions(1) == [LookAtHand(1), Bid(1, 0, double_nil=True)]
    game.apply(Bid(1, 0, double_nil=True))
    game.apply(LookAtHand(0))
    while game.phase is Phase.DRAWING:
        game.apply(KeepDrawn(game.to_act()[0], False))
    assert game.phase is Phase.DISCARDING and game.to_act() == (1,)
    three = tuple(cards_in(game.hand(1))[:3])
    game.apply(Discard(1, three))
    assert game.hand(1).bit_count() == 13 and not game.hand(1) & cards_in_mask(three)
    assert game.phase.value == "bidding" and game.to_act() == (0,)


def cards_in_mask(cards_: tuple[int, ...]) -> int:
    mask = 0
    for card in cards_:
        mask |= 1 << card
    return mask


def test_face_up_cards_are_public_until_played() -> None:
    game = spades(face_up_cards=2)
    game.deal(b"up")
    deck = shuffled(b"up", list(range(52)))
    up = game.spectator_view().face_up
    assert up[1] == 1 << deck[0] | 1 << deck[4]
    assert all(mask.bit_count() == 2 for mask in up)
    assert game.view(3).face_up == up


def test_dealer_leads_first_under_yahoo() -> None:
    game = new_game(PRESETS["yahoo"], dealer=2)
    game.deal(b"y")
    bid_all(game, {3: 3, 0: 3, 1: 3, 2: 3})
    assert game.to_act() == (2,)


def test_lowest_club_leads_in_four_handed() -> None:
    game = spades(first_lead="lowest_club")
    game.deal_fixed(fill_deal(game.ruleset, {2: "2C"}))
    bid_all(game, {1: 3, 2: 3, 3: 3, 0: 3})
    assert game.to_act() == (2,) and game.legal_play_mask(2) == cards("2C")


def _crazy_hand(game: SpadesGame, number: int) -> None:
    game._hand_number = number - 1
    game.deal(number.to_bytes(2, "big"))


def test_crazy_schedule_sets_each_hands_rules() -> None:
    game = spades("crazy")
    for number, kind in enumerate(CRAZY_SCHEDULE, start=1):
        _crazy_hand(game, number)
        assert game.hand_type == kind
        assert game.spectator_view().hand_type == kind
        game._phase = Phase.DEALING
    game = spades("crazy")
    _crazy_hand(game, 3)  # bags for all
    assert [a for a in game.legal_actions(1) if isinstance(a, Bid)] == [Bid(1, 1)]
    game._phase = Phase.DEALING
    _crazy_hand(game, 9)  # all nil
    assert [a for a in game.legal_actions(1) if isinstance(a, Bid)] == [Bid(1, 0)]
    game._phase = Phase.DEALING
    _crazy_hand(game, 11)  # all around blind
    assert game.view(1).hand is None
    assert LookAtHand(1) not in game.legal_actions(1)
    assert all(isinstance(a, Bid) and a.blind for a in game.legal_actions(1))
    game._phase = Phase.DEALING
    _crazy_hand(game, 13)  # crazy: the 9S holder bids nine
    holder = next(s for s in range(4) if game.hand(s) >> C("9S") & 1)
    bids = {s: 9 if s == holder else 0 for s in range(4)}
    bid_all(game, bids)
    assert game.phase is Phase.PLAYING


def test_the_pressure_is_on_forces_a_trump_when_void() -> None:
    game = spades(play_rule="pressure")
    game.deal_fixed(fill_deal(game.ruleset, {1: "AC", 2: "2S 3S 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH"}))
    bid_all(game, {1: 3, 2: 3, 3: 3, 0: 3})
    game.apply(PlayCard(1, C("AC")))
    assert game.legal_play_mask(2) == cards("2S 3S")
    with pytest.raises(IllegalAction) as info:
        game.apply(PlayCard(2, C("2H")))
    assert info.value.code == "must_trump"


def test_nothing_but_spades() -> None:
    game = spades(play_rule="nothing_but_spades")
    game.deal_fixed(fill_deal(game.ruleset, {1: "AC", 2: "2S 3S 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH"}))
    bid_all(game, {1: 3, 2: 3, 3: 3, 0: 3})
    game.apply(PlayCard(1, C("AC")))
    assert game.legal_play_mask(2) == game.hand(2) & ~cards("2S 3S")
    with pytest.raises(IllegalAction) as info:
        game.apply(PlayCard(2, C("2S")))
    assert info.value.code == "no_spades_yet"


def test_crazy_game_ends_after_fifteen_hands() -> None:
    rng = random.Random(15)
    game = spades("crazy")
    for _ in range(15):
        game.deal(rng.randbytes(8))
        while game.phase is not Phase.DEALING and not game.is_over:
            seat = game.to_act()[0]
            game.apply(rng.choice(game.legal_actions(seat)))
    assert game.is_over and game.hand_number == 15
    assert game.outcome is not None and game.outcome.reason in ("hands", "draw")


# -- TRAM -----------------------------------------------------------------------------------------------
def _tram(penalty: str, fixed: dict[int, str]) -> SpadesGame:
    game = spades(tram=True, tram_penalty=penalty)
    game.deal_fixed(fill_deal(game.ruleset, fixed))
    bid_all(game, {1: 3, 2: 3, 3: 3, 0: 3})
    return game


def test_a_sound_claim_takes_every_remaining_trick() -> None:
    game = _tram("forfeit_tricks", {1: "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S"})
    assert Claim(1) in game.legal_actions(1)
    events = game.apply(Claim(1))
    claim = events[0]
    assert isinstance(claim, ClaimMade) and claim.held
    assert game.phase is Phase.DEALING
    assert game.histories[-1].tricks == (0, 13, 0, 0) and game.histories[-1].claim == (1, True)


def test_a_claim_with_a_losing_card_fails_and_forfeits_the_rest() -> None:
    # Seat 1 holds the top spades but also a low heart that an opponent can win.
    game = _tram("forfeit_tricks", {1: "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2H", 2: "AH"})
    events = game.apply(Claim(1))
    assert isinstance(events[0], ClaimMade) and not events[0].held
    history = game.histories[-1]
    assert history.tricks[1] + history.tricks[3] == 0


def test_a_failed_claim_can_expose_the_hand_instead() -> None:
    game = _tram("exposed", {1: "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2H", 2: "AH"})
    game.apply(Claim(1))
    assert game.phase is Phase.PLAYING
    assert game.spectator_view().exposed[1] == game.hand(1)
    with pytest.raises(IllegalAction):
        game.apply(Claim(1))


def test_a_failed_claim_can_forfeit_the_bid() -> None:
    game = _tram("forfeit_bid", {1: "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2H", 2: "AH"})
    game.apply(Claim(1))
    while game.phase is Phase.PLAYING:
        game.apply(game.legal_actions(game.to_act()[0])[0])
    assert game.histories[-1].score_delta[1] < 0


def test_claims_are_refused_when_not_enabled_or_mid_trick() -> None:
    game = spades()
    game.deal(b"c")
    bid_all(game, {1: 3, 2: 3, 3: 3, 0: 3})
    with pytest.raises(IllegalAction) as info:
        game.apply(Claim(1))
    assert info.value.code == "no_claims"


def _naive_holds(game: SpadesGame, claimer: int, side: int) -> bool:
    """Every play of the others, every choice of the claimer: no equivalence, no memo, no shortcut."""
    if game.phase is not Phase.PLAYING:
        return True
    seat = game.turn
    results = []
    for card in cards_in(game.legal_play_mask(seat)):
        child = game.copy()
        done = child.tricks_done
        child.play_fast(card)
        ok = True
        if child.tricks_done > done:
            ok = child.side_of(child.last_trick_winner) == side
        results.append(ok and _naive_holds(child, claimer, side))
    return any(results) if seat == claimer else all(results)


@pytest.mark.parametrize("seed", range(12))
def test_claim_search_agrees_with_a_naive_search_late_in_the_hand(seed: int) -> None:
    from engine.claims import claim_holds

    rng = random.Random(seed)
    game = spades(tram=True)
    game.deal(rng.randbytes(8))
    bid_all(game, {1: 3, 2: 3, 3: 3, 0: 3})
    while game.tricks_done < 9 + seed % 2 or game.trick:  # three or four tricks left
        game.play_fast(rng.choice(cards_in(game.legal_play_mask(game.turn))))
    claimer = game.turn
    assert claim_holds(game, claimer) == _naive_holds(game, claimer, game.side_of(claimer))
