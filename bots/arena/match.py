"""One arena game, engine only: seat the bots, deal each hand from a derived seed, ask, apply, repeat.

The arena is where bots are measured, so the game is driven exactly as the server drives it: the bot
sees the very `BotView` it would get from `your_turn` on the wire (built straight from the engine's
`SeatView`, which tests/bots/test_view_paths.py checks against the wire form's), and a bot that fails
to answer legally gets the SDK's fallback action, which is counted. Hand seeds are a function of the run
seed, the deal number and the hand number only, so a duplicate pair (the same deal number, the seats
rotated by one) replays the very same cards with the sides swapped.
"""

import hashlib
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from bots.registry import make_bot
from bots.sdk.bot import AnyBot, AsyncBot, BaseBot, BotError, fallback_action
from bots.sdk.view import BotView, HandMemory
from engine import records
from engine.actions import Action
from engine.cards import Card, CardMask
from engine.events import Event, GameOver, HandScored
from engine.game import Game, Phase, new_game
from engine.ruleset import Ruleset

#: Games that drag on (random bots may never reach the target) are stopped after this many hands and
#: scored on the running score.
DEFAULT_MAX_HANDS = 200


@dataclass(frozen=True, slots=True)
class GameJob:
    """Everything a worker process needs to play one game (plain data, so it pickles)."""

    index: int  # the game's number in the run
    deal_index: int  # which sequence of deals; the two games of a duplicate pair share it
    rotation: int  # seat s is played by entrant (s - rotation) % len(specs)
    specs: tuple[str, ...]  # bot specs, one per entrant
    ruleset: dict[str, Any]
    seed: int
    record: bool = False
    max_hands: int = DEFAULT_MAX_HANDS


@dataclass(slots=True)
class GameResult:
    """What one game gives the statistics (plain data)."""

    index: int
    deal_index: int
    rotation: int
    seat_entrants: tuple[int, ...]
    sides: tuple[tuple[int, ...], ...]
    scores: tuple[int, ...]  # final score per side
    winners: tuple[int, ...]  # winning seats (several on a tie at the hand cap)
    reason: str
    hand_deltas: list[tuple[int, ...]] = field(default_factory=list)  # per hand, per side
    fallbacks: int = 0  # decisions the SDK made because a bot failed
    # Per seat: decisions the bot was asked through `decide`, the CPU seconds they took in all, and
    # the longest one (a lean bot's decisions, `play_mask` and `choose_from`, are not counted).
    decisions: tuple[int, ...] = ()
    think_seconds: tuple[float, ...] = ()
    longest_seconds: tuple[float, ...] = ()
    records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def hands(self) -> int:
        return len(self.hand_deltas)


def hand_seed(seed: int, deal_index: int, hand: int) -> bytes:
    """The seed of one hand: the same (run seed, deal, hand) always deals the same cards."""
    return hashlib.sha256(f"spades-arena:{seed}:{deal_index}:{hand}".encode()).digest()[:16]


def seat_entrants(entrants: int, players: int, rotation: int) -> tuple[int, ...]:
    """Which entrant plays each seat: alternating (two entrants) or one each, shifted by `rotation`."""
    return tuple((seat - rotation) % entrants for seat in range(players))


def bot_seed(seed: int, index: int, seat: int) -> int:
    """A bot's own random seed, distinct per game and seat, reproducible from the run seed."""
    digest = hashlib.sha256(f"spades-arena-bot:{seed}:{index}:{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


class Seat:
    """One bot at one seat, with what the arena keeps for it: its hand memory and its hooks."""

    def __init__(self, bot: AnyBot, seat: int, ruleset: Ruleset, rng: random.Random) -> None:
        self.bot = bot
        self.seat = seat
        self.ruleset = ruleset
        self.rng = rng
        self.memory = HandMemory()
        self.hand_number = 0
        kind = type(bot)
        self.wants_events = kind.on_event is not BaseBot.on_event
        self.wants_hands = (
            kind.on_hand_start is not BaseBot.on_hand_start
            or kind.on_hand_end is not BaseBot.on_hand_end
        )
        lean = getattr(bot, "play_mask", None)
        self.play_mask: Callable[[int], int] | None = lean if callable(lean) else None
        choose = getattr(bot, "choose_from", None)
        self.choose_from: Callable[[list[Action]], Action] | None = (
            choose if callable(choose) else None
        )
        self.fallbacks = 0
        self.decisions = 0
        self.think_seconds = 0.0
        self.longest_seconds = 0.0

    def decide(self, game: Game) -> Any:
        view = BotView.from_seat_view(game.view(self.seat), self.ruleset, memory=self.memory)
        if view.hand_number != self.hand_number:
            self.hand_number = view.hand_number
            if self.wants_hands:
                self.bot.on_hand_start(view)
        # CPU time of this process: the bots of a game take turns in one thread, so the interval is
        # this bot's thinking alone, whatever else the machine runs (a wall clock would count that).
        started = time.process_time()
        try:
            if isinstance(self.bot, AsyncBot):
                import trio

                return trio.run(self.bot.decide, view)
            return self.bot.decide(view)
        except (BotError, Exception):
            # A bot's bug must not end the run: play for it, and count it.
            self.fallbacks += 1
            return fallback_action(view, self.rng)
        finally:
            spent = time.process_time() - started
            self.decisions += 1
            self.think_seconds += spent
            self.longest_seconds = max(self.longest_seconds, spent)

    def tell(self, events: list[Event]) -> None:
        for event in events:
            if self.wants_events:
                shown = event.for_seat(self.seat)
                if shown is not None:
                    self.bot.on_event(shown)
            if isinstance(event, HandScored):
                self.bot.on_hand_end(event.to_dict())
            elif isinstance(event, GameOver):
                self.bot.on_game_end(event.to_dict())


_last_ruleset: list[tuple[dict[str, Any], Ruleset]] = []


def job_ruleset(data: dict[str, Any]) -> Ruleset:
    """`Ruleset.from_dict`, remembered for the last ruleset: the games of a run share one, and
    checking it again costs as much as a hand of random play."""
    for cached, ruleset in _last_ruleset[:1]:  # one consistent entry, even from several threads
        if cached == data:
            return ruleset
    ruleset = Ruleset.from_dict(data)
    _last_ruleset[:] = [(dict(data), ruleset)]
    return ruleset


def play_game(job: GameJob) -> GameResult:
    """Play one game to its end (or the hand cap) and return what the statistics need."""
    ruleset = job_ruleset(job.ruleset)
    players = ruleset.players
    entrants = seat_entrants(len(job.specs), players, job.rotation)
    seats = [
        Seat(
            make_bot(job.specs[entrants[s]], bot_seed(job.seed, job.index, s)),
            s,
            ruleset,
            random.Random(bot_seed(job.seed, job.index, s + 100)),
        )
        for s in range(players)
    ]
    tell_all = any(seat.wants_events or seat.wants_hands for seat in seats)
    game = new_game(ruleset, dealer=0)
    result = GameResult(
        index=job.index,
        deal_index=job.deal_index,
        rotation=job.rotation,
        seat_entrants=entrants,
        sides=ruleset.sides,
        scores=(),
        winners=(),
        reason="",
    )
    # The lean path (no view, no events) for bots that need only the legal cards: Spades plays
    # through legal_play_mask/play_fast, Hearts through legal_mask/play_card. Not when recording:
    # play_fast leaves the hand's action list, which a record needs for replay, unwritten.
    legal_mask = getattr(game, "legal_play_mask", None) or getattr(game, "legal_mask", None)
    play = getattr(game, "play_fast", None) or getattr(game, "play_card", None)
    lean = legal_mask is not None and play is not None and not job.record and not tell_all
    hands_dealt = 0
    scores = game.scores
    lean_players = lean and all(seat.play_mask is not None for seat in seats)
    while not game.is_over:
        phase = game.phase
        if phase is Phase.DEALING:
            # Per-hand points from the running score: cheaper than building every hand's history.
            if hands_dealt:
                now = game.scores
                result.hand_deltas.append(tuple(a - b for a, b in zip(now, scores, strict=True)))
                scores = now
            if hands_dealt >= job.max_hands:
                break
            game.deal(hand_seed(job.seed, job.deal_index, hands_dealt))
            hands_dealt += 1
            continue
        if lean_players and phase is Phase.PLAYING:
            choosers = [seat.play_mask for seat in seats if seat.play_mask is not None]
            play_lean(game, choosers, legal_mask, play)  # type: ignore[arg-type]
            continue
        seat = seats[game.to_act()[0]]
        if lean and phase is Phase.PLAYING and seat.play_mask is not None:
            play(seat.play_mask(legal_mask(seat.seat)))  # type: ignore[misc]
            continue
        if lean and seat.choose_from is not None:
            game.apply(seat.choose_from(game.legal_actions(seat.seat)))
            continue
        events = game.apply(seat.decide(game))
        if tell_all:
            for each in seats:
                each.tell(events)
    if game.is_over:
        now = game.scores
        result.hand_deltas.append(tuple(a - b for a, b in zip(now, scores, strict=True)))
    _finish(game, result, job)
    result.fallbacks = sum(seat.fallbacks for seat in seats)
    result.decisions = tuple(seat.decisions for seat in seats)
    result.think_seconds = tuple(seat.think_seconds for seat in seats)
    result.longest_seconds = tuple(seat.longest_seconds for seat in seats)
    return result


def play_lean(
    game: Game,
    choosers: Sequence[Callable[[CardMask], Card]],
    legal_mask: Callable[[int], CardMask],
    play: Callable[[Card], object],
) -> None:
    """Play the rest of the hand without views or events, `choosers[seat](legal)` picking each card:
    the tightest loop the arena has.

    The next seat round the table is asked first, with no call to find whose turn it is: the engine's
    `legal_play_mask` is 0 unless it is that seat's turn to play, so only after a trick won by someone
    else (or at the end of the hand) does the loop ask the game."""
    players = len(choosers)
    turn = game.to_act()[0]
    while True:
        legal = legal_mask(turn)
        if not legal:
            if game.phase is not Phase.PLAYING:
                return
            turn = game.to_act()[0]
            legal = legal_mask(turn)
            if not legal:
                raise RuntimeError(f"seat {turn} is to play but has no legal card")
        play(choosers[turn](legal))
        turn += 1
        if turn == players:
            turn = 0


def _finish(game: Game, result: GameResult, job: GameJob) -> None:
    result.scores = game.scores
    outcome = game.outcome
    if outcome is not None:
        result.winners = outcome.winners
        result.reason = outcome.reason
    else:
        # Stopped at the hand cap: the best running score wins (all of the tied sides on a tie).
        sides = game.ruleset.sides
        scores = game.scores
        hearts = game.ruleset.game == "hearts"
        best = min(scores) if hearts else max(scores)
        result.winners = tuple(
            seat for index, side in enumerate(sides) if scores[index] == best for seat in side
        )
        result.reason = "hand_cap"
    if job.record:
        game_id = f"arena-{job.seed}-{job.index}"
        result.records = records.game_records(game, game_id=game_id)
