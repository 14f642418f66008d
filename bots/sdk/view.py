"""`BotView`: what a bot is shown when it must act, typed, with the helpers every bot wants.

Over the wire it is built from the plain `to_dict()` form of the engine's `SeatView`, which is what the
server sends in `your_turn` (a `View`): `BotView.from_dict`. In the game's own process (the arena) it is
built straight from the `SeatView`: `BotView.from_seat_view`, which gives the very same view (a test
compares them in whole games of every preset) for a fraction of the cost, so a bot behaves the same
in-process and over the wire.

Which suits a seat has shown void in needs the whole hand's play, but a view carries only the trick in
progress and the last one. A `HandMemory`, kept by whoever asks the bot (the arena, the network runner),
collects the tricks from successive views: every seat plays once per trick, so between two of a seat's
decisions at most the last trick finished, and no trick is missed. After a reconnect the memory starts
empty and fills again; `played` (from the view) is always complete.
"""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.actions import (
    Action,
    Bid,
    Discard,
    ExchangeCards,
    PassCards,
    PlayCard,
    action_from_dict,
)
from engine.cards import Card, CardMask, card_text, mask_of, parse_card
from engine.hearts_rules import PASS_OFFSETS, pass_offset, pass_target
from engine.hearts_rules import trick_winner as hearts_trick_winner
from engine.ordering import CardOrder, card_order
from engine.ruleset import Ruleset
from engine.views import SeatView

Play = tuple[int, Card]  # (seat, card)

#: The actions that hand over cards of the seat's choosing (their count is the view's `choose_count`).
CHOOSING_ACTIONS = (ExchangeCards, PassCards, Discard)


@dataclass
class HandMemory:
    """The tricks of the current hand, by trick number, gathered from the views a seat is shown."""

    hand_number: int = 0
    tricks: dict[int, tuple[Play, ...]] = field(default_factory=dict)

    def observe(self, view: Mapping[str, Any]) -> None:
        """Record the current and last tricks of a view's plain form (forgetting the previous hand's)."""
        self.remember(
            int(view.get("hand_number", 0)),
            sum(int(n) for n in view.get("tricks", ())),
            _plays(view.get("last_trick", ())),
            _plays(view.get("trick", ())),
        )

    def remember(
        self, hand_number: int, completed: int, last: tuple[Play, ...], current: tuple[Play, ...]
    ) -> None:
        """Record the last completed trick and the trick in progress of hand `hand_number`.

        Completed tricks are counted by the tricks won (`completed`), which names the last trick
        whatever `trick_number` says between two tricks."""
        if hand_number != self.hand_number:
            self.hand_number = hand_number
            self.tricks = {}
        if last and completed >= 1:
            self.tricks[completed] = last
        if current:
            self.tricks[completed + 1] = current


def _plays(raw: Any) -> tuple[Play, ...]:
    return tuple((int(seat), _CARD[card]) for seat, card in raw)


# Notation lookups built once: a view holds a few hundred card texts, parsed on every decision.
_CARD: dict[str, Card] = {card_text(card): card for card in range(54)}
_BIT: dict[str, CardMask] = {text: 1 << card for text, card in _CARD.items()}
_ACTIONS: dict[tuple[int, tuple[tuple[str, Any], ...]], Action] = {}


def _action(shape: Mapping[str, Any], seat: int) -> Action:
    """`action_from_dict`, remembered: the same few hundred legal actions recur all game long."""
    if "cards" in shape:
        return action_from_dict(shape, seat)
    key = (seat, tuple(shape.items()))
    found = _ACTIONS.get(key)
    if found is None:
        if len(_ACTIONS) > 50_000:  # a bound, not a policy: the working set is far smaller
            _ACTIONS.clear()
        found = _ACTIONS[key] = action_from_dict(shape, seat)
    return found


def _bid(seat: int, raw: Mapping[str, Any] | None) -> Bid | None:
    if raw is None:
        return None
    action = _action({"kind": "bid", **raw}, seat)  # remembered too: every view shows the bids
    assert isinstance(action, Bid)
    return action


def _mask(raw: Sequence[str] | None) -> CardMask:
    mask = 0
    for card in raw or ():
        bit = _BIT.get(card)
        mask |= bit if bit is not None else 1 << parse_card(card)  # parse_card raises on bad text
    return mask


@dataclass(frozen=True)
class BotView:
    """What `seat` knows now, and what it may do. Cards are engine card ints (`engine.cards`).

    Build it with `BotView.from_dict(view_dict, ruleset, ...)`; the fields mirror `engine.views.SeatView`.
    """

    ruleset: Ruleset
    seat: int
    phase: str
    hand_number: int
    dealer: int
    hand_type: str
    to_act: tuple[int, ...]
    sides: tuple[tuple[int, ...], ...]
    scores: tuple[int, ...]  # per side
    bags: tuple[int, ...]  # per side
    bids: tuple[Bid | None, ...]  # per seat
    hand_sizes: tuple[int, ...]
    hand_mask: CardMask  # 0 while the seat has not looked (it may still bid blind)
    looked: bool
    face_up: tuple[CardMask, ...]
    exposed: tuple[CardMask, ...]
    leader: int
    trick: tuple[Play, ...]  # the trick in progress, in play order
    trick_number: int
    last_trick: tuple[Play, ...]
    last_winner: int
    tricks_won: tuple[int, ...]  # per seat, this hand
    played_mask: CardMask
    broken: bool
    pass_direction: str
    points: tuple[int, ...]  # Hearts: points taken this hand per seat
    given: tuple[Card, ...]
    received: tuple[Card, ...]
    drawn: Card | None
    legal: tuple[Action, ...]
    choose_count: int  # exchange / pass / discard: how many cards to give
    deadline: float | None  # seconds left for this decision, when a clock runs
    history: tuple[tuple[Play, ...], ...]  # the tricks of this hand seen so far, oldest first

    @classmethod
    def _build(cls, **fields: Any) -> "BotView":
        """`cls(**fields)` with every field given. A frozen dataclass sets each of its 34 fields
        through `object.__setattr__`, which costs more than the rest of a view's construction; filling
        the instance's `__dict__` at once gives the same object. Subclasses keep their own `__init__`."""
        if cls is not BotView:
            return cls(**fields)
        view = object.__new__(cls)
        view.__dict__.update(fields)
        return view

    @classmethod
    def from_dict(
        cls,
        data: Mapping[str, Any],
        ruleset: Ruleset,
        *,
        deadline: float | None = None,
        memory: HandMemory | None = None,
        legal: Sequence[Mapping[str, Any]] | None = None,
    ) -> "BotView":
        """Parse a seat view's plain form. `legal` overrides `data["legal"]` (the wire sends it beside
        the view in `your_turn`). `memory`, when given, is updated and supplies `history`."""
        seat = int(data["seat"])
        if memory is not None:
            memory.observe(data)
        raw_legal = legal if legal is not None else data.get("legal", ())
        actions: list[Action] = []
        count = 0
        for item in raw_legal:
            shape = item
            if shape.get("kind") in ("exchange", "pass", "discard") and "cards" not in shape:
                # A client may list "choose `count` cards" rather than every combination.
                count = int(shape.get("count", 0))
                shape = {**shape, "cards": []}
            actions.append(_action(shape, seat))
            if shape.get("cards") and not count:
                count = len(shape["cards"])
        phase = str(data["phase"])
        if not count:  # the engine's view counts the choice it does not list
            count = max((int(c) for c in data.get("choose_cards") or ()), default=0)
        hand = data.get("hand")
        players = int(data["players"])
        bids = data.get("bids") or [None] * players
        history: tuple[tuple[Play, ...], ...] = ()
        if memory is not None:
            history = tuple(memory.tricks[n] for n in sorted(memory.tricks))
        drawn = data.get("drawn")
        return cls._build(
            ruleset=ruleset,
            seat=seat,
            phase=phase,
            hand_number=int(data.get("hand_number", 0)),
            dealer=int(data.get("dealer", 0)),
            hand_type=str(data.get("hand_type", "")),
            to_act=tuple(int(s) for s in data.get("to_act", ())),
            sides=tuple(tuple(int(s) for s in side) for side in data.get("sides", ())),
            scores=tuple(int(s) for s in data.get("scores", ())),
            bags=tuple(int(b) for b in data.get("bags", ())),
            bids=tuple(_bid(s, raw) for s, raw in enumerate(bids)),
            hand_sizes=tuple(int(n) for n in data.get("hand_sizes", ())),
            hand_mask=_mask(hand),
            looked=hand is not None,
            face_up=tuple(_mask(m) for m in data.get("face_up", ())),
            exposed=tuple(_mask(m) for m in data.get("exposed", ())),
            leader=int(data.get("leader", 0)),
            trick=_plays(data.get("trick", ())),
            trick_number=int(data.get("trick_number", 0)),
            last_trick=_plays(data.get("last_trick", ())),
            last_winner=int(data.get("last_winner", -1)),
            tricks_won=tuple(int(n) for n in data.get("tricks", ())),
            played_mask=_mask(data.get("played")),
            broken=bool(data.get("broken", False)),
            pass_direction=str(data.get("pass_direction", "")),
            points=tuple(int(p) for p in data.get("points", ())),
            given=tuple(parse_card(c) for c in data.get("given", ())),
            received=tuple(parse_card(c) for c in data.get("received", ())),
            drawn=None if drawn is None else parse_card(str(drawn)),
            legal=tuple(actions),
            choose_count=count,
            deadline=deadline,
            history=history,
        )

    @classmethod
    def from_seat_view(
        cls,
        view: SeatView,
        ruleset: Ruleset,
        *,
        deadline: float | None = None,
        memory: HandMemory | None = None,
    ) -> "BotView":
        """The same view as `from_dict(view.to_dict(), ruleset, ...)`, field for field, straight from
        the engine's `SeatView` (for bots in the same process as the game: the arena, built-in seats).
        It skips the round trip through card notation, which costs more than most bots' decisions;
        `tests/bots/test_view_paths.py` checks that both paths agree in whole games of every preset."""
        seat = view.seat
        tricks = view.tricks
        if memory is not None:
            memory.remember(view.hand_number, sum(tricks), view.last_trick, view.trick)
        legal = view.legal
        count = 0
        for action in legal:
            if isinstance(action, CHOOSING_ACTIONS) and action.cards:
                count = len(action.cards)
                break
        phase = view.phase
        hand = view.hand
        hand_mask = 0 if hand is None else hand
        if not count:  # the engine's view counts the choice it does not list
            count = max(view.choose_cards, default=0)
        history: tuple[tuple[Play, ...], ...] = ()
        if memory is not None:
            history = tuple(memory.tricks[n] for n in sorted(memory.tricks))
        return cls._build(
            ruleset=ruleset,
            seat=seat,
            phase=phase,
            hand_number=view.hand_number,
            dealer=view.dealer,
            hand_type=view.hand_type,
            to_act=view.to_act,
            sides=view.sides,
            scores=view.scores,
            bags=view.bags,
            bids=view.bids or (None,) * view.players,
            hand_sizes=view.hand_sizes,
            hand_mask=hand_mask,
            looked=hand is not None,
            face_up=view.face_up,
            exposed=view.exposed,
            leader=view.leader,
            trick=view.trick,
            trick_number=view.trick_number,
            last_trick=view.last_trick,
            last_winner=view.last_winner,
            tricks_won=tricks,
            played_mask=view.played,
            broken=view.broken,
            pass_direction=view.pass_direction,
            points=view.points,
            given=view.given,
            received=view.received,
            drawn=view.drawn,
            legal=legal,
            choose_count=count,
            deadline=deadline,
            history=history,
        )

    # -- who is who ----------------------------------------------------------------------------------
    @property
    def players(self) -> int:
        return len(self.hand_sizes) or self.ruleset.players

    @property
    def is_hearts(self) -> bool:
        return self.ruleset.game == "hearts"

    @property
    def partner(self) -> int | None:
        """The partner's seat in four-handed Spades, else None."""
        return (self.seat + 2) % 4 if self.ruleset.partnerships else None

    @property
    def my_side(self) -> int:
        """The index into `sides`, `scores` and `bags` of this seat's side."""
        for index, side in enumerate(self.sides):
            if self.seat in side:
                return index
        return self.seat

    def side_of(self, seat: int) -> int:
        for index, side in enumerate(self.sides):
            if seat in side:
                return index
        return seat

    # -- cards ---------------------------------------------------------------------------------------
    @property
    def order(self) -> CardOrder:
        """Suits and ranks of this deck (Joker Spades and Deuces High change both)."""
        return card_order(self.ruleset.deck)

    @property
    def hand(self) -> list[Card]:
        """My cards, lowest card number first (empty while I have not looked)."""
        return _cards(self.hand_mask)

    def suit_of(self, card: Card) -> int:
        """The suit a card follows under this ruleset (jokers and high deuces are spades)."""
        return self.order.suit[card]

    def power(self, card: Card) -> int:
        """A card's rank within its suit under this ruleset; higher beats lower."""
        return self.order.power[card]

    def in_suit(self, mask: CardMask, suit: int) -> CardMask:
        """The cards of `mask` that follow `suit`."""
        return mask & self.order.suit_masks[suit]

    def suit_cards(self, suit: int) -> list[Card]:
        """My cards that follow `suit` (lowest card number first)."""
        return _cards(self.hand_mask & self.order.suit_masks[suit])

    def beats(self, card: Card, other: Card) -> bool:
        """Whether `card`, played after `other`, would beat it (spades trump, except in Hearts).

        Compare against the trick's current winner: it follows the suit led or is a trump. The
        engine's own trick rule says (`_winning_index`)."""
        return self._winning_index((other, card)) == 1

    @property
    def legal_cards(self) -> list[Card]:
        """The cards I may play now (empty outside play)."""
        return [a.card for a in self.legal if isinstance(a, PlayCard)]

    @property
    def legal_bids(self) -> list[Bid]:
        """The bids I may make now (empty outside bidding)."""
        return [a for a in self.legal if isinstance(a, Bid)]

    @property
    def led_suit(self) -> int | None:
        """The suit of the trick in progress, None when I lead."""
        return self.suit_of(self.trick[0][1]) if self.trick else None

    def trick_winner(self, plays: Sequence[Play] | None = None) -> Play | None:
        """The (seat, card) currently winning a trick (the one in progress by default), by the
        engine's own trick rule."""
        plays = self.trick if plays is None else plays
        if not plays:
            return None
        return plays[self._winning_index(tuple(card for _, card in plays))]

    def _winning_index(self, cards: tuple[Card, ...]) -> int:
        """The position of the winning card of `cards` (led first): the engine's rule, Hearts' (no
        trumps: `hearts_rules.trick_winner`) or this deck's (`CardOrder.trick_winner_index`)."""
        if self.is_hearts:
            return hearts_trick_winner(cards, 0)
        return self.order.trick_winner_index(cards)

    @property
    def unseen_mask(self) -> CardMask:
        """Cards still out: in play this hand, not in my hand, not yet played, not face up or exposed
        (the others hold them, or they were set aside)."""
        known = self.hand_mask | self.played_mask
        for mask in (*self.face_up, *self.exposed):
            known |= mask
        return self.order.deck & ~known

    @property
    def cards_still_out(self) -> list[Card]:
        """`unseen_mask` as a list."""
        return _cards(self.unseen_mask)

    def remaining_in_suit(self, suit: int) -> CardMask:
        """Cards of `suit` not yet played (mine included)."""
        return self.order.suit_masks[suit] & self.order.deck & ~self.played_mask

    def is_boss(self, card: Card) -> bool:
        """Whether `card` is the highest card of its suit not yet played."""
        order = self.order
        higher = self.remaining_in_suit(order.suit[card]) & ~(1 << card)
        return all(order.power[c] < order.power[card] for c in _cards(higher))

    @property
    def voids(self) -> dict[int, frozenset[int]]:
        """For each seat, the suits it has shown void in this hand (it failed to follow them)."""
        found: dict[int, set[int]] = {seat: set() for seat in range(self.players)}
        tricks = [*self.history]
        if self.trick and (not tricks or tricks[-1] != self.trick):
            tricks.append(self.trick)
        order = self.order
        for plays in tricks:
            led = order.suit[plays[0][1]]
            for seat, card in plays[1:]:
                if order.suit[card] != led:
                    found[seat].add(led)
        return {seat: frozenset(suits) for seat, suits in found.items()}

    def known_cards(self, seat: int) -> CardMask:
        """Cards I know `seat` holds now: face up or exposed, or passed to it by me, and not played."""
        mask = 0
        if seat < len(self.face_up):
            mask |= self.face_up[seat] | self.exposed[seat]
        if self.given and seat == self._given_to():
            mask |= mask_of(self.given)
        return mask & ~self.played_mask & ~self.hand_mask

    def _given_to(self) -> int | None:
        if self.is_hearts:
            direction = self.pass_direction
            if direction not in PASS_OFFSETS or not pass_offset(direction, self.players):
                return None  # no pass this hand (or none known)
            return pass_target(self.seat, direction, self.players)
        return self.partner

    @property
    def seconds_left(self) -> float | None:
        """Alias of `deadline`: seconds left to decide, or None without a clock."""
        return self.deadline


def _cards(mask: CardMask) -> list[Card]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out
