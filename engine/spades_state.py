"""The state of a Spades game and its hot path: the base of `SpadesGame` (engine/spades.py).

State is plain ints, bit masks and short lists, so `copy()` is cheap and the hot path is a few int ops:
`legal_play_mask(seat)` computes legal plays as a mask (pseudo-legal: the hand; filtered by follow-suit,
spades broken and the play rule), and `play_fast(card)` plays a card without checks or events;
`playout(rng)` plays random legal cards to the end of the hand. The layers above add dealing and bidding
(engine/spades_bidding.py), the variant phases (engine/spades_phases.py), and legality, events and views
(engine/spades.py), python-chess style: each layer a subclass of the one below. The facts the layers
read (whose turn, the trick, the bids) are the state's own properties, and the phases and prebuilt
tables every layer shares are in engine/spades_tables.py.
"""

import random
from collections.abc import Callable
from typing import Self, TypeAlias

from engine import scoring
from engine.actions import Action, Bid
from engine.cards import Card, CardMask, card_text
from engine.dealing import starting_dealer
from engine.errors import IllegalAction, RulesetError
from engine.events import BidMade, Event, GameOver, HandScored
from engine.game import Outcome, Phase
from engine.hand_end import FinishedHand
from engine.history import DeadDeal, HandHistory, Transfer
from engine.ordering import ORDERS, TRUMP, CardOrder
from engine.playout import playout_four
from engine.ruleset import Ruleset
from engine.spades_tables import (
    BIDDING,
    DEALING,
    DISCARDING,
    DRAWING,
    EXCHANGING,
    GAME_OVER,
    NOBODY,
    ONE_SEAT,
    PLAYING,
)

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


class SpadesState:
    """The state, its facts (the Game protocol's properties, `to_act`, `_expect`), the hot path and
    the end of a hand."""

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

    # -- the Game protocol's facts, and the queries the layers make -----------------------------------
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

    # -- the hot path ---------------------------------------------------------------------------------
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
            playout_four(self, rand)
            return
        while self._phase is PLAYING:
            mask = self.legal_play_mask(self._turn)
            k = int(rand() * mask.bit_count())
            while k:
                mask &= mask - 1
                k -= 1
            self.play_fast((mask & -mask).bit_length() - 1)

    # -- end of a hand --------------------------------------------------------------------------------
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
        outcome = self._outcome = self._game_result(bostons)
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

    def _game_result(self, bostons: list[int]) -> Outcome | None:
        r = self._ruleset
        scores = self._scores
        if bostons:
            return self._outcome_for(bostons[0], "boston")
        best = max(scores)
        alone = scores.count(best) == 1  # one side leads
        if r.max_hands and self._hand_number >= r.max_hands:
            # The game is that many hands long (Crazy Spades: 15); level scores then are a draw.
            if not alone:
                return Outcome((), tuple(scores), self._sides, "draw")
            return self._outcome_for(scores.index(best), "hands")
        if not alone:
            return None  # a true tie past the target (or at the floor) plays on
        if r.losing_floor_enabled and min(scores) <= r.losing_floor:
            return self._outcome_for(scores.index(best), "floor")
        if r.target_score and best >= r.target_score:
            return self._outcome_for(scores.index(best), "target")
        return None

    def _outcome_for(self, side: int, reason: str) -> Outcome:
        return Outcome(self._sides[side], tuple(self._scores), self._sides, reason)
