"""The constants `SpadesGame` (engine/spades.py) reads, made once at import and shared by every game.

The phases as module globals (a global is faster to read than an Enum member); the frozen values the
engine hands out instead of allocating one each time (`PlayCard` actions, `CardPlayed` events), with
the lookup tables `legal_actions` and the trick's events are built from; the opponents of each seat
and the two-handed discard's size. Data only, no state and no rules: kept apart from
`engine.spades` so that the pure parts beside the state machine (`engine.hand_end`,
`engine.double_dummy`) read them without importing it.
"""

from collections.abc import Callable
from operator import itemgetter
from typing import Final

from engine.actions import PlayCard
from engine.events import CardPlayed
from engine.game import Phase

# The phases as module constants: a member read through its Enum class (Phase.BIDDING) costs about
# 90 ns on CPython 3.11 (EnumType's __getattr__ hook makes every class attribute read slow), a
# global about 15; the state machine reads them on every action.
PLAYING: Final = Phase.PLAYING
DEALING: Final = Phase.DEALING
DRAWING: Final = Phase.DRAWING
DISCARDING: Final = Phase.DISCARDING
BIDDING: Final = Phase.BIDDING
EXCHANGING: Final = Phase.EXCHANGING
GAME_OVER: Final = Phase.GAME_OVER
NOBODY: Final[frozenset[int]] = frozenset()
ONE_SEAT: Final = tuple((seat,) for seat in range(4))
# The ranks (0..12) set in each 13-bit value: one suit of a mask at a time.
RANKS_IN: Final = tuple(tuple(r for r in range(13) if value >> r & 1) for value in range(8192))
# CardPlayed events by seat, card and trick index, made once: events are frozen values.
CARD_PLAYED: Final = tuple(
    tuple(tuple(CardPlayed(seat, card, trick + 1) for trick in range(17)) for card in range(54))
    for seat in range(4)
)
# The PlayCard actions, made once (legal_actions hands out shared frozen objects).
PLAY_ACTIONS: Final = tuple(tuple(PlayCard(seat, card) for card in range(54)) for seat in range(4))
# Per seat, per 13-card chunk of the card numbers (a suit; the jokers are a fifth), that chunk's
# PlayCard actions by rank; TAKE_RANKS[bits](row) is the tuple of the row's items at the ranks set
# in `bits` (an itemgetter: one C call, three times faster than a comprehension).
PLAY_ROWS: Final = tuple(
    tuple(PLAY_ACTIONS[seat][13 * chunk : 13 * chunk + 13] for chunk in range(5))
    for seat in range(4)
)


def _taker(ranks: tuple[int, ...]) -> Callable[[tuple[PlayCard, ...]], tuple[PlayCard, ...]]:
    if len(ranks) > 1:
        return itemgetter(*ranks)
    # An itemgetter of one index returns the item, not a tuple, and one of none cannot be made:
    # a slice gives the tuple, still in one C call.
    start = ranks[0] if ranks else 0
    return itemgetter(slice(start, start + len(ranks)))


TAKE_RANKS: Final = tuple(_taker(ranks) for ranks in RANKS_IN)
# The chunk of each card (and of -1, the lowest bit of an empty mask: chunk 0).
CHUNK_OF_CARD: Final = (*(card // 13 for card in range(54)), 0)
# (seat, card) of each packed play seat << 6 | card, made once.
PLAY_PAIRS: Final = tuple((p >> 6, p & 63) for p in range(256))
# Opponents per seat: partnerships in four-handed play, everyone else otherwise.
OPPONENTS: Final = {
    4: ((1, 3), (0, 2), (1, 3), (0, 2)),
    3: ((1, 2), (0, 2), (0, 1)),
    2: ((1,), (0,)),
}
TWO_HANDED_DISCARD: Final = 3
