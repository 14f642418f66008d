"""`random`: any legal action, uniformly. The floor every other bot must beat, and the arena's speed test.

Card choices (pass, exchange, discard) are uniform over the hand. `play_mask` is the lean form the arena
uses when the engine offers it, and `choose_from` the same for other decisions: the bot needs nothing but
the legal actions, so no view is built at all.
"""

from collections.abc import Sequence

from bots.sdk.bot import Bot, Decision
from bots.sdk.view import BotView
from engine.actions import Action
from engine.cards import Card, CardMask


class RandomBot(Bot):
    """Plays any legal action."""

    name = "random"

    def bid(self, view: BotView) -> Decision:
        return self.random.choice(view.legal)

    def play(self, view: BotView) -> Decision:
        return self.random.choice(view.legal_cards)

    def _cards(self, view: BotView) -> list[Card]:
        return self.random.sample(view.hand, view.choose_count)

    def exchange(self, view: BotView) -> Decision:
        return self._cards(view)

    def pass_cards(self, view: BotView) -> Decision:
        return self._cards(view)

    def discard(self, view: BotView) -> Decision:
        return self._cards(view)

    def other(self, view: BotView) -> Decision:
        return self.random.choice(view.legal)

    def choose_from(self, legal: Sequence[Action]) -> Action:
        """Pick from the engine's legal actions (the arena's fast path for every other decision)."""
        return self.random.choice(legal)

    def play_mask(self, legal: CardMask) -> Card:
        """Pick a legal card from a mask (the arena's fast path; same distribution as `play`)."""
        if legal & (legal - 1) == 0:
            return legal.bit_length() - 1
        # random() * n is uniform enough here and several times cheaper than randrange(n); a while
        # loop drops the index's low cards with less overhead than iterating over a range.
        index = int(self.random.random() * legal.bit_count())
        while index:
            legal &= legal - 1
            index -= 1
        return (legal & -legal).bit_length() - 1
