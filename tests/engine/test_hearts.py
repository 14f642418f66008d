"""HeartsGame: every rule and option of docs/rules-hearts.md, through the Game interface."""

import random
from collections.abc import Sequence
from typing import Any

import pytest

from engine.actions import Bid, PassCards, PlayCard
from engine.cards import (
    card_text,
    cards_in,
    iter_cards,
    mask_of,
    parse_card,
)
from engine.deal import commitment, shuffled
from engine.errors import IllegalAction, RulesetError
from engine.events import (
    CardsGiven,
    CardsPassed,
    GameOver,
    HandDealt,
    HandScored,
    SpadesBroken,
    TrickWon,
)
from engine.game import Game, Phase, new_game
from engine.hearts import HeartsGame
from engine.hearts_rules import POINT_CARDS, penalty_points
from engine.ruleset import Ruleset


def hearts(**options: Any) -> HeartsGame:
    # The house rules (all three on) with seat 0 dealing first: what these examples were written for.
    game = new_game(Ruleset.from_preset("hearts-house", **options), dealer=0)
    assert isinstance(game, HeartsGame)
    return game


def m(texts: str) -> int:
    return mask_of(parse_card(text) for text in texts.split())


def c(text: str) -> int:
    return parse_card(text)


def cs(texts: str) -> list[int]:
    """Cards in the order written."""
    return [parse_card(text) for text in texts.split()]


def canonical(game: HeartsGame) -> Any:
    """Everything observable about a game, to compare before and after a refused action."""
    return (
        game.version,
        game.phase,
        game.to_act(),
        game.scores,
        game.histories,
        game.spectator_view().to_dict(),
        [game.view(seat).to_dict() for seat in range(game.players)],
        [game.hand(seat) for seat in range(game.players)],
    )


def refuse(game: HeartsGame, action: Any, code: str) -> str:
    """Apply an action that must be refused with `code`; check nothing changed; return the message."""
    before = canonical(game)
    with pytest.raises(IllegalAction) as info:
        game.apply(action)
    assert info.value.code == code
    assert canonical(game) == before
    return info.value.message


def play_out_hand(game: HeartsGame, rng: random.Random) -> None:
    """Random legal actions until the hand is scored."""
    hand = game.hand_number
    for _ in range(200):
        if game.phase in (Phase.DEALING, Phase.GAME_OVER) and game.hand_number == hand:
            return
        seat = rng.choice(game.to_act())
        game.apply(rng.choice(game.legal_actions(seat)))
    raise AssertionError("a hand took more than 200 actions")


# A deal where seat 0 can take every trick: 12 clubs and the queen, seat 1 the 2C and 12 hearts.
MOON_DEAL = [
    m("3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC QS"),
    m("2C 2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH"),
    m("AH 2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD"),
    m("AD 2S 3S 4S 5S 6S 7S 8S 9S TS JS KS AS"),
]
# Cards each seat plays first whenever they are legal; otherwise seat 0 plays its highest card and the
# others their lowest. This gives seat 0 all 26 points.
MOON_PREFERENCES = {
    0: cs("AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C QS"),
    2: [c("AH")],
    3: [c("AS"), c("KS")],
}


def scripted_play(game: HeartsGame, preferences: dict[int, list[int]]) -> list[Any]:
    events: list[Any] = []
    for _ in range(52):
        seat = game.to_act()[0]
        legal = game.legal_play_mask(seat)
        choice = next((card for card in preferences.get(seat, []) if legal >> card & 1), None)
        if choice is None:
            cards = cards_in(legal)
            choice = cards[-1] if seat == 0 else cards[0]
        events.extend(game.apply(PlayCard(seat, choice)))
    return events


def no_pass_game(hands: Sequence[int], **options: Any) -> HeartsGame:
    game = hearts(hearts_pass_cycle=["none"], **options)
    game.deal_cards(hands)
    return game


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


def lowest(hand: int, count: int) -> tuple[int, ...]:
    return tuple(cards_in(hand)[:count])


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


# -- scoring ------------------------------------------------------------------------------------------


def test_points_are_one_a_heart_and_thirteen_for_the_queen() -> None:
    rng = random.Random(7)
    game = hearts(target_score=10_000)
    for number in range(6):
        game.deal(b"points %d" % number)
        play_out_hand(game, rng)
    for history in game.histories:
        taken = [0, 0, 0, 0]
        for trick in range(13):
            cards = history.plays[4 * trick : 4 * trick + 4]
            taken[history.trick_winners[trick]] |= mask_of(card for _, card in cards)
        points = [penalty_points(mask, False) for mask in taken]
        shot = any(mask & POINT_CARDS == POINT_CARDS for mask in taken)
        if not shot:
            assert list(history.score_delta) == points
            assert sum(points) == 26
        assert history.tricks == tuple(history.trick_winners.count(s) for s in range(4))


@pytest.mark.parametrize(
    ("moon", "jack", "delta"),
    [
        ("off", False, (26, 0, 0, 0)),
        ("add_to_others", False, (0, 26, 26, 26)),
        ("subtract_self", False, (-26, 0, 0, 0)),
        ("add_to_others", True, (-10, 26, 26, 26)),
        ("subtract_self", True, (-36, 0, 0, 0)),
        ("off", True, (16, 0, 0, 0)),
    ],
)
def test_shooting_the_moon(moon: str, jack: bool, delta: tuple[int, ...]) -> None:
    game = no_pass_game(MOON_DEAL, hearts_moon=moon, hearts_jack_of_diamonds=jack)
    events = scripted_play(game, MOON_PREFERENCES)
    scored = [e for e in events if isinstance(e, HandScored)]
    assert len(scored) == 1
    assert scored[0].delta == delta
    assert game.scores == delta
    assert scored[0].tricks == (13, 0, 0, 0)
    assert ("shot the moon" in " ".join(scored[0].notes)) == (moon != "off")
    history = game.histories[0]
    assert history.score_delta == delta
    assert history.score_after == delta


def test_the_jack_of_diamonds_counts_minus_ten_for_whoever_takes_it() -> None:
    hands = [
        m("2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC"),
        m("2D 3D 4D 5D 6D 7D 8D 9D TD JD QD KD AD"),
        m("2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AH"),
        m("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"),
    ]
    game = no_pass_game(hands, hearts_jack_of_diamonds=True)
    # Seat 0 leads clubs 13 times and takes everything, the jack included: a moon with the jack.
    events = scripted_play(game, {0: cs("2C AC KC QC JC TC 9C 8C")})
    scored = next(e for e in events if isinstance(e, HandScored))
    assert scored.delta == (-10, 26, 26, 26)


# -- the end of the game ------------------------------------------------------------------------------


def test_game_ends_when_someone_reaches_the_target_and_the_lowest_wins() -> None:
    game = no_pass_game(MOON_DEAL, hearts_moon="add_to_others", target_score=26)
    events = scripted_play(game, MOON_PREFERENCES)
    assert game.is_over
    assert game.phase is Phase.GAME_OVER
    assert game.outcome is not None
    assert game.outcome.winners == (0,)
    assert game.outcome.reason == "target"
    assert game.outcome.scores == (0, 26, 26, 26)
    assert events[-1] == GameOver(winners=(0,), scores=(0, 26, 26, 26), reason="target")
    assert game.to_act() == ()
    refuse(game, PlayCard(0, c("2C")), "game_over")
    with pytest.raises(IllegalAction):
        game.deal(b"more")
    assert game.spectator_view().winners == (0,)


def test_below_the_target_the_next_hand_is_dealt_by_the_next_seat() -> None:
    game = no_pass_game(MOON_DEAL, hearts_moon="add_to_others", target_score=27)
    scripted_play(game, MOON_PREFERENCES)
    assert not game.is_over
    assert game.phase is Phase.DEALING
    assert game.dealer == 1
    game.deal(b"next")
    assert game.hand_number == 2


def test_a_tie_for_the_lowest_score_is_a_shared_win() -> None:
    game = no_pass_game(MOON_DEAL, hearts_moon="off", target_score=26)
    scripted_play(game, MOON_PREFERENCES)
    assert game.outcome is not None
    assert game.outcome.winners == (1, 2, 3)


def test_max_hands_ends_the_game() -> None:
    game = hearts(target_score=0, max_hands=2)
    rng = random.Random(2)
    for number in range(2):
        game.deal(b"h%d" % number)
        play_out_hand(game, rng)
    assert game.is_over
    assert game.outcome is not None
    assert game.outcome.reason == "hands"


def test_a_whole_game_to_100_finishes_and_records_every_hand() -> None:
    game = hearts()
    rng = random.Random(11)
    for number in range(60):
        if game.is_over:
            break
        game.deal(b"game %d" % number)
        play_out_hand(game, rng)
    assert game.is_over
    assert max(game.scores) >= 100
    assert len(game.histories) == game.hand_number
    assert game.outcome is not None
    assert min(game.scores) == game.scores[game.outcome.winners[0]]


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
