"""The arena's lean play loop: the same hand as asking the game whose turn it is before every card, while
asking it only when a trick goes to someone other than the next seat (and at the end of the hand)."""

import random
from typing import Any

import pytest

from bots.arena.match import play_lean
from engine.cards import Card, CardMask
from engine.game import Phase, new_game
from engine.ruleset import Ruleset


class CountingGame:
    """The game, counting the `to_act()` calls made through it."""

    def __init__(self, game: Any) -> None:
        self.game = game
        self.to_act_calls = 0

    def to_act(self) -> tuple[int, ...]:
        self.to_act_calls += 1
        seats: tuple[int, ...] = self.game.to_act()
        return seats

    def __getattr__(self, name: str) -> Any:
        return getattr(self.game, name)


def lowest(legal: CardMask) -> Card:
    return (legal & -legal).bit_length() - 1


def dealt_and_bid(preset: str, seed: int) -> Any:  # the lean API is not in the Game protocol
    game = new_game(Ruleset.from_preset(preset), dealer=0)
    game.deal(bytes([seed, 7]))
    rng = random.Random(seed)
    while game.phase is not Phase.PLAYING:
        game.apply(rng.choice(game.legal_actions(game.to_act()[0])))
    return game


@pytest.mark.parametrize(("preset", "seed"), [("standard", 1), ("standard", 2), ("hearts", 3)])
def test_the_lean_loop_plays_the_hand_the_plain_loop_plays(preset: str, seed: int) -> None:
    plain = dealt_and_bid(preset, seed)
    while plain.phase is Phase.PLAYING:
        seat = plain.to_act()[0]
        plain.play_fast(lowest(plain.legal_play_mask(seat)))

    lean = CountingGame(dealt_and_bid(preset, seed))
    seats_asked: list[int] = []

    def chooser(seat: int) -> Any:
        def choose(legal: CardMask) -> Card:
            seats_asked.append(seat)
            return lowest(legal)

        return choose

    players = lean.game.ruleset.players
    play_lean(
        lean,
        [chooser(seat) for seat in range(players)],
        lean.game.legal_play_mask,
        lean.game.play_fast,
    )
    assert lean.game.scores == plain.scores
    assert lean.game.phase is plain.phase
    tricks = lean.game.ruleset.tricks_per_hand
    assert len(seats_asked) == tricks * players
    # Once to start, then at most once per trick (only when it goes to someone other than the next).
    assert 1 <= lean.to_act_calls <= 1 + tricks


class StuckGame:
    """A game in play whose seat to act has no legal card: a state the rules cannot reach."""

    phase = Phase.PLAYING

    def to_act(self) -> tuple[int, ...]:
        return (1,)


def test_the_lean_loop_refuses_a_seat_with_no_legal_card() -> None:
    with pytest.raises(RuntimeError, match="seat 1 is to play but has no legal card"):
        play_lean(StuckGame(), [lowest] * 4, lambda seat: 0, lambda card: None)  # type: ignore[arg-type]
