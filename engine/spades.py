"""`SpadesGame`: the Spades state machine for every preset and option (docs/rules.md).

One class, whole: everything that changes the state lives here (h11's `_state.py` rule, python-chess's
`Board`; docs/architecture.md), so a phase changes in this module alone. In order: the state (plain
ints, bit masks and short lists, so `copy()` is cheap) and its facts; the hot path (`legal_play_mask`
computes the legal plays as a mask: pseudo-legal, the hand, filtered by follow-suit, spades broken and
the play rule; `play_fast(card)` plays a card without checks or events; `playout(rng)` plays random
legal cards to the end of the hand); the end of a hand; dealing and bidding; the variant phases (blind
nil exchanges, Joker and two-handed discards, the two-handed draw, deficient hands, TRAM claims); a
position built for a search; and the public surface: `legal_actions`, `apply` (validation, then the
same hot path, then events) and the views.

Beside it, parts that never change a game: the bid rules (engine/bidding.py) and a side's score and
the game's end (engine/scoring.py), pure functions over values; the TRAM search, on copies
(engine/claims.py); a finished hand's record, built when first asked for (engine/hand_end.py); the
phases and prebuilt tables (engine/spades_tables.py). Bots searching the game should use
`legal_play_mask` / `play_fast` / `playout` during play and `legal_actions` / `apply` elsewhere.
"""

import random
from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Final, Self, TypeAlias

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
from engine.deal import commitment, first_dealer, shuffled
from engine.dealing import UNDRAWN, DealtHands, deal_hands, starting_dealer
from engine.errors import IllegalAction, RulesetError
from engine.events import (
    BidMade,
    CardDrawn,
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
from engine.hand_end import FinishedHand
from engine.history import DeadDeal, HandHistory, Transfer
from engine.ordering import FACE_CARDS, ORDERS, TRUMP, CardOrder
from engine.ruleset import Ruleset
from engine.spades_tables import (
    BIDDING,
    CARD_PLAYED,
    CHUNK_OF_CARD,
    DEALING,
    DISCARDING,
    DRAWING,
    EXCHANGING,
    GAME_OVER,
    NOBODY,
    ONE_SEAT,
    OPPONENTS,
    PLAY_PAIRS,
    PLAY_ROWS,
    PLAYING,
    TAKE_RANKS,
    TWO_HANDED_DISCARD,
)
from engine.views import PublicView, SeatView

# Legal ordinary bids, shared by every game of a ruleset (a pure cache, kept small).
# A legal-bids entry: the bids, their ids (apply's membership test) and the BidMade events made so
# far for them by id (events are frozen values, so one per shared Bid object serves every game).
BidEntry: TypeAlias = tuple[list[Bid], frozenset[int], dict[int, BidMade]]
BidMemo: TypeAlias = dict[tuple[object, ...], BidEntry]
_BID_MEMOS: dict[Ruleset, BidMemo] = {}


def _bid_memo_for(ruleset: Ruleset) -> BidMemo:
    memo = _BID_MEMOS.get(ruleset)
    if memo is None:
        if len(_BID_MEMOS) >= 64:
            _BID_MEMOS.clear()
        memo = _BID_MEMOS[ruleset] = {}
    return memo


def card_or_repr(card: object) -> str:
    """Card notation for error messages, whatever was sent."""
    if isinstance(card, int) and 0 <= card < 54:
        return card_text(card)
    return repr(card)


_new = object.__new__
_SET_SEAT = vars(TrickWon)["seat"].__set__
_SET_NUMBER = vars(TrickWon)["trick_number"].__set__
_SET_PLAYS = vars(TrickWon)["plays"].__set__


# The card of each one-bit mask (the playout loop picks cards as bits).
CARD_OF_BIT: Final[dict[int, Card]] = {1 << card: card for card in range(54)}

# SpadesBroken by seat, made once (events are frozen values).
SPADES_BROKEN: Final = tuple(SpadesBroken(seat) for seat in range(4))


def trick_won(seat: int, trick_number: int, plays: tuple[tuple[int, Card], ...]) -> TrickWon:
    """TrickWon(seat, trick_number, plays), built through its slots: the frozen dataclass's __init__
    (which only stores the three fields) costs twice as much, and thirteen are made every hand."""
    event: TrickWon = _new(TrickWon)
    _SET_SEAT(event, seat)
    _SET_NUMBER(event, trick_number)
    _SET_PLAYS(event, plays)
    return event


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
        "_explain_scores",
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
        "_suit_chunk",
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

    def __init__(self, ruleset: Ruleset, *, dealer: int | None = None) -> None:
        if ruleset.game != "spades":
            raise RulesetError("game", "SpadesGame plays Spades rulesets only")
        # -1 until the first deal draws it from its seed (ruleset.first_dealer "random").
        dealer = starting_dealer(ruleset, dealer)
        order = ORDERS[ruleset.deck]
        self._ruleset = ruleset
        self._order = order
        self._n = ruleset.players
        self._sides = ruleset.sides
        self._tricks_per_hand = ruleset.tricks_per_hand
        self._suit = order.suit
        self._suit_masks = order.suit_masks
        self._suit_chunk = order.suit_chunk
        self._trumps = order.trumps
        self._keys = order.trick_keys
        # What breaks spades (ruleset.SPADES_BREAKS): any spade played ("played"), or only one played
        # to a trick led in another suit ("trumped").
        self._break_on_play = ruleset.spades_break == "played"
        # Bids that depend on nothing but the seat, whether it looked and its partner's nil.
        self._plain_bidding = not (ruleset.boston or ruleset.no_spade_trumps)
        self._bid_memo = _bid_memo_for(ruleset)
        self._partner_of: tuple[int | None, ...] = (
            (2, 3, 0, 1) if ruleset.partnerships else (None,) * ruleset.players
        )
        self._phase = DEALING
        self._version = 0
        self._hand_number = 0
        self._dealer = dealer
        self._scores = [0] * len(self._sides)
        self._bags = [0] * len(self._sides)
        self._histories: list[HandHistory | FinishedHand] = []
        self._outcome: Outcome | None = None
        self._dead: list[DeadDeal] = []
        # Set by `apply` around the hand's last card: the scoring then writes its notes for people
        # (HandScored needs them) in the same pass; playouts score without them.
        self._explain_scores = False
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
        self._bid_cache: tuple[int, int, BidEntry] = (-1, -1, ([], frozenset(), {}))
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

    def copy(self) -> Self:
        """An independent copy for search: a few ints and short lists (about 3 us mid-play).

        Lists the play phase never changes are shared while playing; every new hand makes new ones.
        """
        o = object.__new__(type(self))
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
        o._explain_scores = False
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
        o._suit_chunk = self._suit_chunk
        o._suit_masks = self._suit_masks
        o._trick = self._trick.copy()
        o._tricks = self._tricks.copy()
        o._tricks_per_hand = self._tricks_per_hand
        o._trumps = self._trumps
        o._turn = self._turn
        o._version = self._version
        o._winners = self._winners.copy()
        if self._phase is PLAYING:
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

    # -- the Game protocol's facts, and the queries the phases make --------------------------------
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
        if phase is PLAYING or phase is BIDDING:
            return ONE_SEAT[self._turn]
        if phase is EXCHANGING:
            return self._exchange_to_act()
        if phase is DRAWING:
            return (self._predraw[0],) if self._predraw else (self._turn,)
        if phase is DISCARDING:
            return (self._discard_turns[0],)
        return ()

    def _exchange_to_act(self) -> tuple[int, ...]:
        if not self._exchanges:
            return ()
        nil_seat, partner = self._exchanges[0]
        if self._ruleset.blind_nil_exchange_order == "nil_first":
            return (partner,) if nil_seat in self._pending else (nil_seat,)
        return tuple(s for s in (nil_seat, partner) if s not in self._pending)

    def _expect(self, phase: Phase, seat: int, what: str) -> None:
        if self._phase is not phase:
            raise IllegalAction(
                "wrong_phase", f"you cannot {what} now: the game is {self._phase.value}"
            )
        if seat not in self.to_act():
            raise IllegalAction("not_your_turn", f"it is not your turn to {what}")

    # -- the Game protocol: the finished hands, as records -----------------------------------------
    @property
    def histories(self) -> list[HandHistory]:
        """Every finished hand, oldest first; each is built from its raw facts when first asked for."""
        raw = self._histories
        for index, item in enumerate(raw):
            if isinstance(item, FinishedHand):
                raw[index] = item.build()
        return raw  # type: ignore[return-value]

    # -- the hot path ------------------------------------------------------------------------------
    def legal_play_mask(self, seat: int) -> CardMask:
        """The cards `seat` may play now, as a mask (0 when it is not that seat's turn to play)."""
        if seat != self._turn or self._phase is not PLAYING:
            return 0
        hand = self._hands[seat]
        if self._trick:
            follow = hand & self._suit_masks[self._led]
            if follow:
                return follow
            rule = self._play_rule
            if rule == "normal":
                return hand
            if rule == "pressure":
                trumps = hand & self._trumps
                return trumps or hand
            other = hand & ~self._trumps
            return other or hand
        if self._forced_lead >= 0:
            return 1 << self._forced_lead
        if not self._broken or self._play_rule == "nothing_but_spades":
            other = hand & ~self._trumps
            if other:
                return other
        return hand

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
        count = len(trick)
        if count == 1:
            self._led = self._suit[card]
            self._forced_lead = -1
        if bit & self._trumps and not self._broken and (self._break_on_play or self._led != TRUMP):
            self._broken = True
        if count < self._n:
            seat += 1
            self._turn = 0 if seat == self._n else seat
            return
        keys = self._keys[self._led]
        if count == 4:
            # Four-handed (the usual game): the winner unrolled, a third of the loop's cost.
            c0, c1, c2, c3 = trick
            best = keys[c0]
            index = 0
            if keys[c1] > best:
                best = keys[c1]
                index = 1
            if keys[c2] > best:
                best = keys[c2]
                index = 2
            if keys[c3] > best:
                best = keys[c3]
                index = 3
        else:
            best = -2
            index = 0
            for i, played in enumerate(trick):
                key = keys[played]
                if key > best:
                    best = key
                    index = i
        winner = (self._leader + index) % count
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
        """Play the rest of the hand, `choose(legal_mask)` picking each card (`playout(rng)` is the
        faster way to play uniformly at random)."""
        legal = self.legal_play_mask
        play = self.play_fast
        while self._phase is PLAYING:
            play(choose(legal(self._turn)))

    def playout(self, rng: random.Random) -> None:
        """Play uniformly random legal cards to the end of the hand (and score it): a Monte Carlo
        playout, drawing only from `rng`. Does nothing outside the play phase.

        Card for card the same as choosing `int(rng.random() * n)`-th lowest of the n cards in
        `legal_play_mask` and calling `play_fast` (a test checks it), but four-handed it runs a whole
        trick per loop pass over local variables: playouts are what a searching bot spends its time on.
        """
        if self._phase is not PLAYING:
            return
        rand = rng.random
        # Finish the trick in progress card by card, then play whole tricks at a time.
        while self._trick and self._phase is PLAYING:
            mask = self.legal_play_mask(self._turn)
            k = int(rand() * mask.bit_count())
            while k:
                mask &= mask - 1
                k -= 1
            self.play_fast((mask & -mask).bit_length() - 1)
        if self._phase is not PLAYING:
            return
        if self._n == 4 and self._play_rule == "normal":
            self._playout_four(rand)
            return
        while self._phase is PLAYING:
            mask = self.legal_play_mask(self._turn)
            k = int(rand() * mask.bit_count())
            while k:
                mask &= mask - 1
                k -= 1
            self.play_fast((mask & -mask).bit_length() - 1)

    def _playout_four(self, rand: Callable[[], float]) -> None:
        """Four-handed playout from the start of a trick under the normal play rule: one loop pass
        per trick, everything in locals (the rules of legal_play_mask and play_fast, unrolled, drawing
        one `rand()` per card exactly as the card-by-card loop does: a test checks they agree card for
        card)."""
        card_of = CARD_OF_BIT
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
            if not broken and all_bits & trumps and (break_on_play or led != TRUMP):
                broken = (
                    True  # a spade led unbroken (from a hand of only spades) breaks only "played"
                )
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

    # -- end of a hand -----------------------------------------------------------------------------
    def _finish_hand(self) -> None:
        # Scores only: the history is built when asked for, and so are the scoring notes for people
        # unless apply() is playing the hand's last card (`_explain_scores`).
        r = self._ruleset
        bids: list[Bid] = self._bids  # type: ignore[assignment]  # everyone has bid by now
        spade_winners = self._spade_winners() if r.no_spade_trumps else NOBODY
        scores = self._scores
        bags = self._bags
        before = tuple(scores)
        bags_before = tuple(bags)
        bostons: list[int] = []
        explain = self._explain_scores
        notes: list[str] = []
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
                explain=explain,
            )
            scores[index] = result.after
            bags[index] = result.bags_after
            if result.boston:
                bostons.append(index)
            if explain:
                notes += result.notes
        self._histories.append(
            FinishedHand(
                self, before, bags_before, spade_winners, tuple(notes) if explain else None
            )
        )
        self._dead = []
        outcome = self._outcome = scoring.game_result(
            r, scores, self._sides, self._hand_number, bostons
        )
        if outcome is not None:
            self._phase = GAME_OVER
        else:
            self._phase = DEALING
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
        if isinstance(raw, FinishedHand):
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

    # -- dealing -----------------------------------------------------------------------------------
    def deal(self, seed: bytes) -> list[Event]:
        """Deal the next hand from `seed` (phase DEALING only; else IllegalAction, state unchanged)."""
        if self._phase is not DEALING:
            raise IllegalAction("wrong_phase", "a hand is dealt only between hands")
        if not isinstance(seed, bytes) or not seed:
            raise IllegalAction("bad_seed", "a seed is a non-empty byte string")
        if self._dealer == UNDRAWN:
            self._dealer = first_dealer(seed, self._n)
        return self._begin_hand(seed, deal_hands(self._ruleset, seed, self._dealer))

    def deal_fixed(
        self,
        hands: Sequence[CardMask],
        *,
        face_up: Sequence[CardMask] | None = None,
        set_aside: CardMask = 0,
        stock: Sequence[Card] = (),
        hand_number: int | None = None,
        scores: Sequence[int] | None = None,
        bags: Sequence[int] | None = None,
    ) -> list[Event]:
        """Deal these exact hands (tests, puzzles, analysis) instead of a seeded deal; two-handed
        games take a `stock` instead. Such hands are not reproducible from their records' seed.
        `hand_number`, `scores` and `bags` (per side) set up a hand later in a game, e.g. a bot's guess
        at the hidden hands while bidding (they are otherwise the game's own).
        A game whose first dealer is still to be drawn has no seed to draw it from: seat 0 deals.
        Raises IllegalAction outside DEALING or when the cards are not a proper deal."""
        if self._phase is not DEALING:
            raise IllegalAction("wrong_phase", "a hand is dealt only between hands")
        n = self._n
        sides = len(self._sides)
        if (scores is not None and len(scores) != sides) or (
            bags is not None and len(bags) != sides
        ):
            raise IllegalAction("bad_deal", "scores and bags are one per side")
        if hand_number is not None and hand_number < 1:
            raise IllegalAction("bad_deal", "hands are numbered from 1")
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
        if self._dealer == UNDRAWN:
            self._dealer = 0
        if hand_number is not None:
            self._hand_number = hand_number - 1
        if scores is not None:
            self._scores = list(scores)
        if bags is not None:
            self._bags = list(bags)
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
            self._phase = DRAWING
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
            self._phase = DISCARDING
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

    def _draw(self) -> CardDrawn:
        card = self._stock[self._stock_pos]
        self._stock_pos += 1
        self._drawn = card
        return CardDrawn(self._turn, card)

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
        self._phase = BIDDING
        self._turn = (self._dealer + 1) % self._n
        if None not in self._bids:
            self._after_bidding()
            return
        while self._bids[self._turn] is not None:
            self._turn = (self._turn + 1) % self._n

    def _start_play(self) -> None:
        r = self._ruleset
        n = self._n
        self._phase = PLAYING
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

    # -- bidding -----------------------------------------------------------------------------------
    def _bid_context(self, seat: int) -> BidContext:
        partner = self.partner(seat)
        opponents = OPPONENTS[self._n][seat]
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
        return self._legal_bid_entry(seat)[0]

    def _legal_bid_entry(self, seat: int) -> BidEntry:
        """(legal bids, their ids, their BidMade events made so far): cached for the current
        version, because legal_actions() then apply() ask the same question; the ids make `apply` a
        set lookup."""
        cached = self._bid_cache
        if cached[0] == self._version and cached[1] == seat:
            return cached[2]
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
                self._bid_cache = (self._version, seat, known)
                return known
        bids = legal_bids(
            self._bid_context(seat),
            looked=self._looked[seat],
            may_blind_nil=self._blind_nil_ok[seat],
        )
        entry: BidEntry = (bids, frozenset(map(id, bids)), {})
        if key is not None:
            self._bid_memo[key] = entry
        self._bid_cache = (self._version, seat, entry)
        return entry

    def _apply_bid(self, bid: Bid) -> list[Event]:
        seat = bid.seat
        if self._phase is DRAWING and bid.double_nil:
            self._expect(DRAWING, seat, "bid double nil")
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
        if self._phase is not BIDDING or seat != self._turn:
            self._expect(BIDDING, seat, "bid")
        legal, ids, made = self._legal_bid_entry(seat)
        # Identity first: legal_actions() hands out shared objects, and dataclass == is slow.
        if id(bid) in ids:
            # One of the entry's own Bid objects (which keep their ids taken): its event, made once.
            event = made.get(id(bid))
            if event is None:
                event = made[id(bid)] = BidMade(seat, bid)
        elif bid in legal:
            event = BidMade(seat, bid)
        else:
            raise self._bid_error(bid, legal)
        self._version += 1
        self._record_bid(bid)
        events = [event]
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
            self._phase = EXCHANGING
        else:
            self._start_play()

    def _apply_look(self, action: LookAtHand) -> list[Event]:
        seat = action.seat
        if self._phase is DRAWING:
            self._expect(DRAWING, seat, "decline double nil")
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
        self._expect(BIDDING, seat, "look at your cards")
        if self._looked[seat]:
            raise IllegalAction("already_looked", "you have already seen your cards")
        if self._bid_rule == "all_blind":
            raise IllegalAction("blind_hand", "all around blind: bid before looking")
        self._version += 1
        self._looked[seat] = True
        self._actions.append(action)
        return [HandLooked(seat, self._hands[seat])]

    # -- the variant phases: exchanges, discards, the draw, deficient hands, claims ----------------
    def _deficient_reason(self, seat: int) -> str:
        r = self._ruleset
        if not r.deficient_hands or self._phase is not BIDDING or not self._looked[seat]:
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

    def _check_cards(self, seat: int, cards: tuple[Card, ...], count: int, what: str) -> None:
        if len(cards) != count:
            raise IllegalAction(f"bad_{what}", f"{what} exactly {count} cards")
        if len(set(cards)) != len(cards):
            raise IllegalAction(f"bad_{what}", "the same card is listed twice")
        for card in cards:
            if not isinstance(card, int) or not 0 <= card < 54 or not self._hands[seat] >> card & 1:
                raise IllegalAction("card_not_in_hand", f"you do not hold {card_or_repr(card)}")

    def _apply_exchange(self, action: ExchangeCards) -> list[Event]:
        seat, cards = action.seat, tuple(action.cards)
        self._expect(EXCHANGING, seat, "exchange cards")
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
        self._expect(DISCARDING, seat, "discard")
        if self._n == 2:
            if cards:
                self._check_cards(seat, cards, TWO_HANDED_DISCARD, "discard")
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
        pile = cards_in(self._discards)
        taken = tuple(shuffled(self._seed + b"/redraw/" + bytes([seat]), pile)[:3])
        # The three go face down, out of play (the Discard action records them); the public,
        # face-up discard pile loses the three taken.
        self._discards ^= mask_of(taken)
        self._discarded |= mask_of(cards)
        self._hands[seat] = (self._hands[seat] ^ mask_of(cards)) | mask_of(taken)
        return taken

    def _apply_keep(self, action: KeepDrawn) -> list[Event]:
        seat = action.seat
        self._expect(DRAWING, seat, "draw")
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
            self._phase = DISCARDING
            self._discard_turns = doubles
        else:
            self._start_bidding()
        return events

    def _apply_deficient(self, action: DeclareDeficient) -> list[Event]:
        seat = action.seat
        if self._phase is not BIDDING:
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
        self._phase = DEALING
        return [DealDeclaredDead(seat, hand, reason, self._dealer)]

    def _apply_claim(self, action: Claim) -> list[Event]:
        seat = action.seat
        self._expect(PLAYING, seat, "claim")
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
        awarded = claims.claim_award(seat, held, penalty, self._bids, self._sides)
        if awarded:
            self._award_rest(list(awarded))
        elif penalty == "exposed":
            self._exposed[seat] = hand
        else:
            self._forfeit.add(self.side_of(seat))
        if self._phase is not PLAYING:
            events.extend(self._hand_end_events())
        return events

    def _award_rest(self, seats: list[int]) -> None:
        remaining = self._tricks_per_hand - len(self._winners)
        for i in range(remaining):
            winner = seats[i % len(seats)]
            self._tricks[winner] += 1
            self._winners.append(winner)
        self._finish_hand()

    # -- a position built for a search -------------------------------------------------------------
    @classmethod
    def position(
        cls,
        ruleset: Ruleset,
        *,
        hands: Sequence[CardMask],
        dealer: int,
        bids: Sequence[Bid],
        leader: int,
        trick: Sequence[tuple[int, Card]] = (),
        tricks_won: Sequence[int] | None = None,
        winners: Sequence[int] | None = None,
        history: Sequence[Sequence[tuple[int, Card]]] = (),
        broken: bool = False,
        hand_number: int = 1,
        scores: Sequence[int] | None = None,
        bags: Sequence[int] | None = None,
        face_up: Sequence[CardMask] | None = None,
        exposed: Sequence[CardMask] | None = None,
        played: CardMask | None = None,
    ) -> Self:
        """A game in the play phase at a given position, e.g. a bot's guess at the hidden hands
        (determinization), to search with `copy()`, `legal_play_mask`, `play_fast` and `playout`.

        `hands` are the cards each seat still holds; `trick` the trick in progress led by `leader`;
        `history` the finished tricks as (seat, card) plays (optional) and `winners` their winners in
        order (else derived from `history`, else from `tricks_won` in seat order: only Moe, Bemo and
        "no spade trumps" scoring look at the order). `played` is every card played this hand (else
        the cards of `history` and `trick`: pass it when the history is incomplete). Raises
        IllegalAction("bad_position") when the card counts do not add up.
        """
        game = cls(ruleset, dealer=dealer)
        n = game._n
        done_plays = [seat << 6 | card for plays in history for seat, card in plays]
        order_winners = list(winners) if winners is not None else []
        if winners is None and history:
            for plays in history:
                cards = [card for _, card in plays]
                order_winners.append(plays[game._order.trick_winner_index(cards)][0])
        won = list(tricks_won) if tricks_won is not None else [0] * n
        if tricks_won is None:
            for winner in order_winners:
                won[winner] += 1
        if not order_winners:
            order_winners = [seat for seat in range(n) for _ in range(won[seat])]
        if played is None:
            played = 0
            for _, card in [*(p for plays in history for p in plays), *trick]:
                played |= 1 << card
        sizes = [hand.bit_count() for hand in hands]
        left = game._tricks_per_hand - len(order_winners)
        expected = [left - (1 if any(s == seat for s, _ in trick) else 0) for seat in range(n)]
        if (
            len(hands) != n
            or len(bids) != n
            or sum(won) != len(order_winners)
            or sizes != expected
            or len(trick) >= n
        ):
            raise IllegalAction("bad_position", "the hands, tricks and trick do not add up")
        game._hand_number = hand_number
        game._hand_type = ruleset.hand_type(hand_number)
        game._bid_rule, game._play_rule = ruleset.rules_for_hand(hand_number)
        game._seed = b"position"
        game._scores = list(scores) if scores is not None else [0] * len(game._sides)
        game._bags = list(bags) if bags is not None else [0] * len(game._sides)
        game._hands = list(hands)
        dealt = list(hands)
        for seat, card in [*(p for plays in history for p in plays), *trick]:
            dealt[seat] |= 1 << card
        game._dealt = tuple(dealt)
        game._face_up = list(face_up) if face_up is not None else [0] * n
        game._exposed = list(exposed) if exposed is not None else [0] * n
        game._bids = list(bids)
        game._bid_order = list(bids)
        game._tricks = won
        game._winners = order_winners
        game._plays = (
            done_plays
            if len(done_plays) == len(order_winners) * n
            else [0] * (len(order_winners) * n)
        ) + [seat << 6 | card for seat, card in trick]
        game._played = played
        game._broken = broken
        game._leader = leader
        game._trick = [card for _, card in trick]
        game._led = game._suit[trick[0][1]] if trick else -1
        game._turn = (leader + len(trick)) % n
        if history:
            last = history[-1]
            game._last_trick = [card for _, card in last]
            game._last_leader = last[0][0]
        game._phase = PLAYING
        return game

    # -- legal actions -----------------------------------------------------------------------------
    def legal_actions(self, seat: int) -> list[Action]:
        phase = self._phase
        if phase is PLAYING:
            if seat != self._turn:
                return []
            trick = self._trick
            if trick:
                # Following suit, most plays: the suit's cards held, in one itemgetter call.
                led = self._led
                mask = self._hands[seat] & self._suit_masks[led]
                chunk = self._suit_chunk[led]
                if mask and chunk >= 0:
                    self._mask_version = self._version  # apply() checks its card against it
                    self._mask_value = mask
                    return [*TAKE_RANKS[mask >> 13 * chunk](PLAY_ROWS[seat][chunk])]
            mask = self.legal_play_mask(seat)
            self._mask_version = self._version  # apply() checks its card against this mask
            self._mask_value = mask
            # The shared PlayCard objects, a suit (13 bits) at a time, each by one itemgetter call.
            rows = PLAY_ROWS[seat]
            chunk = CHUNK_OF_CARD[(mask & -mask).bit_length() - 1]
            rest = mask >> 13 * chunk
            if rest < 8192:  # one suit: following, or a hand left with one suit
                actions: list[Action] = [*TAKE_RANKS[rest](rows[chunk])]
            else:
                actions = [
                    *TAKE_RANKS[mask & 8191](rows[0]),
                    *TAKE_RANKS[mask >> 13 & 8191](rows[1]),
                    *TAKE_RANKS[mask >> 26 & 8191](rows[2]),
                    *TAKE_RANKS[mask >> 39 & 8191](rows[3]),
                ]
                if mask >> 52:  # the jokers
                    actions += TAKE_RANKS[mask >> 52](rows[4])
            if not trick and mask and self._ruleset.tram and self._claim is None:
                actions.append(Claim(seat))
            return actions
        if phase is BIDDING:
            out: list[Action] = []
            if seat == self._turn:
                if not self._looked[seat] and self._bid_rule != "all_blind":
                    out.append(LookAtHand(seat))
                out.extend(self._legal_bids(seat))
            if self._ruleset.deficient_hands and self._deficient_reason(seat):
                out.append(DeclareDeficient(seat))
            return out
        if phase is EXCHANGING:
            if seat not in self._exchange_to_act():
                return []
            k = self._ruleset.blind_nil_exchange
            return [
                ExchangeCards(seat, combo) for combo in combinations(cards_in(self._hands[seat]), k)
            ]
        if phase is DISCARDING:
            if seat != self._discard_turns[0]:
                return []
            hand = cards_in(self._hands[seat])
            if self._n == 2:
                return [
                    Discard(seat, ()),
                    *(Discard(seat, c) for c in combinations(hand, TWO_HANDED_DISCARD)),
                ]
            return [Discard(seat, combo) for combo in combinations(hand, 2)]
        if phase is DRAWING:
            if seat not in self.to_act():
                return []
            if self._predraw:
                return [LookAtHand(seat), Bid(seat, 0, double_nil=True)]
            return [KeepDrawn(seat, True), KeepDrawn(seat, False)]
        return []

    # -- apply -------------------------------------------------------------------------------------
    def apply(self, action: Action) -> list[Event]:
        """Apply `action` and return its events. Raises IllegalAction (code + sentence) when the rules
        do not allow it now; the state is then exactly as before."""
        # Fast lanes for the two common actions, by the seat whose turn it is.
        if type(action) is PlayCard and self._phase is PLAYING:
            seat = action.seat
            card = action.card
            # The card checked against the mask legal_actions() just computed for this version.
            if (
                seat == self._turn
                and self._mask_version == self._version
                and type(card) is int
                and 0 <= card < 54
                and self._mask_value >> card & 1
            ):
                bit = 1 << card
                trick = self._trick
                if len(trick) + 1 < self._n and (self._broken or not bit & self._trumps):
                    # Neither the trick's last card nor one that breaks spades (three plays in
                    # four): play_fast's first half, inline, and the one event.
                    self._version += 1
                    self._hands[seat] ^= bit
                    self._played |= bit
                    if not trick:
                        self._led = self._suit[card]
                        self._forced_lead = -1
                    trick.append(card)
                    self._plays.append(seat << 6 | card)
                    self._turn = 0 if seat + 1 == self._n else seat + 1
                    return [CARD_PLAYED[seat][card][len(self._winners)]]
                return self._play_with_events(seat, card)
            if seat == self._turn:
                return self._apply_play(action)
        if type(action) is Bid and self._phase is BIDDING and action.seat == self._turn:
            return self._apply_bid(action)
        if self._outcome is not None:
            raise IllegalAction("game_over", "the game is over")
        who = getattr(action, "seat", None)
        if not isinstance(who, int) or not 0 <= who < self._n:
            raise IllegalAction("bad_seat", f"there is no seat {who!r} at this table")
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

    def _apply_play(self, action: PlayCard) -> list[Event]:
        seat, card = action.seat, action.card
        if self._phase is not PLAYING or seat != self._turn:
            self._expect(PLAYING, seat, "play")
        mask = (
            self._mask_value if self._mask_version == self._version else self.legal_play_mask(seat)
        )
        if type(card) is not int or not 0 <= card < 54 or not mask >> card & 1:
            if type(card) is not int or not 0 <= card < 54 or not self._hands[seat] >> card & 1:
                raise IllegalAction("card_not_in_hand", f"you do not hold {card_or_repr(card)}")
            raise self._play_error(seat, card)
        return self._play_with_events(seat, card)

    def _play_with_events(self, seat: int, card: Card) -> list[Event]:
        """Play a legal card (play_fast) and return the events: the card, spades broken, the trick
        won, the hand scored and the game over, as they happen."""
        winners = self._winners
        done = len(winners)
        was_broken = self._broken
        if done == self._tricks_per_hand - 1 and len(self._trick) == self._n - 1:
            # The hand's last card: score it with the notes HandScored needs, in one pass.
            self._explain_scores = True
            self.play_fast(card)
            self._explain_scores = False
        else:
            self.play_fast(card)  # counts the version
        played = CARD_PLAYED[seat][card][done]
        if len(winners) == done:
            return [played] if self._broken == was_broken else [played, SPADES_BROKEN[seat]]
        events: list[Event] = [played]
        if self._broken and not was_broken:
            events.append(SPADES_BROKEN[seat])
        plays: tuple[tuple[int, Card], ...]
        if self._n == 4:
            p0, p1, p2, p3 = self._plays[-4:]  # unpacked: map(PLAY_PAIRS.__getitem__) is slower
            plays = (PLAY_PAIRS[p0], PLAY_PAIRS[p1], PLAY_PAIRS[p2], PLAY_PAIRS[p3])
        else:
            plays = tuple([PLAY_PAIRS[p] for p in self._plays[-self._n :]])
        events.append(trick_won(winners[-1], done + 1, plays))
        if self._phase is not PLAYING:
            events.extend(self._hand_end_events())
        return events

    def _play_error(self, seat: int, card: Card) -> IllegalAction:
        hand = self._hands[seat]
        if not self._trick:
            if self._forced_lead >= 0:
                return IllegalAction(
                    "must_lead_card",
                    f"the first trick is led with the {card_or_repr(self._forced_lead)}",
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

    # -- views -------------------------------------------------------------------------------------
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
            # -1 unless a trick is being played (docs/protocol.md, "Game views").
            "leader": self._leader if self._phase is PLAYING else -1,
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
        drawn = self._drawn if self._phase is DRAWING and self._turn == seat else -1
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
