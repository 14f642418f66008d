"""HeartsGame: every rule and option of docs/rules-hearts.md, through the Game interface: building
and dealing, passing and play (scoring and the end of the game: test_hearts_scoring.py; histories,
views and copies: test_hearts_game.py)."""

import random

import pytest

from engine.actions import Bid, PassCards, PlayCard
from engine.cards import card_text, cards_in, iter_cards, mask_of
from engine.deal import commitment, shuffled
from engine.errors import IllegalAction, RulesetError
from engine.events import CardsGiven, CardsPassed, HandDealt, SpadesBroken, TrickWon
from engine.game import Phase
from engine.hearts import HeartsGame
from engine.ruleset import Ruleset
from tests.engine.hearts_helpers import (
    MOON_DEAL,
    c,
    canonical,
    hearts,
    lowest,
    m,
    no_pass_game,
    play_out_hand,
    refuse,
)

# -- construction and dealing ------------------------------------------------------------------------


def test_new_game_builds_a_hearts_game_waiting_for_the_deal() -> None:
    game = hearts()
    assert game.phase is Phase.DEALING
    assert game.to_act() == ()
    assert game.players == 4
    assert game.hand_number == 0
    assert game.scores == (0, 0, 0, 0)
    assert not game.is_over
    assert game.outcome is None
    assert game.legal_actions(0) == []


def test_a_spades_ruleset_or_a_bad_dealer_is_refused() -> None:
    with pytest.raises(RulesetError) as info:
        HeartsGame(Ruleset.from_preset("standard"))
    assert info.value.option == "game"
    with pytest.raises(RulesetError) as info:
        HeartsGame(Ruleset.from_preset("hearts"), dealer=4)
    assert info.value.option == "dealer"


def test_deal_is_seeded_single_cards_clockwise_from_the_dealers_left() -> None:
    game = HeartsGame(Ruleset.from_preset("hearts"), dealer=2)
    events = game.deal(b"seed-1")
    order = shuffled(b"seed-1", range(52))
    hands = [game.hand(seat) for seat in range(4)]
    for index, card in enumerate(order):
        assert hands[(2 + 1 + index) % 4] >> card & 1
    assert all(hand.bit_count() == 13 for hand in hands)
    assert sum(hands) == (1 << 52) - 1
    dealt = events[0]
    assert isinstance(dealt, HandDealt)
    assert dealt.commitment == commitment(b"seed-1")
    assert dealt.dealer == 2
    # Each seat is told its own cards only.
    for seat in range(4):
        told = dealt.for_seat(seat)
        assert told is not None
        assert told["cards"] == [card_text(card) for card in iter_cards(hands[seat])]
        assert "hands" not in told
    spectator = dealt.for_seat(None)
    assert spectator is not None
    assert spectator["cards"] is None
    again = HeartsGame(Ruleset.from_preset("hearts"), dealer=2)
    again.deal(b"seed-1")
    assert [again.hand(seat) for seat in range(4)] == hands


def test_deal_outside_the_dealing_phase_is_refused() -> None:
    game = hearts()
    game.deal(b"x")
    before = canonical(game)
    with pytest.raises(IllegalAction) as info:
        game.deal(b"y")
    assert info.value.code == "wrong_phase"
    assert canonical(game) == before


def test_a_seed_must_be_non_empty_bytes() -> None:
    game = hearts()
    for bad in (b"", "text", 5):
        with pytest.raises(IllegalAction) as info:
            game.deal(bad)  # type: ignore[arg-type]
        assert info.value.code == "bad_seed"
    assert game.phase is Phase.DEALING
    assert game.version == 0


def test_deal_cards_checks_the_hands() -> None:
    game = hearts()
    with pytest.raises(ValueError):
        game.deal_cards(MOON_DEAL[:3])
    with pytest.raises(ValueError):
        game.deal_cards([MOON_DEAL[0], MOON_DEAL[0], MOON_DEAL[2], MOON_DEAL[3]])
    assert game.phase is Phase.DEALING
    game.deal_cards(MOON_DEAL)
    assert game.phase.value == "passing"


# -- passing -------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hand_index", "direction", "offset"),
    [(0, "left", 1), (1, "right", 3), (2, "across", 2), (3, "none", 0), (4, "left", 1)],
)
def test_pass_direction_follows_the_cycle(hand_index: int, direction: str, offset: int) -> None:
    game = hearts(target_score=10_000)
    rng = random.Random(hand_index)
    for number in range(hand_index):
        game.deal(b"hand %d" % number)
        play_out_hand(game, rng)
    assert game.dealer == hand_index % 4
    game.deal(b"the hand")
    assert game.pass_direction == direction
    assert game.spectator_view().pass_direction == direction
    if direction == "none":
        assert game.phase is Phase.PLAYING
        leader = next(seat for seat in range(4) if game.hand(seat) & 1)
        assert game.to_act() == (leader,)
        return
    assert game.phase is Phase.PASSING
    dealt = [game.hand(seat) for seat in range(4)]
    passes = [lowest(dealt[seat], 3) for seat in range(4)]
    for seat in range(4):
        events = game.apply(PassCards(seat, passes[seat]))
        assert events[0] == CardsGiven(seat, (seat + offset) % 4, passes[seat])
    for seat in range(4):
        source = (seat - offset) % 4
        expected = (dealt[seat] & ~mask_of(passes[seat])) | mask_of(passes[source])
        assert game.hand(seat) == expected
        assert game.view(seat).received == tuple(sorted(passes[source]))


def test_passing_is_simultaneous_and_received_cards_show_only_after_everyone_passed() -> None:
    game = hearts()
    game.deal(b"pass")
    assert game.to_act() == (0, 1, 2, 3)
    dealt = [game.hand(seat) for seat in range(4)]
    order = [2, 0, 3, 1]
    for count, seat in enumerate(order):
        cards = lowest(dealt[seat], 3)
        events = game.apply(PassCards(seat, cards))
        view = game.view(seat)
        assert view.given == cards
        if count < 3:
            assert game.to_act() == tuple(s for s in range(4) if s not in order[: count + 1])
            assert len(events) == 1
            assert view.received == ()
            assert view.hand == dealt[seat] & ~mask_of(cards)
            assert game.phase is Phase.PASSING
            # The receiver is told only how many cards are coming, other seats too.
            for other in range(4):
                told = events[0].for_seat(other)
                assert told is not None
                assert ("cards" in told) == (other == seat)
            for other in range(4):
                assert game.view(other).received == ()
    assert game.phase is Phase.PLAYING
    passed = [e for e in events if isinstance(e, CardsPassed)]
    assert len(passed) == 4
    for event in passed:
        for seat in range(4):
            told = event.for_seat(seat)
            assert told is not None
            assert ("cards" in told) == (seat in (event.giver, event.receiver))
    for seat in range(4):
        assert len(game.view(seat).received) == 3


def test_pass_validation() -> None:
    game = hearts()
    game.deal(b"validate")
    hand = cards_in(game.hand(0))
    other = cards_in(game.hand(1))
    assert "exactly 3" in refuse(game, PassCards(0, tuple(hand[:2])), "wrong_pass_count")
    refuse(game, PassCards(0, tuple(hand[:4])), "wrong_pass_count")
    refuse(game, PassCards(0, (hand[0], hand[0], hand[1])), "wrong_pass_count")
    message = refuse(game, PassCards(0, (hand[0], hand[1], other[0])), "card_not_in_hand")
    assert card_text(other[0]) in message
    refuse(game, PassCards(0, (hand[0], hand[1], 99)), "card_not_in_hand")
    refuse(game, PassCards(7, tuple(hand[:3])), "bad_seat")
    refuse(game, PlayCard(0, hand[0]), "wrong_phase")
    refuse(game, Bid(0, 3), "wrong_phase")
    game.apply(PassCards(0, tuple(hand[:3])))
    refuse(game, PassCards(0, tuple(hand[3:6])), "already_passed")


def test_pass_count_option() -> None:
    game = hearts(hearts_pass_count=1)
    game.deal(b"one")
    legal = game.legal_actions(0)
    assert len(legal) == 13
    assert all(isinstance(a, PassCards) and len(a.cards) == 1 for a in legal)
    three = hearts()
    three.deal(b"one")
    assert len(three.legal_actions(0)) == 286  # 13 choose 3


def test_a_play_during_passing_and_a_pass_during_play_are_refused() -> None:
    game = no_pass_game(MOON_DEAL)
    assert game.phase is Phase.PLAYING
    refuse(game, PassCards(1, (c("2C"), c("2H"), c("3H"))), "wrong_phase")


# -- play ---------------------------------------------------------------------------------------------


def test_the_two_of_clubs_leads_the_first_trick() -> None:
    game = no_pass_game(MOON_DEAL)
    assert game.to_act() == (1,)
    assert game.legal_actions(1) == [PlayCard(1, c("2C"))]
    assert "two of clubs" in refuse(game, PlayCard(1, c("KH")), "must_lead_two_of_clubs")
    assert "seat 1" in refuse(game, PlayCard(0, c("AC")), "not_your_turn")
    refuse(game, PlayCard(1, c("AC")), "card_not_in_hand")
    refuse(game, PlayCard(5, c("AC")), "bad_seat")


def test_two_of_clubs_holder_leads_after_the_pass() -> None:
    game = hearts()
    game.deal(b"lead")
    for seat in range(4):
        hand = game.hand(seat)
        game.apply(PassCards(seat, lowest(hand, 3)))
    leader = next(seat for seat in range(4) if game.hand(seat) & 1)
    assert game.to_act() == (leader,)


def test_must_follow_suit() -> None:
    hands = [
        m("2C 3C 4C 5C 6C 7C 8C 9C TC 2D 3D 4D 5D"),
        m("JC QC KC AC 6D 7D 8D 9D TD JD QD KD AD"),
        m("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"),
        m("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"),
    ]
    game = no_pass_game(hands)
    game.apply(PlayCard(0, c("2C")))
    assert game.legal_play_mask(1) == m("JC QC KC AC")
    message = refuse(game, PlayCard(1, c("AD")), "must_follow_suit")
    assert message == "must follow suit: you hold clubs"


def test_trick_goes_to_the_highest_card_of_the_suit_led_and_its_winner_leads() -> None:
    hands = [
        m("2C 3C 4C 5C 6C 7C 8C 9C TC 2D 3D 4D 5D"),
        m("JC QC KC AC 6D 7D 8D 9D TD JD QD KD AD"),
        m("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"),
        m("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"),
    ]
    game = no_pass_game(hands, hearts_no_points_first_trick=False)
    events = []
    for seat, card in [(0, "2C"), (1, "JC"), (2, "AH"), (3, "AS")]:
        events += game.apply(PlayCard(seat, c(card)))
    won = [e for e in events if isinstance(e, TrickWon)]
    assert len(won) == 1
    assert won[0].seat == 1  # the ace of spades is no trump
    assert won[0].plays == ((0, c("2C")), (1, c("JC")), (2, c("AH")), (3, c("AS")))
    assert game.to_act() == (1,)
    view = game.spectator_view()
    assert view.last_winner == 1
    assert view.trick == ()
    assert view.trick_number == 2
    assert view.tricks == (0, 1, 0, 0)
    assert view.points == (0, 1, 0, 0)


def test_no_points_on_the_first_trick() -> None:
    hands = [
        m("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"),
        m("2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD QS"),
        m("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"),
        m("AD 2S 3S 4S 5S 6S 7S 8S 9S TS JS KS AS"),
    ]
    game = no_pass_game(hands)
    game.apply(PlayCard(0, c("2C")))
    assert game.legal_play_mask(1) == hands[1] & ~m("QS")
    message = refuse(game, PlayCard(1, c("QS")), "no_points_first_trick")
    assert message.startswith("no points on the first trick")
    game.apply(PlayCard(1, c("2D")))
    # Seat 2 holds nothing but hearts: any of them may go.
    assert game.legal_play_mask(2) == hands[2]
    game.apply(PlayCard(2, c("AH")))

    free = no_pass_game(hands, hearts_no_points_first_trick=False)
    free.apply(PlayCard(0, c("2C")))
    assert free.legal_play_mask(1) == hands[1]
    free.apply(PlayCard(1, c("QS")))


def test_hearts_must_be_broken_before_being_led() -> None:
    hands = [
        m("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"),
        m("2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD 2H"),
        m("3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH AD"),
        m("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"),
    ]
    game = no_pass_game(hands)
    for seat, card in [(0, "2C"), (1, "2D"), (2, "AD"), (3, "2S")]:
        game.apply(PlayCard(seat, c(card)))
    # Seat 0 won with the only club; it leads clubs, the others discard.
    assert game.to_act() == (0,)
    events = game.apply(PlayCard(0, c("3C")))
    events += game.apply(PlayCard(1, c("3D")))
    assert not game.hearts_broken
    # Seat 2 has only hearts left: it discards one, which breaks hearts.
    events += game.apply(PlayCard(2, c("3H")))
    assert game.hearts_broken
    assert [e for e in events if isinstance(e, SpadesBroken)] == [SpadesBroken(2)]
    assert game.spectator_view().broken


def test_hearts_lead_refused_then_allowed_when_only_hearts_left() -> None:
    # Seat 0 wins trick 1 with the AC and then holds only hearts and clubs.
    hands = [
        m("AC 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"),
        m("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AH"),
        m("2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD"),
        m("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"),
    ]
    game = no_pass_game(hands)
    for seat, card in [(1, "2C"), (2, "2D"), (3, "2S"), (0, "AC")]:
        game.apply(PlayCard(seat, c(card)))
    assert game.to_act() == (0,)
    assert not game.hearts_broken
    # Seat 0 holds only hearts now: it may lead one although hearts are not broken.
    assert game.legal_play_mask(0) == hands[0] & ~m("AC")
    game.apply(PlayCard(0, c("2H")))
    assert game.hearts_broken


def test_hearts_not_broken_message_and_the_option_off() -> None:
    hands = [
        m("AC 2H 3H 4H 5H 6H 7H 8H 9H TH JH 2D 3D"),
        m("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AH"),
        m("QH KH 4D 5D 6D 7D 8D 9D TD JD QD KD AD"),
        m("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"),
    ]
    game = no_pass_game(hands)
    for seat, card in [(1, "2C"), (2, "4D"), (3, "2S"), (0, "AC")]:
        game.apply(PlayCard(seat, c(card)))
    assert game.legal_play_mask(0) == m("2D 3D")
    message = refuse(game, PlayCard(0, c("2H")), "hearts_not_broken")
    assert message.startswith("hearts are not broken")

    free = no_pass_game(hands, hearts_must_break=False)
    for seat, card in [(1, "2C"), (2, "4D"), (3, "2S"), (0, "AC")]:
        free.apply(PlayCard(seat, c(card)))
    assert free.legal_play_mask(0) == hands[0] & ~m("AC")
    free.apply(PlayCard(0, c("2H")))


@pytest.mark.parametrize("queen_breaks", [False, True])
def test_queen_of_spades_breaks_hearts_only_with_the_option(queen_breaks: bool) -> None:
    hands = [
        m("AC 2D 3D 4D 5D 6D 7D 8D 9D TD JD 2H 3H"),
        m("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AH"),
        m("QH KH 4H 5H 6H 7H 8H 9H TH JH QD KD AD"),
        m("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"),
    ]
    game = no_pass_game(hands, hearts_queen_breaks=queen_breaks)
    for seat, card in [(1, "2C"), (2, "QD"), (3, "2S"), (0, "AC")]:
        game.apply(PlayCard(seat, c(card)))
    # Seat 0 leads a diamond; seats 1 and 3 are void in diamonds, and seat 3 discards the queen.
    game.apply(PlayCard(0, c("2D")))
    game.apply(PlayCard(1, c("3C")))
    game.apply(PlayCard(2, c("KD")))
    events = game.apply(PlayCard(3, c("QS")))
    assert game.hearts_broken == queen_breaks
    assert any(isinstance(e, SpadesBroken) for e in events) == queen_breaks
