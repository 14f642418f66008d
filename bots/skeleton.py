"""`spades-bot new NAME`: write a small bot that runs as it is, to be grown from there."""

import keyword
import re
from pathlib import Path

TEMPLATE = '''"""{title}: a bot for the Spades/Hearts table server.

Try it:   spades-bot arena {module}:{cls} random --games 20
Seat it:  spades-bot run {module}:{cls} --server HOST:PORT --token TOKEN --ladder
"""

from engine.cards import SPADES

from bots.sdk import Bot, BotView


class {cls}(Bot):
    """Bids its sure tricks; plays its lowest legal card unless it can win the trick."""

    def bid(self, view: BotView) -> int:
        aces = sum(1 for card in view.hand if view.power(card) >= 12)
        spades = len(view.suit_cards(SPADES))
        return max(1, aces + max(0, spades - 3))

    def play(self, view: BotView) -> int:
        cards = sorted(view.legal_cards, key=view.power)
        winner = view.trick_winner()
        for card in cards:  # the cheapest card that takes the lead, if any does
            if winner is None or view.beats(card, winner[1]):
                return card
        return cards[0]

    def pass_cards(self, view: BotView) -> list[int]:
        """Hearts: pass the highest cards."""
        return sorted(view.hand, key=view.power)[-view.choose_count :]
'''


def class_name(name: str) -> str:
    """`my-bot` -> `MyBot`; always a valid identifier ending in Bot."""
    words = [w for w in re.split(r"[^0-9A-Za-z]+", name) if w]
    base = "".join(w[:1].upper() + w[1:] for w in words) or "My"
    if base[0].isdigit():
        base = "Bot" + base
    return base if base.endswith("Bot") else base + "Bot"


def module_name(name: str) -> str:
    """`My Bot` -> `my_bot`, a valid module name."""
    snake = re.sub(r"[^0-9a-z]+", "_", name.lower()).strip("_") or "my_bot"
    if snake[0].isdigit() or keyword.iskeyword(snake):
        snake = "bot_" + snake
    return snake


def write_skeleton(name: str, directory: Path, *, overwrite: bool = False) -> Path:
    """Write `<module>.py` in `directory` and return its path. Raises FileExistsError unless
    `overwrite`; nothing is written then."""
    module = module_name(name)
    path = directory / f"{module}.py"
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists; choose another name or pass --force")
    text = TEMPLATE.format(title=name, module=module, cls=class_name(name))
    path.write_text(text, encoding="utf-8")
    return path
