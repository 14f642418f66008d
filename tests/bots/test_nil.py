"""Nil as explicit cases: covering a partner's nil, playing one's own, and defending against (setting)
an opponent's. The search bot's own seat plays `nil_play` in its playouts (which hands the cover and
one's own nil to the heuristic's rules, `spades_policy`); each case here names the card the rule says,
in a position built card by card, and the search bot itself is checked on the two that decide most."""

import random

import pytest

from bots.samples import nil_play, spades_policy
from bots.samples.reading import legal_for
from bots.samples.search import SearchBot
from bots.samples.situation import Situation
from bots.samples.world import apply_bid, finish_bidding_and_play, sample_hands
from bots.sdk.view import BotView
from engine.actions import Bid, PlayCard
from engine.cards import CardMask, parse_card
from engine.ruleset import Ruleset
from engine.spades import SpadesGame

RULESET = Ruleset.from_preset("standard", target_score=0, max_hands=1)
ORDER = SpadesGame(RULESET, dealer=3).ruleset_order


def mask(text: str) -> CardMask:
    out = 0
    for card in text.split():
        out |= 1 << parse_card(card)
    return out


def situation(
    seat: int,
    hand: str,
    trick: list[tuple[int, str]],
    bids: tuple[int, int, int, int],
    *,
    tricks: tuple[int, int, int, int] = (0, 0, 0, 0),
    played: str = "",
    voids: tuple[int, int, int, int] = (0, 0, 0, 0),
) -> Situation:
    """Seat `seat` to play `hand` into `trick` ((seat, card) so far), with these bids (0 is nil)."""
    cards = mask(hand)
    plays = tuple((s, parse_card(c)) for s, c in trick)
    return Situation(
        ruleset=RULESET,
        order=ORDER,
        seat=seat,
        players=4,
        hand=cards,
        legal=legal_for(RULESET.play_rule, ORDER, cards, plays, broken=False),
        trick=plays,
        bids=tuple(Bid(s, n) for s, n in enumerate(bids)),
        tricks=tricks,
        played=mask(played) | mask(" ".join(c for _, c in trick)),
        bags=0,
        voids=voids,
    )


def card(text: str) -> int:
    return parse_card(text)


# --- Cover: my partner (seat 2) bid nil and has taken no trick.


def test_cover_wins_high_when_the_nil_plays_after_me() -> None:
    # Seat 3 led; my partner plays third: win as high as I can so the nil can stay under.
    s = situation(0, "KD 4D 7C", [(3, "9D")], (3, 3, 0, 4))
    assert nil_play.choose_play(s) == card("KD")


def test_cover_overtakes_a_nil_that_is_winning() -> None:
    # My nil partner is winning the trick with the 9D; I play last: take it with the cheapest card
    # that wins, not the ace.
    s = situation(0, "AD JD 2D 7C", [(1, "5D"), (2, "9D"), (3, "6D")], (3, 3, 0, 4))
    assert nil_play.choose_play(s) == card("JD")


def test_cover_ruffs_a_nil_that_is_winning() -> None:
    # Void in the suit, partner's nil winning: ruff with the cheapest spade that wins.
    s = situation(
        0, "KS 3S 7C 4H", [(1, "5D"), (2, "9D"), (3, "6D")], (3, 3, 0, 4), voids=(0b0010, 0, 0, 0)
    )
    assert nil_play.choose_play(s) == card("3S")


def test_cover_lets_a_safe_trick_go_when_an_opponent_is_winning() -> None:
    # An opponent is winning above the nil: my partner is safe this trick, so I play as a bidder
    # would (here: the cheapest card that wins, as I play last).
    s = situation(0, "QD 4D 7C", [(1, "5D"), (2, "3D"), (3, "JD")], (3, 3, 0, 4))
    assert nil_play.choose_play(s) == card("QD")


def test_cover_leads_a_winner_the_opponents_cannot_ruff() -> None:
    s = situation(0, "AH 5H 4D 3C", [], (3, 3, 0, 4), played="2H 3H 4H 6H")
    assert nil_play.choose_play(s) == card("AH")


# --- My own nil comes first: stay under the winner.


def test_my_own_nil_stays_under_even_with_an_opponent_nil_to_set() -> None:
    s = situation(0, "KD 8D 4D", [(3, "9D")], (0, 0, 4, 4))
    assert nil_play.choose_play(s) == card("8D")


# --- Defence: an opponent (seat 1) bid nil and has taken no trick; set it.


def test_defence_leads_low_in_a_suit_the_nil_bidder_still_holds() -> None:
    # Not the boss ace of hearts the heuristic would cash: a low club, my shortest side suit that
    # the nil bidder is not void in (it showed out of diamonds).
    s = situation(
        0, "AH KH 5H 8D 2D 3C 4C", [], (4, 0, 4, 3), voids=(0, 0b0010, 0, 0), played="2H 3H"
    )
    assert spades_policy.choose_play(s) == card("AH")
    assert nil_play.choose_play(s) == card("3C")


def test_defence_plays_low_with_the_nil_bidder_still_to_play() -> None:
    # Second hand with the nil bidder after me: my lowest, leaving it the trick to win; the
    # heuristic would take the sure trick with the ace.
    s = situation(0, "AD 4D 7C", [(3, "9D")], (4, 0, 4, 3))
    assert spades_policy.choose_play(s) == card("AD")
    assert nil_play.choose_play(s) == card("4D")


def test_defence_leaves_the_nil_bidder_winning() -> None:
    # The nil bidder is winning with the 7D: my highest card that loses, keeping the low ones.
    s = situation(0, "9D 6D 4D", [(1, "7D"), (2, "3D"), (3, "2D")], (4, 0, 4, 3))
    assert nil_play.choose_play(s) == card("6D")


def test_a_nil_that_is_already_set_is_played_as_the_heuristic() -> None:
    s = situation(0, "AD 4D 7C", [(3, "9D")], (4, 0, 4, 3), tricks=(0, 1, 0, 0))
    assert nil_play.choose_play(s) == spades_policy.choose_play(s)


# --- The search bot itself.


def _deal(texts: list[str]) -> list[CardMask]:
    return [mask(text) for text in texts]


NIL_DEAL = _deal(
    [
        "AS KS QS AH KH QH AD KD 6D AC 8C 7C 9S",
        "2S 3S 2H 3H 4H 5H 2D 3D 4D 5D 2C 3C 4C",
        "JS 8S 7S JH TH 9H 8H JD TD 9D JC TC 9C",
        "TS 6S 5S 4S 6H 7H QD 8D 7D KC QC 6C 5C",
    ]
)


def _view_after(
    bids: list[int],
    plays: list[str],
    seat: int,
    dealer: int = 3,
    deal: list[CardMask] | None = None,
) -> BotView:
    """Seat `seat`'s view of a deal (NIL_DEAL) after these bids (by seat) and plays (in order)."""
    game = SpadesGame(RULESET, dealer=dealer)
    game.deal_fixed(deal or NIL_DEAL)
    for step in range(4):
        bidder = (dealer + 1 + step) % 4
        apply_bid(game, Bid(bidder, bids[bidder]))
    for text in plays:
        game.apply(PlayCard(game.to_act()[0], parse_card(text)))
    return BotView.from_seat_view(game.view(seat), RULESET)


# Seat 1 holds middling cards for a nil; seat 0 the aces.
DEFENCE_DEAL = _deal(
    [
        "AD 7D 4D AS KS QS AH KH QH AC KC QC 2S",
        "8D 9D 5H 6H 7H 5C 6C 7C 3S 4S 2H 3H 4H",
        "2D JD TD JS TS 9S JH TH 9H JC TC 9C 8H",
        "3D 5D 6D KD QD 8S 7S 6S 5S 8C 4C 3C 2C",
    ]
)


def test_search_leaves_an_opponents_nil_winning_the_trick() -> None:
    # Seat 1 bid nil and led the 8D, which is winning; I play last holding the AD: a card that
    # loses sets the nil (+100 for us in effect), the ace only takes a trick.
    view = _view_after([5, 0, 3, 3], ["8D", "2D", "3D"], 0, dealer=0, deal=DEFENCE_DEAL)
    bot = SearchBot(seed=4, worlds=40)
    play = bot.decide(view)
    assert isinstance(play, PlayCard)
    assert play.card in (card("7D"), card("4D"))


def test_search_covers_its_partners_nil() -> None:
    # Seat 2 bid nil; seat 1 led the 2D, my partner's JD is winning, seat 3 played the 8D. I take
    # the trick (KD, or the AD: both win it) rather than leave my partner's nil set.
    view = _view_after([3, 4, 0, 3], ["2D", "JD", "8D"], 0, dealer=0)
    assert len(view.trick) == 3
    bot = SearchBot(seed=5, worlds=40)
    play = bot.decide(view)
    assert isinstance(play, PlayCard)
    assert play.card in (card("KD"), card("AD"))


def test_nil_attack_in_the_playouts_sets_more_nils() -> None:
    # Over the same worlds and bids, my seat's playouts with `nil_play` set an opponent's nil more
    # often than the heuristic's: the search then plans with the attack it will make.
    rng = random.Random(11)
    view = _view_after([6, 0, 3, 3], [], 0)
    set_with, set_without = 0, 0
    for _ in range(60):
        hands = sample_hands(view, rng)
        assert hands is not None
        for me, tally in ((0, True), (None, False)):
            game = SpadesGame(RULESET, dealer=3)
            game.deal_fixed(hands)
            for s, n in enumerate([6, 0, 3, 3]):
                apply_bid(game, Bid(s, n))
            finish_bidding_and_play(game, me=me)
            if game.tricks[1] > 0:
                if tally:
                    set_with += 1
                else:
                    set_without += 1
    assert set_with > set_without


def test_a_wider_set_margin_goes_on_for_a_set_a_trick_longer() -> None:
    # Our 1 + 1 are made; the opponents bid 4 + 4 and have 7 with 4 tricks left, so they need 1.
    # The heuristic's set margin (3) gives up on the set and ducks (the 4D), and so does my seat's
    # play by default; with a margin of 4 (the search's `set_margin=4`) it still takes the trick
    # from the opponent winning it.
    s = situation(
        0, "KD 4D 7C 8H", [(1, "9D"), (2, "3D"), (3, "5D")], (1, 4, 1, 4), tricks=(1, 4, 1, 3)
    )
    assert s.tricks_left == 4
    assert spades_policy.choose_play(s) == card("4D")
    assert nil_play.choose_play(s) == card("4D")
    assert nil_play.choose_play(s, 4) == card("KD")
    assert spades_policy.choose_play(s, 4) == card("KD")


@pytest.mark.parametrize("margin", [-1, 14, 2.5, True, "4"])
def test_the_search_checks_its_set_margin(margin: object) -> None:
    with pytest.raises(ValueError, match="set_margin"):
        SearchBot(set_margin=margin)  # type: ignore[arg-type]


def test_a_wider_set_margin_in_the_playouts_sets_the_opponents_more() -> None:
    # Over the same worlds, with the opponents bidding 3 + 3 against our 2 + 2, my seat's
    # playouts with the widest margin (13: never duck while they can be set) set them at least as
    # often as with the default, and take more tricks for it: the margin reaches the playouts.
    rng = random.Random(5)
    bids = [2, 3, 2, 3]
    view = _view_after(bids, [], 0)
    sets = {3: 0, 13: 0}
    tricks = {3: 0, 13: 0}
    for _ in range(60):
        hands = sample_hands(view, rng)
        assert hands is not None
        for margin in sets:
            game = SpadesGame(RULESET, dealer=3)
            game.deal_fixed(hands)
            for s, n in enumerate(bids):
                apply_bid(game, Bid(s, n))
            finish_bidding_and_play(game, me=0, set_margin=margin)
            sets[margin] += game.tricks[1] + game.tricks[3] < 6
            tricks[margin] += game.tricks[0]
    assert sets[13] >= sets[3]
    assert tricks[13] > tricks[3]
