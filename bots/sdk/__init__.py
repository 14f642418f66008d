"""The bot SDK: subclass `Bot` (or `AsyncBot`), read the `BotView`, return a bid or a card.

from bots.sdk import Bot, BotView

class MyBot(Bot):
    def bid(self, view: BotView) -> int:
        return 3

    def play(self, view: BotView) -> int:
        return view.legal_cards[0]
"""

from bots.sdk.bot import AsyncBot, Bot, BotError, Decision, decision_kind, to_action
from bots.sdk.view import BotView, HandMemory

__all__ = [
    "AsyncBot",
    "Bot",
    "BotError",
    "BotView",
    "Decision",
    "HandMemory",
    "decision_kind",
    "to_action",
]
