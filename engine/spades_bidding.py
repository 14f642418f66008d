"""Dealing and bidding for `SpadesGame`: the deal from a seed, the look-or-bid-blind decision, bids
checked against the bid rules (engine/bidding.py), and the start of play."""

from collections.abc import Sequence

from engine.actions import Bid, LookAtHand
from engine.bidding import CHOOSING_RULES, BidContext, allowed_numbers, legal_bids
from engine.cards import Card, CardMask
from engine.deal import commitment, first_dealer
from engine.dealing import UNDRAWN, DealtHands, deal_hands
from engine.errors import IllegalAction
from engine.events import BidMade, CardDrawn, Event, HandDealt, HandLooked
from engine.spades_state import BidEntry, SpadesState
from engine.spades_tables import (
    BIDDING,
    DEALING,
    DISCARDING,
    DRAWING,
    EXCHANGING,
    OPPONENTS,
    PLAYING,
)


class SpadesBidding(SpadesState):
    """Dealing, the blind decision and bidding."""

    __slots__ = ()

    # -- dealing --------------------------------------------------------------------------------------
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
