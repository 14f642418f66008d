"""`SpadesGame`: the Spades state machine for every preset and option (docs/rules.md).

The layers: `SpadesState` (engine/spades_state.py: the state, the hot path `legal_play_mask` /
`play_fast` / `playout`, the end of a hand, and its facts), `SpadesBidding`
(dealing and bidding), `SpadesPhases` (exchanges, discards, draws, deficient hands, claims) and here
the public surface: `legal_actions`, `apply` (validation, then the same hot path, then events) and the
views. Bots searching the game should use `legal_play_mask` / `play_fast` / `playout` during play and
`legal_actions` / `apply` elsewhere.
"""

from collections.abc import Sequence
from itertools import combinations
from typing import Final, Self

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
from engine.cards import SUIT_NAMES, Card, CardMask, cards_in
from engine.errors import IllegalAction
from engine.events import Event, SpadesBroken, TrickWon
from engine.ruleset import Ruleset
from engine.spades_phases import SpadesPhases
from engine.spades_state import card_or_repr
from engine.spades_tables import (
    BIDDING,
    CARD_PLAYED,
    CHUNK_OF_CARD,
    DISCARDING,
    DRAWING,
    EXCHANGING,
    PLAY_PAIRS,
    PLAY_ROWS,
    PLAYING,
    TAKE_RANKS,
    TWO_HANDED_DISCARD,
)
from engine.views import PublicView, SeatView

_new = object.__new__
_SET_SEAT = vars(TrickWon)["seat"].__set__
_SET_NUMBER = vars(TrickWon)["trick_number"].__set__
_SET_PLAYS = vars(TrickWon)["plays"].__set__


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


class SpadesGame(SpadesPhases):
    """One game of Spades under a ruleset. See engine.game.Game for the interface."""

    __slots__ = ()

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

    # -- legal actions --------------------------------------------------------------------------------
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

    # -- apply ----------------------------------------------------------------------------------------
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
