"""The variant phases of `SpadesGame`: blind nil exchanges, Joker and two-handed discards, the
two-handed draw, deficient hands and TRAM claims."""

from engine import claims
from engine.actions import Claim, DeclareDeficient, Discard, ExchangeCards, KeepDrawn
from engine.cards import Card, cards_in, mask_of
from engine.deal import shuffled
from engine.errors import IllegalAction
from engine.events import (
    CardsDiscarded,
    CardsExchanged,
    CardsGiven,
    ClaimMade,
    DealDeclaredDead,
    DrawResolved,
    Event,
    HandLooked,
)
from engine.history import DeadDeal, Transfer
from engine.ordering import FACE_CARDS
from engine.spades_bidding import SpadesBidding
from engine.spades_state import card_or_repr
from engine.spades_tables import (
    BIDDING,
    DEALING,
    DISCARDING,
    DRAWING,
    EXCHANGING,
    PLAYING,
    TWO_HANDED_DISCARD,
)


class SpadesPhases(SpadesBidding):
    """Exchanges, discards, draws, deficient hands and claims."""

    __slots__ = ()

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
