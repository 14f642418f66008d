"""The facts of a `SpadesState` (engine/spades_state.py) that the `Game` protocol and the layers read.

Read-only properties and queries (whose turn it is, the trick, the bids, which side a seat plays for)
and `_expect`, the check of the phase and the seat to act that the layers make before an action. None
of it changes the state or runs in a playout, so it lives beside the state rather than in it:
`SpadesFacts` is a mixin of `SpadesState` that reads its slots, as `engine.hearts_views` does for
`HeartsGame`. The finished hands (`histories`) stay with the state, which builds them.
"""

from typing import Protocol

from engine.actions import Bid
from engine.cards import Card, CardMask
from engine.errors import IllegalAction
from engine.game import Outcome, Phase
from engine.ordering import CardOrder
from engine.ruleset import Ruleset
from engine.spades_tables import BIDDING, DISCARDING, DRAWING, EXCHANGING, ONE_SEAT, PLAYING


class _Facts(Protocol):
    """The state the facts read (SpadesState's slots and the facts' own `to_act`)."""

    _ruleset: Ruleset
    _order: CardOrder
    _n: int
    _phase: Phase
    _version: int
    _hand_number: int
    _dealer: int
    _outcome: Outcome | None
    _scores: list[int]
    _bags: list[int]
    _partner_of: tuple[int | None, ...]
    _hand_type: str
    _bid_rule: str
    _play_rule: str
    _hands: list[CardMask]
    _bids: list[Bid | None]
    _turn: int
    _leader: int
    _trick: list[Card]
    _tricks: list[int]
    _winners: list[int]
    _played: CardMask
    _forced_lead: Card
    _broken: bool
    _exchanges: list[tuple[int, int]]
    _pending: dict[int, tuple[Card, ...]]
    _predraw: list[int]
    _discard_turns: list[int]

    def to_act(self) -> tuple[int, ...]: ...

    def _exchange_to_act(self) -> tuple[int, ...]: ...


class SpadesFacts:
    """Mixin of SpadesState: the Game protocol's facts, the layers' queries and `_expect`."""

    __slots__ = ()

    @property
    def ruleset(self: "_Facts") -> Ruleset:
        return self._ruleset

    @property
    def phase(self: "_Facts") -> Phase:
        return self._phase

    @property
    def version(self: "_Facts") -> int:
        return self._version

    @property
    def hand_number(self: "_Facts") -> int:
        return self._hand_number

    @property
    def players(self: "_Facts") -> int:
        return self._n

    @property
    def dealer(self: "_Facts") -> int:
        return self._dealer

    @property
    def is_over(self: "_Facts") -> bool:
        return self._outcome is not None

    @property
    def outcome(self: "_Facts") -> Outcome | None:
        return self._outcome

    @property
    def scores(self: "_Facts") -> tuple[int, ...]:
        return tuple(self._scores)

    @property
    def bags(self: "_Facts") -> tuple[int, ...]:
        """Bags per side (for last-digit bags: the last digit of the score)."""
        return tuple(self._bags)

    @property
    def hand_type(self: "_Facts") -> str:
        """The Crazy Spades hand type of the current hand ("" without a schedule)."""
        return self._hand_type

    @property
    def turn(self: "_Facts") -> int:
        """The seat whose turn it is in bidding and play."""
        return self._turn

    @property
    def trick(self: "_Facts") -> tuple[tuple[int, Card], ...]:
        """The trick in progress: (seat, card) in play order."""
        n, lead = self._n, self._leader
        return tuple(((lead + i) % n, card) for i, card in enumerate(self._trick))

    @property
    def tricks(self: "_Facts") -> tuple[int, ...]:
        """Tricks won per seat this hand."""
        return tuple(self._tricks)

    @property
    def bids(self: "_Facts") -> tuple[Bid | None, ...]:
        """Bids per seat this hand (None until made)."""
        return tuple(self._bids)

    @property
    def ruleset_order(self: "_Facts") -> CardOrder:
        """The card-order tables of this game's deck."""
        return self._order

    @property
    def play_rule(self: "_Facts") -> str:
        """The play rule in force this hand: normal, pressure or nothing_but_spades."""
        return self._play_rule

    @property
    def bid_rule(self: "_Facts") -> str:
        """The bid rule in force this hand (ruleset.bid_rule, or the Crazy hand type's)."""
        return self._bid_rule

    @property
    def forced_lead(self: "_Facts") -> Card | None:
        """The card that must be led to the first trick (lowest club rule), until it is led."""
        return self._forced_lead if self._forced_lead >= 0 else None

    @property
    def tricks_done(self: "_Facts") -> int:
        """Tricks completed this hand."""
        return len(self._winners)

    @property
    def last_trick_winner(self: "_Facts") -> int:
        """The winner of the last completed trick (-1 before the first)."""
        return self._winners[-1] if self._winners else -1

    @property
    def spades_broken(self: "_Facts") -> bool:
        return self._broken

    @property
    def played(self: "_Facts") -> CardMask:
        """Every card played this hand."""
        return self._played

    def hand(self: "_Facts", seat: int) -> CardMask:
        """The cards `seat` holds now (the engine's truth: not redacted; use view() for players)."""
        return self._hands[seat]

    def side_of(self: "_Facts", seat: int) -> int:
        """The index in `scores` of the side `seat` plays for."""
        return seat % 2 if self._n == 4 else seat

    def partner(self: "_Facts", seat: int) -> int | None:
        """The partner's seat in four-handed play, else None."""
        return self._partner_of[seat]

    def to_act(self: "_Facts") -> tuple[int, ...]:
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

    def _exchange_to_act(self: "_Facts") -> tuple[int, ...]:
        if not self._exchanges:
            return ()
        nil_seat, partner = self._exchanges[0]
        if self._ruleset.blind_nil_exchange_order == "nil_first":
            return (partner,) if nil_seat in self._pending else (nil_seat,)
        return tuple(s for s in (nil_seat, partner) if s not in self._pending)

    def _expect(self: "_Facts", phase: Phase, seat: int, what: str) -> None:
        if self._phase is not phase:
            raise IllegalAction(
                "wrong_phase", f"you cannot {what} now: the game is {self._phase.value}"
            )
        if seat not in self.to_act():
            raise IllegalAction("not_your_turn", f"it is not your turn to {what}")
