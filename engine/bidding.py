"""Which bids a seat may make: bid rules looked up by name, then the variant bids the ruleset allows.

A bid rule (ruleset.bid_rule, or the Crazy Spades hand type) says which numbers a seat may bid now,
0 meaning nil, and gives the sentence shown when a bid breaks it. `legal_bids` then adds the variant
bids the options allow (blind, no spade trumps, Moe, Bemo, 10 for 200). A bid is legal exactly when it
is in that list, so `apply` and `legal_actions` can never disagree.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final

from engine.actions import Bid
from engine.cards import CLUBS, DIAMONDS, HEARTS, CardMask, make_card
from engine.ordering import ROYAL_CARDS, CardOrder
from engine.ruleset import Ruleset

NINE_OF_SPADES: Final = make_card(7, 3)


@dataclass(slots=True)
class BidContext:
    """What a bid rule may look at. `hand` is the seat's cards (rules like Mirror need them)."""

    ruleset: Ruleset
    order: CardOrder
    rule: str
    seat: int
    hand: CardMask
    bids: Sequence[Bid | None]
    partner: int | None
    opponents: tuple[int, ...]

    @property
    def partner_bid(self) -> Bid | None:
        return None if self.partner is None else self.bids[self.partner]

    def ordinary(self) -> list[int]:
        """Nil (when allowed) and min_bid..max_bid."""
        r = self.ruleset
        numbers = list(range(r.min_bid, r.max_bid + 1))
        return [0, *numbers] if r.nil else numbers


Rule = Callable[[BidContext], tuple[list[int], str]]


def _free(ctx: BidContext) -> tuple[list[int], str]:
    r = ctx.ruleset
    numbers = ctx.ordinary()
    why = f"bid {r.min_bid} to {r.max_bid}" + (" or nil" if r.nil else "")
    partner = ctx.partner_bid
    if partner is not None and partner.is_nil and not r.double_nil and 0 in numbers:
        numbers.remove(0)
        why += "; both partners may not bid nil"
    if r.boston and ctx.partner is not None:
        opp_bids = [ctx.bids[s] for s in ctx.opponents]
        opp_double_nil = all(b is not None and b.is_nil for b in opp_bids)
        opp_boston = (
            all(b is not None for b in opp_bids)
            and sum(b.tricks for b in opp_bids if b is not None) >= ctx.ruleset.tricks_per_hand
        )
        if opp_double_nil and partner is not None:
            numbers = [n for n in numbers if n + partner.tricks < r.tricks_per_hand]
            why += "; no Boston after a double nil"
        if opp_boston and partner is not None and partner.is_nil and 0 in numbers:
            numbers.remove(0)
            why += "; no double nil after a Boston"
    return numbers, why


def _suicide(ctx: BidContext) -> tuple[list[int], str]:
    partner = ctx.partner_bid
    numbers, _ = _free(ctx)
    if partner is not None and not partner.is_nil:
        return [0], "suicide: one partner on each side must bid nil"
    return numbers, "suicide: one partner on each side must bid nil"


def _four_or_none(ctx: BidContext) -> tuple[list[int], str]:
    why = "four or none: one partner bids nil and the other four or more"
    high = list(range(max(4, ctx.ruleset.min_bid), ctx.ruleset.max_bid + 1))
    partner = ctx.partner_bid
    if partner is None:
        return [0, *high], why
    return (high if partner.is_nil else [0]), why


def _partnership_fourteen(ctx: BidContext) -> tuple[list[int], str]:
    why = "partnership fourteen: each side bids exactly 7, no bid below 2"
    partner = ctx.partner_bid
    if partner is None:
        return [2, 3, 4, 5], why
    return [7 - partner.tricks], why


def _count_rule(mask_of: Callable[[BidContext], CardMask], what: str) -> Rule:
    def rule(ctx: BidContext) -> tuple[list[int], str]:
        n = (ctx.hand & mask_of(ctx)).bit_count()
        return [n], f"bid the number of {what} you hold ({n})"

    return rule


def _fixed(numbers: list[int], why: str) -> Rule:
    def rule(ctx: BidContext) -> tuple[list[int], str]:
        return list(numbers), why

    return rule


def _all_blind(ctx: BidContext) -> tuple[list[int], str]:
    return ctx.ordinary(), "all around blind: everyone bids before looking"


def _partnership_mirror(ctx: BidContext) -> tuple[list[int], str]:
    partner = ctx.partner_bid
    if partner is None:
        numbers, _ = _free(ctx)
        return numbers, "partnership mirror: the second partner bids what the first bid"
    return [partner.tricks], "partnership mirror: bid what your partner bid"


def _crazy(ctx: BidContext) -> tuple[list[int], str]:
    if ctx.hand >> NINE_OF_SPADES & 1:
        return [9], "crazy: the holder of the 9 of spades bids nine"
    return [0], "crazy: everyone but the holder of the 9 of spades bids nil"


BID_RULE_IMPLEMENTATIONS: Final[dict[str, Rule]] = {
    "free": _free,
    "suicide": _suicide,
    "four_or_none": _four_or_none,
    "partnership_fourteen": _partnership_fourteen,
    "mirror": _count_rule(lambda ctx: ctx.order.trumps, "spades"),
    "bags_for_all": _fixed([1], "bags for all: everyone bids exactly one"),
    "clubs_mirror": _count_rule(lambda ctx: ctx.order.suit_masks[CLUBS], "clubs"),
    "hearts_mirror": _count_rule(lambda ctx: ctx.order.suit_masks[HEARTS], "hearts"),
    "diamonds_mirror": _count_rule(lambda ctx: ctx.order.suit_masks[DIAMONDS], "diamonds"),
    "all_nil": _fixed([0], "all nil: everyone bids nil"),
    "all_blind": _all_blind,
    "partnership_mirror": _partnership_mirror,
    "crazy": _crazy,
    "royalty": _count_rule(lambda ctx: ROYAL_CARDS, "aces, kings, queens and jacks"),
}
#: Rules under which a player chooses a number (so blind and special bids make sense).
CHOOSING_RULES: Final = frozenset({"free", "suicide", "four_or_none", "all_blind"})


def allowed_numbers(ctx: BidContext) -> tuple[list[int], str]:
    """The numbers (0 = nil) the rule allows this seat now, and the sentence explaining the rule."""
    return BID_RULE_IMPLEMENTATIONS[ctx.rule](ctx)


# Plain bids are made once: bidding is on every simulated hand's path.
_PLAIN: Final = tuple(tuple(Bid(seat, n) for n in range(18)) for seat in range(4))


def legal_bids(ctx: BidContext, *, looked: bool, may_blind_nil: bool) -> list[Bid]:
    """Every bid the seat may make now. An unlooked seat may only bid blind (it may also look first).

    `may_blind_nil` is the ruleset's blind nil condition (enabled, side far enough behind).
    """
    r = ctx.ruleset
    seat = ctx.seat
    numbers, _ = allowed_numbers(ctx)
    if ctx.rule == "all_blind":
        return [Bid(seat, n, blind=True) for n in numbers]
    if not looked:
        out = []
        if may_blind_nil and 0 in numbers and ctx.rule in CHOOSING_RULES:
            out.append(Bid(seat, 0, blind=True))
        if r.blind_bids and ctx.rule == "free":
            out.extend(Bid(seat, n, blind=True) for n in numbers if 1 <= n <= r.blind_bid_max)
        return out
    plain = _PLAIN[seat]
    bids = [plain[n] for n in numbers]
    if ctx.rule != "free" or ctx.partner is None:
        return bids
    if not (r.no_spade_trumps or r.bemo or r.moe or r.ten_for_200):
        return bids
    has_trump = bool(ctx.hand & ctx.order.trumps)
    for n in numbers:
        if n == 0:
            continue
        if r.no_spade_trumps and has_trump:
            bids.append(Bid(seat, n, no_trumps=True))
        if r.bemo:
            bids.append(Bid(seat, n, bemo="bemo"))
            bids.append(Bid(seat, n, bemo="big_bemo"))
    if r.moe:
        bids.append(Bid(seat, 0, moe="little"))
        bids.append(Bid(seat, 0, moe="big"))
    if r.ten_for_200 and 10 in numbers:
        bids.append(Bid(seat, 10, ten_for_200=True))
    return bids
