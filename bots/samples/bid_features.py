"""What the learned bid (`bid_model`) knows of a bid decision: the hand and the bids before it, as numbers.

One function, used both to make the training rows (bench/bid_data.py) and by the bot: a feature the
two compute differently would make the model answer a question it was not trained on. Plain
four-handed Spades with the standard deck only (the search's `plain_spades` tables).

The hand is described by what a player counts (the heuristic's trick estimate and bid, spade length
and honours, side aces and kings, short suits) and, since the trees find their own combinations, by
each suit's length and its three highest ranks. The table is described by my place in the bidding
and the bids already made: my partner's, and the two opponents' (their count, sum and nils), and by
the bags each side holds (a bag more is a point, or a hundred near the limit).
"""

from bots.samples import spades_policy
from engine.actions import Bid
from engine.cards import SPADES, SUIT_MASKS, CardMask, cards_in, rank_of
from engine.ordering import CardOrder

#: Ranks of an ace, king, queen and jack (0 is a two).
ACE, KING, QUEEN, JACK = 12, 11, 10, 9

#: The features, in order: the model's trees refer to them by index, so this list is its schema
#: (bench/bid_train.py writes it into the model, and the bot refuses a model whose list differs).
NAMES: tuple[str, ...] = (
    "estimate",
    "estimate_minus_base",
    "base",
    "nil_safe",
    "spades",
    "spade_ace",
    "spade_king",
    "spade_queen",
    "spade_jack",
    "side_aces",
    "side_kings",
    "side_queens",
    "voids",
    "singletons",
    "doubletons",
    "unguarded_honours",
    "position",
    "partner_bid_known",
    "partner_bid",
    "partner_nil",
    "opponent_bids_known",
    "opponent_bid_sum",
    "opponent_nils",
    "bids_before_sum",
    "my_bags",
    "their_bags",
    *(f"suit{suit}_length" for suit in range(4)),
    *(f"suit{suit}_top{k}" for suit in range(4) for k in range(3)),
)


def bid_features(
    hand: CardMask,
    order: CardOrder,
    *,
    position: int,
    partner_bid: Bid | None,
    opponent_bids: tuple[Bid | None, Bid | None],
    base: int,
    bags: tuple[int, int],
) -> list[float]:
    """The features of a bid with this hand at this place in the bidding (0: first to bid, after
    the dealer) when the heuristic would bid `base` and the sides hold these `bags` (mine, the
    opponents'), in the order of `NAMES`."""
    estimate = spades_policy.estimate_tricks(hand, order)
    suits = [_ranks(hand, suit) for suit in range(4)]
    spades = suits[SPADES]
    side = [suits[suit] for suit in range(4) if suit != SPADES]
    lengths = [len(ranks) for ranks in side]
    # Side aces, kings with no other card of their suit, queens with fewer than two: the cards a
    # nil fears.
    unguarded = sum(
        1
        for ranks in side
        for rank in ranks
        if (rank == KING and len(ranks) < 2) or (rank == QUEEN and len(ranks) < 3) or rank == ACE
    )
    known = [b for b in opponent_bids if b is not None]
    before = [b for b in (partner_bid, *opponent_bids) if b is not None]
    row = [
        estimate,
        estimate - base,
        float(base),
        float(spades_policy.nil_safe(hand, order)),
        float(len(spades)),
        float(ACE in spades),
        float(KING in spades),
        float(QUEEN in spades),
        float(JACK in spades),
        float(sum(ACE in ranks for ranks in side)),
        float(sum(KING in ranks for ranks in side)),
        float(sum(QUEEN in ranks for ranks in side)),
        float(lengths.count(0)),
        float(lengths.count(1)),
        float(lengths.count(2)),
        float(unguarded),
        float(position),
        float(partner_bid is not None),
        float(partner_bid.tricks if partner_bid is not None else -1),
        float(partner_bid is not None and partner_bid.is_nil),
        float(len(known)),
        float(sum(b.tricks for b in known)),
        float(sum(b.is_nil for b in known)),
        float(sum(b.tricks for b in before)),
        float(bags[0]),
        float(bags[1]),
    ]
    row.extend(float(len(ranks)) for ranks in suits)
    for ranks in suits:
        row.extend(float(ranks[k]) if k < len(ranks) else -1.0 for k in range(3))
    return row


def _ranks(hand: CardMask, suit: int) -> list[int]:
    """The ranks of the hand's cards of a suit, highest first."""
    return sorted((rank_of(card) for card in cards_in(hand & SUIT_MASKS[suit])), reverse=True)
