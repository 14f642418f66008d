"""What an event's fields hold, said where the event is declared: markers for `typing.Annotated`.

An event class in `engine.events` is the one declaration of that event. Its fields' annotations say,
beside the engine's own type, what a reader beyond the engine needs to know: how a value is written
(`Notation`: a seat number, a card, a card set), its bounds (`Range`, `Length`), the values a string
may take (`Choices`) and a sentence for the documentation (`Doc`). The protocol reads them to declare
the event's message (protocol/game_events.py): its fields, types, checks and the docs' field table.
The engine itself only ever reads `Derived` and `Private`; the rest are plain data, so the engine
never imports the protocol. `Doc`, `Range` and `Length` are the protocol's own markers too
(`protocol.schema` takes them from here): one declaration of a bound, wherever it is written.

`Derived` marks a `ClassVar` annotation that names a field of the seat's map (`Event.for_seat`) the
event computes rather than stores (`bid_made`'s `text`, `hand_dealt`'s receiver's `cards`), at its
place among the fields; `Private` a stored field that only the server's log (`to_dict`) holds.
"""

from dataclasses import dataclass
from typing import Annotated, Final


@dataclass(frozen=True, slots=True)
class Doc:
    """The sentence for the documentation's field table."""

    text: str


@dataclass(frozen=True, slots=True)
class Range:
    """Inclusive bounds of a number."""

    lo: float
    hi: float


@dataclass(frozen=True, slots=True)
class Length:
    """Inclusive bounds on the length of a string (in characters) or a list (in items)."""

    lo: int
    hi: int


@dataclass(frozen=True, slots=True)
class Choices:
    """The only values a string field takes."""

    values: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Notation:
    """How the value is written, by the name of a type every reader knows: `Seat` (a seat number),
    `Card` (one card, in notation: `QS`), `Cards` (a card set or list: a list of notation),
    `HandNumber` (hands count from 1), `Digest` (a SHA-256 in hex), `Seed` (a deal seed in hex)."""

    name: str


@dataclass(frozen=True, slots=True)
class Derived:
    """A field of the seat's map that the event computes (declared as a `ClassVar`, in its place)."""


@dataclass(frozen=True, slots=True)
class Private:
    """A stored field that only `to_dict` (the server's log) holds: no seat is told it."""


DERIVED: Final = Derived()
PRIVATE: Final = Private()

# The engine's ints and tuples of ints, with how they are written.
SeatNo = Annotated[int, Notation("Seat")]
CardNo = Annotated[int, Notation("Card")]
CardSet = Annotated[int, Notation("Cards")]  # a CardMask, written as the sorted list of its cards
CardList = Annotated[tuple[int, ...], Notation("Cards")]  # cards in their order
HandNo = Annotated[int, Notation("HandNumber")]
Digest = Annotated[str, Notation("Digest")]
Seed = Annotated[str, Notation("Seed")]
TrickNo = Annotated[int, Range(1, 18)]  # three-handed and joker decks: up to 18 tricks
Word = Annotated[str, Length(0, 64)]
Note = Annotated[str, Length(0, 200)]
