"""Our bots against OpenSpiel's ISMCTS bot, on OpenSpiel's own `spades` game (bench/strength.py's
`vs-ismcts` match; needs the bench extra: `.venv/bin/pip install -e '.[dev,bench]'`).

OpenSpiel referees and scores. Each deal goes into OpenSpiel's game (its chance actions deal card i of
the sequence to player i % 4) and, the same cards, into a mirror of the hand in our engine: plain
Spades with the rules nearest OpenSpiel's (one hand from 0-0, the dealer's left bids and leads first,
and a nil bidder's tricks count for its partner, as OpenSpiel scores them). Every action, whoever
takes it, is applied to both. Our bot decides for its seats from the mirror's view. Where the two
engines' rules differ the bot is offered only what OpenSpiel allows, and the decision is counted:

- OpenSpiel never marks spades broken, so a spade may be led only by a hand of nothing but spades;
  our engine lets spades be led once one has been played;
- OpenSpiel refuses a bid that takes a side's total over 13 tricks (ours allows up to 13 each), and it
  has no double nil.

OpenSpiel's `spades` does not implement `ResampleFromInfostate`, which ISMCTS needs to sample the
hidden cards, so its Python ISMCTS (`open_spiel.python.algorithms.ismcts`, "adapted from the C++
implementation") is given a resampler: the unseen cards dealt uniformly to the other players,
consistently with the suits each has shown void in (and with a spade lead showing a hand of only
spades), then the public bids and plays replayed. Leaf values come from OpenSpiel's
`RandomRolloutEvaluator` (`open_spiel.python.algorithms.mcts`, one random rollout).
"""

import dataclasses
import math
import random
import time
from dataclasses import dataclass, field
from typing import Any

from bots.registry import make_bot
from bots.sdk.bot import Bot
from bots.sdk.view import BotView, HandMemory
from engine.actions import Action, Bid, PlayCard
from engine.ruleset import Ruleset
from engine.spades import SpadesGame

#: Our engine's rules for the mirror: the nearest to OpenSpiel's `spades`.
MIRROR_RULES = Ruleset.from_preset(
    "standard", target_score=0, max_hands=1, nil_tricks_help_partner=True
)
#: OpenSpiel's first bidding action (bids are 52 + tricks, 0 being nil); cards are 0..51 in both
#: engines alike (suit * 13 + rank, clubs, diamonds, hearts, spades; rank 0 is the two).
BID_BASE = 52
SPADES = 3


def openspiel_action(action: Action) -> int:
    if isinstance(action, PlayCard):
        return action.card
    if isinstance(action, Bid) and not (action.blind or action.double_nil or action.moe):
        return BID_BASE + action.tricks
    return -1


def engine_action(seat: int, action: int) -> Action:
    if action >= BID_BASE:
        return Bid(seat, action - BID_BASE)
    return PlayCard(seat, action)


@dataclass
class HandResult:
    """One hand: the points each side scored (OpenSpiel's returns) and what the decisions cost."""

    points: tuple[float, float]  # per side: players 0 and 2, players 1 and 3
    ours_seconds: list[float] = field(default_factory=list)
    ismcts_seconds: list[float] = field(default_factory=list)
    differing: int = 0  # decisions where the engines' legal actions differ
    differing_ours: int = 0  # ... of which our bot's


def trick_winner(plays: list[tuple[int, int]]) -> int:
    """The player winning a finished trick of (player, card) plays (spades trump)."""
    led = plays[0][1] // 13
    best_player, best_key = plays[0][0], -1
    for player, card in plays:
        suit = card // 13
        key = 100 + card % 13 if suit == SPADES else card % 13 if suit == led else -1
        if key > best_key:
            best_player, best_key = player, key
    return best_player


def public_record(history: list[int]) -> tuple[list[list[int]], list[int], list[tuple[int, int]]]:
    """From an OpenSpiel history: the deal (cards per player), the bids, and the plays by player."""
    deal: list[list[int]] = [[] for _ in range(4)]
    for index, card in enumerate(history[:52]):
        deal[index % 4].append(card)
    bids = [a - BID_BASE for a in history[52:56]]
    plays: list[tuple[int, int]] = []
    player = 0
    trick: list[tuple[int, int]] = []
    for card in history[56:]:
        trick.append((player, card))
        plays.append((player, card))
        if len(trick) == 4:
            player = trick_winner(trick)
            trick = []
        else:
            player = (player + 1) % 4
    return deal, bids, plays


def resampler(rng: random.Random) -> Any:
    """ISMCTS's resampler: a state with `player`'s cards and the public record, the other cards
    dealt uniformly among the hands that may hold them."""

    def resample(state: Any, player: int) -> Any:
        history = [int(a) for a in state.history()]
        deal, _bids, plays = public_record(history)
        played = [0] * 4
        voids = [0] * 4  # a bit per suit
        trick: list[tuple[int, int]] = []
        for who, card in plays:
            if trick and card // 13 != trick[0][1] // 13:
                voids[who] |= 1 << (trick[0][1] // 13)
            if not trick and card // 13 == SPADES:
                voids[who] |= 0b0111  # spades are never broken: a spade lead shows only spades
            played[who] |= 1 << card
            trick.append((who, card))
            if len(trick) == 4:
                trick = []
        mine = 0
        for card in deal[player]:
            mine |= 1 << card
        seen = mine
        for mask in played:
            seen |= mask
        unseen = [c for c in range(52) if not seen >> c & 1]
        need = [13 - played[p].bit_count() if p != player else 0 for p in range(4)]
        hands = _deal_unseen(unseen, need, voids, rng)
        full = [0] * 4
        for p in range(4):
            full[p] = (mine if p == player else hands[p]) | played[p]
        return _state_with(state.get_game(), full, history[52:])

    return resample


def _deal_unseen(
    unseen: list[int], need: list[int], voids: list[int], rng: random.Random
) -> list[int]:
    """Deal the unseen cards: each player its count, none of a suit it is void in (relaxed after a
    few failed tries, rather than loop)."""
    order = sorted((p for p in range(4) if need[p]), key=lambda p: bin(voids[p]).count("1"))
    order.reverse()
    for attempt in range(21):
        relax = attempt == 20
        left = list(unseen)
        rng.shuffle(left)
        hands = [0] * 4
        ok = True
        for p in order:
            take = [c for c in left if relax or not voids[p] >> (c // 13) & 1][: need[p]]
            if len(take) < need[p]:
                ok = False
                break
            for card in take:
                hands[p] |= 1 << card
                left.remove(card)
        if ok:
            return hands
    raise RuntimeError("cannot deal the unseen cards")


def _state_with(game: Any, hands: list[int], actions: list[int]) -> Any:
    """An OpenSpiel state dealt these hands, with these bids and plays applied."""
    state = game.new_initial_state()
    cards = [sorted(c for c in range(52) if hands[p] >> c & 1) for p in range(4)]
    for index in range(52):
        state.apply_action(cards[index % 4][index // 4])
    for action in actions:
        state.apply_action(action)
    return state


class Ismcts:
    """OpenSpiel's Python ISMCTS at one seat, with the resampler above."""

    def __init__(self, game: Any, simulations: int, uct_c: float, seed: int) -> None:
        import numpy as np
        from open_spiel.python.algorithms import ismcts, mcts

        self.bot = ismcts.ISMCTSBot(
            game=game,
            evaluator=mcts.RandomRolloutEvaluator(1, np.random.RandomState(seed % 2**32)),
            uct_c=uct_c,
            max_simulations=simulations,
            max_world_samples=ismcts.UNLIMITED_NUM_WORLD_SAMPLES,
            random_state=np.random.RandomState(seed % 2**32),
            final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
            use_observation_string=True,
            allow_inconsistent_action_sets=False,
        )
        self.bot.set_resampler(resampler(random.Random(seed)))

    def step(self, state: Any) -> int:
        return int(self.bot.step(state))


def deal_cards(seed: int, deal_index: int) -> list[int]:
    """Four hands of 13 (masks), from the arena's seeding of deal `deal_index`."""
    from bots.arena.match import hand_seed

    rng = random.Random(hand_seed(seed, deal_index, 0))
    cards = list(range(52))
    rng.shuffle(cards)
    hands = [0] * 4
    for index, card in enumerate(cards):
        hands[index // 13] |= 1 << card
    return hands


def play_hand(
    hands: list[int],
    ours: tuple[int, ...],
    spec: str,
    simulations: int,
    uct_c: float,
    seed: int,
) -> HandResult:
    """One hand refereed by OpenSpiel: `spec` (our bot) at the seats `ours`, ISMCTS at the others."""
    import pyspiel

    game = pyspiel.load_game("spades")
    state = game.new_initial_state()
    cards = [sorted(c for c in range(52) if hands[p] >> c & 1) for p in range(4)]
    for index in range(52):
        state.apply_action(cards[index % 4][index // 4])
    mirror = SpadesGame(MIRROR_RULES, dealer=3)
    mirror.deal_fixed(hands)
    bots: dict[int, Any] = {}
    for player in range(4):
        player_seed = seed * 10 + player
        if player in ours:
            bots[player] = make_bot(spec, player_seed)
        else:
            bots[player] = Ismcts(game, simulations, uct_c, player_seed)
    memories = [HandMemory() for _ in range(4)]
    result = HandResult(points=(0.0, 0.0))
    while not state.is_terminal():
        player = state.current_player()
        allowed = {int(a) for a in state.legal_actions()}
        mirrored = {openspiel_action(a) for a in mirror.legal_actions(player)} - {-1}
        differs = mirrored != allowed
        result.differing += differs
        if player in ours:
            bot: Bot = bots[player]
            view = BotView.from_seat_view(
                mirror.view(player), MIRROR_RULES, memory=memories[player]
            )
            if differs:
                result.differing_ours += 1
                legal = tuple(a for a in view.legal if openspiel_action(a) in allowed)
                view = dataclasses.replace(view, legal=legal)
            started = time.process_time()
            action = openspiel_action(bot.decide(view))
            result.ours_seconds.append(time.process_time() - started)
        else:
            started = time.process_time()
            action = bots[player].step(state)
            result.ismcts_seconds.append(time.process_time() - started)
        if action not in allowed:
            raise RuntimeError(f"player {player} chose {action}, which OpenSpiel does not allow")
        state.apply_action(action)
        mirror.apply(engine_action(player, action))
    returns = state.returns()
    result.points = (float(returns[0]), float(returns[1]))
    return result


@dataclass(frozen=True)
class PairJob:
    deal_index: int
    spec: str
    simulations: int
    uct_c: float
    seed: int


def play_pair(job: PairJob) -> dict[str, Any]:
    """A duplicate pair: the deal played with our bot at players 0 and 2, then at 1 and 3."""
    hands = deal_cards(job.seed, job.deal_index)
    margins = []
    out: dict[str, Any] = {"ours_seconds": [], "ismcts_seconds": [], "differing": 0}
    out["differing_ours"] = 0
    for side, seats in enumerate(((0, 2), (1, 3))):
        hand = play_hand(
            hands, seats, job.spec, job.simulations, job.uct_c, job.seed * 1000 + job.deal_index
        )
        margins.append(hand.points[side] - hand.points[1 - side])
        out["ours_seconds"].extend(hand.ours_seconds)
        out["ismcts_seconds"].extend(hand.ismcts_seconds)
        out["differing"] += hand.differing
        out["differing_ours"] += hand.differing_ours
    out["margin"] = sum(margins) / 2  # our side's points minus ISMCTS's, a hand
    out["deal"] = job.deal_index
    return out


def summary_seconds(seconds: list[float]) -> dict[str, float]:
    if not seconds:
        return {"mean_ms": math.nan, "max_ms": math.nan}
    ordered = sorted(seconds)
    return {
        "mean_ms": round(1000 * sum(ordered) / len(ordered), 2),
        "p95_ms": round(1000 * ordered[int(0.95 * (len(ordered) - 1))], 2),
        "max_ms": round(1000 * ordered[-1], 2),
        "decisions": len(ordered),
    }
