"""The bot interface: subclass `Bot` (plain methods) or `AsyncBot` (coroutines) and fill in the decisions.

A decision method gets a `BotView` and returns something simple; `to_action` turns it into the engine
action and checks it against the legal ones:

- `bid(view)` -> an int (tricks, 0 for nil) or any `Bid` from `view.legal_bids` (blind, Moe, ...);
- `play(view)` -> a card (int or notation like "QS");
- `exchange(view)` / `pass_cards(view)` / `discard(view)` -> `view.choose_count` cards;
- `other(view)` -> any action from `view.legal` (claims, deficient hands, two-handed draws, looking).

Only `bid` and `play` are required; the rest have sensible defaults. The event hooks (`on_hand_start`,
`on_event`, `on_hand_end`, `on_game_end`) do nothing unless overridden. A bot never deals with sockets,
clocks or reconnects: the runner (`bots.sdk.runner`) and the arena own all IO.

The split mirrors python-chess's engine module: one async interface that the network runner drives,
with plain synchronous bots adapted onto it (`decide_async` runs them in a worker thread so a slow
decision never blocks the connection's keep-alive).
"""

import random
from collections.abc import Mapping, Sequence
from typing import Any, TypeAlias

from bots.sdk.view import BotView
from engine.actions import (
    Action,
    Bid,
    Claim,
    DeclareDeficient,
    Discard,
    ExchangeCards,
    KeepDrawn,
    LookAtHand,
    PassCards,
    PlayCard,
)
from engine.cards import Card, card_text, parse_card

Decision: TypeAlias = int | str | Action | Sequence[int] | Sequence[str] | None


ACTION_TYPES = (
    Bid,
    LookAtHand,
    PlayCard,
    ExchangeCards,
    PassCards,
    Claim,
    DeclareDeficient,
    KeepDrawn,
    Discard,
)


class BotError(Exception):
    """A bot answered something that is not one of its legal actions. The game is unchanged."""


class BaseBot:
    """What both bot flavours share: a name, a seeded random source and the event hooks."""

    #: Shown in the lobby and in arena tables; defaults to the class name.
    name: str = ""

    def __init__(self, seed: int | None = None) -> None:
        self.random = random.Random(seed)
        if not self.name:
            self.name = type(self).__name__

    # -- hooks: override any you need ---------------------------------------------------------------
    def on_hand_start(self, view: BotView) -> None:
        """A new hand was dealt (called before the first decision of the hand)."""

    def on_event(self, event: Mapping[str, Any]) -> None:
        """One game event as plain data (`engine.events`' `for_seat` form: `{"kind": "card_played", ...}`)."""

    def on_hand_end(self, result: Mapping[str, Any]) -> None:
        """The hand was scored (the `hand_scored` event's plain form)."""

    def on_game_end(self, outcome: Mapping[str, Any]) -> None:
        """The game is over (`winners`, `scores`, `reason`)."""


class Bot(BaseBot):
    """A synchronous bot. Override `bid` and `play`; the other decisions have defaults."""

    def bid(self, view: BotView) -> Decision:
        raise NotImplementedError("a bot must implement bid(view)")

    def play(self, view: BotView) -> Decision:
        raise NotImplementedError("a bot must implement play(view)")

    def exchange(self, view: BotView) -> Decision:
        """Blind nil exchange: the lowest cards for a nil bidder's partner... by default the lowest."""
        return default_cards(view)

    def pass_cards(self, view: BotView) -> Decision:
        """Hearts pass: by default the highest cards."""
        return default_cards(view, highest=True)

    def discard(self, view: BotView) -> Decision:
        """Joker Spades dealer's discard: by default the lowest cards."""
        return default_cards(view)

    def other(self, view: BotView) -> Decision:
        """Any other decision (claim, deficient hand, two-handed draw, look): by default the first."""
        return default_other(view)

    def decide(self, view: BotView) -> Action:
        """Ask the right method for this view and return a legal action (raises BotError otherwise)."""
        kind = decision_kind(view)
        return _to_action(view, getattr(self, METHOD_BY_KIND.get(kind, "other"))(view), kind)


class AsyncBot(BaseBot):
    """An asynchronous bot: the same methods as `Bot`, as coroutines (for bots that await IO)."""

    async def bid(self, view: BotView) -> Decision:
        raise NotImplementedError("a bot must implement bid(view)")

    async def play(self, view: BotView) -> Decision:
        raise NotImplementedError("a bot must implement play(view)")

    async def exchange(self, view: BotView) -> Decision:
        return default_cards(view)

    async def pass_cards(self, view: BotView) -> Decision:
        return default_cards(view, highest=True)

    async def discard(self, view: BotView) -> Decision:
        return default_cards(view)

    async def other(self, view: BotView) -> Decision:
        return default_other(view)

    async def decide(self, view: BotView) -> Action:
        kind = decision_kind(view)
        method = getattr(self, METHOD_BY_KIND.get(kind, "other"))
        return _to_action(view, await method(view), kind)


AnyBot: TypeAlias = Bot | AsyncBot

METHOD_BY_KIND: dict[str, str] = {
    "bid": "bid",
    "play": "play",
    "exchange": "exchange",
    "pass": "pass_cards",
    "discard": "discard",
}


PHASE_KINDS: dict[str, str] = {
    "bidding": "bid",
    "playing": "play",
    "exchanging": "exchange",
    "passing": "pass",
    "discarding": "discard",
}


def decision_kind(view: BotView) -> str:
    """What the view asks for, by phase: bid, play, exchange, pass, discard, or other.

    A bidding view may offer other choices too (look at the hand, declare a deficient hand), and a
    playing view a TRAM claim: `bid` and `play` may return any action of `view.legal`.
    """
    kind = PHASE_KINDS.get(view.phase, "other")
    if kind in {"bid", "play"}:
        wanted = Bid if kind == "bid" else PlayCard
        for action in view.legal:
            if isinstance(action, wanted):
                return kind
        return "other"
    return kind


def default_cards(view: BotView, *, highest: bool = False) -> list[Card]:
    """The `choose_count` lowest (or highest) cards of the hand, by rank within suit."""
    cards = sorted(view.hand, key=lambda c: (view.power(c), c), reverse=highest)
    return cards[: view.choose_count]


def default_other(view: BotView) -> Action:
    """The first legal action, preferring to look at the hand over playing blind."""
    for action in view.legal:
        if isinstance(action, LookAtHand | KeepDrawn):
            return action
    if not view.legal:
        raise BotError("there is nothing to decide")
    return view.legal[0]


def _card(value: int | str) -> Card:
    return parse_card(value) if isinstance(value, str) else int(value)


def to_action(view: BotView, decision: Decision) -> Action:
    """The legal engine action a bot's answer stands for. Raises BotError naming the problem."""
    return _to_action(view, decision, decision_kind(view))


def _to_action(view: BotView, decision: Decision, kind: str) -> Action:
    legal = view.legal
    if decision is None:
        raise BotError("the bot returned nothing")
    if isinstance(decision, ACTION_TYPES):
        if decision in legal:
            return decision
        # Choices carrying cards (pass, exchange, discard) need not match a listed combination.
        if isinstance(decision, ExchangeCards | PassCards | Discard):
            return _card_choice(view, type(decision), list(decision.cards))
        raise BotError(f"{decision!r} is not legal now")
    if kind == "bid" and isinstance(decision, int):
        for action in legal:
            if (
                isinstance(action, Bid)
                and action.tricks == decision
                and not action.blind
                and not action.moe
                and not action.bemo
                and not action.no_trumps
                and not action.ten_for_200
                and not action.double_nil
            ):
                return action
        raise BotError(f"a bid of {decision} is not legal now")
    if kind == "play" and isinstance(decision, int | str):
        card = _card(decision)
        for action in legal:  # cheaper than building a PlayCard to compare with each
            if isinstance(action, PlayCard) and action.card == card and action.seat == view.seat:
                return action
        raise BotError(f"{card_text(card)} may not be played now")
    if kind in ("exchange", "pass", "discard") and not isinstance(decision, int | str):
        return _card_choice(view, CARD_CHOICES[kind], [_card(c) for c in decision])
    raise BotError(f"{decision!r} does not answer a {kind} decision")


CARD_CHOICES: dict[str, type[ExchangeCards | PassCards | Discard]] = {
    "exchange": ExchangeCards,
    "pass": PassCards,
    "discard": Discard,
}


def _card_choice(
    view: BotView, cls: type[ExchangeCards | PassCards | Discard], cards: list[Card]
) -> Action:
    # Card choices are not always listed (there are many); the phase says they are due.
    if CARD_CHOICES.get(decision_kind(view)) is not cls:
        raise BotError(f"{cls.__name__} is not what is asked now")
    if len(set(cards)) != len(cards) or any(not view.hand_mask >> c & 1 for c in cards):
        raise BotError("choose distinct cards from your own hand")
    if view.choose_count and len(cards) != view.choose_count:
        raise BotError(f"choose exactly {view.choose_count} cards")
    return cls(view.seat, tuple(cards))


def fallback_action(view: BotView, rng: random.Random) -> Action:
    """What the SDK plays for a bot that failed to answer in time or legally: a random legal action
    (card choices: the lowest cards), so the game goes on."""
    kind = decision_kind(view)
    if kind in ("exchange", "pass", "discard"):
        return _card_choice(view, CARD_CHOICES[kind], default_cards(view))
    if kind == "other":
        return default_other(view)
    return rng.choice(view.legal)
