"""Cards as the play screen writes and sorts them: `QS` as `Q♠`, a hand in the engine's card order.

Used by the table's picture as events arrive (client/state.py: the log's lines and the hand's
witness) and by the screen (render.py and panels.py, through client.state, which exports them), and
by the other modules that write cards (results, commands), without importing client/state.py.
"""

from __future__ import annotations

from client.results import card_label
from engine.cards import parse_card
from engine.errors import EngineError


def card_key(card: str) -> int:
    """Sort key: the engine's card number (clubs, diamonds, hearts, spades, then jokers)."""
    try:
        return parse_card(card)
    except EngineError:
        return 99


label = card_label  # `QS` -> `Q♠`, `TD` -> `10♦`


def labels(cards: list[str]) -> str:
    return " ".join(label(card) for card in cards)


def sort_cards(cards: list[str]) -> list[str]:
    return sorted(cards, key=card_key)
