"""Hand review's messages: `review` asks for a finished hand's double-dummy review, `hand_review`
answers it.

Declared as in ``protocol.messages`` (one frozen dataclass each, registered by ``t``) and apart from
it because they are one concern (docs/protocol.md, Hand review; the server's side is
``server.reviews``, the analysis ``engine.review``). ``protocol.messages`` re-exports them. Only the
envelope, the schema and the wire types are imported here, never ``protocol.messages``, so there is
no import cycle.
"""

from dataclasses import dataclass
from typing import Annotated

from protocol.envelope import Reply, Request, Sender, register
from protocol.schema import Doc, Length, Range
from protocol.types import Count, HandRecord, Tricks

C, S = Sender.CLIENT, Sender.SERVER

#: What one card cost its side, in tricks (nil: its position was not analysed).
Cost = Annotated[int, Range(0, 13)]


@register("review", C)
@dataclass(frozen=True, slots=True, kw_only=True)
class Review(Request):
    """Ask for a finished four-handed Spades hand's review, double dummy (every card visible, every
    card played perfectly after it). Answered with `hand_review`; refused `not_reviewable` for a
    hand the server will not analyse (the sentence says why) and `review_busy` while this
    connection's previous review is not answered or the server reviews as many hands as it may.
    """

    hand: Annotated[
        HandRecord,
        Doc(
            "the hand: a `spades-hand/1` record, or the page's and terminal client's own"
            " `spades-client-hand/1` (its seed and every card played)"
        ),
    ]


@register("hand_review", S)
@dataclass(frozen=True, slots=True, kw_only=True)
class HandReview(Reply):
    """A hand's review: the tricks each side could make at the start of play, and what each card
    played cost its side against the best card there (0 for a best card). A position the solver
    could not finish within `budget` searched positions is left unanswered: its cards' costs are
    nil, never guessed.
    """

    double_dummy: Annotated[
        Annotated[list[Tricks], Length(2, 2)] | None,
        Doc(
            "the tricks each side (seats 0 and 2, seats 1 and 3) could make at the start of play;"
            " nil when that position was past the budget"
        ),
    ] = None
    costs: Annotated[
        Annotated[list[Cost | None], Length(0, 52)],
        Doc("for each card of the record's `plays`, in order: the tricks it cost its side"),
    ]
    budget: Annotated[Count, Doc("the positions a position's search could visit")]
    unanswered: Annotated[
        Count, Doc("cards whose cost is nil: a position past the budget, or the time")
    ] = 0
