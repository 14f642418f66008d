"""What each seat may know, rebuilt from the database by replaying a game through the engine."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.actions import action_from_dict
from engine.cards import card_text, mask_text
from engine.game import Game, new_game
from engine.ruleset import Ruleset
from protocol.messages import Message
from protocol.types import CARD_TEXTS
from protocol.wire import to_wire
from server.storage import Tx


@dataclass
class HandTruth:
    own: dict[int, set[str]] = field(default_factory=dict)  # every card a seat held this hand
    played: set[str] = field(default_factory=set)


def replay_truth(tx: Tx, game_id: int) -> dict[int, HandTruth]:
    """Per hand number: the cards each seat held at some point, and the cards played."""
    stored = tx.load_game(game_id)
    assert stored is not None
    game = new_game(Ruleset.from_dict(stored.ruleset))
    truth: dict[int, HandTruth] = {}
    deals = sorted(stored.hands, key=lambda h: h.hand_no)
    dealt = 0

    def observe(game: Game) -> None:
        hand = truth.setdefault(game.hand_number, HandTruth())
        for seat in range(game.players):
            held = game.view(seat).hand
            if held is not None:
                hand.own.setdefault(seat, set()).update(mask_text(held))
        view = game.spectator_view()
        hand.played.update(mask_text(view.played))
        hand.played.update(card_text(card) for _seat, card in view.trick)

    for action in stored.actions:
        while dealt < len(deals) and deals[dealt].first_seq <= action.seq:
            game.deal(bytes.fromhex(deals[dealt].seed))
            dealt += 1
            observe(game)
        game.apply(action_from_dict(action.action))
        observe(game)
    return truth


def cards_in(value: Any) -> set[str]:
    """Every card notation appearing as a whole string anywhere in a message's plain form."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item in CARD_TEXTS:
                found.add(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return found


def publicly_played(data: dict[str, Any]) -> set[str]:
    """The cards a message announces as played (only the fields that say so)."""
    kind = data["t"]
    if kind == "card_played":
        return cards_in(data.get("card"))
    if kind == "trick_won":
        return cards_in(data.get("plays"))
    if kind == "snapshot":
        view = data["view"]
        return cards_in([view.get("played"), view.get("trick"), view.get("last_trick")])
    return set()


def check_no_leak(
    messages: list[Message], seat: int | None, truth: dict[int, HandTruth], table: str
) -> int:
    """Assert no message shows `seat` (None: a spectator) a card it may not know; count checked."""
    hand_number = 0
    announced: set[str] = set()
    checked = 0
    for message in messages:
        data = to_wire(message)
        if data.get("table") != table and not isinstance(data.get("table"), dict):
            continue
        if data["t"] == "hand_dealt":
            hand_number, announced = data["hand_number"], set()
        if data["t"] == "snapshot":
            hand_number = data["view"].get("hand_number", 0)
        hand = truth.get(hand_number)
        if hand is None:
            assert not cards_in(data), (data, "cards outside any hand")
            continue
        own = hand.own.get(seat, set()) if seat is not None else set()
        announced |= publicly_played(data) & hand.played
        shown = cards_in(data)
        leaked = shown - own - announced
        assert not leaked, (seat, data["t"], sorted(leaked), data)
        checked += 1
    return checked


Check = Callable[[list[Message], int | None], int]
