"""The search path of `HeartsGame` (engine/hearts.py): play cards by bit mask, without checks or events.

Bots spend their time in playouts: copy a game, then play cards until the hand ends. These methods keep
that loop lean. They trust their caller: a card must come from `legal_play_mask` (or the mask handed to
`choose`). The hand is still scored and recorded in the game's histories when it ends, so a playout's
result is read as from any game (`scores`, `histories[-1]`).

Also here: the prebuilt, shared `PlayCard` actions and `(seat, card)` pairs that the engine hands out
instead of allocating one per card (frozen values, safe to share).
"""

from collections.abc import Callable
from typing import Final, Protocol

from engine.actions import Action, PlayCard
from engine.cards import SUIT_MASKS, Card, CardMask, Seat
from engine.events import Event
from engine.game import Phase
from engine.hearts_rules import HEARTS_MASK, POINT_CARDS, TWO_OF_CLUBS_MASK

# The phases as module constants: a member read through its Enum class (Phase.PLAYING) costs about
# 90 ns on CPython 3.11 (EnumType's __getattr__ hook), a global about 15.
DEALING: Final = Phase.DEALING
PASSING: Final = Phase.PASSING
PLAYING: Final = Phase.PLAYING
GAME_OVER: Final = Phase.GAME_OVER

MAX_SEATS: Final = 4
PLAY_ACTIONS: Final = tuple(tuple(PlayCard(s, c) for c in range(52)) for s in range(MAX_SEATS))
SEAT_CARDS: Final = tuple(tuple((s, c) for c in range(52)) for s in range(MAX_SEATS))


class _Searchable(Protocol):
    """The state the search path reads and writes (HeartsGame's slots)."""

    _n: int
    _phase: Phase
    _version: int
    _hands: list[CardMask]
    _actions: list[Action]
    _plays: list[tuple[Seat, Card]]
    _taken: list[CardMask]
    _tricks: list[int]
    _trick_winners: list[Seat]
    _tricks_per_hand: int
    _trick: list[Card]
    _trick_mask: CardMask
    _led_mask: CardMask
    _best: Card
    _best_seat: Seat
    _must_break: bool
    _no_points_first: bool
    _breakers: CardMask
    _played: CardMask
    _broken: bool
    _turn: Seat
    _leader: Seat
    _trick_number: int
    _last_trick: tuple[tuple[Seat, Card], ...]
    _last_winner: Seat

    def _legal_now(self, hand: CardMask) -> CardMask: ...

    def _advance(self, seat: Seat, card: Card) -> Seat: ...

    def _score_hand(self, events: list[Event] | None) -> None: ...


class HeartsSearch:
    """Mixin of HeartsGame: `legal_play_mask`, `play_fast`, `play_to_end`."""

    __slots__ = ()

    def legal_play_mask(self: "_Searchable", seat: Seat) -> CardMask:
        """The cards `seat` may play now as a mask (0 when it is not that seat's turn to play).

        The lean form of `legal_actions` for searches: pair it with `play_fast`.
        """
        if self._phase is not PLAYING or seat != self._turn:
            return 0
        return self._legal_now(self._hands[seat])

    def play_fast(self: "_Searchable", card: Card) -> None:
        """The seat to act plays `card` with no check and no event: the caller took it from
        `legal_play_mask`. For searches; the hand is still scored and recorded when it ends.

        A card that is not legal leaves the game in a state the rules cannot reach: do not.
        """
        seat = self._turn
        self._actions.append(PLAY_ACTIONS[seat][card])
        self._advance(seat, card)
        if len(self._trick_winners) == self._tricks_per_hand:
            self._score_hand(None)
        self._version += 1

    def play_to_end(self: "_Searchable", choose: Callable[[CardMask], Card]) -> None:
        """Play the rest of the hand, `choose(legal_mask)` picking each card, then score it: the
        same result as `play_fast` card by card, in one tight loop over local variables (playouts
        are where bots spend their time). `choose` must return a card of the mask it is given; if it
        raises, the cards played before stay played and the game is consistent."""
        if self._phase is not PLAYING:
            return
        n = self._n
        hands = self._hands
        plays = self._plays
        actions = self._actions
        taken = self._taken
        tricks = self._tricks
        winners = self._trick_winners
        trick = self._trick
        total = self._tricks_per_hand
        must_break = self._must_break
        no_points_first = self._no_points_first
        breakers = self._breakers
        played = self._played
        trick_mask = self._trick_mask
        led = self._led_mask
        best = self._best
        best_seat = self._best_seat
        broken = self._broken
        turn = self._turn
        leader = self._leader
        trick_number = self._trick_number
        count = 0
        try:
            while True:
                hand = hands[turn]
                # The rules of _legal_now, inlined.
                if not led:
                    if trick_number == 1 and hand & TWO_OF_CLUBS_MASK:
                        legal = TWO_OF_CLUBS_MASK
                    elif must_break and not broken and hand & ~HEARTS_MASK:
                        legal = hand & ~HEARTS_MASK
                    else:
                        legal = hand
                else:
                    legal = hand & led
                    if not legal:
                        legal = hand
                        if trick_number == 1 and no_points_first and hand & ~POINT_CARDS:
                            legal = hand & ~POINT_CARDS
                card = choose(legal)
                # The moves of _advance, inlined.
                bit = 1 << card
                hands[turn] = hand ^ bit
                played |= bit
                trick.append(card)
                trick_mask |= bit
                plays.append(SEAT_CARDS[turn][card])
                actions.append(PLAY_ACTIONS[turn][card])
                count += 1
                if not broken and bit & breakers:
                    broken = True
                if not led:
                    led = SUIT_MASKS[card // 13]
                    best = card
                    best_seat = turn
                elif bit & led and card > best:
                    best = card
                    best_seat = turn
                if len(trick) < n:
                    turn += 1
                    if turn == n:
                        turn = 0
                    continue
                taken[best_seat] |= trick_mask
                tricks[best_seat] += 1
                winners.append(best_seat)
                self._last_trick = tuple(plays[-n:])
                self._last_winner = best_seat
                trick = []
                trick_mask = 0
                led = 0
                leader = turn = best_seat
                if len(winners) == total:
                    break
                trick_number += 1
        finally:
            self._trick = trick
            self._played = played
            self._trick_mask = trick_mask
            self._led_mask = led
            self._best = best
            self._best_seat = best_seat
            self._broken = broken
            self._turn = turn
            self._leader = leader
            self._trick_number = trick_number
            self._version += count
        self._score_hand(None)
