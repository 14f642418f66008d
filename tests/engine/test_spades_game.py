"""The standard four-handed game: deal, bidding, play, tricks, scoring, the next hand, game over."""

import random

import pytest

from engine.actions import Bid, LookAtHand, PlayCard
from engine.cards import card_text, cards_in, mask_text, parse_card
from engine.deal import shuffled
from engine.errors import IllegalAction
from engine.events import BidMade, CardPlayed, GameOver, HandDealt, HandScored, TrickWon
from engine.game import Phase, new_game
from engine.hand_end import FinishedHand
from engine.ruleset import PRESETS, Ruleset
from engine.scoring import game_result
from engine.spades import SpadesGame
from tests.engine.helpers import bid_all, cards, fill_deal, play_random_game, spades

C = parse_card


def test_deal_is_the_documented_function_of_the_seed() -> None:
    game = spades()
    game.deal(b"seed-1")
    deck = shuffled(b"seed-1", list(range(52)))
    # Card i goes to seat (dealer + 1 + i) mod 4; dealer is 0, so the first card goes to seat 1.
    for i, card in enumerate(deck):
        assert game.hand((1 + i) % 4) >> card & 1
    again = spades()
    again.deal(b"seed-1")
    assert [again.hand(s) for s in range(4)] == [game.hand(s) for s in range(4)]


def test_bidding_starts_left_of_dealer_and_play_at_dealers_left() -> None:
    game = new_game(Ruleset.from_preset("standard"), dealer=2)
    events = game.deal(b"x")
    assert isinstance(events[0], HandDealt)
    assert game.phase is Phase.BIDDING
    assert game.to_act() == (3,)
    bid_all(game, {0: 3, 1: 3, 2: 3, 3: 3})
    assert game.to_act() == (3,)
    assert game.phase.value == "playing"


def test_legal_bids_standard() -> None:
    game = spades()
    game.deal(b"x")
    bids = game.legal_actions(1)
    assert bids == [Bid(1, n) for n in range(14)]
    assert game.legal_actions(2) == []
    with pytest.raises(IllegalAction) as info:
        game.apply(Bid(2, 3))
    assert info.value.code == "not_your_turn"
    with pytest.raises(IllegalAction) as info:
        game.apply(Bid(1, 14))
    assert info.value.code == "bid_out_of_range"
    with pytest.raises(IllegalAction) as info:
        game.apply(PlayCard(1, 0))
    assert info.value.code == "wrong_phase"


def _start(game: SpadesGame, fixed: dict[int, str], bids: dict[int, int] | None = None) -> None:
    game.deal_fixed(fill_deal(game.ruleset, fixed))
    bid_all(game, bids or {0: 3, 1: 3, 2: 3, 3: 3})


def test_first_lead_may_not_be_a_spade_and_must_follow_suit() -> None:
    game = spades()
    _start(
        game,
        {1: "AS 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC", 2: "2H 3H 4H 5H 6H 7H 8H 9H TH JH QH KH AC"},
    )
    assert game.to_act() == (1,)
    with pytest.raises(IllegalAction) as info:
        game.apply(PlayCard(1, C("AS")))
    assert info.value.code == "spades_not_broken"
    assert info.value.message == "spades are not broken: lead another suit"
    assert PlayCard(1, C("AS")) not in game.legal_actions(1)
    game.apply(PlayCard(1, C("2C")))
    with pytest.raises(IllegalAction) as info:
        game.apply(PlayCard(2, C("2H")))
    assert info.value.code == "must_follow_suit"
    assert info.value.message == "must follow suit: you hold clubs"
    assert game.legal_actions(2) == [PlayCard(2, C("AC"))]
    with pytest.raises(IllegalAction) as info:
        game.apply(PlayCard(2, C("AD")))
    assert info.value.code == "card_not_in_hand"


def test_spades_break_when_one_is_played_and_the_highest_spade_wins() -> None:
    game = spades()
    _start(
        game,
        {
            1: "2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC AC",
            2: "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
        },
    )
    events = game.apply(PlayCard(1, C("AC")))
    events = game.apply(PlayCard(2, C("2S")))
    assert game.spades_broken
    assert [e.kind for e in events] == ["card_played", "spades_broken"]
    game.apply(game.legal_actions(3)[0])
    events = game.apply(game.legal_actions(0)[0])
    won = [e for e in events if isinstance(e, TrickWon)]
    assert won and won[0].seat == 2 and game.to_act() == (2,)
    # Seat 2 holds only spades now and may lead them.
    assert game.legal_play_mask(2) == game.hand(2)


def test_a_seat_with_only_spades_may_lead_one_before_they_are_broken() -> None:
    game = spades()
    _start(game, {1: "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"})
    assert game.legal_play_mask(1) == cards("2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS")


def test_the_trumped_rule_breaks_only_when_a_spade_wins_a_trick_led_otherwise() -> None:
    game = spades(spades_break="trumped")
    _start(game, {1: "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS"})
    game.apply(PlayCard(1, C("2S")))
    assert not game.spades_broken


def test_illegal_action_leaves_the_state_unchanged() -> None:
    game = spades()
    _start(game, {})
    before = game.view(1).to_dict(), game.spectator_view().to_dict(), game.version
    for bad in (PlayCard(1, C("AS")), PlayCard(2, 0), Bid(1, 3), LookAtHand(1), PlayCard(1, 53)):
        with pytest.raises(IllegalAction):
            game.apply(bad)
    assert (game.view(1).to_dict(), game.spectator_view().to_dict(), game.version) == before


def test_a_whole_hand_scores_rotates_the_deal_and_records_history() -> None:
    game = spades()
    game.deal(b"hand-1")
    bid_all(game, {0: 3, 1: 3, 2: 3, 3: 3})
    events = []
    while game.phase is Phase.PLAYING:
        seat = game.to_act()[0]
        events += game.apply(game.legal_actions(seat)[0])
    played = [e for e in events if isinstance(e, CardPlayed)]
    assert len(played) == 52 and len({e.card for e in played}) == 52
    assert sum(isinstance(e, TrickWon) for e in events) == 13
    scored = events[-1]
    assert isinstance(scored, HandScored)
    assert scored.seed == b"hand-1".hex()
    assert game.phase is Phase.DEALING and game.dealer == 1
    (history,) = game.histories
    assert history.dealer == 0 and history.hand_number == 1
    assert sum(history.tricks) == 13
    assert history.score_after == game.scores
    assert [b.seat for b in history.bids] == [1, 2, 3, 0]
    assert len(history.plays) == 52
    assert history.actions[:4] == history.bids


def test_game_over_at_500_with_the_higher_score_winning() -> None:
    game = spades(target_score=50)
    while not game.is_over:
        game.deal(game.hand_number.to_bytes(2, "big"))
        bid_all(game, {0: 1, 1: 1, 2: 1, 3: 1})
        while game.phase is Phase.PLAYING:
            game.apply(game.legal_actions(game.to_act()[0])[-1])
    assert game.phase is Phase.GAME_OVER
    outcome = game.outcome
    assert outcome is not None and outcome.reason == "target"
    assert max(outcome.scores) >= 50
    assert outcome.scores[outcome.winning_side] == max(outcome.scores)
    with pytest.raises(IllegalAction) as info:
        game.deal(b"more")
    assert info.value.code == "wrong_phase"


def test_a_true_tie_above_the_target_plays_on() -> None:
    game = spades(target_score=10)
    r = game.ruleset
    # Both sides passed the target, tied: only possible through scoring (engine.scoring.game_result,
    # which the game asks once a hand is scored).
    assert game_result(r, [20, 20], r.sides, game.hand_number, []) is None


def test_losing_floor_ends_the_game() -> None:
    game = spades(losing_floor_enabled=True, losing_floor=-200)
    r = game.ruleset
    outcome = game_result(r, [-210, 40], r.sides, game.hand_number, [])
    assert outcome is not None and outcome.winners == (1, 3) and outcome.reason == "floor"


def test_events_carry_versions_through_the_game_version() -> None:
    game = spades()
    assert game.version == 0
    game.deal(b"v")
    assert game.version == 1
    events = game.apply(Bid(1, 4))
    assert game.version == 2
    assert isinstance(events[0], BidMade) and events[0].to_dict() == {
        "kind": "bid_made",
        "seat": 1,
        "bid": {"tricks": 4, "blind": False},
        "text": "4",
    }


def test_copy_is_independent() -> None:
    game = spades()
    _start(game, {})
    other = game.copy()
    other.apply(other.legal_actions(1)[0])
    assert game.to_act() == (1,) and other.to_act() == (2,)
    assert game.hand(1) != other.hand(1)


def test_play_fast_agrees_with_apply() -> None:
    rng = random.Random(3)
    game = spades()
    game.deal(b"fast")
    bid_all(game, {0: 3, 1: 3, 2: 3, 3: 3})
    twin = game.copy()
    while game.phase is Phase.PLAYING:
        seat = game.to_act()[0]
        card = rng.choice(cards_in(game.legal_play_mask(seat)))
        game.apply(PlayCard(seat, card))
        twin.play_fast(card)
    assert twin.scores == game.scores and twin.histories[0] == game.histories[0]


def test_hand_dealt_event_shows_each_seat_only_its_cards() -> None:
    game = spades()
    (dealt,) = game.deal(b"e")
    assert isinstance(dealt, HandDealt)
    for seat in range(4):
        shown = dealt.for_seat(seat)
        assert shown is not None and shown["cards"] == mask_text(game.hand(seat))
        assert "hands" not in shown
    spectator = dealt.for_seat(None)
    assert spectator is not None and spectator["cards"] is None


def test_game_over_event() -> None:
    game = spades(target_score=10)
    game.deal(b"g")
    bid_all(game, {0: 1, 1: 1, 2: 1, 3: 1})
    events = []
    while game.phase is Phase.PLAYING:
        events += game.apply(game.legal_actions(game.to_act()[0])[0])
    if game.is_over:
        assert isinstance(events[-1], GameOver)
    assert card_text(C("QS")) == "QS"


@pytest.mark.parametrize("preset", ["standard", "three-player", "joker", "deuces-high", "crazy"])
def test_playout_follows_the_same_rules_as_legal_play_mask(preset: str) -> None:
    for seed in range(6):
        game = spades(preset)
        game.deal(bytes([seed]))
        while game.phase is not Phase.PLAYING:
            game.apply(game.legal_actions(game.to_act()[0])[-1])
        fast, slow = game.copy(), game.copy()
        fast.playout(random.Random(seed))
        rng = random.Random(seed)
        while slow.phase is Phase.PLAYING:
            mask = slow.legal_play_mask(slow.turn)
            k = int(rng.random() * mask.bit_count())
            slow.play_fast(cards_in(mask)[k])
        assert fast.histories[-1] == slow.histories[-1]
        assert fast.scores == slow.scores


def test_play_fast_counts_in_the_version_so_cached_legality_never_goes_stale() -> None:
    game = spades()
    game.deal(b"stale")
    bid_all(game, {1: 3, 2: 3, 3: 3, 0: 3})
    version = game.version
    seat = game.to_act()[0]
    legal = game.legal_actions(seat)
    first = legal[0]
    assert isinstance(first, PlayCard)
    game.play_fast(first.card)
    assert game.version == version + 1
    with pytest.raises(IllegalAction):
        game.apply(first)
    rng = random.Random(0)
    game.playout(rng)
    assert game.version == version + 52


@pytest.mark.parametrize("preset", ["standard", "joker", "three-player", "deuces-high"])
@pytest.mark.parametrize("seed", range(4))
def test_a_position_built_from_the_facts_plays_out_like_the_game(preset: str, seed: int) -> None:
    rng = random.Random(seed)
    game = spades(preset)
    game.deal(bytes([seed, 1]))
    while game.phase is not Phase.PLAYING:
        game.apply(game.legal_actions(game.to_act()[0])[-1])
    history: list[tuple[tuple[int, int], ...]] = []
    for _ in range(rng.randrange(1, 30)):
        seat = game.to_act()[0]
        for event in game.apply(rng.choice(game.legal_actions(seat))):
            if isinstance(event, TrickWon):
                history.append(event.plays)
    view = game.spectator_view()
    built = SpadesGame.position(
        game.ruleset,
        hands=[game.hand(s) for s in range(game.players)],
        dealer=game.dealer,
        bids=[b for b in game.bids if b is not None],
        leader=view.leader,
        trick=view.trick,
        history=history,
        broken=view.broken,
        hand_number=game.hand_number,
        scores=game.scores,
        bags=game.bags,
    )
    assert built.to_act() == game.to_act()
    assert built.legal_play_mask(game.to_act()[0]) == game.legal_play_mask(game.to_act()[0])
    assert built.tricks == game.tricks and built.played == game.played
    twin = game.copy()
    twin.playout(random.Random(seed))
    built.playout(random.Random(seed))
    assert built.scores == twin.scores
    assert built.histories[-1].plays == twin.histories[-1].plays
    with pytest.raises(IllegalAction):
        SpadesGame.position(game.ruleset, hands=[0] * game.players, dealer=0, bids=[], leader=0)


SPADES_PRESETS = [name for name in PRESETS if Ruleset.from_preset(name).game == "spades"]


@pytest.mark.parametrize("preset", SPADES_PRESETS)
def test_notes_written_while_scoring_the_last_card_match_a_fresh_scoring(preset: str) -> None:
    # apply() scores a hand's last card with its notes for people in one pass; the notes must be
    # those a fresh scoring (what play_fast's hands get when their history is built) writes.
    game = play_random_game(Ruleset.from_preset(preset), random.Random(11), max_hands=6)
    assert isinstance(game, SpadesGame)
    finished = [item for item in game._histories if isinstance(item, FinishedHand)]
    explained = [item for item in finished if item.explained is not None]
    assert explained
    for item in explained:
        written = item.explained
        item.explained = None
        assert item.notes() == written


@pytest.mark.parametrize("preset", SPADES_PRESETS)
def test_legal_plays_are_the_legal_mask_in_card_order(preset: str) -> None:
    # legal_actions builds play lists a suit at a time from shared tables (and follows suit by a
    # shortcut): they must be exactly the cards of legal_play_mask, lowest first, for every deck.
    rng = random.Random(5)
    game = spades(preset)
    plays_checked = 0
    for _ in range(3000):
        if game.is_over:
            break
        if game.phase is Phase.DEALING:
            game.deal(rng.randbytes(8))
            continue
        seat = rng.choice(game.to_act())
        legal = game.legal_actions(seat)
        if game.phase is Phase.PLAYING:
            cards_listed = [a.card for a in legal if isinstance(a, PlayCard)]
            assert cards_listed == cards_in(game.legal_play_mask(seat))
            plays_checked += 1
        game.apply(rng.choice(legal))
    assert plays_checked >= 100
