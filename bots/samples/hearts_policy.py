"""The heuristic's Hearts: pass the dangerous cards, stay under the trick, shed the queen and hearts.

No moon shooting: the heuristic simply avoids points. It counts the queen of spades and plays its high
spades safely once she is gone.
"""

from bots.samples.situation import Situation, beaters, highest, winning_play
from engine.cards import CLUBS, DIAMONDS, HEARTS, SPADES, Card, CardMask, make_card
from engine.ordering import CardOrder

QUEEN_OF_SPADES = make_card(10, SPADES)
KING_OF_SPADES = make_card(11, SPADES)
ACE_OF_SPADES = make_card(12, SPADES)
HIGH_SPADES = (1 << KING_OF_SPADES) | (1 << ACE_OF_SPADES)


def choose_pass(hand: CardMask, order: CardOrder, count: int) -> list[Card]:
    """The cards to pass: the queen and her guards if spades are short, high hearts, then the highest
    cards of the shortest side suit (to make a void)."""
    chosen: list[Card] = []
    spades = hand & order.suit_masks[SPADES]
    low_spades = sum(1 for c in _cards(spades) if order.power[c] < 10)
    if hand >> QUEEN_OF_SPADES & 1 and low_spades < 4:
        chosen.append(QUEEN_OF_SPADES)
    if low_spades < 3:
        chosen.extend(c for c in (ACE_OF_SPADES, KING_OF_SPADES) if hand >> c & 1)
    for card in sorted(_cards(hand & order.suit_masks[HEARTS]), key=lambda c: -order.power[c]):
        if order.power[card] >= 9:
            chosen.append(card)
    short = sorted((CLUBS, DIAMONDS), key=lambda s: (hand & order.suit_masks[s]).bit_count())
    for suit in short:
        chosen.extend(sorted(_cards(hand & order.suit_masks[suit]), key=lambda c: -order.power[c]))
    chosen.extend(sorted(_cards(hand), key=lambda c: -order.power[c]))
    out: list[Card] = []
    for card in chosen:
        if card not in out:
            out.append(card)
        if len(out) == count:
            break
    return out


def choose_play(s: Situation) -> Card:
    """The card the heuristic plays in Hearts."""
    legal = s.legal
    if legal & (legal - 1) == 0:
        return legal.bit_length() - 1
    order = s.order
    queen_out = not (s.played >> QUEEN_OF_SPADES & 1)
    if not s.trick:
        return _lead(s, queen_out)
    _, win_card = winning_play(order, s.trick, False)
    led = order.suit[s.trick[0][1]]
    following = legal & order.suit_masks[led]
    if not following:
        return _discard(s, queen_out)
    can_beat = beaters(order, legal, win_card, False)
    losers = legal & ~can_beat
    last = len(s.trick) == s.players - 1
    points_in_trick = any(_points(c) for _, c in s.trick)
    if losers:
        # Stay under: shed my highest card that still loses (not the queen onto a spade lead? she
        # loses here, so she goes).
        return highest(order, losers)
    # Every card wins: last to play and no points, take it with the highest; else the lowest.
    if last and not points_in_trick:
        safe = legal & ~(1 << QUEEN_OF_SPADES)
        return highest(order, safe or legal)
    avoid_queen = legal & ~(1 << QUEEN_OF_SPADES)
    return order.lowest(avoid_queen or legal)


def _lead(s: Situation, queen_out: bool) -> Card:
    order = s.order
    legal = s.legal
    hold_queen = s.hand >> QUEEN_OF_SPADES & 1
    best: Card = -1
    best_key: tuple[int, int] | None = None
    for card in _cards(legal):
        suit = order.suit[card]
        power = order.power[card]
        risk = power
        if suit == HEARTS:
            risk += 6
        if suit == SPADES and queen_out and (card == QUEEN_OF_SPADES or 1 << card & HIGH_SPADES):
            risk += 20
        if suit == SPADES and not hold_queen and queen_out and power < 10:
            risk -= 4  # flush the queen out with a low spade
        key = (risk, card)
        if best_key is None or key < best_key:
            best, best_key = card, key
    return best


def _discard(s: Situation, queen_out: bool) -> Card:
    order = s.order
    legal = s.legal
    if legal >> QUEEN_OF_SPADES & 1:
        return QUEEN_OF_SPADES
    if queen_out and legal & HIGH_SPADES:
        return highest(order, legal & HIGH_SPADES)
    hearts = legal & order.suit_masks[HEARTS]
    if hearts:
        return highest(order, hearts)
    return highest(order, legal)


def _points(card: Card) -> int:
    if card == QUEEN_OF_SPADES:
        return 13
    return 1 if card // 13 == HEARTS and card < 52 else 0


def _cards(mask: CardMask) -> list[Card]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
