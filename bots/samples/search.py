"""`search`: determinized Monte Carlo over the card play, with the heuristic as its playout policy.

For each card decision, until its time is up: deal the unseen cards in a way consistent with what play
has shown (`world.sample_hands`), set the engine up in that position, and for every legal card play the
hand out with the heuristic at every seat; score the hand with the engine's own scoring. Every legal card
is tried in the same sampled worlds, so the comparison is paired and the noise of the deal cancels. The
card with the best mean result is played. Bids, passes and the rest are the heuristic's.

The result of a playout is the hand's points for my side minus the best other side's (Spades), or the
others' mean points minus mine (Hearts), so bags, nils and the moon count as the rules count them.

Budget: `ms` milliseconds per decision (default 200), never more than half the time the clock leaves.
"""

import time

from bots.samples.heuristic import HeuristicBot
from bots.samples.world import build_world, play_out, sample_hands
from bots.sdk.bot import Decision
from bots.sdk.view import BotView
from engine.cards import Card

#: Always finish at least this many worlds when there is time at all, so tiny budgets still search.
MIN_WORLDS = 2


class SearchBot(HeuristicBot):
    """The heuristic, plus a determinized Monte Carlo search of its card play."""

    name = "search"

    def __init__(
        self, seed: int | None = None, ms: float = 200.0, max_worlds: int = 10_000
    ) -> None:
        super().__init__(seed)
        self.budget = ms / 1000.0
        self.max_worlds = max_worlds
        self.last_worlds = 0  # worlds sampled for the last decision (for tests and benchmarks)

    def play(self, view: BotView) -> Decision:
        legal = view.legal_cards
        if len(legal) == 1:
            return legal[0]
        budget = self.budget
        if view.deadline is not None:
            budget = min(budget, max(0.0, view.deadline * 0.5 - 0.05))
        deadline = time.perf_counter() + budget
        totals = dict.fromkeys(legal, 0.0)
        worlds = 0
        while worlds < self.max_worlds and (worlds < MIN_WORLDS or time.perf_counter() < deadline):
            hands = sample_hands(view, self.random)
            if hands is None:
                break
            base = build_world(view, hands)
            if base is None:
                break
            for card in legal:
                totals[card] += self._value(view, base.copy(), card)
            worlds += 1
            if budget <= 0 and worlds >= MIN_WORLDS:
                break
        self.last_worlds = worlds
        if worlds == 0:
            return super().play(view)
        # Ties (common late in a hand) go to the heuristic's own choice.
        preferred = super().play(view)
        best = max(totals.values())
        if isinstance(preferred, int) and totals.get(preferred) == best:
            return preferred
        return max(legal, key=lambda c: (totals[c], -c))

    def _value(self, view: BotView, game: object, card: Card) -> float:
        play_out(game, card)
        scores: tuple[int, ...] = game.scores  # type: ignore[attr-defined]
        deltas = [after - before for after, before in zip(scores, view.scores, strict=True)]
        mine = view.my_side
        if view.is_hearts:
            others = [d for side, d in enumerate(deltas) if side != mine]
            return float(sum(others) / len(others) - deltas[mine])
        return float(deltas[mine] - max(d for side, d in enumerate(deltas) if side != mine))
