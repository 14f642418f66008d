"""The game interface every engine implements (Spades, Hearts), the phases, the outcome, `new_game`.

A game is a state machine owned by one caller (the server's table task, a bot's search, the arena):

    game = new_game(Ruleset.from_preset("standard"))   # first dealer: drawn from the first seed
    events = game.deal(seed)            # phase DEALING only; the caller supplies each hand's seed
    while not game.is_over:
        seat = game.to_act()[0]
        events = game.apply(choose(game.legal_actions(seat)))
        if game.phase is Phase.DEALING:
            game.deal(next_seed())

`apply` raises `IllegalAction` (a code and a sentence) and then leaves the state exactly as it was.
"""

import enum
import importlib
from dataclasses import dataclass
from typing import Any, Protocol

from engine.actions import Action
from engine.events import Event
from engine.history import HandHistory
from engine.ruleset import Ruleset
from engine.views import PublicView, SeatView


class Phase(enum.Enum):
    """Where a hand stands. After a hand is scored the phase is DEALING again (or GAME_OVER)."""

    DEALING = "dealing"  # waiting for deal(seed)
    DRAWING = "drawing"  # two-handed: draw and keep or discard
    DISCARDING = "discarding"  # Joker Spades: the dealer discards two
    BIDDING = "bidding"
    EXCHANGING = "exchanging"  # blind nil exchange between partners
    PASSING = "passing"  # Hearts
    PLAYING = "playing"
    GAME_OVER = "game_over"


@dataclass(frozen=True, slots=True)
class Outcome:
    """How a finished game ended, as the engine decides it: the winning seats (a team or one player;
    every seat sharing the best score in Hearts; empty for a draw), the final score per side, why
    ("target", "boston", "hands", "floor", "draw"), and each side's place.

    `places` (per side, like `scores`) ranks the sides: 1 is best and sides level on score share the
    better place (51, 100, 37, 72 in Hearts are places 2, 4, 1, 3). The winners' sides are first
    whatever their score (a Boston wins outright); the others follow by score, the higher first in
    Spades and the lower first where `lowest_wins` (Hearts). Built from the other fields when not
    given; `seat_places`, `place_of(seat)` and `score_of(seat)` read it per seat."""

    winners: tuple[int, ...]
    scores: tuple[int, ...]
    sides: tuple[tuple[int, ...], ...]
    reason: str
    lowest_wins: bool = False
    places: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.places:
            object.__setattr__(self, "places", rank_sides(self))

    @property
    def is_draw(self) -> bool:
        """True when nobody won (level scores when a fixed number of hands ran out)."""
        return not self.winners

    def side_of(self, seat: int) -> int:
        """The index into `sides`, `scores` and `places` of the side `seat` plays for."""
        for index, side in enumerate(self.sides):
            if seat in side:
                return index
        raise ValueError(f"seat {seat} is on no side")

    def place_of(self, seat: int) -> int:
        """`seat`'s place: its side's (1 = best; level scores share the better place)."""
        return self.places[self.side_of(seat)]

    def score_of(self, seat: int) -> int:
        """`seat`'s final score: its side's."""
        return self.scores[self.side_of(seat)]

    @property
    def seat_places(self) -> tuple[int, ...]:
        """Each seat's place, in seat order."""
        seats = sorted(seat for side in self.sides for seat in side)
        return tuple(self.place_of(seat) for seat in seats)

    @property
    def winning_side(self) -> int:
        """The index into `sides`/`scores` of the winning side (-1 for a draw)."""
        for index, side in enumerate(self.sides):
            if set(side) == set(self.winners):
                return index
        return -1

    def to_dict(self) -> dict[str, Any]:
        """Plain data (`places` per side, as `scores`)."""
        return {
            "winners": list(self.winners),
            "scores": list(self.scores),
            "sides": [list(side) for side in self.sides],
            "reason": self.reason,
            "lowest_wins": self.lowest_wins,
            "places": list(self.places),
        }


def rank_sides(outcome: Outcome) -> tuple[int, ...]:
    """Each side's place in `outcome`: 1 + the number of sides strictly ahead of it, where a winning
    side is ahead of every other and, among the rest, a better score is ahead (lower when
    `lowest_wins`)."""
    won = set(outcome.winners)
    sign = -1 if outcome.lowest_wins else 1
    keys = [
        (bool(won.intersection(side)), sign * score)
        for side, score in zip(outcome.sides, outcome.scores, strict=True)
    ]
    return tuple(1 + sum(1 for other in keys if other > key) for key in keys)


class Game(Protocol):
    """The interface of `SpadesGame` and the Hearts game."""

    @property
    def ruleset(self) -> Ruleset:
        """The rules of this game (never changes)."""
        ...

    @property
    def phase(self) -> Phase:
        """The current phase."""
        ...

    @property
    def version(self) -> int:
        """Counts every applied action and deal (+1 each)."""
        ...

    @property
    def hand_number(self) -> int:
        """1 for the first hand; counts hands dealt (dead deals do not count)."""
        ...

    @property
    def players(self) -> int:
        """Number of seats."""
        ...

    @property
    def dealer(self) -> int:
        """The seat that deals (or dealt) the current hand; -1 before the first deal when that deal's
        seed draws it (ruleset.first_dealer "random")."""
        ...

    @property
    def is_over(self) -> bool:
        """True once the game has a winner."""
        ...

    @property
    def outcome(self) -> Outcome | None:
        """The result once the game is over, else None."""
        ...

    @property
    def histories(self) -> list[HandHistory]:
        """Every finished hand, oldest first."""
        ...

    @property
    def scores(self) -> tuple[int, ...]:
        """The running score per side (ruleset.sides)."""
        ...

    def to_act(self) -> tuple[int, ...]:
        """The seats that may act now (several in simultaneous phases); () when dealing or over."""
        ...

    def deal(self, seed: bytes) -> list[Event]:
        """Deal the next hand from `seed`. Raises IllegalAction("wrong_phase") outside DEALING."""
        ...

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action `seat` may take now (empty when it may not act)."""
        ...

    def apply(self, action: Action) -> list[Event]:
        """Apply an action and return what happened; raises IllegalAction leaving the state unchanged."""
        ...

    def view(self, seat: int) -> SeatView:
        """What `seat` may know."""
        ...

    def spectator_view(self) -> PublicView:
        """What anyone may know."""
        ...

    def copy(self) -> "Game":
        """An independent copy (cheap: for search)."""
        ...


def new_game(ruleset: Ruleset, *, dealer: int | None = None) -> Game:
    """A fresh game in phase DEALING. The first hand's dealer is `dealer` when given, else the
    ruleset's `first_dealer`: a seat, or "random" (the default), drawn from the first deal's seed
    (`engine.deal.first_dealer`), so `game.dealer` is -1 until then and the same seeds always give
    the same game (crash recovery: `new_game` then `deal(seed)` and `apply` in order).

    Raises RulesetError("game") when the game's engine is not available, RulesetError("dealer") for a
    seat out of range.
    """
    from engine.dealing import starting_dealer
    from engine.errors import RulesetError

    starting_dealer(ruleset, dealer)  # raises RulesetError("dealer") for a seat out of range
    # Looked up by name so that each engine loads only when used (and Hearts may land later).
    module_name, class_name = _ENGINES[ruleset.game]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:  # pragma: no cover - only before an engine lands
        raise RulesetError("game", f"the {ruleset.game} engine is not installed") from exc
    game: Game = getattr(module, class_name)(ruleset, dealer=dealer)
    return game


_ENGINES: dict[str, tuple[str, str]] = {
    "spades": ("engine.spades", "SpadesGame"),
    "hearts": ("engine.hearts", "HeartsGame"),
}
