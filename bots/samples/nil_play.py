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

Otherwise (or with its own or its partner's nil to look after) it plays as the heuristic does, with
the set margin it is given (`spades_policy.choose_play`'s `set_margin`: with its side's bid made,
how long it goes on taking tricks to set the opponents before ducking to save bags; the search
bot's `set_margin` option).
"""

from bots.samples import spades_policy
from bots.samples.situation import Situation, beaters, highest, lowest, winning_play
from engine.cards import Card


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


def choose_play(s: Situation, set_margin: int = spades_policy.SET_MARGIN) -> Card:
    """The heuristic's card, but for the nil cases in the module docstring."""
    legal = s.legal
    if legal & (legal - 1) == 0:
        return legal.bit_length() - 1
    target = opponent_nil(s)
    if target is None or _own_nil_to_mind(s):
        return spades_policy.choose_play(s, set_margin)
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
        return best if best is not None else spades_policy.choose_play(s, set_margin)
    played = {seat for seat, _ in s.trick}
    if target not in played:
        return lowest(order, legal, trumps)
    win_seat, win_card = winning_play(order, s.trick, True)
    if win_seat == target:
        losers = legal & ~beaters(order, legal, win_card, True)
        if losers:
            return highest(order, losers, trumps, side_first=True)
    return spades_policy.choose_play(s, set_margin)


def _own_nil_to_mind(s: Situation) -> bool:
    """Whether my nil or my partner's still stands (the heuristic's own nil and cover play rule)."""
    for seat in (s.seat, s.partner):
        if seat is None:
            continue
        bid = s.bids[seat]
        if bid is not None and bid.is_nil and s.tricks[seat] == 0:
            return True
    return False
