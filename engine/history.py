"""`HandHistory`: everything about one finished hand, filled by the Spades and the Hearts engines alike.

It is a frozen value. `engine.records` turns it into the documented `spades-hand/1` JSON object and back
(docs/hand-records.md). `actions` is the complete ordered list of actions applied during the hand (bids,
looks, exchanges, passes, draws, discards, plays, claims), so replaying the deal from `seed` and then
`actions` through the engine reproduces the hand exactly; the other fields are for people and analysis.
"""

from dataclasses import dataclass

from engine.actions import Action, Bid
from engine.cards import Card, CardMask


@dataclass(frozen=True, slots=True)
class DeadDeal:
    """A deal declared dead (deficient hand) before the hand that was played: replay re-deals it."""

    dealer: int
    seed: bytes
    seat: int


@dataclass(frozen=True, slots=True)
class Transfer:
    """Cards moved between two seats: a blind nil exchange or a Hearts pass."""

    giver: int
    receiver: int
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class HandHistory:
    """One finished hand.

    Per-side tuples (`score_before`, `score_delta`, `score_after`, `bags_after`) follow `sides`: the two
    teams in four-handed Spades, one seat each in two- and three-handed Spades and in Hearts.
    """

    hand_number: int
    dealer: int
    seed: bytes
    players: int
    hand_type: str  # Crazy Spades hand type, "" otherwise
    deal: tuple[
        CardMask, ...
    ]  # each seat's cards as dealt (two-handed: as drawn), before any exchange
    face_up: tuple[CardMask, ...]
    set_aside: CardMask  # cards never dealt: three-handed Spades' 52nd card
    bids: tuple[Bid, ...]  # in bidding order
    transfers: tuple[Transfer, ...]  # exchanges (Spades) or passes (Hearts)
    plays: tuple[tuple[int, Card], ...]  # (seat, card) in play order
    trick_winners: tuple[int, ...]
    tricks: tuple[int, ...]  # tricks won per seat
    sides: tuple[tuple[int, ...], ...]
    score_before: tuple[int, ...]
    score_delta: tuple[int, ...]
    score_after: tuple[int, ...]
    bags_after: tuple[int, ...]
    actions: tuple[Action, ...]
    dead_deals: tuple[DeadDeal, ...] = ()
    discarded: CardMask = (
        0  # dealt, then put out of play: the Joker dealer's two, two-handed redraws
    )
    claim: tuple[int, bool] | None = None  # (claimer, held) when a TRAM claim was made
    notes: tuple[str, ...] = ()  # scoring remarks for people ("nil by 0 made: +100")
