"""Game events: one message per engine event, field for field.

Each class here mirrors an ``engine.events`` event: ``t`` is the engine's ``kind`` and the fields are
those of its ``for_seat(seat)`` map (where a hidden ``cards`` list becomes ``count``), plus the envelope
(``seq``, ``table``, ``version``). So the server turns an engine event into a message with one call,
``protocol.wire.game_event(table, version, event.for_seat(seat))``, and a test holds the two in step.
"""

from dataclasses import dataclass, field
from typing import Annotated, Final, Literal

from protocol.envelope import GameEvent, Sender, register
from protocol.schema import Doc, Length, Range
from protocol.types import Card, Cards, Digest, HandNumber, Seat, Seed, Tricks

S = Sender.SERVER
TrickNumber = Annotated[int, Range(1, 18)]
CardCount = Annotated[int, Range(0, 54)]
Note = Annotated[str, Length(0, 200)]
Word = Annotated[str, Length(0, 64)]


@dataclass(frozen=True, slots=True, kw_only=True)
class BidInfo:
    """A bid as events and views show it: ``tricks`` and ``blind`` always, variant flags when set."""

    tricks: Annotated[Tricks, Doc("tricks bid; 0 is nil")]
    blind: Annotated[bool, Doc("made before looking at the cards")] = False
    no_trumps: Annotated[bool | None, Doc('"no spade trumps" bid')] = None
    moe: Annotated[Literal["", "little", "big"] | None, Doc("a Moe bid")] = None
    bemo: Annotated[Literal["", "bemo", "big_bemo"] | None, Doc("a bemo on top of the bid")] = None
    ten_for_200: Annotated[bool | None, Doc("the 10-for-200 bid")] = None
    double_nil: Annotated[bool | None, Doc("two-handed double nil")] = None


@register("hand_dealt", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class HandDealt(GameEvent):
    """A hand was dealt. ``cards`` is the receiver's hand: nil for spectators and for a seat that has
    not looked yet (it may still bid blind; it gets ``hand_looked`` when it looks)."""

    hand_number: Annotated[HandNumber, Doc("the hand, from 1")]
    dealer: Annotated[Seat, Doc("the dealer")]
    hand_type: Annotated[Word, Doc('Crazy Spades: the hand\'s type; "" without a schedule')]
    commitment: Annotated[Digest, Doc("SHA-256 of this deal's seed (see Fair deals)")]
    face_up: Annotated[list[Cards], Doc("per seat: cards dealt face up")]
    hidden: Annotated[list[Seat], Doc("seats that have not looked at their cards")]
    cards: Annotated[Cards | None, Doc("the receiver's cards, if it may see them")] = None
    pass_direction: Annotated[
        Literal["left", "right", "across", "none"] | None,
        Doc("Hearts: where this hand's pass goes (from the engine's event); absent in Spades"),
    ] = None


@register("hand_looked", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class HandLooked(GameEvent):
    """A seat that could bid blind looked at its cards; only that seat gets ``cards``."""

    seat: Annotated[Seat, Doc("who looked")]
    cards: Annotated[Cards | None, Doc("its cards, for that seat alone")] = None


@register("card_drawn", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class CardDrawn(GameEvent):
    """Two-handed draw: a seat drew the top card of the stock (``card`` for that seat alone)."""

    seat: Annotated[Seat, Doc("who drew")]
    card: Annotated[Card | None, Doc("the card, for the drawer alone")] = None


@register("draw_resolved", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class DrawResolved(GameEvent):
    """Two-handed draw: the seat kept one card (``taken``, private) and discarded one face up."""

    seat: Annotated[Seat, Doc("who drew")]
    kept: Annotated[bool, Doc("whether the drawn card was kept")]
    taken: Annotated[Card | None, Doc("the card taken into hand, for that seat alone")] = None
    discarded: Annotated[Card, Doc("the card discarded face up")]


@register("cards_discarded", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class CardsDiscarded(GameEvent):
    """Joker Spades: the dealer set cards aside face down (``cards`` for the dealer alone)."""

    seat: Annotated[Seat, Doc("the dealer")]
    cards: Annotated[Cards | None, Doc("the cards, for the dealer alone")] = None
    count: Annotated[CardCount | None, Doc("how many, for everybody else")] = None


@register("bid_made", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class BidMade(GameEvent):
    """A seat bid."""

    seat: Annotated[Seat, Doc("who bid")]
    bid: Annotated[BidInfo, Doc("the bid")]
    text: Annotated[Word, Doc('the bid in words: "4", "blind nil", "little Moe"')]


@register("cards_given", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class CardsGiven(GameEvent):
    """A seat put cards face down for an exchange or pass; only the giver gets ``cards``."""

    seat: Annotated[Seat, Doc("who gave")]
    receiver: Annotated[Seat, Doc("who will receive them")]
    cards: Annotated[Cards | None, Doc("the cards, for the giver alone")] = None
    count: Annotated[CardCount | None, Doc("how many, for everybody else")] = None


@register("cards_exchanged", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class CardsExchanged(GameEvent):
    """Blind nil exchange: the receiver picked up the giver's cards (both partners see them)."""

    giver: Annotated[Seat, Doc("who gave")]
    receiver: Annotated[Seat, Doc("who received")]
    cards: Annotated[Cards | None, Doc("the cards, for giver and receiver")] = None
    count: Annotated[CardCount | None, Doc("how many, for everybody else")] = None


@register("cards_passed", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class CardsPassed(GameEvent):
    """Hearts: the receiver picked up the cards the giver passed (only those two see them)."""

    giver: Annotated[Seat, Doc("who passed")]
    receiver: Annotated[Seat, Doc("who received")]
    cards: Annotated[Cards | None, Doc("the cards, for giver and receiver")] = None
    count: Annotated[CardCount | None, Doc("how many, for everybody else")] = None


@register("card_played", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class CardPlayed(GameEvent):
    """A seat played a card to the trick."""

    seat: Annotated[Seat, Doc("who played")]
    card: Annotated[Card, Doc("the card")]
    trick_number: Annotated[TrickNumber, Doc("the trick, from 1")]


@register("spades_broken", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class SpadesBroken(GameEvent):
    """Spades (in Hearts: hearts) may now be led."""

    seat: Annotated[Seat, Doc("whose play broke them")]


@register("trick_won", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class TrickWon(GameEvent):
    """A trick is complete; its winner leads next."""

    seat: Annotated[Seat, Doc("who won it")]
    trick_number: Annotated[TrickNumber, Doc("the trick, from 1")]
    plays: Annotated[list[tuple[Seat, Card]], Doc("`[seat, card]` pairs in the order played")]


@register("claim_made", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimMade(GameEvent):
    """A seat laid its cards down and claimed the rest; ``held`` says whether the claim stood."""

    seat: Annotated[Seat, Doc("who claimed")]
    cards: Annotated[Cards, Doc("the claimer's cards, now public")]
    held: Annotated[bool, Doc("whether the claim stood against every play")]
    penalty: Annotated[Word, Doc("the ruleset's penalty when it did not (empty if it held)")]


@register("deal_declared_dead", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class DealDeclaredDead(GameEvent):
    """A seat showed a deficient hand: the deal is void and the next dealer deals."""

    seat: Annotated[Seat, Doc("who declared")]
    cards: Annotated[Cards, Doc("the deficient hand, now public")]
    reason: Annotated[Word, Doc("the deficiency (`no_spades`, `one_spade`, `no_face_cards`)")]
    next_dealer: Annotated[Seat, Doc("who deals next")]


@register("hand_scored", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class HandScored(GameEvent):
    """A hand is over and scored. Scores are per side (a partnership, or one seat); ``seed`` reveals
    the deal's seed so anyone can check it against the commitment and recompute the deal."""

    hand_number: Annotated[HandNumber, Doc("the hand")]
    sides: Annotated[list[list[Seat]], Doc("the seats of each side, in side order")]
    tricks: Annotated[list[int], Doc("tricks won, per seat")]
    before: Annotated[list[int], Doc("each side's score before the hand")]
    delta: Annotated[list[int], Doc("each side's points for the hand")]
    after: Annotated[list[int], Doc("each side's score after the hand")]
    bags_after: Annotated[list[int], Doc("each side's bags after the hand")]
    seed: Annotated[Seed, Doc("the deal's seed (see Fair deals)")]
    notes: Annotated[list[Note], Doc("what happened, in words (nil made, bags penalty, ...)")] = (
        field(default_factory=list)
    )


@register("game_over", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class GameOver(GameEvent):
    """The game has ended."""

    winners: Annotated[list[Seat], Doc("the winning seats (a side, or one player)")]
    scores: Annotated[list[int], Doc("each side's final score")]
    reason: Annotated[
        Word,
        Doc(
            "why it ended: `target` (a side reached the target score), `hands` (the game's fixed"
            " number of hands was played), `boston` (a side took every trick with Boston on),"
            " `floor` (a side fell to the losing floor), `draw` (level after the last fixed hand)"
        ),
    ]


@register("deal_commitment", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class DealCommitment(GameEvent):
    """Sent before each deal: SHA-256 of the seed the server has drawn for it (see Fair deals)."""

    hand_number: Annotated[HandNumber, Doc("the hand about to be dealt")]
    commitment: Annotated[Digest, Doc("SHA-256 of the seed's bytes, hex")]


@register("deal_seed", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class DealSeed(GameEvent):
    """Sent after each hand (a dead deal included): the seed committed to before it was dealt."""

    hand_number: Annotated[HandNumber, Doc("the hand")]
    seed: Annotated[Seed, Doc("the seed's bytes, hex; SHA-256 of them is the commitment")]


#: Message classes by engine event ``kind`` (every class above but the two fair-deal messages).
GAME_EVENT_TYPES: Final[dict[str, type[GameEvent]]] = {
    cls.TYPE: cls
    for cls in (
        HandDealt,
        HandLooked,
        CardDrawn,
        DrawResolved,
        CardsDiscarded,
        BidMade,
        CardsGiven,
        CardsExchanged,
        CardsPassed,
        CardPlayed,
        SpadesBroken,
        TrickWon,
        ClaimMade,
        DealDeclaredDead,
        HandScored,
        GameOver,
    )
}
