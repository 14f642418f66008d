"""The heuristic's Spades: a bid from high cards and spade length, and a card from a few plain rules.

Bidding counts likely tricks: side-suit aces and guarded kings and queens, spades that will win by rank
or by length, and ruffs in short side suits. Nil is bid only with no high spade, no unguarded honour and
almost nothing that takes a trick; a partner's nil raises our bid by one, since we must cover it.

Play first picks a goal for the trick, then a card for it:
- *nil*: I bid nil and have no trick yet: stay under the winner with my highest safe card;
- *cover*: my partner's nil still stands: win the trick whenever my partner might;
- *take*: our side still needs tricks, or the opponents can still be set: try to win it;
- *duck*: we have made our bid and bags would only hurt: shed my highest card that loses.
Within *take*: second hand low, third hand high, never overtake a partner's sure winner, cheapest
winner last. Every rank judgment uses the cards still unplayed ("counting cards").
"""

from bots.samples.situation import (
    Situation,
    beaters,
    highest,
    is_boss,
    lowest,
    winning_play,
)
from engine.actions import Bid
from engine.cards import SPADES, Card, CardMask
from engine.ordering import CardOrder

# -- bidding ----------------------------------------------------------------------------------------


_TOP: dict[tuple[str, int], int] = {}


def _top_power(order: CardOrder, suit: int) -> int:
    """The highest power in a suit of this deck (the ace, or the big joker / the 2S above it)."""
    key = (order.name, suit)
    top = _TOP.get(key)
    if top is None:
        mask = order.suit_masks[suit] & order.deck
        top = _TOP[key] = max(order.power[c] for c in _cards(mask))
    return top


#: Per deck, suit, the suit's cards in the hand and the spades to spare for ruffs (0, 1, 2 or more):
#: the trick estimate's terms for that suit, in the order they are added, so that the sum is the
#: very same float as adding them one by one. The search's reading asks for the estimate of
#: hands that differ from the last by a card or two: most suits are then found here.
_TERMS: dict[tuple[str, int, CardMask, int], tuple[float, ...]] = {}


def estimate_tricks(hand: CardMask, order: CardOrder, players: int = 4) -> float:
    """Tricks this hand should take with ordinary play."""
    masks = order.suit_masks
    spade_mask = hand & masks[SPADES]
    total = 0.0
    for term in _suit_terms(order, SPADES, spade_mask, 0):
        total += term
    spare = min(max(spade_mask.bit_count() - 2, 0), 2)
    for suit in range(3):
        for term in _suit_terms(order, suit, hand & masks[suit], spare):
            total += term
    if players == 3:
        total *= 1.15  # fewer opponents to overtake
    return total


def _suit_terms(order: CardOrder, suit: int, mask: CardMask, spare: int) -> tuple[float, ...]:
    key = (order.name, suit, mask, spare)
    found = _TERMS.get(key)
    if found is None:
        found = _TERMS[key] = tuple(
            _spade_terms(order, mask) if suit == SPADES else _side_terms(order, suit, mask, spare)
        )
    return found


def _spade_terms(order: CardOrder, mask: CardMask) -> list[float]:
    terms: list[float] = []
    spades = sorted((order.power[c] for c in _cards(mask)), reverse=True)
    top_spade = _top_power(order, SPADES)
    # Spades: a spade wins when fewer higher spades are out than I hold lower ones to wait with.
    for index, power in enumerate(spades):
        higher_out = (top_spade - power) - index
        lower_mine = len(spades) - index - 1
        if higher_out <= 0:
            terms.append(1.0)
        elif higher_out <= lower_mine:
            terms.append(0.8 if higher_out == 1 else 0.55)
    terms.append(max(0, len(spades) - 4) * 0.6)  # long spades win late tricks
    return terms


def _side_terms(order: CardOrder, suit: int, mask: CardMask, spare: int) -> list[float]:
    terms: list[float] = []
    cards = _cards(mask)
    length = len(cards)
    top = _top_power(order, suit)
    powers = sorted((order.power[c] for c in cards), reverse=True)
    if powers and powers[0] == top:
        terms.append(1.0 if length <= 5 else 0.7)
    if length >= 2 and top - 1 in powers:
        terms.append(0.8 if top in powers else 0.55)
    if length >= 3 and top - 2 in powers and (top in powers or top - 1 in powers):
        terms.append(0.35)
    # Short side suits let spades ruff, if there are spades to spare.
    if spare > 0:
        if length == 0:
            terms.append(min(spare, 2) * 0.7)
        elif length == 1:
            terms.append(0.5)
    return terms


def nil_safe(hand: CardMask, order: CardOrder, estimate: float | None = None) -> bool:
    """Whether a nil is worth the risk: no high spade, few spades, every high card well guarded
    (`estimate`: the hand's four-handed `estimate_tricks`, when the caller has it already)."""
    spades = _cards(hand & order.suit_masks[SPADES])
    top = _top_power(order, SPADES)
    if len(spades) > 3 or any(order.power[c] >= top - 4 for c in spades):
        return False
    for suit in range(3):
        cards = _cards(hand & order.suit_masks[suit])
        suit_top = _top_power(order, suit)
        lows = sum(1 for c in cards if order.power[c] <= 5)
        for card in cards:
            danger = order.power[card] - (suit_top - 4)  # Q and above in a standard deck
            if danger > 0 and lows < 2 + danger:
                return False
    if estimate is None:
        estimate = estimate_tricks(hand, order)
    return estimate < 1.5


def choose_bid(
    legal: list[Bid],
    hand: CardMask,
    order: CardOrder,
    *,
    players: int,
    partner_bid: Bid | None,
    bags: int,
    bag_limit: int,
    bags_counted: bool,
    estimate: float | None = None,
) -> Bid:
    """The bid for this hand among the legal ones (`estimate`: the hand's `estimate_tricks`, when
    the caller has it already)."""
    plan = BidPlan(
        legal,
        players=players,
        partner_bid=partner_bid,
        bags=bags,
        bag_limit=bag_limit,
        bags_counted=bags_counted,
    )
    return plan.choose(hand, order, estimate)


class BidPlan:
    """`choose_bid` for one bidding position (the legal bids, the partner's bid, the bags), ready
    for many hands: the search's reading asks what the heuristic would have bid with each of the
    thousands of hands it weighs, and all that depends on the position is worked out once."""

    __slots__ = ("by_target", "candidates", "cap", "nil", "partner_nil", "players", "raises")

    def __init__(
        self,
        legal: list[Bid],
        *,
        players: int,
        partner_bid: Bid | None,
        bags: int,
        bag_limit: int,
        bags_counted: bool,
    ) -> None:
        plain = [
            b for b in legal if not (b.blind or b.moe or b.bemo or b.no_trumps or b.ten_for_200)
        ]
        plain = [b for b in plain if not b.double_nil]
        self.candidates = plain or legal
        self.players = players
        self.partner_nil = partner_bid is not None and partner_bid.is_nil
        self.nil = next((b for b in self.candidates if b.tricks == 0 and not b.moe), None)
        # The estimate's raises, added in this order (the same float every time).
        raises: list[float] = []
        if self.partner_nil:
            raises.append(1.0)  # covering a nil takes tricks we would otherwise leave
        if bags_counted and bags >= bag_limit - 3:
            raises.append(0.3)  # near the bag limit, bid our tricks rather than give them away
        self.raises = tuple(raises)
        self.cap = (
            max(1, 13 - partner_bid.tricks)
            if partner_bid is not None and not self.partner_nil
            else None
        )
        self.by_target: dict[int, Bid] = {}

    def choose(self, hand: CardMask, order: CardOrder, estimate: float | None = None) -> Bid:
        """The heuristic's bid with `hand` (`estimate`: its `estimate_tricks` for this many
        players, when the caller has it)."""
        if estimate is None:
            estimate = estimate_tricks(hand, order, self.players)
        if self.nil is not None and not self.partner_nil:
            four_handed = estimate if self.players == 4 else None
            if nil_safe(hand, order, four_handed):
                return self.nil
        for extra in self.raises:
            estimate += extra
        target = max(1, round(estimate))
        if self.cap is not None:
            target = min(target, self.cap)
        found = self.by_target.get(target)
        if found is None:
            numbered = [b for b in self.candidates if b.tricks > 0] or self.candidates
            found = self.by_target[target] = min(
                numbered, key=lambda b: (abs(b.tricks - target), -b.tricks)
            )
        return found


# -- play -------------------------------------------------------------------------------------------


def side_need(s: Situation, side_seats: tuple[int, ...]) -> int:
    """Tricks a side still needs for its contract (nil bidders' tricks do not help it)."""
    contract = 0
    taken = 0
    for seat in side_seats:
        bid = s.bids[seat]
        if bid is None:
            continue
        if bid.is_nil:
            continue
        contract += bid.tricks
        taken += s.tricks[seat]
    return contract - taken


def _sides(s: Situation) -> tuple[tuple[int, ...], tuple[int, ...]]:
    partner = s.partner
    mine = (s.seat,) if partner is None else (s.seat, partner)
    others = tuple(seat for seat in range(s.players) if seat not in mine)
    return mine, others


def _nil_alive(s: Situation, seat: int | None) -> bool:
    if seat is None:
        return False
    bid = s.bids[seat]
    return bid is not None and bid.is_nil and s.tricks[seat] == 0


#: With its side's bid made, the heuristic still takes tricks while the opponents need more than
#: the tricks left minus this many (they may yet be set); otherwise it ducks, to save bags.
SET_MARGIN = 3


def goal(s: Situation, set_margin: int = SET_MARGIN) -> str:
    """nil, cover, take or duck (see the module docstring)."""
    cache = s.goals
    if cache is None:
        return _goal(s, set_margin)
    key = (s.seat, s.tricks, set_margin)
    found = cache.get(key)
    if found is None:
        found = cache[key] = _goal(s, set_margin)
    return found


def _goal(s: Situation, set_margin: int) -> str:
    if _nil_alive(s, s.seat):
        return "nil"
    if _nil_alive(s, s.partner):
        return "cover"
    mine, others = _sides(s)
    need = side_need(s, mine)
    if need > 0:
        return "take"
    left = s.tricks_left
    opp_need = max((side_need(s, (seat,)) for seat in others), default=0)
    if s.partner is not None:
        opp_need = side_need(s, others)
    # The opponents can be set when they still need tricks and the rest are within our reach.
    if opp_need > 0 and opp_need > left - set_margin:
        return "take"
    if s.ruleset.bags != "off" or s.ruleset.overtrick_points < 0:
        return "duck"
    return "take"


def choose_play(s: Situation, set_margin: int = SET_MARGIN) -> Card:
    """The card the heuristic plays (`set_margin`: how hard it goes on trying to set the opponents
    once its side has its tricks; the search bot's own seat takes its `set_margin` option)."""
    legal = s.legal
    if legal & (legal - 1) == 0:
        return legal.bit_length() - 1
    order = s.order
    trumps = s.order.trumps
    unplayed = order.deck & ~s.played
    aim = goal(s, set_margin)
    if not s.trick:
        return _lead(s, aim, unplayed)
    win_seat, win_card = winning_play(order, s.trick, True)
    can_beat = beaters(order, legal, win_card, True)
    losers = legal & ~can_beat
    last = len(s.trick) == s.players - 1
    partner = s.partner
    partner_winning = partner is not None and win_seat == partner
    if aim == "nil":
        if losers:
            return highest(order, losers, trumps, side_first=True)
        return lowest(order, legal) if not last else highest(order, legal)
    if aim == "cover" and partner is not None:
        partner_played = any(seat == partner for seat, _ in s.trick)
        if partner_played and partner_winning:
            if can_beat:
                return _cheapest(order, can_beat, trumps)
            return lowest(order, legal, trumps)
        if not partner_played:
            # Partner plays after me: win high enough that the nil can stay under.
            if can_beat:
                return highest(order, can_beat, trumps, side_first=True)
            return highest(order, legal, trumps, side_first=True)
        aim = "take"
    if _nil_alive(s, win_seat) and win_seat not in (s.seat, partner) and losers:
        # An opponent's nil is winning this trick: leave it there.
        return highest(order, losers, trumps, side_first=True)
    if aim == "duck":
        if losers:
            return highest(order, losers, trumps, side_first=True)
        return highest(order, legal, trumps) if last else lowest(order, legal, trumps)
    # take
    if partner_winning and (last or _holds(s, win_card, unplayed)):
        return lowest(order, losers or legal, trumps)
    if not can_beat:
        return lowest(order, legal, trumps)
    position = len(s.trick)  # 1: second hand, 2: third hand, 3: fourth hand
    led_suit = order.suit[s.trick[0][1]]
    following = bool(legal & order.suit_masks[led_suit])
    if last:
        return _cheapest(order, can_beat, trumps)
    if position == 1 and following and s.players == 4:
        # Second hand low, unless a sure winner is at hand.
        sure = [c for c in _cards(can_beat) if is_boss(order, c, unplayed & ~(1 << c))]
        if sure and order.suit[sure[0]] == led_suit:
            return min(sure, key=lambda c: order.power[c])
        return lowest(order, losers or legal, trumps)
    if not following:
        # Ruff with the lowest trump that wins (the trick may still be overruffed, rarely).
        return _cheapest(order, can_beat, trumps)
    # Third hand high: the lowest of my top cards that still wins.
    return _top_of_sequence(order, can_beat, unplayed)


def _lead(s: Situation, aim: str, unplayed: CardMask) -> Card:
    order = s.order
    legal = s.legal
    trumps = order.trumps
    if aim in ("nil", "duck"):
        return lowest(order, legal, trumps)
    others = [seat for seat in range(s.players) if seat not in (s.seat, s.partner)]
    opp_void = 0
    for seat in others:
        opp_void |= s.voids[seat] if seat < len(s.voids) else 0
    # Cash side-suit winners the opponents cannot ruff.
    for card in _cards(legal & ~trumps):
        suit = order.suit[card]
        if is_boss(order, card, unplayed & ~(1 << card)) and not opp_void >> suit & 1:
            return card
    if aim == "cover":
        return highest(order, legal, trumps, side_first=True)
    # Draw trumps with the top spade when holding many.
    my_trumps = legal & trumps
    if my_trumps and my_trumps.bit_count() >= 4:
        top = highest(order, my_trumps)
        if is_boss(order, top, unplayed & ~(1 << top)):
            return top
    # A low card of a suit my partner is void in, else of my longest side suit.
    partner = s.partner
    if partner is not None and partner < len(s.voids):
        for suit in range(3):
            if s.voids[partner] >> suit & 1 and legal & order.suit_masks[suit]:
                return order.lowest(legal & order.suit_masks[suit])
    best_suit = max(
        range(4), key=lambda suit: ((legal & order.suit_masks[suit] & ~trumps).bit_count(), -suit)
    )
    side = legal & order.suit_masks[best_suit] & ~trumps
    return order.lowest(side) if side else lowest(order, legal, trumps)


def _holds(s: Situation, card: Card, unplayed: CardMask) -> bool:
    """Whether the partner's winning card should hold against the seats still to play."""
    order = s.order
    if not is_boss(order, card, unplayed & ~s.hand):
        return False
    if order.suit[card] == SPADES:
        return True
    # A side card can still be ruffed by an opponent shown void in its suit.
    played_seats = {seat for seat, _ in s.trick}
    to_play = [seat for seat in range(s.players) if seat not in played_seats and seat != s.seat]
    suit = order.suit[card]
    return not any(seat < len(s.voids) and s.voids[seat] >> suit & 1 for seat in to_play)


def _cheapest(order: CardOrder, mask: CardMask, trumps: CardMask) -> Card:
    return lowest(order, mask, trumps)


def _top_of_sequence(order: CardOrder, mask: CardMask, unplayed: CardMask) -> Card:
    """The lowest card of the run of my cards that are the top cards still out (else my highest)."""
    top = highest(order, mask)
    if not is_boss(order, top, unplayed & ~mask):
        return top
    best = top
    for card in sorted(_cards(mask), key=lambda c: -order.power[c]):
        if order.suit[card] == order.suit[top] and is_boss(order, card, unplayed & ~mask):
            best = card
    return best


def _cards(mask: CardMask) -> list[Card]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
