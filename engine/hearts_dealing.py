"""How a hand of `HeartsGame` (engine/hearts.py) begins: the seeded deal, hands dealt as given, and a
position built for a search.

Kept apart from the state machine because none of it runs during play: it sets the state up (the
hands, the pass direction, who leads) and the play phase then runs on it. `HeartsDealing` is a mixin of
`HeartsGame` that reads and writes its slots, like `engine.hearts_search` and `engine.hearts_views`.
"""

from collections.abc import Sequence
from typing import Protocol, TypeVar

from engine.cards import SUIT_MASKS, Card, CardMask, Seat, mask_of
from engine.deal import commitment, first_dealer, shuffled
from engine.dealing import UNDRAWN
from engine.errors import IllegalAction
from engine.events import Event, HandDealt
from engine.game import Phase
from engine.hearts_rules import TWO_OF_CLUBS, deal_hands, holder_of, pass_direction, pass_offset
from engine.hearts_search import DEALING, PASSING, PLAYING
from engine.ruleset import Ruleset


class _Dealable(Protocol):
    """The state dealing sets up (HeartsGame's slots, its constructor and the methods it calls)."""

    _ruleset: Ruleset
    _n: int
    _deck: tuple[Card, ...]
    _tricks_per_hand: int
    _phase: Phase
    _version: int
    _hand_number: int
    _dealer: Seat
    _scores: list[int]
    _seed: bytes
    _hands: list[CardMask]
    _dealt: tuple[CardMask, ...]
    _direction: str
    _trick: list[Card]
    _trick_mask: CardMask
    _led_mask: CardMask
    _best: Card
    _best_seat: Seat
    _leader: Seat
    _turn: Seat
    _trick_number: int
    _broken: bool
    _tricks: list[int]
    _played: CardMask
    _trick_winners: list[Seat]
    _taken: list[CardMask]
    _plays: list[tuple[Seat, Card]]
    _last_trick: tuple[tuple[Seat, Card], ...]
    _last_winner: Seat

    def __init__(self, ruleset: Ruleset, *, dealer: int | None = None) -> None: ...

    def _clear_hand(self) -> None: ...

    def _phase_sentence(self) -> str: ...

    def _begin_hand(self, seed: bytes, hands: list[CardMask]) -> list[Event]: ...

    def _start_play(self) -> None: ...


_Game = TypeVar("_Game", bound=_Dealable)


class HeartsDealing:
    """Mixin of HeartsGame: `deal`, `deal_cards`, `position` and the start of a hand's play."""

    __slots__ = ()

    def deal(self: "_Dealable", seed: bytes) -> list[Event]:
        """Deal the next hand from `seed` (engine/deal.py). Raises IllegalAction("wrong_phase") unless
        the phase is DEALING, IllegalAction("bad_seed") unless the seed is non-empty bytes; the state
        is then unchanged."""
        if self._phase is not DEALING:
            raise IllegalAction("wrong_phase", self._phase_sentence())
        if not isinstance(seed, bytes) or not seed:
            raise IllegalAction("bad_seed", "a seed is a non-empty byte string")
        if self._dealer == UNDRAWN:
            self._dealer = first_dealer(seed, self._n)
        return self._begin_hand(seed, deal_hands(shuffled(seed, self._deck), self._dealer, self._n))

    def deal_cards(self: "_Dealable", hands: Sequence[CardMask], seed: bytes = b"") -> list[Event]:
        """Deal these hands instead of shuffling: for tests, puzzles and analysis. The hand's record
        keeps `seed` as given, so replaying it from the seed will not give these cards. A first dealer
        still to be drawn is seat 0 (these cards come from no seed to draw it from).

        Raises IllegalAction("wrong_phase") outside DEALING and ValueError when the hands are not a
        split of the deck into equal hands; the state is unchanged either way.
        """
        if self._phase is not DEALING:
            raise IllegalAction("wrong_phase", self._phase_sentence())
        hands = list(hands)
        deck = mask_of(self._deck)
        size = self._tricks_per_hand
        if len(hands) != self._n or any(hand.bit_count() != size for hand in hands):
            raise ValueError(f"deal {self._n} hands of {size} cards")
        union = 0
        for hand in hands:
            union |= hand
        if union != deck:
            raise ValueError("the hands must hold every card of the deck exactly once")
        if self._dealer == UNDRAWN:
            self._dealer = 0
        return self._begin_hand(bytes(seed), hands)

    @classmethod
    def position(
        cls: type[_Game],
        ruleset: Ruleset,
        *,
        hands: Sequence[CardMask],
        dealer: int,
        leader: int,
        trick: Sequence[tuple[Seat, Card]] = (),
        tricks_won: Sequence[int] | None = None,
        winners: Sequence[Seat] | None = None,
        history: Sequence[Sequence[tuple[Seat, Card]]] = (),
        taken: Sequence[CardMask] | None = None,
        played: CardMask | None = None,
        broken: bool = False,
        hand_number: int = 1,
        scores: Sequence[int] | None = None,
        pass_direction: str = "none",
    ) -> _Game:
        """A game in the play phase at a given position, e.g. a bot's guess at the hidden hands
        (determinization), to search with `copy()`, `legal_play_mask`, `play_fast` and `play_to_end`:
        the Hearts twin of `SpadesGame.position`.

        `hands` are the cards each seat still holds; `trick` the trick in progress led by `leader`;
        `history` the finished tricks as (seat, card) plays (optional) and `winners` their winners in
        order (else derived from `history`, else from `tricks_won` in seat order). `taken` is the cards
        each seat has won (else those of `history` by `winners`: pass it when the history is incomplete,
        since the hand's points come from it), `played` every card played this hand (else the cards
        of `history` and `trick`). Raises IllegalAction("bad_position") when the counts do not add up.
        """
        game = cls(ruleset, dealer=dealer)
        n = game._n
        order_winners = list(winners) if winners is not None else []
        if winners is None:
            for plays in history:
                led = SUIT_MASKS[plays[0][1] // 13]
                order_winners.append(max((c, s) for s, c in plays if led >> c & 1)[1])
        won = list(tricks_won) if tricks_won is not None else [0] * n
        if tricks_won is None:
            for winner in order_winners:
                won[winner] += 1
        if not order_winners:
            order_winners = [seat for seat in range(n) for _ in range(won[seat])]
        done = len(order_winners)
        sizes = [hand.bit_count() for hand in hands]
        left = game._tricks_per_hand - done
        expected = [left - (1 if any(s == seat for s, _ in trick) else 0) for seat in range(n)]
        if (
            len(hands) != n
            or sum(won) != done
            or sizes != expected
            or len(trick) >= n
            or (taken is not None and len(taken) != n)
        ):
            raise IllegalAction("bad_position", "the hands, tricks and trick do not add up")
        if taken is None:
            won_cards = [0] * n
            for plays, winner in zip(history, order_winners, strict=False):
                for _, card in plays:
                    won_cards[winner] |= 1 << card
        else:
            won_cards = list(taken)
        if played is None:
            played = 0
            for _, card in [*(p for plays in history for p in plays), *trick]:
                played |= 1 << card
        game._hand_number = hand_number
        game._seed = b"position"
        game._scores = list(scores) if scores is not None else [0] * n
        game._hands = list(hands)
        dealt = list(hands)
        for seat, card in [*(p for plays in history for p in plays), *trick]:
            dealt[seat] |= 1 << card
        game._dealt = tuple(dealt)
        game._direction = pass_direction
        game._trick = [card for _, card in trick]
        game._trick_mask = mask_of(card for _, card in trick)
        if trick:
            led = SUIT_MASKS[trick[0][1] // 13]
            game._led_mask = led
            game._best, game._best_seat = max((c, s) for s, c in trick if led >> c & 1)
        game._leader = leader
        game._turn = (leader + len(trick)) % n
        game._trick_number = done + 1
        game._broken = broken
        game._tricks = won
        game._played = played
        game._trick_winners = order_winners
        game._taken = won_cards
        game._plays = [p for plays in history for p in plays] + list(trick)
        if history:
            game._last_trick = tuple(history[-1])
            game._last_winner = order_winners[len(history) - 1]
        game._phase = PLAYING
        return game

    def _begin_hand(self: "_Dealable", seed: bytes, hands: list[CardMask]) -> list[Event]:
        self._clear_hand()
        n = self._n
        self._hand_number += 1
        self._seed = seed
        self._hands = hands
        self._dealt = tuple(hands)
        self._direction = pass_direction(self._hand_number - 1, self._ruleset.hearts_pass_cycle)
        events: list[Event] = [
            HandDealt(
                hand_number=self._hand_number,
                dealer=self._dealer,
                hands=tuple(hands),
                face_up=(0,) * n,
                hidden=(),
                hand_type="",
                commitment=commitment(self._seed),
                pass_direction=self._direction,
            )
        ]
        if pass_offset(self._direction, n) == 0:
            self._start_play()
        else:
            self._phase = PASSING
        self._version += 1
        return events

    def _start_play(self: "_Dealable") -> None:
        self._phase = PLAYING
        self._leader = self._turn = holder_of(self._hands, TWO_OF_CLUBS)
