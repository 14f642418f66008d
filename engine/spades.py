"""`SpadesGame`: the Spades state machine for every preset and option (docs/rules.md).

State is plain ints, bit masks and short lists, so `copy()` is cheap and the hot path is a few int ops:
`legal_play_mask(seat)` computes legal plays as a mask (pseudo-legal: the hand; filtered by follow-suit,
spades broken and the play rule), and `play_fast(card)` plays a card without checks or events. `apply()`
validates, uses the same two methods, and only then builds events. Bots searching the game should use
`legal_play_mask` / `play_fast` during play and `legal_actions` / `apply` elsewhere.
"""

import random
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Final, TypeAlias

from engine import claims, scoring
from engine.actions import (
    Action,
    Bid,
    Claim,
    DeclareDeficient,
    Discard,
    ExchangeCards,
    KeepDrawn,
    LookAtHand,
    PassCards,
    PlayCard,
)
from engine.bidding import CHOOSING_RULES, BidContext, allowed_numbers, legal_bids
from engine.cards import SUIT_NAMES, Card, CardMask, card_text, cards_in, mask_of
from engine.deal import commitment
from engine.dealing import DealtHands, deal_hands
from engine.errors import IllegalAction, RulesetError
from engine.events import (
    BidMade,
    CardDrawn,
    CardPlayed,
    CardsDiscarded,
    CardsExchanged,
    CardsGiven,
    ClaimMade,
    DealDeclaredDead,
    DrawResolved,
    Event,
    GameOver,
    HandDealt,
    HandLooked,
    HandScored,
    SpadesBroken,
    TrickWon,
)
from engine.game import Outcome, Phase
from engine.history import DeadDeal, HandHistory, Transfer
from engine.ordering import FACE_CARDS, ORDERS, TRUMP, CardOrder
from engine.ruleset import Ruleset
from engine.views import PublicView, SeatView

_PLAYING: Final = Phase.PLAYING
_NOBODY: Final[frozenset[int]] = frozenset()
_CARD_OF_BIT: Final[dict[int, Card]] = {1 << card: card for card in range(54)}
_ONE_SEAT: Final = tuple((seat,) for seat in range(4))
# The ranks (0..12) set in each 13-bit value: one suit of a mask at a time.
_RANKS_IN: Final = tuple(tuple(r for r in range(13) if value >> r & 1) for value in range(8192))
# CardPlayed events by seat, card and trick index, made once: events are frozen values.
_CARD_PLAYED: Final = tuple(
    tuple(tuple(CardPlayed(seat, card, trick + 1) for trick in range(17)) for card in range(54))
    for seat in range(4)
)
# The PlayCard actions, made once (legal_actions hands out shared frozen objects).
_PLAY_ACTIONS: Final = tuple(tuple(PlayCard(seat, card) for card in range(54)) for seat in range(4))

# Legal ordinary bids, shared by every game of a ruleset (a pure cache, kept small).
_BidMemo: TypeAlias = dict[tuple[object, ...], tuple[list[Bid], frozenset[int]]]
_BID_MEMOS: dict[Ruleset, _BidMemo] = {}


def _bid_memo_for(ruleset: Ruleset) -> _BidMemo:
    memo = _BID_MEMOS.get(ruleset)
    if memo is None:
        if len(_BID_MEMOS) >= 64:
            _BID_MEMOS.clear()
        memo = _BID_MEMOS[ruleset] = {}
    return memo


# Opponents per seat: partnerships in four-handed play, everyone else otherwise.
_OPPONENTS: Final = {
    4: ((1, 3), (0, 2), (1, 3), (0, 2)),
    3: ((1, 2), (0, 2), (0, 1)),
    2: ((1,), (0,)),
}
_TWO_HANDED_DISCARD: Final = 3


class SpadesGame:
    """One game of Spades under a ruleset. See engine.game.Game for the interface."""

    __slots__ = (
        "_actions",
        "_bags",
        "_bid_cache",
        "_bid_memo",
        "_bid_order",
        "_bid_rule",
        "_bids",
        "_blind_nil_ok",
        "_break_on_play",
        "_broken",
        "_claim",
        "_dead",
        "_dealer",
        "_dealt",
        "_discard_turns",
        "_discarded",
        "_discards",
        "_drawn",
        "_exchanges",
        "_exposed",
        "_face_up",
        "_forced_lead",
        "_forfeit",
        "_given",
        "_hand_number",
        "_hand_type",
        "_hands",
        "_histories",
        "_keys",
        "_last_leader",
        "_last_trick",
        "_leader",
        "_led",
        "_looked",
        "_mask_value",
        "_mask_version",
        "_n",
        "_order",
        "_outcome",
        "_partner_of",
        "_pending",
        "_phase",
        "_plain_bidding",
        "_play_actions",
        "_play_rule",
        "_played",
        "_plays",
        "_predraw",
        "_received",
        "_ruleset",
        "_scores",
        "_seed",
        "_set_aside",
        "_sides",
        "_stock",
        "_stock_pos",
        "_suit",
        "_suit_masks",
        "_transfers",
        "_trick",
        "_tricks",
        "_tricks_per_hand",
        "_trumps",
        "_turn",
        "_version",
        "_winners",
    )

    def __init__(self, ruleset: Ruleset, *, dealer: int = 0) -> None:
        if ruleset.game != "spades":
            raise RulesetError("game", "SpadesGame plays Spades rulesets only")
        if not 0 <= dealer < ruleset.players:
            raise RulesetError("dealer", f"must be a seat from 0 to {ruleset.players - 1}")
        order = ORDERS[ruleset.deck]
        self._ruleset = ruleset
        self._order = order
        self._n = ruleset.players
        self._sides = ruleset.sides
        self._tricks_per_hand = ruleset.tricks_per_hand
        self._suit = order.suit
        self._suit_masks = order.suit_masks
        self._trumps = order.trumps
        self._keys = order.trick_keys
        self._break_on_play = ruleset.spades_break == "played"
        # Bids that depend on nothing but the seat, whether it looked and its partner's nil.
        self._plain_bidding = not (ruleset.boston or ruleset.no_spade_trumps)
        self._bid_memo = _bid_memo_for(ruleset)
        self._partner_of: tuple[int | None, ...] = (
            (2, 3, 0, 1) if ruleset.partnerships else (None,) * ruleset.players
        )
        self._phase = Phase.DEALING
        self._version = 0
        self._hand_number = 0
        self._dealer = dealer
        self._scores = [0] * len(self._sides)
        self._bags = [0] * len(self._sides)
        self._histories: list[HandHistory | _Finished] = []
        self._outcome: Outcome | None = None
        self._dead: list[DeadDeal] = []
        self._reset_hand()

    def _reset_hand(self) -> None:
        n = self._n
        self._seed = b""
        self._hand_type = ""
        self._bid_rule = self._ruleset.bid_rule
        self._play_rule = self._ruleset.play_rule
        self._hands = [0] * n
        self._dealt: tuple[CardMask, ...] = (0,) * n
        self._face_up = [0] * n
        self._exposed = [0] * n
        self._set_aside = 0
        self._discarded = 0
        self._looked = [True] * n
        self._blind_nil_ok = [False] * n
        self._bids: list[Bid | None] = [None] * n
        self._bid_order: list[Bid] = []
        self._bid_cache: tuple[int, int, list[Bid], frozenset[int]] = (-1, -1, [], frozenset())
        self._mask_version = -1  # legal_play_mask of the seat to play, cached for this version
        self._mask_value = 0
        self._actions: list[Action] = []
        self._play_actions: list[tuple[int, Action]] = []
        self._turn = 0
        self._leader = 0
        self._trick: list[Card] = []
        self._led = -1
        self._broken = False
        self._tricks = [0] * n
        self._plays: list[int] = []  # seat << 6 | card, in play order
        self._winners: list[int] = []
        self._played = 0
        self._last_trick: list[Card] = []
        self._last_leader = -1
        self._forced_lead = -1
        self._exchanges: list[tuple[int, int]] = []  # (blind nil bidder, partner) still to exchange
        self._pending: dict[int, tuple[Card, ...]] = {}
        self._given: list[tuple[Card, ...]] = [()] * n
        self._received: list[tuple[Card, ...]] = [()] * n
        self._transfers: list[Transfer] = []
        self._stock: tuple[Card, ...] = ()
        self._stock_pos = 0
        self._drawn = -1
        self._discards = 0
        self._predraw: list[int] = []
        self._discard_turns: list[int] = []
        self._claim: tuple[int, bool] | None = None
        self._forfeit: set[int] = set()

    def copy(self) -> "SpadesGame":
        """An independent copy for search: a few ints and short lists (about 3 us mid-play).

        Lists the play phase never changes are shared while playing; every new hand makes new ones.
        """
        o = SpadesGame.__new__(SpadesGame)
        o._bags = self._bags.copy()
        o._bid_cache = self._bid_cache
        o._bid_memo = self._bid_memo
        o._plain_bidding = self._plain_bidding
        o._partner_of = self._partner_of
        o._bid_rule = self._bid_rule
        o._break_on_play = self._break_on_play
        o._broken = self._broken
        o._claim = self._claim
        o._dealer = self._dealer
        o._dealt = self._dealt
        o._discarded = self._discarded
        o._discards = self._discards
        o._drawn = self._drawn
        o._exposed = self._exposed.copy()
        o._forced_lead = self._forced_lead
        o._forfeit = self._forfeit.copy()
        o._hand_number = self._hand_number
        o._hand_type = self._hand_type
        o._hands = self._hands.copy()
        o._histories = self._histories.copy()
        o._keys = self._keys
        o._last_leader = self._last_leader
        o._last_trick = self._last_trick
        o._leader = self._leader
        o._led = self._led
        o._mask_value = self._mask_value
        o._mask_version = self._mask_version
        o._n = self._n
        o._order = self._order
        o._outcome = self._outcome
        o._pending = self._pending.copy()
        o._phase = self._phase
        o._play_actions = self._play_actions.copy()
        o._play_rule = self._play_rule
        o._played = self._played
        o._plays = self._plays.copy()
        o._ruleset = self._ruleset
        o._scores = self._scores.copy()
        o._seed = self._seed
        o._set_aside = self._set_aside
        o._sides = self._sides
        o._stock = self._stock
        o._stock_pos = self._stock_pos
        o._suit = self._suit
        o._suit_masks = self._suit_masks
        o._trick = self._trick.copy()
        o._tricks = self._tricks.copy()
        o._tricks_per_hand = self._tricks_per_hand
        o._trumps = self._trumps
        o._turn = self._turn
        o._version = self._version
        o._winners = self._winners.copy()
        if self._phase is _PLAYING:
            o._actions = self._actions
            o._bid_order = self._bid_order
            o._bids = self._bids
            o._blind_nil_ok = self._blind_nil_ok
            o._dead = self._dead
            o._discard_turns = self._discard_turns
            o._exchanges = self._exchanges
            o._face_up = self._face_up
            o._given = self._given
            o._looked = self._looked
            o._predraw = self._predraw
            o._received = self._received
            o._transfers = self._transfers
        else:
            o._actions = self._actions.copy()
            o._bid_order = self._bid_order.copy()
            o._bids = self._bids.copy()
            o._blind_nil_ok = self._blind_nil_ok.copy()
            o._dead = self._dead.copy()
            o._discard_turns = self._discard_turns.copy()
            o._exchanges = self._exchanges.copy()
            o._face_up = self._face_up.copy()
            o._given = self._given.copy()
            o._looked = self._looked.copy()
            o._predraw = self._predraw.copy()
            o._received = self._received.copy()
            o._transfers = self._transfers.copy()
        return o

    # -- the Game protocol: facts ---------------------------------------------------------------------
    @property
    def ruleset(self) -> Ruleset:
        return self._ruleset

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def version(self) -> int:
        return self._version

    @property
    def hand_number(self) -> int:
        return self._hand_number

    @property
    def players(self) -> int:
        return self._n

    @property
    def dealer(self) -> int:
        return self._dealer

    @property
    def is_over(self) -> bool:
        return self._outcome is not None

    @property
    def outcome(self) -> Outcome | None:
        return self._outcome

    @property
    def histories(self) -> list[HandHistory]:
        raw = self._histories
        for index, item in enumerate(raw):
            if isinstance(item, _Finished):
                raw[index] = item.build()
        return raw  # type: ignore[return-value]

    @property
    def scores(self) -> tuple[int, ...]:
        return tuple(self._scores)

    @property
    def bags(self) -> tuple[int, ...]:
        """Bags per side (for last-digit bags: the last digit of the score)."""
        return tuple(self._bags)

    @property
    def hand_type(self) -> str:
        """The Crazy Spades hand type of the current hand ("" without a schedule)."""
        return self._hand_type

    @property
    def turn(self) -> int:
        """The seat whose turn it is in bidding and play."""
        return self._turn

    @property
    def trick(self) -> tuple[tuple[int, Card], ...]:
        """The trick in progress: (seat, card) in play order."""
        n, lead = self._n, self._leader
        return tuple(((lead + i) % n, card) for i, card in enumerate(self._trick))

    @property
    def tricks(self) -> tuple[int, ...]:
        """Tricks won per seat this hand."""
        return tuple(self._tricks)

    @property
    def bids(self) -> tuple[Bid | None, ...]:
        """Bids per seat this hand (None until made)."""
        return tuple(self._bids)

    @property
    def ruleset_order(self) -> CardOrder:
        """The card-order tables of this game's deck."""
        return self._order

    @property
    def play_rule(self) -> str:
        """The play rule in force this hand: normal, pressure or nothing_but_spades."""
        return self._play_rule

    @property
    def bid_rule(self) -> str:
        """The bid rule in force this hand (ruleset.bid_rule, or the Crazy hand type's)."""
        return self._bid_rule

    @property
    def forced_lead(self) -> Card | None:
        """The card that must be led to the first trick (lowest club rule), until it is led."""
        return self._forced_lead if self._forced_lead >= 0 else None

    @property
    def tricks_done(self) -> int:
        """Tricks completed this hand."""
        return len(self._winners)

    @property
    def last_trick_winner(self) -> int:
        """The winner of the last completed trick (-1 before the first)."""
        return self._winners[-1] if self._winners else -1

    @property
    def spades_broken(self) -> bool:
        return self._broken

    @property
    def played(self) -> CardMask:
        """Every card played this hand."""
        return self._played

    def hand(self, seat: int) -> CardMask:
        """The cards `seat` holds now (the engine's truth: not redacted; use view() for players)."""
        return self._hands[seat]

    def side_of(self, seat: int) -> int:
        """The index in `scores` of the side `seat` plays for."""
        return seat % 2 if self._n == 4 else seat

    def partner(self, seat: int) -> int | None:
        """The partner's seat in four-handed play, else None."""
        return self._partner_of[seat]

    def to_act(self) -> tuple[int, ...]:
        phase = self._phase
        if phase is _PLAYING or phase is Phase.BIDDING:
            return _ONE_SEAT[self._turn]
        if phase is Phase.EXCHANGING:
            return self._exchange_to_act()
        if phase is Phase.DRAWING:
            return (self._predraw[0],) if self._predraw else (self._turn,)
        if phase is Phase.DISCARDING:
            return (self._discard_turns[0],)
        return ()

    # -- the hot path ---------------------------------------------------------------------------------
    def legal_play_mask(self, seat: int) -> CardMask:
        """The cards `seat` may play now, as a mask (0 when it is not that seat's turn to play)."""
        if seat != self._turn or self._phase is not _PLAYING:
            return 0
        hand = self._hands[seat]
        rule = self._play_rule
        if not self._trick:
            if self._forced_lead >= 0:
                return 1 << self._forced_lead
            if not self._broken or rule == "nothing_but_spades":
                other = hand & ~self._trumps
                if other:
                    return other
            return hand
        follow = hand & self._suit_masks[self._led]
        if follow:
            return follow
        if rule == "normal":
            return hand
        if rule == "pressure":
            trumps = hand & self._trumps
            return trumps or hand
        other = hand & ~self._trumps
        return other or hand

    def play_fast(self, card: Card) -> None:
        """Play `card` for the seat to play, without any check or event (the caller checked it is in
        `legal_play_mask`). Completes the trick, and the hand, when it is the last card. Counts in
        `version` like any applied action."""
        seat = self._turn
        bit = 1 << card
        self._version += 1
        self._hands[seat] ^= bit
        self._played |= bit
        trick = self._trick
        trick.append(card)
        self._plays.append(seat << 6 | card)
        if bit & self._trumps and self._break_on_play:
            self._broken = True
        count = len(trick)
        if count == 1:
            self._led = self._suit[card]
            self._forced_lead = -1
        if count < self._n:
            seat += 1
            self._turn = 0 if seat == self._n else seat
            return
        keys = self._keys[self._led]
        best = -2
        index = 0
        for i, played in enumerate(trick):
            key = keys[played]
            if key > best:
                best = key
                index = i
        winner = (self._leader + index) % count
        if best >= 100 and self._led != TRUMP:
            self._broken = True  # the "trumped" rule: a spade won a trick led in another suit
        self._tricks[winner] += 1
        winners = self._winners
        winners.append(winner)
        self._last_trick = trick
        self._last_leader = self._leader
        self._trick = []
        self._leader = self._turn = winner
        if len(winners) == self._tricks_per_hand:
            self._finish_hand()

    def play_to_end(self, choose: Callable[[CardMask], Card]) -> None:
        """Play the rest of the hand, `choose(legal_mask)` picking each card."""
        while self._phase is _PLAYING:
            self.play_fast(choose(self.legal_play_mask(self._turn)))

    def playout(self, rng: random.Random) -> None:
        """Play uniformly random legal cards to the end of the hand (and score it): a Monte Carlo
        playout, drawing only from `rng`. Does nothing outside the play phase.

        Card for card the same as choosing `int(rng.random() * n)`-th lowest of the n cards in
        `legal_play_mask` and calling `play_fast` (a test checks it), but four-handed it runs a whole
        trick per loop pass over local variables: playouts are what a searching bot spends its time on.
        """
        if self._phase is not _PLAYING:
            return
        rand = rng.random
        # Finish the trick in progress card by card, then play whole tricks at a time.
        while self._trick and self._phase is _PLAYING:
            mask = self.legal_play_mask(self._turn)
            k = int(rand() * mask.bit_count())
            while k:
                mask &= mask - 1
                k -= 1
            self.play_fast((mask & -mask).bit_length() - 1)
        if self._phase is not _PLAYING:
            return
        if self._n == 4 and self._play_rule == "normal":
            self._playout_four(rand)
            return
        while self._phase is _PLAYING:
            mask = self.legal_play_mask(self._turn)
            k = int(rand() * mask.bit_count())
            while k:
                mask &= mask - 1
                k -= 1
            self.play_fast((mask & -mask).bit_length() - 1)

    def _playout_four(self, rand: Callable[[], float]) -> None:
        """Four-handed playout from the start of a trick under the normal play rule: one loop pass
        per trick, everything in locals (the rules of legal_play_mask and play_fast, unrolled)."""
        card_of = _CARD_OF_BIT
        hands = self._hands
        plays = self._plays
        winners = self._winners
        tricks = self._tricks
        suit = self._suit
        suit_masks = self._suit_masks
        trumps = self._trumps
        others = ~trumps
        keys_by_led = self._keys
        total = self._tricks_per_hand
        break_on_play = self._break_on_play
        turn = self._turn
        broken = self._broken
        played = self._played
        forced = self._forced_lead
        version = self._version
        while True:
            s0 = turn
            hand = hands[s0]
            if forced >= 0:
                m = 1 << forced
                forced = -1
            elif broken:
                m = hand
            else:
                m = hand & others or hand
            k = rand() * m.bit_count()
            while k >= 1.0:
                m &= m - 1
                k -= 1.0
            b0 = m & -m
            hands[s0] = hand ^ b0
            c0 = card_of[b0]
            led = suit[c0]
            follow = suit_masks[led]
            s1 = (s0 + 1) & 3
            hand = hands[s1]
            m = hand & follow or hand
            k = rand() * m.bit_count()
            while k >= 1.0:
                m &= m - 1
                k -= 1.0
            b1 = m & -m
            hands[s1] = hand ^ b1
            s2 = (s0 + 2) & 3
            hand = hands[s2]
            m = hand & follow or hand
            k = rand() * m.bit_count()
            while k >= 1.0:
                m &= m - 1
                k -= 1.0
            b2 = m & -m
            hands[s2] = hand ^ b2
            s3 = (s0 + 3) & 3
            hand = hands[s3]
            m = hand & follow or hand
            k = rand() * m.bit_count()
            while k >= 1.0:
                m &= m - 1
                k -= 1.0
            b3 = m & -m
            hands[s3] = hand ^ b3
            c1 = card_of[b1]
            c2 = card_of[b2]
            c3 = card_of[b3]
            all_bits = b0 | b1 | b2 | b3
            played |= all_bits
            if all_bits & trumps and break_on_play:
                broken = True
            keys = keys_by_led[led]
            best = keys[c0]
            w = s0
            key = keys[c1]
            if key > best:
                best = key
                w = s1
            key = keys[c2]
            if key > best:
                best = key
                w = s2
            key = keys[c3]
            if key > best:
                best = key
                w = s3
            if best >= 100 and led != TRUMP:
                broken = True
            plays += (s0 << 6 | c0, s1 << 6 | c1, s2 << 6 | c2, s3 << 6 | c3)
            version += 4
            tricks[w] += 1
            winners.append(w)
            turn = w
            if len(winners) == total:
                break
        self._version = version
        self._trick = []
        self._turn = self._leader = turn
        self._led = led
        self._broken = broken
        self._played = played
        self._forced_lead = forced
        self._last_trick = [c0, c1, c2, c3]
        self._last_leader = s0
        self._finish_hand()

    # -- dealing --------------------------------------------------------------------------------------
    def deal(self, seed: bytes) -> list[Event]:
        """Deal the next hand from `seed` (phase DEALING only; else IllegalAction, state unchanged)."""
        if self._phase is not Phase.DEALING:
            raise IllegalAction("wrong_phase", "a hand is dealt only between hands")
        if not isinstance(seed, bytes) or not seed:
            raise IllegalAction("bad_seed", "a seed is a non-empty byte string")
        return self._begin_hand(seed, deal_hands(self._ruleset, seed, self._dealer))

    def deal_fixed(
        self,
        hands: Sequence[CardMask],
        *,
        face_up: Sequence[CardMask] | None = None,
        set_aside: CardMask = 0,
        stock: Sequence[Card] = (),
    ) -> list[Event]:
        """Deal these exact hands (tests, puzzles, analysis) instead of a seeded deal; two-handed
        games take a `stock` instead. Such hands are not reproducible from their records' seed.
        Raises IllegalAction outside DEALING or when the cards are not a proper deal."""
        if self._phase is not Phase.DEALING:
            raise IllegalAction("wrong_phase", "a hand is dealt only between hands")
        n = self._n
        if n == 2:
            if sorted(stock) != list(self._order.cards):
                raise IllegalAction("bad_deal", "the stock must hold the whole deck")
            dealt = DealtHands((0, 0), (0, 0), 0, tuple(stock))
        else:
            up = tuple(face_up) if face_up is not None else (0,) * n
            total = 0
            for hand in hands:
                if hand & total:
                    raise IllegalAction("bad_deal", "a card is dealt twice")
                total |= hand
            if len(hands) != n or len(up) != n or total | set_aside != self._order.deck:
                raise IllegalAction("bad_deal", "the hands must share out the whole deck")
            dealt = DealtHands(tuple(hands), up, set_aside, ())
        return self._begin_hand(b"fixed", dealt)

    def _begin_hand(self, seed: bytes, dealt: DealtHands) -> list[Event]:
        r = self._ruleset
        self._reset_hand()
        self._hand_number += 1
        self._seed = seed
        if r.hand_schedule:
            self._hand_type = r.hand_type(self._hand_number)
            self._bid_rule, self._play_rule = r.rules_for_hand(self._hand_number)
        n = self._n
        first = (self._dealer + 1) % n
        self._version += 1
        if r.blind_nil:
            for seat in range(n):
                self._blind_nil_ok[seat] = self._behind(seat) >= r.blind_nil_behind
        if n == 2:
            self._stock = dealt.stock
            self._phase = Phase.DRAWING
            self._turn = first
            if r.two_player_double_nil:
                self._predraw = [first, 1 - first]
                self._looked = [False, False]
            events: list[Event] = [self._dealt_event()]
            if not self._predraw:
                events.append(self._draw())
            return events
        self._hands = list(dealt.hands)
        self._dealt = dealt.hands
        self._face_up = list(dealt.face_up)
        self._set_aside = dealt.set_aside
        if r.blind_nil or r.blind_bids or self._bid_rule == "all_blind":
            for seat in range(n):
                self._looked[seat] = not self._may_bid_blind(seat)
        if r.deck == "jokers":
            self._looked[self._dealer] = True
            self._phase = Phase.DISCARDING
            self._discard_turns = [self._dealer]
        else:
            self._start_bidding()
        return [self._dealt_event()]

    def _dealt_event(self) -> HandDealt:
        return HandDealt(
            hand_number=self._hand_number,
            dealer=self._dealer,
            hands=tuple(self._hands),
            face_up=tuple(self._face_up),
            hidden=tuple(seat for seat, looked in enumerate(self._looked) if not looked)
            if False in self._looked
            else (),
            hand_type=self._hand_type,
            commitment=commitment(self._seed),
        )

    def _behind(self, seat: int) -> int:
        """How far `seat`'s side trails the best other side (negative when ahead)."""
        mine = self.side_of(seat)
        others = [score for index, score in enumerate(self._scores) if index != mine]
        return max(others) - self._scores[mine]

    def _may_bid_blind(self, seat: int) -> bool:
        r = self._ruleset
        rule = self._bid_rule
        if rule == "all_blind":
            return True
        if r.blind_bids and rule == "free":
            return True
        return self._blind_nil_ok[seat] and rule in CHOOSING_RULES

    def _start_bidding(self) -> None:
        self._phase = Phase.BIDDING
        self._turn = (self._dealer + 1) % self._n
        if all(b is not None for b in self._bids):
            self._after_bidding()
            return
        while self._bids[self._turn] is not None:
            self._turn = (self._turn + 1) % self._n

    def _start_play(self) -> None:
        r = self._ruleset
        n = self._n
        self._phase = _PLAYING
        if r.first_lead == "dealer":
            leader = self._dealer
        elif r.first_lead == "lowest_club":
            clubs = self._suit_masks[0]
            held = 0
            for hand in self._hands:
                held |= hand & clubs
            lowest = self._order.lowest(held)
            leader = next(s for s in range(n) if self._hands[s] >> lowest & 1)
            self._forced_lead = lowest
        else:
            leader = (self._dealer + 1) % n
        self._leader = self._turn = leader

    # -- legal actions --------------------------------------------------------------------------------
    def legal_actions(self, seat: int) -> list[Action]:
        phase = self._phase
        if phase is _PLAYING:
            mask = self.legal_play_mask(seat)
            if mask:
                self._mask_version = self._version  # apply() will ask again
                self._mask_value = mask
            plays = _PLAY_ACTIONS[seat]
            actions: list[Action] = []
            base = ((mask & -mask).bit_length() - 1) // 13 * 13 if mask else 0
            rest = mask >> base
            while rest:  # a suit (13 bits) at a time, through the table of each suit's ranks
                chunk = rest & 8191
                if chunk:
                    actions += [plays[base + rank] for rank in _RANKS_IN[chunk]]
                rest >>= 13
                base += 13
            if mask and self._ruleset.tram and not self._trick and self._claim is None:
                actions.append(Claim(seat))
            return actions
        if phase is Phase.BIDDING:
            out: list[Action] = []
            if seat == self._turn:
                if not self._looked[seat] and self._bid_rule != "all_blind":
                    out.append(LookAtHand(seat))
                out.extend(self._legal_bids(seat))
            if self._ruleset.deficient_hands and self._deficient_reason(seat):
                out.append(DeclareDeficient(seat))
            return out
        if phase is Phase.EXCHANGING:
            if seat not in self._exchange_to_act():
                return []
            k = self._ruleset.blind_nil_exchange
            return [
                ExchangeCards(seat, combo) for combo in combinations(cards_in(self._hands[seat]), k)
            ]
        if phase is Phase.DISCARDING:
            if seat != self._discard_turns[0]:
                return []
            hand = cards_in(self._hands[seat])
            if self._n == 2:
                return [
                    Discard(seat, ()),
                    *(Discard(seat, c) for c in combinations(hand, _TWO_HANDED_DISCARD)),
                ]
            return [Discard(seat, combo) for combo in combinations(hand, 2)]
        if phase is Phase.DRAWING:
            if seat not in self.to_act():
                return []
            if self._predraw:
                return [LookAtHand(seat), Bid(seat, 0, double_nil=True)]
            return [KeepDrawn(seat, True), KeepDrawn(seat, False)]
        return []

    def _bid_context(self, seat: int) -> BidContext:
        partner = self.partner(seat)
        opponents = _OPPONENTS[self._n][seat]
        return BidContext(
            ruleset=self._ruleset,
            order=self._order,
            rule=self._bid_rule,
            seat=seat,
            hand=self._hands[seat],
            bids=self._bids,
            partner=partner,
            opponents=opponents,
        )

    def _legal_bids(self, seat: int) -> list[Bid]:
        return self._legal_bid_entry(seat)[2]

    def _legal_bid_entry(self, seat: int) -> tuple[int, int, list[Bid], frozenset[int]]:
        """(version, seat, legal bids, their ids): cached for the current version, because
        legal_actions() then apply() ask the same question; the ids make `apply` a set lookup."""
        cached = self._bid_cache
        if cached[0] == self._version and cached[1] == seat:
            return cached
        # Ordinary bidding depends only on these few facts, so the lists are shared (read-only).
        key: tuple[object, ...] | None = None
        if self._plain_bidding and self._bid_rule == "free":
            partner = self._partner_of[seat]
            partner_bid = None if partner is None else self._bids[partner]
            key = (
                seat,
                self._looked[seat],
                self._blind_nil_ok[seat],
                partner_bid is not None and partner_bid.is_nil,
            )
            known = self._bid_memo.get(key)
            if known is not None:
                entry = self._bid_cache = (self._version, seat, known[0], known[1])
                return entry
        bids = legal_bids(
            self._bid_context(seat),
            looked=self._looked[seat],
            may_blind_nil=self._blind_nil_ok[seat],
        )
        ids = frozenset(map(id, bids))
        if key is not None:
            self._bid_memo[key] = (bids, ids)
        entry = self._bid_cache = (self._version, seat, bids, ids)
        return entry

    def _deficient_reason(self, seat: int) -> str:
        r = self._ruleset
        if not r.deficient_hands or self._phase is not Phase.BIDDING or not self._looked[seat]:
            return ""
        partner = self.partner(seat)
        if self._bids[seat] is not None or (partner is not None and self._bids[partner]):
            return ""
        hand = self._hands[seat]
        spades = (hand & self._trumps).bit_count()
        for condition in r.deficient_hands:
            if (
                (condition == "no_spades" and spades == 0)
                or (condition == "one_spade" and spades == 1)
                or (condition == "no_face_cards" and not hand & FACE_CARDS)
            ):
                return condition
        return ""

    def _exchange_to_act(self) -> tuple[int, ...]:
        if not self._exchanges:
            return ()
        nil_seat, partner = self._exchanges[0]
        if self._ruleset.blind_nil_exchange_order == "nil_first":
            return (partner,) if nil_seat in self._pending else (nil_seat,)
        return tuple(s for s in (nil_seat, partner) if s not in self._pending)

    # -- apply ----------------------------------------------------------------------------------------
    def apply(self, action: Action) -> list[Event]:
        """Apply `action` and return its events. Raises IllegalAction (code + sentence) when the rules
        do not allow it now; the state is then exactly as before."""
        # Fast lanes for the two common actions, by the seat whose turn it is.
        if type(action) is PlayCard and self._phase is _PLAYING and action.seat == self._turn:
            return self._apply_play(action)
        if type(action) is Bid and self._phase is Phase.BIDDING and action.seat == self._turn:
            return self._apply_bid(action)
        if self._outcome is not None:
            raise IllegalAction("game_over", "the game is over")
        seat = getattr(action, "seat", None)
        if not isinstance(seat, int) or not 0 <= seat < self._n:
            raise IllegalAction("bad_seat", f"there is no seat {seat!r} at this table")
        if isinstance(action, PlayCard):
            return self._apply_play(action)
        if isinstance(action, Bid):
            return self._apply_bid(action)
        if isinstance(action, LookAtHand):
            return self._apply_look(action)
        if isinstance(action, ExchangeCards):
            return self._apply_exchange(action)
        if isinstance(action, Discard):
            return self._apply_discard(action)
        if isinstance(action, KeepDrawn):
            return self._apply_keep(action)
        if isinstance(action, DeclareDeficient):
            return self._apply_deficient(action)
        if isinstance(action, Claim):
            return self._apply_claim(action)
        if isinstance(action, PassCards):
            raise IllegalAction("wrong_phase", "cards are passed only in Hearts")
        raise IllegalAction("bad_action", f"unknown action {action!r}")

    def _expect(self, phase: Phase, seat: int, what: str) -> None:
        if self._phase is not phase:
            raise IllegalAction(
                "wrong_phase", f"you cannot {what} now: the game is {self._phase.value}"
            )
        if seat not in self.to_act():
            raise IllegalAction("not_your_turn", f"it is not your turn to {what}")

    def _apply_play(self, action: PlayCard) -> list[Event]:
        seat, card = action.seat, action.card
        if self._phase is not _PLAYING or seat != self._turn:
            self._expect(_PLAYING, seat, "play")
        mask = (
            self._mask_value if self._mask_version == self._version else self.legal_play_mask(seat)
        )
        if type(card) is not int or not 0 <= card < 54 or not mask >> card & 1:
            if type(card) is not int or not 0 <= card < 54 or not self._hands[seat] >> card & 1:
                raise IllegalAction("card_not_in_hand", f"you do not hold {_text(card)}")
            raise self._play_error(seat, card)
        done = len(self._winners)
        was_broken = self._broken
        self.play_fast(card)  # counts the version
        played = _CARD_PLAYED[seat][card][done]
        if len(self._winners) == done and self._broken == was_broken:
            return [played]
        events: list[Event] = [played]
        if self._broken and not was_broken:
            events.append(SpadesBroken(seat))
        if len(self._winners) > done:
            events.append(TrickWon(self._winners[-1], done + 1, self._trick_plays(done + 1)))
        if self._phase is not _PLAYING:
            events.extend(self._hand_end_events())
        return events

    def _trick_plays(self, trick_number: int) -> tuple[tuple[int, Card], ...]:
        start = (trick_number - 1) * self._n
        plays = self._plays[start : start + self._n]
        return tuple((p >> 6, p & 63) for p in plays)

    def _play_error(self, seat: int, card: Card) -> IllegalAction:
        hand = self._hands[seat]
        if not self._trick:
            if self._forced_lead >= 0:
                return IllegalAction(
                    "must_lead_card", f"the first trick is led with the {_text(self._forced_lead)}"
                )
            if self._play_rule == "nothing_but_spades":
                return IllegalAction(
                    "no_spades_yet", "nothing but spades: no spade until you hold only spades"
                )
            return IllegalAction("spades_not_broken", "spades are not broken: lead another suit")
        led = self._led
        if hand & self._suit_masks[led]:
            return IllegalAction(
                "must_follow_suit", f"must follow suit: you hold {SUIT_NAMES[led]}"
            )
        if self._play_rule == "pressure":
            return IllegalAction(
                "must_trump", "the pressure is on: you hold spades, so you must trump"
            )
        return IllegalAction(
            "no_spades_yet", "nothing but spades: no spade until you hold only spades"
        )

    def _apply_bid(self, bid: Bid) -> list[Event]:
        seat = bid.seat
        if self._phase is Phase.DRAWING and bid.double_nil:
            self._expect(Phase.DRAWING, seat, "bid double nil")
            if not self._predraw:
                raise IllegalAction("wrong_phase", "double nil is bid before the first draw")
            if bid != Bid(seat, 0, double_nil=True):
                raise IllegalAction(
                    "bid_out_of_range", "before the draw the only bid is double nil"
                )
            self._version += 1
            self._predraw.pop(0)
            self._record_bid(bid)
            events: list[Event] = [BidMade(seat, bid)]
            if not self._predraw:
                events.append(self._draw())
            return events
        if self._phase is not Phase.BIDDING or seat != self._turn:
            self._expect(Phase.BIDDING, seat, "bid")
        entry = self._legal_bid_entry(seat)
        # Identity first: legal_actions() hands out shared objects, and dataclass == is slow.
        if id(bid) not in entry[3] and bid not in entry[2]:
            raise self._bid_error(bid, entry[2])
        self._version += 1
        self._record_bid(bid)
        events = [BidMade(seat, bid)]
        if not self._looked[seat]:
            self._looked[seat] = True
            events.append(HandLooked(seat, self._hands[seat]))
        if len(self._bid_order) == self._n:
            self._after_bidding()
        else:
            self._turn = (seat + 1) % self._n
            while self._bids[self._turn] is not None:
                self._turn = (self._turn + 1) % self._n
        return events

    def _record_bid(self, bid: Bid) -> None:
        self._bids[bid.seat] = bid
        self._bid_order.append(bid)
        self._actions.append(bid)

    def _bid_error(self, bid: Bid, legal: list[Bid]) -> IllegalAction:
        seat = bid.seat
        if bid.blind and self._looked[seat]:
            return IllegalAction(
                "already_looked", "you have seen your cards: a blind bid is too late"
            )
        if self._bid_rule == "all_blind" and not bid.blind:
            return IllegalAction("blind_hand", "all around blind: everyone bids blind")
        if not self._looked[seat] and not bid.blind:
            return IllegalAction(
                "look_first", "look at your cards first, or bid blind without looking"
            )
        if bid.blind and not any(b.blind for b in legal):
            return IllegalAction("blind_not_allowed", "a blind bid is not allowed here")
        _, why = allowed_numbers(self._bid_context(seat))
        return IllegalAction("bid_out_of_range", f"{bid.describe()} is not allowed: {why}")

    def _after_bidding(self) -> None:
        r = self._ruleset
        if r.blind_nil_exchange and r.partnerships:
            for bid in self._bid_order:
                if bid.blind and bid.tricks == 0:
                    partner = (bid.seat + 2) % 4
                    if not any(partner in pair for pair in self._exchanges):
                        self._exchanges.append((bid.seat, partner))
        if self._exchanges:
            self._phase = Phase.EXCHANGING
        else:
            self._start_play()

    def _apply_look(self, action: LookAtHand) -> list[Event]:
        seat = action.seat
        if self._phase is Phase.DRAWING:
            self._expect(Phase.DRAWING, seat, "decline double nil")
            if not self._predraw:
                raise IllegalAction("wrong_phase", "the draw has started")
            self._version += 1
            self._predraw.pop(0)
            self._looked[seat] = True
            self._actions.append(action)
            events: list[Event] = [HandLooked(seat, 0)]
            if not self._predraw:
                events.append(self._draw())
            return events
        self._expect(Phase.BIDDING, seat, "look at your cards")
        if self._looked[seat]:
            raise IllegalAction("already_looked", "you have already seen your cards")
        if self._bid_rule == "all_blind":
            raise IllegalAction("blind_hand", "all around blind: bid before looking")
        self._version += 1
        self._looked[seat] = True
        self._actions.append(action)
        return [HandLooked(seat, self._hands[seat])]

    def _check_cards(self, seat: int, cards: tuple[Card, ...], count: int, what: str) -> None:
        if len(cards) != count:
            raise IllegalAction(f"bad_{what}", f"{what} exactly {count} cards")
        if len(set(cards)) != len(cards):
            raise IllegalAction(f"bad_{what}", "the same card is listed twice")
        for card in cards:
            if not isinstance(card, int) or not 0 <= card < 54 or not self._hands[seat] >> card & 1:
                raise IllegalAction("card_not_in_hand", f"you do not hold {_text(card)}")

    def _apply_exchange(self, action: ExchangeCards) -> list[Event]:
        seat, cards = action.seat, tuple(action.cards)
        self._expect(Phase.EXCHANGING, seat, "exchange cards")
        self._check_cards(seat, cards, self._ruleset.blind_nil_exchange, "exchange")
        self._version += 1
        self._actions.append(action)
        nil_seat, partner = self._exchanges[0]
        other = partner if seat == nil_seat else nil_seat
        self._pending[seat] = cards
        self._given[seat] = cards
        events: list[Event] = [CardsGiven(seat, other, cards)]
        if self._ruleset.blind_nil_exchange_order == "nil_first":
            # 001: the partner picks the cards up, then chooses what to return.
            self._hands[seat] ^= mask_of(cards)
            self._hands[other] |= mask_of(cards)
            self._received[other] = cards
            self._transfers.append(Transfer(seat, other, cards))
            events.append(CardsExchanged(seat, other, cards))
            if seat == partner:
                self._finish_exchange()
            return events
        if len(self._pending) == 2:
            # 003: both put their cards down first; neither sees what comes back before giving.
            for giver, receiver in ((nil_seat, partner), (partner, nil_seat)):
                given = self._pending[giver]
                self._hands[giver] ^= mask_of(given)
                self._hands[receiver] |= mask_of(given)
                self._received[receiver] = given
                self._transfers.append(Transfer(giver, receiver, given))
                events.append(CardsExchanged(giver, receiver, given))
            self._finish_exchange()
        return events

    def _finish_exchange(self) -> None:
        self._pending = {}
        self._exchanges.pop(0)
        if not self._exchanges:
            self._start_play()

    def _apply_discard(self, action: Discard) -> list[Event]:
        seat, cards = action.seat, tuple(action.cards)
        self._expect(Phase.DISCARDING, seat, "discard")
        if self._n == 2:
            if cards:
                self._check_cards(seat, cards, _TWO_HANDED_DISCARD, "discard")
        else:
            self._check_cards(seat, cards, 2, "discard")
        self._version += 1
        self._actions.append(action)
        self._discard_turns.pop(0)
        events: list[Event] = [CardsDiscarded(seat, cards)]
        if self._n == 2:
            if cards:
                taken = self._redraw(seat, cards)
                events.append(HandLooked(seat, self._hands[seat]))
                self._received[seat] = taken
            if not self._discard_turns:
                self._start_bidding()
            return events
        self._hands[seat] ^= mask_of(cards)
        self._discarded |= mask_of(cards)
        self._start_bidding()
        return events

    def _redraw(self, seat: int, cards: tuple[Card, ...]) -> tuple[Card, ...]:
        """Two-handed double nil: three cards drawn at random (from the hand's seed) from the discard
        pile as it was, then the three discarded cards join the pile."""
        from engine.deal import shuffled

        pile = cards_in(self._discards)
        taken = tuple(shuffled(self._seed + b"/redraw/" + bytes([seat]), pile)[:3])
        # The three go face down, out of play (the Discard action records them); the public,
        # face-up discard pile loses the three taken.
        self._discards ^= mask_of(taken)
        self._discarded |= mask_of(cards)
        self._hands[seat] = (self._hands[seat] ^ mask_of(cards)) | mask_of(taken)
        return taken

    def _draw(self) -> CardDrawn:
        card = self._stock[self._stock_pos]
        self._stock_pos += 1
        self._drawn = card
        return CardDrawn(self._turn, card)

    def _apply_keep(self, action: KeepDrawn) -> list[Event]:
        seat = action.seat
        self._expect(Phase.DRAWING, seat, "draw")
        if self._predraw:
            raise IllegalAction("wrong_phase", "double nil is decided before the first draw")
        self._version += 1
        self._actions.append(action)
        drawn = self._drawn
        following = self._stock[self._stock_pos]
        self._stock_pos += 1
        taken, discarded = (drawn, following) if action.keep else (following, drawn)
        self._hands[seat] |= 1 << taken
        self._discards |= 1 << discarded
        self._drawn = -1
        events: list[Event] = [DrawResolved(seat, action.keep, taken, discarded)]
        if self._stock_pos < len(self._stock):
            self._turn = 1 - seat
            events.append(self._draw())
            return events
        self._dealt = tuple(self._hands)
        self._looked = [True, True]
        doubles = [b.seat for b in self._bid_order if b.double_nil]
        if doubles:
            self._phase = Phase.DISCARDING
            self._discard_turns = doubles
        else:
            self._start_bidding()
        return events

    def _apply_deficient(self, action: DeclareDeficient) -> list[Event]:
        seat = action.seat
        if self._phase is not Phase.BIDDING:
            raise IllegalAction("wrong_phase", "a deficient hand is declared before bidding")
        reason = self._deficient_reason(seat)
        if not reason:
            raise IllegalAction(
                "not_deficient",
                "you may declare a deficient hand only before your side bids, holding "
                + " or ".join(c.replace("_", " ") for c in self._ruleset.deficient_hands),
            )
        hand = self._hands[seat]
        self._version += 1
        self._dead.append(DeadDeal(self._dealer, self._seed, seat))
        self._dealer = (self._dealer + 1) % self._n
        self._hand_number -= 1
        self._reset_hand()
        self._phase = Phase.DEALING
        return [DealDeclaredDead(seat, hand, reason, self._dealer)]

    def _apply_claim(self, action: Claim) -> list[Event]:
        seat = action.seat
        self._expect(_PLAYING, seat, "claim")
        r = self._ruleset
        if not r.tram:
            raise IllegalAction("no_claims", "TRAM claims are not played at this table")
        if self._trick or self._claim is not None:
            raise IllegalAction("bad_claim", "claim the rest when it is your lead")
        held = claims.claim_holds(self, seat)
        self._version += 1
        self._play_actions.append((len(self._plays), action))
        self._claim = (seat, held)
        hand = self._hands[seat]
        penalty = "" if held else r.tram_penalty
        events: list[Event] = [ClaimMade(seat, hand, held, penalty)]
        if held:
            self._award_rest([seat])
        elif penalty == "exposed":
            self._exposed[seat] = hand
        elif penalty == "forfeit_tricks":
            opponents = [s for s in range(self._n) if self.side_of(s) != self.side_of(seat)]
            not_nil = [s for s in opponents if not (b := self._bids[s]) or not b.is_nil]
            self._award_rest(not_nil or opponents)
        else:
            self._forfeit.add(self.side_of(seat))
        if self._phase is not _PLAYING:
            events.extend(self._hand_end_events())
        return events

    def _award_rest(self, seats: list[int]) -> None:
        remaining = self._tricks_per_hand - len(self._winners)
        for i in range(remaining):
            winner = seats[i % len(seats)]
            self._tricks[winner] += 1
            self._winners.append(winner)
        self._finish_hand()

    # -- end of a hand --------------------------------------------------------------------------------
    def _finish_hand(self) -> None:
        # Scores only: the history, and the scoring notes for people, are built when asked for.
        r = self._ruleset
        bids: list[Bid] = self._bids  # type: ignore[assignment]  # everyone has bid by now
        spade_winners = self._spade_winners() if r.no_spade_trumps else _NOBODY
        scores = self._scores
        bags = self._bags
        before = tuple(scores)
        bags_before = tuple(bags)
        bostons: list[int] = []
        score_side = scoring.score_side
        for index, seats in enumerate(self._sides):
            result = score_side(
                r,
                seats,
                bids,
                self._tricks,
                self._winners,
                score=scores[index],
                bags=bags[index],
                spade_winners=spade_winners,
                forfeit=index in self._forfeit,
            )
            scores[index] = result.after
            bags[index] = result.bags_after
            if result.boston:
                bostons.append(index)
        self._histories.append(_Finished(self, before, bags_before, spade_winners))
        self._dead = []
        outcome = self._outcome = self._game_result(bostons)
        if outcome is not None:
            self._phase = Phase.GAME_OVER
        else:
            self._phase = Phase.DEALING
            self._dealer = (self._dealer + 1) % self._n

    def _spade_winners(self) -> frozenset[int]:
        """Seats that won a trick with a spade (a "no spade trumps" bid then fails)."""
        n = self._n
        found = set()
        for t, winner in enumerate(self._winners):
            for p in self._plays[t * n : (t + 1) * n]:
                if p >> 6 == winner and (1 << (p & 63)) & self._trumps:
                    found.add(winner)
        return frozenset(found)

    def _hand_end_events(self) -> list[Event]:
        """HandScored (and GameOver) for the hand that just ended."""
        raw = self._histories[-1]
        if isinstance(raw, _Finished):
            scored = raw.scored_event()
        else:
            scored = HandScored(
                hand_number=raw.hand_number,
                sides=raw.sides,
                tricks=raw.tricks,
                before=raw.score_before,
                delta=raw.score_delta,
                after=raw.score_after,
                bags_after=raw.bags_after,
                seed=raw.seed.hex(),
                notes=raw.notes,
            )
        events: list[Event] = [scored]
        if self._outcome is not None:
            outcome = self._outcome
            events.append(GameOver(outcome.winners, outcome.scores, outcome.reason))
        return events

    def _game_result(self, bostons: list[int]) -> Outcome | None:
        r = self._ruleset
        scores = self._scores
        if bostons:
            return self._outcome_for(bostons[0], "boston")
        best = max(scores)
        leaders = [i for i, score in enumerate(scores) if score == best]
        if r.max_hands and self._hand_number >= r.max_hands:
            # The game is that many hands long (Crazy Spades: 15); level scores then are a draw.
            if len(leaders) != 1:
                return Outcome((), tuple(scores), self._sides, "draw")
            return self._outcome_for(leaders[0], "hands")
        if len(leaders) != 1:
            return None  # a true tie past the target (or at the floor) plays on
        if r.losing_floor_enabled and min(scores) <= r.losing_floor:
            return self._outcome_for(leaders[0], "floor")
        if r.target_score and best >= r.target_score:
            return self._outcome_for(leaders[0], "target")
        return None

    def _outcome_for(self, side: int, reason: str) -> Outcome:
        return Outcome(self._sides[side], tuple(self._scores), self._sides, reason)

    # -- views ----------------------------------------------------------------------------------------
    def _public_fields(self) -> dict[str, object]:
        n = self._n
        last = tuple(((self._last_leader + i) % n, c) for i, c in enumerate(self._last_trick))
        return {
            "game": "spades",
            "players": n,
            "phase": self._phase.value,
            "version": self._version,
            "hand_number": self._hand_number,
            "dealer": self._dealer,
            "hand_type": self._hand_type,
            "to_act": self.to_act(),
            "sides": self._sides,
            "scores": tuple(self._scores),
            "bags": tuple(self._bags),
            "bids": tuple(self._bids),
            "hand_sizes": tuple(h.bit_count() for h in self._hands),
            "face_up": tuple(f & h for f, h in zip(self._face_up, self._hands, strict=True)),
            "exposed": tuple(e & h for e, h in zip(self._exposed, self._hands, strict=True)),
            "looked": tuple(self._looked),
            "leader": self._leader,
            "trick": self.trick,
            "trick_number": min(len(self._winners) + 1, self._tricks_per_hand),
            "last_trick": last,
            "last_winner": self._winners[-1] if self._winners else -1,
            "tricks": tuple(self._tricks),
            "played": self._played,
            "broken": self._broken,
            "discards": self._discards,
            "winners": self._outcome.winners if self._outcome else (),
        }

    def spectator_view(self) -> PublicView:
        return PublicView(**self._public_fields())  # type: ignore[arg-type]

    def view(self, seat: int) -> SeatView:
        if not 0 <= seat < self._n:
            raise IllegalAction("bad_seat", f"there is no seat {seat} at this table")
        looked = self._looked[seat]
        legal = []
        choose: set[int] = set()
        for action in self.legal_actions(seat):
            if isinstance(action, ExchangeCards | Discard):
                choose.add(len(action.cards))  # hundreds of combinations: the count is enough
            else:
                legal.append(action)
        drawn = self._drawn if self._phase is Phase.DRAWING and self._turn == seat else -1
        return SeatView(
            **self._public_fields(),  # type: ignore[arg-type]
            seat=seat,
            hand=self._hands[seat] if looked else None,
            given=self._given[seat],
            received=self._received[seat],
            drawn=None if drawn < 0 else drawn,
            legal=tuple(legal),
            choose_cards=tuple(sorted(choose)),
        )


def _text(card: object) -> str:
    if isinstance(card, int) and 0 <= card < 54:
        return card_text(card)
    return repr(card)


class _Finished:
    """A finished hand's raw facts, turned into a HandHistory on demand. It keeps references to the
    game's lists: they are never changed after the hand ends (the next deal makes new ones)."""

    __slots__ = (
        "actions",
        "bags_after",
        "bags_before",
        "before",
        "bid_order",
        "bids",
        "claim",
        "dead",
        "dealer",
        "dealt",
        "discarded",
        "face_up",
        "forfeit",
        "hand_number",
        "hand_type",
        "play_actions",
        "players",
        "plays",
        "ruleset",
        "score_after",
        "seed",
        "set_aside",
        "sides",
        "spade_winners",
        "transfers",
        "tricks",
        "winners",
    )

    def __init__(
        self,
        game: SpadesGame,
        before: tuple[int, ...],
        bags_before: tuple[int, ...],
        spade_winners: frozenset[int],
    ) -> None:
        self.hand_number = game._hand_number
        self.dealer = game._dealer
        self.seed = game._seed
        self.players = game._n
        self.hand_type = game._hand_type
        self.dealt = game._dealt
        self.face_up = tuple(game._face_up)
        self.set_aside = game._set_aside
        self.discarded = game._discarded
        self.bid_order = game._bid_order
        self.transfers = game._transfers
        self.plays = game._plays
        self.winners = game._winners
        self.tricks = tuple(game._tricks)
        self.sides = game._sides
        self.score_after = tuple(game._scores)
        self.bags_after = tuple(game._bags)
        self.actions = game._actions
        self.play_actions = game._play_actions
        self.dead = tuple(game._dead)
        self.claim = game._claim
        self.bids: list[Bid] = game._bids  # type: ignore[assignment]  # every seat has bid
        self.ruleset = game._ruleset
        self.before = before
        self.bags_before = bags_before
        self.spade_winners = spade_winners
        self.forfeit = frozenset(game._forfeit)

    def build(self) -> HandHistory:
        actions: list[Action] = list(self.actions)
        extra = sorted(self.play_actions, key=lambda item: item[0])
        position = 0
        for index, p in enumerate(self.plays):
            while position < len(extra) and extra[position][0] == index:
                actions.append(extra[position][1])
                position += 1
            actions.append(_PLAY_ACTIONS[p >> 6][p & 63])
        actions.extend(action for _, action in extra[position:])
        return HandHistory(
            hand_number=self.hand_number,
            dealer=self.dealer,
            seed=self.seed,
            players=self.players,
            hand_type=self.hand_type,
            deal=self.dealt,
            face_up=self.face_up,
            set_aside=self.set_aside,
            discarded=self.discarded,
            bids=tuple(self.bid_order),
            transfers=tuple(self.transfers),
            plays=tuple((p >> 6, p & 63) for p in self.plays),
            trick_winners=tuple(self.winners),
            tricks=self.tricks,
            sides=self.sides,
            score_before=self.before,
            score_delta=self.delta(),
            score_after=self.score_after,
            bags_after=self.bags_after,
            actions=tuple(actions),
            dead_deals=self.dead,
            claim=self.claim,
            notes=self.notes(),
        )

    def delta(self) -> tuple[int, ...]:
        return tuple(a - b for a, b in zip(self.score_after, self.before, strict=True))

    def notes(self) -> tuple[str, ...]:
        """The scoring remarks for people, by scoring the hand again with explanations."""
        notes: list[str] = []
        for index, seats in enumerate(self.sides):
            notes.extend(
                scoring.score_side(
                    self.ruleset,
                    seats,
                    self.bids,
                    self.tricks,
                    self.winners,
                    score=self.before[index],
                    bags=self.bags_before[index],
                    spade_winners=self.spade_winners,
                    forfeit=index in self.forfeit,
                    explain=True,
                ).notes
            )
        return tuple(notes)

    def scored_event(self) -> HandScored:
        """The HandScored event, without building the whole history."""
        return HandScored(
            hand_number=self.hand_number,
            sides=self.sides,
            tricks=self.tricks,
            before=self.before,
            delta=self.delta(),
            after=self.score_after,
            bags_after=self.bags_after,
            seed=self.seed.hex(),
            notes=self.notes(),
        )
