"""What the player types, read forgivingly: slash commands, cards, bids, passes.

`read_line(text, state)` returns what to do: a `Slash` command, an `Act` to send, or a `Problem` to
show (nothing sent). Cards go through the engine's `parse_card_loosely` (`QS`, `qs`, `10h`, `Q♠`) or
are the number shown under a card; bids are matched against the words the engine uses for each legal
bid (`Bid.describe()`: `3`, `nil`, `blind nil`, `little Moe`). What is legal comes from `your_turn`
alone. A move that is not in the legal list but is well formed is still sent, so the player reads the
engine's own sentence for why it is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from client.state import TableState
from engine.actions import action_from_dict
from engine.cards import card_text, parse_card_loosely
from engine.errors import EngineError
from protocol.schema import to_map
from protocol.types import Action, ActionKind

SLASH_COMMANDS = {
    "say": "/say TEXT   chat with the table",
    "last": "/last       show the last trick",
    "scores": "/scores     scores hand by hand",
    "verify": "/verify     the deal checks (seed vs commitment, re-dealt by the engine)",
    "code": "/code       a private table's join code, to hand to those you invite",
    "standings": "/standings  an event's standings (playing `spades event EVENT --play`)",
    "help": "/help       this help",
    "quit": "/quit       leave the client (your seat is held for a while)",
}
ALIASES = {"q": "quit", "exit": "quit", "h": "help", "?": "help", "s": "say", "chat": "say"}


@dataclass(frozen=True, slots=True)
class Slash:
    """A slash command: `name` is one of SLASH_COMMANDS, `arg` the rest of the line."""

    name: str
    arg: str = ""


@dataclass(frozen=True, slots=True)
class Act:
    """An action to send with the pending turn's version."""

    action: Action
    version: int


@dataclass(frozen=True, slots=True)
class Problem:
    """Nothing to send; tell the player this."""

    message: str


Command = Slash | Act | Problem


def read_line(text: str, state: TableState) -> Command | None:
    """Interpret one typed line (None for an empty line)."""
    text = text.strip()
    if not text:
        return None
    if text.startswith("/"):
        name, _, arg = text[1:].partition(" ")
        name = ALIASES.get(name.lower(), name.lower())
        if name not in SLASH_COMMANDS:
            return Problem(f"unknown command /{name}; /help lists them")
        if name == "say" and not arg.strip():
            return Problem("/say needs something to say")
        return Slash(name, arg.strip())
    turn = state.turn
    if turn is None:
        if state.seat is None:
            return Problem("you are watching; /say to chat, /quit to leave")
        return Problem("it is not your turn yet")
    kinds = turn.kinds()
    word = text.lower()
    simple = _simple_action(word, kinds)
    if simple is not None:
        return _choose(state, simple)
    if "play" in kinds:
        return _play(text, state)
    if kinds & {"pass", "exchange", "discard"}:
        return _give(text, state, kinds)
    if "bid" in kinds:
        return _bid(text, state)
    return Problem(f"you may now: {', '.join(sorted(kinds))}")


def _choose(state: TableState, action: Action) -> Act:
    assert state.turn is not None
    return Act(action, state.turn.version)


def _simple_action(word: str, kinds: set[str]) -> Action | None:
    if word == "look" and "look" in kinds:
        return Action(kind=ActionKind.LOOK)
    if word == "claim" and "claim" in kinds:
        return Action(kind=ActionKind.CLAIM)
    if word == "deficient" and "deficient" in kinds:
        return Action(kind=ActionKind.DEFICIENT)
    if "keep_drawn" in kinds and word in ("keep", "k", "discard", "d"):
        return Action(kind=ActionKind.KEEP_DRAWN, keep=word in ("keep", "k"))
    return None


def card_from_token(token: str, hand: list[str]) -> str:
    """A card's notation from a number shown under it (1-based) or typed notation; raises EngineError."""
    if token.isdigit():  # a bare number is a position; "10h" is the ten of hearts
        index = int(token)
        if not 1 <= index <= len(hand):
            raise EngineError(
                f"there is no card number {index}; your cards are numbered 1 to {len(hand)}"
            )
        return hand[index - 1]
    return card_text(parse_card_loosely(token))


def _play(text: str, state: TableState) -> Command:
    assert state.turn is not None
    try:
        card = card_from_token(text.replace(" ", ""), state.hand())
    except EngineError as exc:
        return Problem(exc.message)
    for action in state.turn.legal:
        if action.kind is ActionKind.PLAY and action.card == card:
            return _choose(state, action)
    # Not in the legal list: send it anyway, so the engine says why (must follow suit, ...).
    return _choose(state, Action(kind=ActionKind.PLAY, card=card))


def _give(text: str, state: TableState, kinds: set[str]) -> Command:
    assert state.turn is not None
    tokens = [t for t in re.split(r"[\s,;]+", text) if t]
    hand = state.hand()
    try:
        cards = [card_from_token(token, hand) for token in tokens]
    except EngineError as exc:
        return Problem(exc.message)
    giving = [a for a in state.turn.legal if a.kind.value in kinds and a.cards is not None]
    wanted = set(cards)
    for action in giving:
        if set(action.cards or []) == wanted and len(cards) == len(action.cards or []):
            return _choose(state, action)
    count = len(giving[0].cards or []) if giving else 0
    verb = giving[0].kind.value if giving else "pass"
    if count and len(wanted) != count:
        return Problem(f"choose {count} different cards to {verb}, e.g. {' '.join(hand[:count])}")
    kind = giving[0].kind if giving else ActionKind.PASS
    return _choose(state, Action(kind=kind, cards=cards))


def bid_words(action: Action) -> str:
    """The engine's words for a legal bid ("4", "nil", "blind nil", "little Moe")."""
    return action_from_dict(to_map(action), seat=0).describe()  # type: ignore[union-attr]


def _normalise(text: str) -> str:
    return " ".join(text.lower().replace("-", " ").split())


def _bid(text: str, state: TableState) -> Command:
    assert state.turn is not None
    wanted = _normalise(text)
    if wanted.startswith("bid "):  # "bid 3", as /help writes it
        wanted = wanted[4:]
    wanted = {"0": "nil", "bn": "blind nil", "blind 0": "blind nil", "nil blind": "blind nil"}.get(
        wanted, wanted
    )
    match = re.fullmatch(r"(?:blind )?(\d+)(?: blind)?", wanted)
    if match and "blind" in wanted:
        wanted = f"{match.group(1)} blind" if match.group(1) != "0" else "blind nil"
    choices: dict[str, Action] = {}
    for action in state.turn.legal:
        if action.kind is ActionKind.BID:
            try:
                choices[_normalise(bid_words(action))] = action
            except EngineError:
                continue
    if wanted in choices:
        return _choose(state, choices[wanted])
    blind = "blind" in wanted
    if wanted in ("nil", "blind nil"):
        return _choose(state, Action(kind=ActionKind.BID, tricks=0, blind=blind))
    if match:
        tricks = int(match.group(1))
        if tricks <= 18:
            # Well formed but not offered: the engine will say why.
            return _choose(state, Action(kind=ActionKind.BID, tricks=tricks, blind=blind))
    return Problem(f"not a bid you may make now; you may bid: {offered(list(choices))}")


def offered(choices: list[str]) -> str:
    """The legal bids in few words: `nil, 1 to 13` rather than fourteen of them."""
    numbers = sorted(int(c) for c in choices if c.isdigit())
    words = [c for c in choices if not c.isdigit()]
    if len(numbers) > 3 and numbers == list(range(numbers[0], numbers[-1] + 1)):
        return ", ".join([*words, f"{numbers[0]} to {numbers[-1]}"])
    return ", ".join([*words, *(str(n) for n in numbers)])
