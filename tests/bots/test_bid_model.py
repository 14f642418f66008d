"""The learned bid: its features, its trees, the shipped model, and the search bot's use of it."""

import math
import sys
from pathlib import Path

import pytest

from bots.registry import make_bot, parse_spec
from bots.samples import bid_model
from bots.samples.bid_features import NAMES, bid_features
from bots.samples.bid_model import BidModel, applies, shipped
from bots.samples.heuristic import HeuristicBot
from bots.samples.search import SearchBot
from bots.samples.world import apply_bid
from bots.sdk.view import BotView
from engine.actions import Bid
from engine.cards import mask_of, parse_cards
from engine.ordering import CardOrder
from engine.ruleset import Ruleset
from engine.spades import SpadesGame

RULESET = Ruleset.from_preset("standard")


def mask(text: str) -> int:
    return mask_of(parse_cards(text.split()))


def order() -> CardOrder:
    game = SpadesGame(RULESET, dealer=0)
    return game.ruleset_order


def feature(row: list[float], name: str) -> float:
    return row[NAMES.index(name)]


def test_features_describe_the_hand_and_the_bids_before() -> None:
    hand = mask("AS QS 5S AH KH 2H 9D 8D 7D 6D 5D 4D 3D")
    row = bid_features(
        hand,
        order(),
        position=2,
        partner_bid=Bid(3, 4),
        opponent_bids=(Bid(0, 0), None),
        base=5,
        bags=(7, 2),
    )
    assert len(row) == len(NAMES)
    assert feature(row, "spades") == 3
    assert (feature(row, "spade_ace"), feature(row, "spade_king"), feature(row, "spade_queen")) == (
        1,
        0,
        1,
    )
    assert feature(row, "side_aces") == 1 and feature(row, "side_kings") == 1
    assert feature(row, "voids") == 1  # no clubs
    assert feature(row, "position") == 2
    assert (feature(row, "partner_bid_known"), feature(row, "partner_bid")) == (1, 4)
    assert (feature(row, "opponent_bids_known"), feature(row, "opponent_nils")) == (1, 1)
    assert feature(row, "bids_before_sum") == 4
    assert feature(row, "base") == 5
    assert (feature(row, "my_bags"), feature(row, "their_bags")) == (7, 2)
    assert (feature(row, "my_bags"), feature(row, "their_bags")) == (7, 2)
    # Suits are clubs, diamonds, hearts, spades; ranks run from 0 (a two) to 12 (an ace).
    assert [feature(row, f"suit2_top{k}") for k in range(3)] == [12, 11, 0]
    assert [feature(row, f"suit1_top{k}") for k in range(3)] == [7, 6, 5]
    assert feature(row, "suit0_length") == 0 and feature(row, "suit0_top0") == -1


def test_a_tree_goes_left_when_the_feature_is_at_most_its_threshold() -> None:
    data = {
        "features": list(NAMES),
        "candidates": {
            "nil": {"baseline": 1.0, "trees": [[[4, 2.5, 1, 2], [10.0], [-10.0]]]},
            "1": {"baseline": -3.0, "trees": [[[0.5]], [[0.25]]]},
        },
    }
    model = BidModel(data)
    row = [0.0] * len(NAMES)
    row[NAMES.index("spades")] = 2.0
    assert model.gains(row) == {"nil": 11.0, "1": -2.25}
    row[NAMES.index("spades")] = 3.0
    assert model.gains(row)["nil"] == -9.0


def test_a_model_of_other_features_is_refused() -> None:
    with pytest.raises(ValueError, match="other features"):
        BidModel({"features": ["estimate"], "candidates": {}})


def test_the_shipped_model_loads_and_values_every_candidate() -> None:
    model = shipped()
    strong = mask("AS KS QS JS AH KH AD KD AC KC 2H 2D 2C")
    gains = model.gains(
        bid_features(
            strong,
            order(),
            position=0,
            partner_bid=None,
            opponent_bids=(None, None),
            base=8,
            bags=(0, 0),
        )
    )
    assert set(gains) == set(bid_model.OFFSETS)
    assert all(math.isfinite(g) for g in gains.values())
    # A strong hand loses badly by bidding nil.
    assert gains["nil"] < -50


def test_the_model_applies_to_the_standard_rules_whatever_the_game_length() -> None:
    assert applies(RULESET)
    assert applies(Ruleset.from_preset("standard", target_score=0, max_hands=1))
    assert not applies(Ruleset.from_preset("standard", nil_value=50))
    assert not applies(Ruleset.from_preset("joker"))


def _bidding_view(seed: bytes, bids: int = 0) -> BotView:
    game = SpadesGame(RULESET, dealer=0)
    game.deal(seed)
    for step in range(bids):
        seat = (1 + step) % 4
        apply_bid(game, Bid(seat, 3))
    seat = (1 + bids) % 4
    return BotView.from_seat_view(game.view(seat), RULESET)


def test_a_search_bot_bidding_by_the_model_alone_samples_no_world() -> None:
    for k in range(8):
        view = _bidding_view(b"learned-%d" % k, bids=k % 4)
        if not view.looked:
            continue
        bot = SearchBot(seed=1, worlds=12, bid_model=math.inf)
        choice = bot.bid(view)
        assert choice in view.legal_bids
        assert bot.last_worlds == 0
        # The same view, the same bid: the model has no randomness.
        assert SearchBot(seed=99, worlds=12, bid_model=math.inf).bid(view) == choice


def test_a_blended_bid_samples_its_worlds_and_stays_legal() -> None:
    view = _bidding_view(b"blended", bids=2)
    bot = SearchBot(seed=1, worlds=6, bid_model=40.0)
    assert bot.bid(view) in view.legal_bids
    assert bot.last_worlds == 24  # bid_factor 4 x 6 worlds


@pytest.mark.parametrize("weight", [-1, "lots", True])
def test_the_bid_model_weight_is_checked(weight: object) -> None:
    with pytest.raises(ValueError, match="bid_model"):
        SearchBot(bid_model=weight)  # type: ignore[arg-type]


def test_training_rows_are_made_from_true_deals() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from bench.bid_data import deal_rows

    rows = deal_rows(3, seed=7)
    assert 1 <= len(rows) <= 4
    for row in rows:
        features, gains = row["x"], row["gain"]
        assert isinstance(features, list) and len(features) == len(NAMES)
        assert isinstance(gains, dict) and set(gains) <= set(bid_model.OFFSETS)
    assert deal_rows(3, seed=7) == rows


def test_the_bias_bench_plays_each_nearby_bid_with_the_base_bids_draws() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from bench.bid_bias import OFFSETS, deal_differences

    differences = deal_differences(3, seed=7)
    assert differences and {offset for offset, _ in differences} <= set(OFFSETS)
    assert deal_differences(3, seed=7) == differences
    # Over a few deals some bid plays out otherwise than it scores (the bench's reason to be).
    assert any(d != 0 for deal in range(12) for _, d in deal_differences(deal, seed=7))


def test_the_search_tells_the_model_the_bags_of_each_side() -> None:
    hands = [mask(text) for text in HANDS]
    gains = []
    for bags in ((0, 0), (9, 0)):
        game = SpadesGame(RULESET, dealer=3)
        game.deal_fixed(hands, hand_number=2, scores=(40, 40), bags=bags)
        view = BotView.from_seat_view(game.view(0), RULESET)
        bot = SearchBot(seed=1, worlds=4, bid_model=math.inf)
        base = HeuristicBot.bid(bot, view)
        assert isinstance(base, Bid)
        plain = {b.tricks: b for b in view.legal_bids}
        gains.append(bot._learned_gains(view, base, plain))
    # Nine bags: one more costs a hundred, so every bid's worth moves.
    assert gains[0] != gains[1]


HANDS = [
    "AS KS 7S 4S AH 9H 5H KD 8D 3D QC 6C 2C",
    "QS 9S 3S KH 8H 4H AD 9D 4D AC KC 7C 3C",
    "JS TS 6S 2S QH TH 6H 2H QD TD 5D JC 8C",
    "8S 5S JH 7H 3H JD 7D 6D 2D TC 9C 5C 4C",
]


def test_the_search_bot_bids_with_the_learned_bid_by_default() -> None:
    # The default (bid_model=even) is the blend, the model as weighty as the worlds sampled: with
    # worlds=4 a bid samples 16, so the same bids as asking for K = 16, and not always the bids of
    # the search's worlds alone (bid_model=0).
    differ = 0
    for k in range(12):
        view = _bidding_view(b"default-%d" % k, bids=k % 4)
        if not view.looked:
            continue
        default = SearchBot(seed=3, worlds=4).bid(view)
        assert default == SearchBot(seed=3, worlds=4, bid_model="even").bid(view)
        assert default == SearchBot(seed=3, worlds=4, bid_model=16).bid(view)
        differ += default != SearchBot(seed=3, worlds=4, bid_model=0).bid(view)
    assert differ >= 1


def test_an_even_weight_follows_the_worlds_sampled() -> None:
    # The same views at 4 and at 12 worlds (16 and 48 a bid): "even" bids as K = 16 at the one and
    # as K = 48 at the other, so its weight is the count of worlds, not a fixed number.
    for k in range(12):
        view = _bidding_view(b"even-%d" % k, bids=k % 4)
        if not view.looked:
            continue
        for worlds, weight in ((4, 16), (12, 48)):
            even = SearchBot(seed=5, worlds=worlds)
            assert even.bid(view) == SearchBot(seed=5, worlds=worlds, bid_model=weight).bid(view)
            assert even.last_worlds in (0, weight)  # 0: a bid with nothing to weigh


def test_the_even_weight_is_named_in_a_spec() -> None:
    bot = make_bot("search", seed=1, **parse_spec("search,bid_model=even,worlds=2")[1])
    assert isinstance(bot, SearchBot) and bot.bid_model is None
    assert isinstance(make_bot("search", bid_model=50), SearchBot)
