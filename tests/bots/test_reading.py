"""Reading the table (bots/samples/reading.py): the replay of a hand reproduces the heuristic's own
choices, the guessed legality agrees with the engine's, random seats are read as random, and the
chain's worlds stay consistent with the play while leaning toward what the bids said."""

import random
from typing import Any

import pytest

from bots.arena.match import Seat
from bots.registry import make_bot
from bots.samples import nil_play, spades_policy
from bots.samples.heuristic import HeuristicBot
from bots.samples.reading import (
    PRIOR,
    SLIP,
    Chain,
    Reading,
    TableBelief,
    legal_for,
)
from bots.samples.world import build_world, play_out, sample_hands
from bots.sdk.view import BotView
from engine.actions import Bid, PlayCard
from engine.cards import parse_card
from engine.game import Phase, new_game
from engine.ruleset import Ruleset
from engine.spades import SpadesGame


def hands_of(game: Any) -> list[int]:
    return [game.hand(s) for s in range(4)]


def play_hand(
    specs: list[str], seed: int, ruleset: Ruleset | None = None
) -> list[tuple[BotView, Any]]:
    """One hand with these bots: (seat 0's view, a copy of the game) at each of seat 0's plays."""
    ruleset = ruleset or Ruleset.from_preset("standard", target_score=0, max_hands=1)
    seats = [
        Seat(make_bot(spec, seed * 10 + s), s, ruleset, random.Random(s))
        for s, spec in enumerate(specs)
    ]
    game = new_game(ruleset, dealer=seed % 4)
    game.deal(bytes([seed, 31, 7]))
    out: list[tuple[BotView, Any]] = []
    for _ in range(200):
        if game.phase not in (Phase.BIDDING, Phase.PLAYING):
            break
        seat = game.to_act()[0]
        if seat == 0 and game.phase is Phase.PLAYING:
            view = BotView.from_seat_view(game.view(0), ruleset, memory=seats[0].memory)
            out.append((view, game.copy()))
        game.apply(seats[seat].decide(game))
    return out


@pytest.mark.parametrize(
    "options",
    [
        {},
        {"play_rule": "pressure"},
        {"play_rule": "nothing_but_spades"},
        {"spades_break": "trumped"},
    ],
)
def test_guessed_legality_agrees_with_the_engine(options: dict[str, Any]) -> None:
    ruleset = Ruleset.from_preset("standard", target_score=0, max_hands=1).with_options(**options)
    checked = 0
    for seed in range(4):
        for view, game in play_hand(["heuristic"] * 4, seed, ruleset):
            legal = legal_for(
                ruleset.play_rule, view.order, view.hand_mask, view.trick, view.broken
            )
            assert legal == game.legal_play_mask(0)
            checked += 1
    assert checked >= 40


def test_the_replay_of_heuristic_seats_matches_every_choice() -> None:
    # With the true hands, every card a heuristic seat played is the one the replay would choose,
    # and every bid the one it would bid: the reading sees what the heuristic saw.
    checked = 0
    for seed in range(6):
        view, game = play_hand(["heuristic"] * 4, seed)[-1]
        true = hands_of(game)
        reading = Reading.of(view, [PRIOR] * 4, true)
        assert reading is not None
        for seat in reading.others:
            start = true[seat] | reading.played[seat]
            for choice in reading.cards[seat]:
                heuristic, _player, uniform = reading.card_evidence(choice, start & ~choice.before)
                assert heuristic >= uniform  # a match: (1 - SLIP) + SLIP / n against 1 / n
                checked += uniform < 0
            bid = reading.bids[seat]
            chosen = spades_policy.choose_bid(
                list(bid.legal),
                start,
                view.order,
                players=4,
                partner_bid=bid.partner_bid,
                bags=bid.bags,
                bag_limit=view.ruleset.bag_limit,
                bags_counted=True,
            )
            assert chosen == bid.bid
    assert checked >= 100


def test_a_random_partner_is_read_as_random_after_a_hand() -> None:
    belief = TableBelief.fresh(4)
    for seed in range(2):
        last, _ = play_hand(["heuristic", "heuristic", "random", "heuristic"], seed)[-1]
        belief.learn(last, random.Random(seed))
    randomness = belief.randomness()
    assert randomness[2] > 0.99
    assert randomness[1] < 0.01 and randomness[3] < 0.01


def test_in_hand_reading_tells_a_random_seat_from_a_heuristic_one() -> None:
    # Midway through the first hand, worlds that explain the play put the random partner's
    # chance of being random far above the heuristic opponents'.
    positions = play_hand(["heuristic", "heuristic", "random", "heuristic"], 3)
    view, game = positions[len(positions) // 2]
    rng = random.Random(4)
    reading = Reading.of(view, [PRIOR] * 4, hands_of(game))
    assert reading is not None
    chain = Chain(view, reading, sample_hands(view, rng) or [], rng)
    partner = opponents = 0.0
    for _ in range(30):
        for _ in range(10):
            chain.step()
        partner += chain.randomness[2]
        opponents += max(chain.randomness[1], chain.randomness[3])
    assert partner / 30 > 0.5
    assert opponents / 30 < 0.2


def test_chain_worlds_are_consistent_with_the_view() -> None:
    rng = random.Random(9)
    for seed in range(3):
        for view, _game in play_hand(["heuristic"] * 4, seed)[::3]:
            start = sample_hands(view, rng)
            assert start is not None
            reading = Reading.of(view, [PRIOR] * 4, start)
            assert reading is not None
            chain = Chain(view, reading, start, rng)
            for _ in range(60):
                chain.step()
            hands, _randoms = chain.world()
            assert hands[0] == view.hand_mask
            seen = view.hand_mask | view.played_mask
            union = 0
            for seat, hand in enumerate(hands):
                assert hand.bit_count() == view.hand_sizes[seat]
                assert union & hand == 0
                union |= hand
                if seat != 0:
                    assert hand & seen == 0
                    for suit in view.voids[seat]:
                        assert hand & view.order.suit_masks[suit] == 0


def test_chain_worlds_follow_the_bids() -> None:
    # Before any card, the chain's worlds give each bidder a hand whose trick estimate is near its
    # bid; uniform worlds do not.
    order_errors: dict[str, float] = {"chain": 0.0, "uniform": 0.0}
    for seed in range(4):
        view, _game = play_hand(["heuristic"] * 4, seed)[0]
        rng = random.Random(seed)
        start = sample_hands(view, rng)
        assert start is not None
        reading = Reading.of(view, [PRIOR] * 4, start)
        assert reading is not None
        chain = Chain(view, reading, start, rng)
        for _ in range(100):
            chain.step()
        for _ in range(20):
            for _ in range(8):
                chain.step()
            for name, hands in (("chain", chain.world()[0]), ("uniform", sample_hands(view, rng))):
                assert hands is not None
                for seat in (1, 2, 3):
                    bid = view.bids[seat]
                    assert bid is not None
                    estimate = spades_policy.estimate_tricks(
                        hands[seat] | reading.played[seat], view.order
                    )
                    order_errors[name] += abs(estimate - bid.tricks)
    assert order_errors["chain"] < 0.6 * order_errors["uniform"]


def test_playouts_continue_the_hand_as_the_heuristic_plays_it() -> None:
    # From a real position, the playout (the heuristic at every seat, reading the shown voids) ends
    # the hand exactly as the real heuristic bots do, deciding from their views.
    for seed in range(3):
        positions = play_hand(["heuristic"] * 4, seed)
        for view, game in positions[::4]:
            voids = tuple(sum(1 << s for s in view.voids.get(p, ())) for p in range(4))
            card = make_bot("heuristic").play(view)
            assert isinstance(card, int)
            world = build_world(view, hands_of(game))
            assert world is not None
            play_out(world, card, {}, voids=voids)
            replayed = game.copy()
            assert world.scores == _finish_with_bots(replayed, card, view).scores


def _finish_with_bots(game: Any, card: int, view: BotView) -> Any:
    ruleset = game.ruleset
    seats = [Seat(make_bot("heuristic", s), s, ruleset, random.Random(s)) for s in range(4)]
    done = sum(view.tricks_won)
    for seat in seats:  # every seat remembers the tricks so far, as it would have in the game
        seat.memory.hand_number = view.hand_number
        seat.memory.tricks = {n + 1: plays for n, plays in enumerate(view.history[:done])}
    game.apply(PlayCard(0, card))
    for _ in range(60):
        if game.phase is not Phase.PLAYING:
            break
        seat = game.to_act()[0]
        game.apply(seats[seat].decide(game))
    return game


def test_slip_is_a_probability() -> None:
    assert 0 < SLIP < 1


def _fixed_hand(texts: list[str]) -> list[int]:
    hands = []
    for text in texts:
        mask = 0
        for card in text.split():
            mask |= 1 << parse_card(card)
        hands.append(mask)
    return hands


# Seat 1 holds a nil hand (the heuristic bids nil with it); the high spades are elsewhere.
NIL_DEAL = _fixed_hand(
    [
        "9S 8S 7S JH TH 9H 8H JD TD 9D JC TC 9C",
        "2S 3S 2H 3H 4H 5H 2D 3D 4D 5D 2C 3C 4C",
        "AS KS QS JS AH KH QH AD KD 6D AC 8C 7C",
        "TS 6S 5S 4S 6H 7H QD 8D 7D KC QC 6C 5C",
    ]
)


def _nil_position() -> BotView:
    ruleset = Ruleset.from_preset("standard", target_score=0, max_hands=1)
    game = SpadesGame(ruleset, dealer=3)
    game.deal_fixed(NIL_DEAL)
    heuristic = HeuristicBot()
    while game.phase is Phase.BIDDING:
        seat = game.to_act()[0]
        game.apply(heuristic.decide(BotView.from_seat_view(game.view(seat), ruleset)))
    return BotView.from_seat_view(game.view(0), ruleset)


def test_the_worlds_give_a_nil_bidder_few_high_cards() -> None:
    view = _nil_position()
    nil = view.bids[1]
    assert nil is not None and nil.is_nil
    rng = random.Random(3)
    start = sample_hands(view, rng)
    assert start is not None
    reading = Reading.of(view, [PRIOR] * 4, start)
    assert reading is not None
    chain = Chain(view, reading, start, rng)
    for _ in range(200):
        chain.step()
    order = view.order

    def strength(hands: list[int]) -> float:
        return spades_policy.estimate_tricks(hands[1], order)

    read = uniform = 0.0
    for _ in range(40):
        for _ in range(10):
            chain.step()
        read += strength(chain.world()[0])
        drawn = sample_hands(view, rng)
        assert drawn is not None
        uniform += strength(drawn)
    assert read < 0.6 * uniform


def test_nil_play_attacks_an_opponents_nil() -> None:
    view = _nil_position()
    # Seat 0 leads with seat 1's nil standing: a low card of a suit seat 1 still holds, not the
    # heuristic's cashing of an ace.
    from bots.samples.situation import from_view

    situation = from_view(view)
    lead = nil_play.choose_play(situation)
    assert view.power(lead) <= 7
    assert spades_policy.choose_play(situation) != lead


def fresh_evidence(reading: Reading, seat: int, dealt: int) -> tuple[float, float, float]:
    """`seat_evidence` as a reading with nothing cached computes it, bid and card by card."""
    total = [0.0, 0.0, 0.0]
    bid = reading.bids.get(seat)
    if bid is not None:
        total = list(reading.bid_evidence(bid, dealt))
    for choice in reading.cards[seat]:
        step = reading.card_evidence(choice, dealt & ~choice.before)
        if step[2] == float("-inf"):
            return step
        total = [a + b for a, b in zip(total, step, strict=True)]
    return total[0], total[1], total[2]


def test_cached_evidence_is_the_evidence_computed_afresh() -> None:
    # The reading keeps a followed card's evidence by the cards of the hand it depends on (those
    # of the suit led) and each bid's plan by position: along a chain's walk (hands that
    # differ by a card or two), every seat's evidence equals a fresh reading's, to the last bit.
    compared = 0
    for seed in range(6):
        positions = play_hand(["heuristic"] * 4, seed)
        for view, _game in positions[1::2]:
            compared += walk_and_compare(view, random.Random(seed))
    assert compared >= 1000


def walk_and_compare(view: BotView, rng: random.Random) -> int:
    """Walk a chain from this view; compare each world's evidence with a fresh reading's."""
    compared = 0
    start = sample_hands(view, rng) or []
    reading = Reading.of(view, [PRIOR] * 4, start)
    assert reading is not None
    chain = Chain(view, reading, start, rng)
    for _ in range(40):
        hands, _ = chain.next_world(2, 2)
        fresh = Reading.of(view, [PRIOR] * 4, start)
        assert fresh is not None
        for seat in reading.others:
            dealt = hands[seat] | reading.played[seat]
            assert reading.seat_evidence(seat, dealt) == fresh_evidence(fresh, seat, dealt)
            compared += 1
    if any(any(masks) for masks in reading.relevant.values()):
        assert reading.play_cache  # followed cards were looked up by their suits
    return compared


def test_a_bid_plan_bids_as_the_heuristic_for_every_hand() -> None:
    # One plan per bidding position, asked about many hands, bids as `choose_bid` asked afresh.
    rng = random.Random(5)
    order = SpadesGame(Ruleset.from_preset("standard"), dealer=0).ruleset_order
    legal = [Bid(seat=0, tricks=n) for n in range(14)]
    deck = list(range(52))
    checked = 0
    for partner in (None, Bid(seat=2, tricks=0), Bid(seat=2, tricks=3), Bid(seat=2, tricks=11)):
        for bags in (0, 8):
            plan = spades_policy.BidPlan(
                legal, players=4, partner_bid=partner, bags=bags, bag_limit=10, bags_counted=True
            )
            for _ in range(60):
                rng.shuffle(deck)
                hand = sum(1 << c for c in deck[:13])
                expected = spades_policy.choose_bid(
                    [Bid(seat=0, tricks=n) for n in range(14)],
                    hand,
                    order,
                    players=4,
                    partner_bid=partner,
                    bags=bags,
                    bag_limit=10,
                    bags_counted=True,
                )
                assert plan.choose(hand, order) == expected
                checked += expected.tricks == 0
    assert checked > 0  # some of the hands were nils
