"""The game interface every engine implements (Spades, Hearts), the phases, the outcome, `new_game`.

A game is a state machine owned by one caller (the server's table task, a bot's search, the arena):

    game = new_game(Ruleset.from_preset("standard"), dealer=0)
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
    """How a finished game ended: the winning seats (a team or one player; empty for a draw), the
    final score per side, and why ("target", "boston", "hands", "floor", "draw")."""

    winners: tuple[int, ...]
    scores: tuple[int, ...]
    sides: tuple[tuple[int, ...], ...]
    reason: str

    @property
    def is_draw(self) -> bool:
        """True when nobody won (level scores when a fixed number of hands ran out)."""
        return not self.winners

    @property
    def winning_side(self) -> int:
        """The index into `sides`/`scores` of the winning side (-1 for a draw)."""
        for index, side in enumerate(self.sides):
            if set(side) == set(self.winners):
                return index
        return -1

    def to_dict(self) -> dict[str, Any]:
        """Plain data."""
        return {
            "winners": list(self.winners),
            "scores": list(self.scores),
            "sides": [list(side) for side in self.sides],
            "reason": self.reason,
        }


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
        """The seat that deals (or dealt) the current hand."""
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


def new_game(ruleset: Ruleset, *, dealer: int = 0) -> Game:
    """A fresh game in phase DEALING with `dealer` dealing the first hand.

    Raises RulesetError("game") when the game's engine is not available, RulesetError("dealer") for a
    seat out of range.
    """
    from engine.errors import RulesetError

    if not 0 <= dealer < ruleset.players:
        raise RulesetError("dealer", f"must be a seat from 0 to {ruleset.players - 1}")
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
