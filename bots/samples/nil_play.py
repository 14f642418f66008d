"""Nil as explicit cases, for the search bot's own seat in its playouts (and so in its plans).

The heuristic already plays its own nil (stay under the winner) and covers a partner's (win whenever
the partner might); against an opponent's nil it only leaves the nil bidder winning a trick it is
already winning. A side that sets a nil gains 100 points and the nil's side loses them, more than most
hands' contracts are worth, so while an opponent's nil stands this seat attacks it:

- leading, it leads low in a suit the nil bidder still holds (a low lead gives the nil bidder the
  fewest cards to duck under), its shortest such suit of side cards first;
- with the nil bidder still to play, it plays its lowest card, leaving the trick for the nil bidder to
  win if it must;
- with the nil bidder winning the trick, it plays its highest card that loses.

Otherwise (or with its own or its partner's nil to look after) it plays as the heuristic does, but
for one more try at a set: with its side's bid made it goes on taking tricks while the opponents
need more than the tricks left minus `SET_MARGIN` (4; the heuristic's margin is 3), where the
heuristic would start ducking to save bags.
"""

from bots.samples import spades_policy
from bots.samples.situation import Situation, beaters, highest, lowest, winning_play
from engine.cards import Card

#: The set margin of this seat's play (`spades_policy.choose_play`'s `set_margin`). Head to head, a
#: search seat whose playouts used 4 against one using the heuristic's 3 (both with a heuristic
#: partner) gained +2.74 [-0.09, +5.57] and +3.45 [+0.71, +6.19] a hand (two runs of 1,000 duplicate
#: pairs, docs/bots.md): in the search's plans a set the heuristic gives up on is still in reach.
SET_MARGIN = 4


def opponent_nil(s: Situation) -> int | None:
    """An opponent whose nil still stands (no trick taken yet), if any."""
    partner = s.partner
    for seat in range(s.players):
        if seat in (s.seat, partner):
            continue
        bid = s.bids[seat]
        if bid is not None and bid.is_nil and s.tricks[seat] == 0:
            return seat
    return None


def choose_play(s: Situation) -> Card:
    """The heuristic's card, but for the nil cases in the module docstring."""
    legal = s.legal
    if legal & (legal - 1) == 0:
        return legal.bit_length() - 1
    target = opponent_nil(s)
    if target is None or _own_nil_to_mind(s):
        return spades_policy.choose_play(s, SET_MARGIN)
    order = s.order
    trumps = order.trumps
    if not s.trick:
        voids = s.voids[target] if target < len(s.voids) else 0
        best: Card | None = None
        best_key: tuple[int, int, int] | None = None
        for suit in range(4):
            mine = legal & order.suit_masks[suit]
            if not mine or voids >> suit & 1:
                continue
            card = order.lowest(mine)
            key = (1 if mine & trumps else 0, mine.bit_count(), order.power[card])
            if best_key is None or key < best_key:
                best, best_key = card, key
        return best if best is not None else spades_policy.choose_play(s, SET_MARGIN)
    played = {seat for seat, _ in s.trick}
    if target not in played:
        return lowest(order, legal, trumps)
    win_seat, win_card = winning_play(order, s.trick, True)
    if win_seat == target:
        losers = legal & ~beaters(order, legal, win_card, True)
        if losers:
            return highest(order, losers, trumps, side_first=True)
    return spades_policy.choose_play(s, SET_MARGIN)


def _own_nil_to_mind(s: Situation) -> bool:
    """Whether my nil or my partner's still stands (the heuristic's own nil and cover play rule)."""
    for seat in (s.seat, s.partner):
        if seat is None:
            continue
        bid = s.bids[seat]
        if bid is not None and bid.is_nil and s.tricks[seat] == 0:
            return True
    return False
