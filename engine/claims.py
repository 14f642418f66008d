"""TRAM ("the rest are mine"): does a claim hold against every possible play of the others?

The claim holds when there is a way for the claimer to play such that the claimer's side wins every
remaining trick whatever the other three (partner included: the claimer does not control them) play, with
the cards as they lie. A quick sufficient test (`quick_proof`: top trumps drawn first, then top cards)
settles the usual claim at once; otherwise an AND-OR search runs over copies of the game, using the engine's own
`legal_play_mask` and `play_fast`, so it can never disagree with the rules. Two cards of one suit held by
the same seat with no other live card between them are interchangeable, so only one of them is tried;
positions are memoised. The search stops before the last trick, which is forced, and resolves it directly.
"""

from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING

from engine.actions import Bid
from engine.cards import Card, cards_in
from engine.ordering import CardOrder

if TYPE_CHECKING:
    from engine.spades import SpadesGame

NODE_BUDGET = 20_000


def claim_award(
    claimer: int,
    held: bool,
    penalty: str,
    bids: Sequence[Bid | None],
    sides: Sequence[Sequence[int]],
) -> tuple[int, ...]:
    """The seats the rest of the hand's tricks go to after a claim, in turn (the first remaining trick
    to the first of them, the next to the next, round again): the claimer when the claim held; its
    opponents that did not bid nil (all of them if each did) when it failed under "forfeit_tricks";
    nobody otherwise (play goes on)."""
    if held:
        return (claimer,)
    if penalty != "forfeit_tricks":
        return ()
    mine = next(side for side in sides if claimer in side)
    opponents = [seat for seat in range(len(bids)) if seat not in mine]
    not_nil = [seat for seat in opponents if not (bid := bids[seat]) or not bid.is_nil]
    return tuple(not_nil or opponents)


def quick_proof(game: "SpadesGame", claimer: int) -> bool:
    """A sufficient condition checked in a few int ops: the claimer, on lead, holds trumps higher than
    every other trump and at least as many as any other seat (so leading them first draws every
    other trump), and each of its other cards is higher than every card of its suit held by the others
    (so, nobody being able to trump any more, each wins in turn)."""
    order = game.ruleset_order
    if game.turn != claimer or game.trick or game.forced_lead is not None:
        return False
    mine = game.hand(claimer)
    power = order.power
    trumps = order.trumps
    others = [game.hand(s) for s in range(game.players) if s != claimer]
    my_trumps = mine & trumps
    most_trumps = max((h & trumps).bit_count() for h in others)
    if most_trumps:
        if not my_trumps or my_trumps.bit_count() < most_trumps:
            return False
        may_lead_trumps = game.spades_broken and game.play_rule != "nothing_but_spades"
        if mine & ~trumps and not may_lead_trumps:
            return False
        lowest_mine = min(power[c] for c in cards_in(my_trumps))
        if any(power[c] >= lowest_mine for h in others for c in cards_in(h & trumps)):
            return False
    for suit in range(4):
        mask = order.suit_masks[suit]
        my_suit = mine & mask
        if not my_suit or mask == trumps:
            continue
        lowest_mine = min(power[c] for c in cards_in(my_suit))
        if any(power[c] >= lowest_mine for h in others for c in cards_in(h & mask)):
            return False
    return True


@cache
def _by_power(order: CardOrder) -> tuple[tuple[Card, ...], ...]:
    return tuple(
        tuple(sorted(cards_in(order.suit_masks[s]), key=lambda c: order.power[c])) for s in range(4)
    )


def representatives(game: "SpadesGame", seat: int, legal: int) -> list[Card]:
    """One card from each run of interchangeable legal cards of `seat`."""
    order = game.ruleset_order
    live_other = 0
    for other in range(game.players):
        if other != seat:
            live_other |= game.hand(other)
    for _, card in game.trick:
        live_other |= 1 << card
    reps: list[Card] = []
    for suit_cards in _by_power(order):
        in_run = False
        for card in suit_cards:
            if legal >> card & 1:
                if not in_run:
                    reps.append(card)
                    in_run = True
            elif live_other >> card & 1:
                in_run = False
    return reps


def claim_holds(game: "SpadesGame", claimer: int) -> bool:
    """True when the claimer's side surely wins every remaining trick. The game is not changed.

    If the search would exceed NODE_BUDGET positions the claim is judged not to hold (a claim that
    needs that much proof is not "the rest are mine").
    """
    if quick_proof(game, claimer):
        return True
    side = game.side_of(claimer)
    order = game.ruleset_order
    total = game.ruleset.tricks_per_hand
    memo: dict[tuple[object, ...], bool] = {}
    budget = [NODE_BUDGET]

    def ours(seat: int) -> bool:
        return game.side_of(seat) == side

    def search(g: "SpadesGame") -> bool:
        done = g.tricks_done
        if done >= total - 1 and not g.trick:
            # The last trick: every seat has one card left, so it plays itself.
            n = g.players
            leader = g.turn
            cards = [cards_in(g.hand((leader + i) % n))[0] for i in range(n)]
            return ours((leader + order.trick_winner_index(cards)) % n)
        key = (tuple(g.hand(s) for s in range(g.players)), g.trick, g.turn, g.spades_broken)
        known = memo.get(key)
        if known is not None:
            return known
        budget[0] -= 1
        if budget[0] < 0:
            raise _OutOfBudget
        seat = g.turn
        want_any = seat == claimer
        result = not want_any
        for card in representatives(g, seat, g.legal_play_mask(seat)):
            child = g.copy()
            child.play_fast(card)
            good = (
                ours(child.last_trick_winner) and search(child)
                if child.tricks_done > done
                else search(child)
            )
            if want_any and good:
                result = True
                break
            if not want_any and not good:
                result = False
                break
        memo[key] = result
        return result

    try:
        return search(game.copy())
    except _OutOfBudget:
        return False


class _OutOfBudget(Exception):
    pass
