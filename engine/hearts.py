"""`HeartsGame`: the Hearts state machine behind `engine.game.new_game` (docs/rules-hearts.md).

The state is plain ints and bit masks kept in slots, so `copy()` is a handful of list copies, and a
playout (`legal_play_mask` then `play_fast`, or `play_to_end`) allocates almost nothing: the trick's
winner is kept up to date as the cards fall, and actions and events are shared prebuilt values. The rules
themselves are the pure functions of `engine.hearts_rules`; this class keeps the state and the order of
things: deal, pass (a simultaneous phase), thirteen tricks, score, and again until someone reaches the
target; a hand's points are the pure functions of `engine.hearts_scoring`. Everything that changes the
state is here, in one class (docs/architecture.md): the deal and a position built for a search, the
pass, the play, the end of a hand, and the search path bots spend their time in (`legal_play_mask`,
`play_fast`, `play_to_end`: no checks, no events, trusting a card from the mask), besides the views
(a seat sees its own hand, the cards it passed and, once every seat has passed, the cards it
received; a spectator sees no hand; the rest of a view is public).

Every public method that can refuse raises `IllegalAction` (or `RulesetError` when built) before it
changes anything: a refused action leaves the game exactly as it was.
"""

from collections.abc import Callable, Sequence
from itertools import combinations
from typing import Any, Final, Self

from engine.actions import Action, PassCards, PlayCard
from engine.cards import (
    DIAMONDS,
    STANDARD_DECK,
    SUIT_MASKS,
    SUIT_NAMES,
    Card,
    CardMask,
    Seat,
    card_text,
    cards_in,
    make_card,
    mask_of,
)
from engine.deal import commitment, first_dealer, shuffled
from engine.dealing import UNDRAWN, starting_dealer
from engine.errors import IllegalAction, RulesetError
from engine.events import (
    CardPlayed,
    CardsGiven,
    CardsPassed,
    Event,
    GameOver,
    HandDealt,
    HandScored,
    SpadesBroken,
    TrickWon,
)
from engine.game import Outcome, Phase
from engine.hearts_rules import (
    HEARTS_MASK,
    POINT_CARDS,
    QUEEN_MASK,
    TWO_OF_CLUBS,
    TWO_OF_CLUBS_MASK,
    deal_hands,
    holder_of,
    pass_direction,
    pass_offset,
    penalty_points,
    winners,
)
from engine.hearts_scoring import pass_transfers, score_hand
from engine.history import HandHistory
from engine.ruleset import Ruleset
from engine.views import PublicView, SeatView

# The phases as module constants: a member read through its Enum class (Phase.PLAYING) costs about
# 90 ns on CPython 3.11 (EnumType's __getattr__ hook), a global about 15.
DEALING: Final = Phase.DEALING
PASSING: Final = Phase.PASSING
PLAYING: Final = Phase.PLAYING
GAME_OVER: Final = Phase.GAME_OVER

MAX_SEATS: Final = 4
# The PlayCard actions and (seat, card) pairs the engine hands out instead of allocating one per card
# (frozen values, safe to share between games).
PLAY_ACTIONS: Final = tuple(tuple(PlayCard(s, c) for c in range(52)) for s in range(MAX_SEATS))
SEAT_CARDS: Final = tuple(tuple((s, c) for c in range(52)) for s in range(MAX_SEATS))

# Three-handed Hearts sets the two of diamonds aside so that 51 cards deal evenly (17 each).
_THREE_HANDED_DECK: Final[CardMask] = STANDARD_DECK & ~(1 << make_card(0, DIAMONDS))
_HEART_OR_QUEEN: Final = "a heart or the queen of spades"


class HeartsGame:
    """Hearts for four players (three also works: the two of diamonds is set aside).

    Build it with `engine.game.new_game(ruleset)` or `HeartsGame(ruleset, dealer=0)` (without a dealer,
    the ruleset's `first_dealer`, drawn from the first seed by default); then `deal(seed)`
    each hand and `apply` actions (`PassCards`, `PlayCard`). Raises RulesetError when the ruleset is not
    a Hearts ruleset or the dealer is not a seat; nothing is built then.
    """

    __slots__ = (
        "_actions",
        "_best",
        "_best_seat",
        "_breakers",
        "_broken",
        "_dealer",
        "_dealt",
        "_deck",
        "_direction",
        "_given",
        "_hand_number",
        "_hands",
        "_histories",
        "_last_trick",
        "_last_winner",
        "_leader",
        "_led_mask",
        "_must_break",
        "_n",
        "_no_points_first",
        "_outcome",
        "_phase",
        "_played",
        "_plays",
        "_queen_breaks",
        "_received",
        "_ruleset",
        "_scores",
        "_seed",
        "_set_aside",
        "_sides",
        "_taken",
        "_trick",
        "_trick_mask",
        "_trick_number",
        "_trick_winners",
        "_tricks",
        "_tricks_per_hand",
        "_turn",
        "_version",
    )

    def __init__(self, ruleset: Ruleset, *, dealer: int | None = None) -> None:
        if ruleset.game != "hearts":
            raise RulesetError("game", f"HeartsGame plays Hearts, not {ruleset.game}")
        players = ruleset.players
        if players not in (3, 4):
            raise RulesetError("players", "Hearts is played by 3 or 4")
        # -1 until the first deal draws it from its seed (ruleset.first_dealer "random").
        dealer = starting_dealer(ruleset, dealer)
        self._ruleset = ruleset
        self._n = players
        self._deck: tuple[Card, ...] = tuple(
            cards_in(STANDARD_DECK if players == 4 else _THREE_HANDED_DECK)
        )
        self._tricks_per_hand = len(self._deck) // players
        self._set_aside = STANDARD_DECK & ~mask_of(self._deck)
        self._sides = ruleset.sides
        # The options the hot path reads, copied out of the ruleset once.
        self._no_points_first = ruleset.hearts_no_points_first_trick
        self._must_break = ruleset.hearts_must_break
        self._queen_breaks = ruleset.hearts_queen_breaks
        self._breakers = HEARTS_MASK | (QUEEN_MASK if self._queen_breaks else 0)
        self._phase = DEALING
        self._version = 0
        self._hand_number = 0
        self._dealer = dealer
        self._scores = [0] * players
        self._histories: list[HandHistory] = []
        self._outcome: Outcome | None = None
        self._clear_hand()

    def _clear_hand(self) -> None:
        n = self._n
        self._seed = b""
        self._hands = [0] * n
        self._dealt: tuple[CardMask, ...] = (0,) * n
        self._direction = "none"
        self._given: list[tuple[Card, ...] | None] = [None] * n
        self._received = [0] * n
        self._trick: list[Card] = []
        # The trick in progress as masks: its cards, the suit led (0 before the lead), and its best
        # card so far with the seat that played it, kept as the cards fall so a trick ends in O(1).
        self._trick_mask = 0
        self._led_mask = 0
        self._best = -1
        self._best_seat = -1
        self._leader = -1
        self._turn = -1
        self._trick_number = 1
        self._broken = False
        self._taken = [0] * n
        self._tricks = [0] * n
        self._plays: list[tuple[Seat, Card]] = []
        self._trick_winners: list[Seat] = []
        self._last_trick: tuple[tuple[Seat, Card], ...] = ()
        self._last_winner = -1
        self._played = 0
        self._actions: list[Action] = []

    # -- dealing -----------------------------------------------------------------------------------
    def deal(self, seed: bytes) -> list[Event]:
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

    def deal_cards(self, hands: Sequence[CardMask], seed: bytes = b"") -> list[Event]:
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
        cls,
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
    ) -> Self:
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

    def _begin_hand(self, seed: bytes, hands: list[CardMask]) -> list[Event]:
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

    def _start_play(self) -> None:
        self._phase = PLAYING
        self._leader = self._turn = holder_of(self._hands, TWO_OF_CLUBS)

    # -- the Game protocol's properties ------------------------------------------------------------
    @property
    def ruleset(self) -> Ruleset:
        """The rules of this game (never changes)."""
        return self._ruleset

    @property
    def phase(self) -> Phase:
        """DEALING, PASSING, PLAYING or GAME_OVER."""
        return self._phase

    @property
    def version(self) -> int:
        """Counts every deal and applied action."""
        return self._version

    @property
    def hand_number(self) -> int:
        """1 for the first hand; 0 before the first deal."""
        return self._hand_number

    @property
    def players(self) -> int:
        """Number of seats."""
        return self._n

    @property
    def dealer(self) -> int:
        """The seat that deals (or dealt) the current hand; it moves left once a hand is scored."""
        return self._dealer

    @property
    def is_over(self) -> bool:
        """True once someone reached the target at the end of a hand (or the hands ran out)."""
        return self._outcome is not None

    @property
    def outcome(self) -> Outcome | None:
        """The result once over: every seat with the lowest score wins (a tie is a shared win)."""
        return self._outcome

    @property
    def histories(self) -> list[HandHistory]:
        """Every finished hand, oldest first (a new list; the records themselves are frozen)."""
        return list(self._histories)

    @property
    def scores(self) -> tuple[int, ...]:
        """The running score per seat (each seat is its own side in Hearts)."""
        return tuple(self._scores)

    @property
    def pass_direction(self) -> str:
        """This hand's pass direction: left, right, across or none."""
        return self._direction

    @property
    def hearts_broken(self) -> bool:
        """True once a heart (or, with hearts_queen_breaks, the queen of spades) has been played."""
        return self._broken

    def hand(self, seat: Seat) -> CardMask:
        """The cards `seat` holds now (full knowledge: for the server and tests, never for a player)."""
        return self._hands[seat]

    def to_act(self) -> tuple[int, ...]:
        """Every seat that has not passed yet while passing; the one seat to play while playing."""
        phase = self._phase
        if phase is PLAYING:
            return (self._turn,)
        if phase is PASSING:
            return tuple(seat for seat in range(self._n) if self._given[seat] is None)
        return ()

    # -- legal actions -----------------------------------------------------------------------------
    def _legal_now(self, hand: CardMask) -> CardMask:
        # Inlined copy of hearts_rules.legal_plays: this runs once a card in every playout.
        led = self._led_mask
        if not led:
            if self._trick_number == 1 and hand & TWO_OF_CLUBS_MASK:
                return TWO_OF_CLUBS_MASK
            if self._must_break and not self._broken:
                safe = hand & ~HEARTS_MASK
                if safe:
                    return safe
            return hand
        follow = hand & led
        if follow:
            return follow
        if self._trick_number == 1 and self._no_points_first:
            safe = hand & ~POINT_CARDS
            if safe:
                return safe
        return hand

    def legal_actions(self, seat: int) -> list[Action]:
        """Every action `seat` may take now: each card it may play, or each set of cards it may pass
        (all combinations, in card order); [] when the seat may not act."""
        phase = self._phase
        if phase is PLAYING:
            if seat != self._turn:
                return []
            mask = self._legal_now(self._hands[seat])
            row = PLAY_ACTIONS[seat]
            actions: list[Action] = []
            while mask:
                low = mask & -mask
                actions.append(row[low.bit_length() - 1])
                mask ^= low
            return actions
        if phase is PASSING and 0 <= seat < self._n and self._given[seat] is None:
            hand = cards_in(self._hands[seat])
            count = self._ruleset.hearts_pass_count
            return [PassCards(seat, cards) for cards in combinations(hand, count)]
        return []

    # -- the search path: cards by bit mask, without checks or events ------------------------------
    def legal_play_mask(self, seat: Seat) -> CardMask:
        """The cards `seat` may play now as a mask (0 when it is not that seat's turn to play).

        The lean form of `legal_actions` for searches: pair it with `play_fast`.
        """
        if self._phase is not PLAYING or seat != self._turn:
            return 0
        return self._legal_now(self._hands[seat])

    def play_fast(self, card: Card) -> None:
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

    def play_to_end(self, choose: Callable[[CardMask], Card]) -> None:
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

    # -- applying actions --------------------------------------------------------------------------
    def apply(self, action: Action) -> list[Event]:
        """Apply a `PassCards` or `PlayCard` and return the events it caused.

        Raises IllegalAction (codes in docs/rules-hearts.md) and leaves the state unchanged when the
        action is not allowed now.
        """
        if self._outcome is not None:
            raise IllegalAction("game_over", "the game is over")
        kind = type(action)
        if kind is PlayCard:
            assert isinstance(action, PlayCard)
            return self._play(action)
        if kind is PassCards:
            assert isinstance(action, PassCards)
            return self._pass(action)
        raise IllegalAction(
            "wrong_phase", f"Hearts has no such action; {self._phase_sentence().lower()}"
        )

    def play_card(self, card: Card) -> list[Event]:
        """The seat to act plays `card`: the same as `apply(PlayCard(turn, card))`."""
        return self._play(PlayCard(self._turn, card))

    def _play(self, action: PlayCard) -> list[Event]:
        seat = action.seat
        card = action.card
        if self._phase is not PLAYING:
            raise IllegalAction("wrong_phase", self._phase_sentence())
        if seat != self._turn:
            if not isinstance(seat, int) or not 0 <= seat < self._n:
                raise IllegalAction("bad_seat", f"there is no seat {seat!r} at this table")
            raise IllegalAction("not_your_turn", f"it is seat {self._turn}'s turn to play")
        hand = self._hands[seat]
        if not isinstance(card, int) or not 0 <= card < 52 or not hand >> card & 1:
            raise IllegalAction("card_not_in_hand", f"you do not hold {_text(card)}")
        if not self._legal_now(hand) >> card & 1:
            raise self._why_not(hand, card)
        # Legal: from here on nothing raises.
        self._actions.append(action)
        trick_number = self._trick_number
        broken = self._broken
        winner = self._advance(seat, card)
        row = _CARD_PLAYED[trick_number]
        index = seat * 52 + card
        played = row[index]
        if played is None:
            played = row[index] = CardPlayed(seat, card, trick_number)
        events: list[Event] = [played]
        if self._broken is not broken:
            events.append(SpadesBroken(seat))
        if winner >= 0:
            events.append(TrickWon(winner, trick_number, self._last_trick))
            if len(self._trick_winners) == self._tricks_per_hand:
                self._score_hand(events)
        self._version += 1
        return events

    def _advance(self, seat: Seat, card: Card) -> Seat:
        """Play a card known to be legal. Returns the trick's winner when the card completes a trick,
        else -1; the winner then leads (the caller scores the hand after its last trick)."""
        bit = 1 << card
        self._hands[seat] ^= bit
        self._played |= bit
        trick = self._trick
        trick.append(card)
        self._trick_mask |= bit
        self._plays.append(SEAT_CARDS[seat][card])
        if not self._broken and bit & self._breakers:
            self._broken = True
        # No trumps: the highest card of the suit led wins, and a card's number grows with its rank.
        if not self._led_mask:
            self._led_mask = SUIT_MASKS[card // 13]
            self._best = card
            self._best_seat = seat
        elif bit & self._led_mask and card > self._best:
            self._best = card
            self._best_seat = seat
        n = self._n
        if len(trick) < n:
            seat += 1
            self._turn = 0 if seat == n else seat
            return -1
        winner = self._best_seat
        self._taken[winner] |= self._trick_mask
        self._tricks[winner] += 1
        self._trick_winners.append(winner)
        self._last_trick = tuple(self._plays[-n:])
        self._last_winner = winner
        self._trick = []
        self._trick_mask = 0
        self._led_mask = 0
        self._leader = self._turn = winner
        if len(self._trick_winners) < self._tricks_per_hand:
            self._trick_number += 1
        return winner

    def _why_not(self, hand: CardMask, card: Card) -> IllegalAction:
        """The reason a held card may not be played now (it is known not to be legal)."""
        if not self._led_mask:
            if self._trick_number == 1:
                return IllegalAction(
                    "must_lead_two_of_clubs", "the two of clubs leads the first trick"
                )
            return IllegalAction(
                "hearts_not_broken", "hearts are not broken: lead a card that is not a heart"
            )
        led = self._trick[0] // 13
        if hand & SUIT_MASKS[led]:
            return IllegalAction(
                "must_follow_suit", f"must follow suit: you hold {SUIT_NAMES[led]}"
            )
        return IllegalAction(
            "no_points_first_trick",
            f"no points on the first trick: play a card that is not {_HEART_OR_QUEEN}",
        )

    def _pass(self, action: PassCards) -> list[Event]:
        seat = action.seat
        if self._phase is not PASSING:
            raise IllegalAction("wrong_phase", self._phase_sentence())
        n = self._n
        if not isinstance(seat, int) or not 0 <= seat < n:
            raise IllegalAction("bad_seat", f"there is no seat {seat!r} at this table")
        if self._given[seat] is not None:
            raise IllegalAction("already_passed", "you have already passed your cards this hand")
        count = self._ruleset.hearts_pass_count
        cards = action.cards
        if not isinstance(cards, tuple | list):
            raise IllegalAction("wrong_pass_count", f"pass a list of {count} cards")
        for card in cards:
            if not isinstance(card, int):
                raise IllegalAction("card_not_in_hand", f"you do not hold {_text(card)}")
        cards = tuple(cards)
        if len(cards) != count or len(set(cards)) != count:
            raise IllegalAction("wrong_pass_count", f"pass exactly {count} different cards")
        hand = self._hands[seat]
        for card in cards:
            if not 0 <= card < 52 or not hand >> card & 1:
                raise IllegalAction("card_not_in_hand", f"you do not hold {_text(card)}")
        # Legal: from here on nothing raises.
        offset = pass_offset(self._direction, n)
        self._given[seat] = cards
        self._actions.append(action)
        events: list[Event] = [CardsGiven(seat, (seat + offset) % n, cards)]
        if all(given is not None for given in self._given):
            self._exchange(events, offset)
        self._version += 1
        return events

    def _exchange(self, events: list[Event], offset: int) -> None:
        """Everyone has passed: each seat picks up what its neighbour passed, then play starts."""
        n = self._n
        given = [mask_of(cards or ()) for cards in self._given]
        for giver in range(n):
            receiver = (giver + offset) % n
            self._hands[giver] &= ~given[giver]
            self._received[receiver] = given[giver]
        for seat in range(n):
            self._hands[seat] |= self._received[seat]
        for giver in range(n):
            events.append(CardsPassed(giver, (giver + offset) % n, self._given[giver] or ()))
        self._start_play()

    def _phase_sentence(self) -> str:
        phase = self._phase
        if phase is DEALING:
            return "the next hand has not been dealt yet"
        if phase is PASSING:
            count = self._ruleset.hearts_pass_count
            return f"cards are being passed now: choose {count} to pass {self._direction}"
        if phase is PLAYING:
            return "the cards are being played now: play a card"
        return "the game is over"

    # -- views -------------------------------------------------------------------------------------
    def spectator_view(self) -> PublicView:
        """What anyone may know: scores, the trick, the cards played, who has passed; no hand."""
        return PublicView(**self._public_fields())

    def view(self, seat: int) -> SeatView:
        """What `seat` may know: the public view plus its own hand, the cards it passed, the cards it
        received (only once every seat has passed) and the cards it may play. Like the Spades views,
        `legal` does not list the hundreds of ways to pass: while a seat is to pass, `choose_cards` is
        `(hearts_pass_count,)` and it may pass any that many cards of `hand`. Raises
        IllegalAction("bad_seat") for a seat that is not at the table; nothing changes."""
        if not 0 <= seat < self._n:
            raise IllegalAction("bad_seat", f"there is no seat {seat} at this table")
        given = self._given[seat] or ()
        hand = self._hands[seat]
        if self._phase is PASSING:
            # Passed cards lie face down, out of the hand, until everyone has passed.
            hand &= ~mask_of(given)
        received = self._received[seat]
        passing = self._phase is PASSING
        to_pass = passing and self._given[seat] is None
        return SeatView(
            **self._public_fields(),
            seat=seat,
            hand=hand,
            given=given,
            received=tuple(cards_in(received)),
            legal=tuple(self.legal_actions(seat)) if not passing else (),
            choose_cards=(self._ruleset.hearts_pass_count,) if to_pass else (),
        )

    def _public_fields(self) -> dict[str, Any]:
        """The fields every view shares (all public)."""
        n = self._n
        passing = self._phase is PASSING
        sizes = tuple(
            self._hands[seat].bit_count() - (len(self._given[seat] or ()) if passing else 0)
            for seat in range(n)
        )
        trick = self._trick
        leader = self._leader
        playing = self._phase is PLAYING
        return {
            "game": "hearts",
            "players": n,
            "phase": self._phase.value,
            "version": self._version,
            "hand_number": self._hand_number,
            "dealer": self._dealer,
            "hand_type": "",
            "to_act": self.to_act(),
            "sides": self._sides,
            "scores": tuple(self._scores),
            "bags": (0,) * n,
            "bids": (None,) * n,
            "hand_sizes": sizes,
            "face_up": (0,) * n,
            "exposed": (0,) * n,
            "looked": (True,) * n,
            # -1 unless a trick is being played (docs/protocol.md, "Game views").
            "leader": leader if playing else -1,
            "trick": tuple(((leader + i) % n, card) for i, card in enumerate(trick)),
            "trick_number": self._trick_number,
            "last_trick": self._last_trick,
            "last_winner": self._last_winner,
            "tricks": tuple(self._tricks),
            "played": self._played,
            "broken": self._broken,
            "pass_direction": self._direction,
            "points": tuple(
                penalty_points(taken, self._ruleset.hearts_jack_of_diamonds)
                for taken in self._taken
            ),
            "winners": () if self._outcome is None else self._outcome.winners,
        }

    # -- the end of a hand -------------------------------------------------------------------------
    def _score_hand(self, events: list[Event] | None) -> None:
        """Score the finished hand (engine.hearts_scoring), record it, and end the game or wait for the
        next deal; `events` (None on the search path) receives HandScored and GameOver."""
        n = self._n
        before = tuple(self._scores)
        score = score_hand(self._ruleset, self._taken, before, self._hand_number)
        after = score.after
        self._scores = list(after)
        sides = self._sides
        if events is not None:
            events.append(
                HandScored(
                    hand_number=self._hand_number,
                    sides=sides,
                    tricks=tuple(self._tricks),
                    before=before,
                    delta=score.delta,
                    after=after,
                    bags_after=(0,) * n,
                    seed=self._seed.hex(),
                    notes=score.notes,
                )
            )
        self._histories.append(
            HandHistory(
                hand_number=self._hand_number,
                dealer=self._dealer,
                seed=self._seed,
                players=n,
                hand_type="",
                deal=self._dealt,
                face_up=(0,) * n,
                set_aside=self._set_aside,
                bids=(),
                transfers=pass_transfers(self._given, self._direction),
                plays=tuple(self._plays),
                trick_winners=tuple(self._trick_winners),
                tricks=tuple(self._tricks),
                sides=sides,
                score_before=before,
                score_delta=score.delta,
                score_after=after,
                bags_after=(0,) * n,
                actions=tuple(self._actions),
                notes=score.notes,
            )
        )
        if score.end:
            won = winners(after)
            self._outcome = Outcome(
                winners=won, scores=after, sides=sides, reason=score.end, lowest_wins=True
            )
            self._phase = GAME_OVER
            if events is not None:
                events.append(GameOver(winners=won, scores=after, reason=score.end))
        else:
            self._phase = DEALING
            self._dealer = (self._dealer + 1) % n

    # -- copying -----------------------------------------------------------------------------------
    def copy(self) -> "HeartsGame":
        """An independent copy: lists are copied, immutable values shared (cheap enough for search)."""
        other = HeartsGame.__new__(HeartsGame)
        other._ruleset = self._ruleset
        other._n = self._n
        other._deck = self._deck
        other._set_aside = self._set_aside
        other._sides = self._sides
        other._tricks_per_hand = self._tricks_per_hand
        other._no_points_first = self._no_points_first
        other._must_break = self._must_break
        other._queen_breaks = self._queen_breaks
        other._phase = self._phase
        other._version = self._version
        other._hand_number = self._hand_number
        other._dealer = self._dealer
        other._scores = self._scores[:]
        other._histories = self._histories[:]
        other._outcome = self._outcome
        other._seed = self._seed
        other._hands = self._hands[:]
        other._dealt = self._dealt
        other._direction = self._direction
        other._given = self._given[:]
        other._received = self._received[:]
        other._trick = self._trick[:]
        other._trick_mask = self._trick_mask
        other._led_mask = self._led_mask
        other._best = self._best
        other._best_seat = self._best_seat
        other._breakers = self._breakers
        other._leader = self._leader
        other._turn = self._turn
        other._trick_number = self._trick_number
        other._broken = self._broken
        other._taken = self._taken[:]
        other._tricks = self._tricks[:]
        other._plays = self._plays[:]
        other._trick_winners = self._trick_winners[:]
        other._last_trick = self._last_trick
        other._last_winner = self._last_winner
        other._played = self._played
        other._actions = self._actions[:]
        return other


def _text(card: object) -> str:
    """Notation for a card in a message, even for something that is not a card."""
    if isinstance(card, int) and 0 <= card < 52:
        return card_text(card)
    return f"card {card!r}"


# CardPlayed events by trick number (1..17), then seat * 52 + card; filled as first needed (events are
# frozen values, so every game shares them).
_CARD_PLAYED: Final[list[list[CardPlayed | None]]] = [[None] * (MAX_SEATS * 52) for _ in range(18)]
