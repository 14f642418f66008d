"""An exact double-dummy solver for four-handed Spades: every card visible, everyone playing perfectly.

`solve(position)` gives the most tricks each side takes from a position (the hands, the trick in
progress, whether spades are broken) against best defence, and, for each legal card of the seat to
play, the tricks its side takes after playing it. Unlike a bridge solver with spades as trumps it
keeps Spades' own rules: the deck's card order (jokers and deuces above the ace of spades, the
deuces following spades), the ruleset's spade-breaking rule (`trumped` or `played`) and the hand's
play rule (`normal`, `pressure`, `nothing_but_spades`). Where the two games coincide (spades broken
or none left to lead, no jokers or deuces) its answers equal a bridge solver's (tests check DDS).

The search, in the manner of Bo Haglund's DDS (learnt from its papers, no code taken):

- Null-window searches: "can seats 0 and 2 take at least `target` of the remaining tricks?" is a
  yes/no question whose search cuts off as soon as the answer is known; the exact count is found by
  asking it a few times (a binary search between the known bounds).
- A transposition table at the start of each trick keyed by the remaining cards' *relative* ranks:
  once the 9 and 10 of a suit are gone, the J and 8 are touching, so two deals that differ only in
  cards already played share one entry. An entry holds a lower and an upper bound on the tricks.
- Equivalent cards collapsed: cards of one seat with no live card of another seat between them win and
  lose the same tricks, so only one of them is searched.
- Quick bounds: a seat holding the k highest remaining spades takes at least k tricks whatever
  happens (no card beats them and no two of them fall on one trick); the partnership holding the
  top of the spade suit takes at least the larger of its two players' shares of that top run.
- Move ordering: second and later hands try to win cheaply unless the partner already wins, the
  leader tries its top winners first.

Cards inside the search are renumbered `suit * 17 + power` by the suit each follows (jokers and the
deuces-high deuces are spades) so that, within a suit, a higher number is a higher card: a trick is
won by comparing ints, and the relative-rank key is built from shifts. Pure standard library.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from engine.cards import Card, CardMask, Seat, card_text
from engine.errors import EngineError
from engine.ordering import ORDERS, TRUMP, CardOrder
from engine.ruleset import PLAY_RULES, SPADES_BREAKS, Ruleset
from engine.spades_tables import PLAYING

if TYPE_CHECKING:
    from engine.spades import SpadesGame

_WIDTH: Final = 17  # internal card numbers per suit: powers 0..16 (deuces high reaches 16)
_SUIT_BITS: Final = (1 << _WIDTH) - 1
_SUITM: Final = tuple(_SUIT_BITS << (_WIDTH * s) for s in range(4))
_TRUMPM: Final = _SUITM[TRUMP]
_NON_TRUMPM: Final = _SUITM[0] | _SUITM[1] | _SUITM[2]
# The suit of an internal card number.
_SUIT_OF: Final = tuple(i // _WIDTH for i in range(4 * _WIDTH))
#: Tricks of a four-handed hand; a position holds at most this many cards a seat.
MAX_TRICKS: Final = 13
# A budget no search reaches (the largest whole deals search about a million positions).
MAX_NODES: Final = 1 << 62


class DoubleDummyError(EngineError, ValueError):
    """A position the solver cannot take (cards not in the deck, held twice, counts that do not add
    up, an unknown rule). Nothing was searched."""

    code = "bad_position"


@dataclass(frozen=True, slots=True)
class Position:
    """A four-handed Spades position in the play phase, every card visible.

    `hands` are the cards each seat (0..3) still holds, `leader` the seat that led the trick in
    progress (or leads next), `trick` the cards already played to it in order from the leader,
    `spades_broken` whether spades are broken now (by any card of that trick included). The rules
    that matter to play: the `deck` (standard, jokers, deuces_high), `spades_break` (trumped,
    played) and `play_rule` (normal, pressure, nothing_but_spades).
    """

    hands: tuple[CardMask, CardMask, CardMask, CardMask]
    leader: Seat
    trick: tuple[Card, ...] = ()
    spades_broken: bool = False
    deck: str = "standard"
    spades_break: str = "trumped"
    play_rule: str = "normal"

    @classmethod
    def of_ruleset(
        cls,
        ruleset: Ruleset,
        hands: Sequence[CardMask],
        leader: Seat,
        trick: Sequence[Card] = (),
        *,
        spades_broken: bool = False,
        hand_number: int = 1,
    ) -> "Position":
        """The position under a ruleset's rules (the play rule of hand `hand_number`: Crazy Spades
        changes it by hand). Raises DoubleDummyError for a ruleset that is not four-handed Spades."""
        if not ruleset.partnerships:
            raise DoubleDummyError("the solver plays four-handed (partnership) Spades only")
        if len(hands) != 4:
            raise DoubleDummyError(f"a position has 4 hands, not {len(hands)}")
        h0, h1, h2, h3 = hands
        return cls(
            (h0, h1, h2, h3),
            leader,
            tuple(trick),
            spades_broken,
            ruleset.deck,
            ruleset.spades_break,
            ruleset.rules_for_hand(hand_number)[1],
        )

    @classmethod
    def of_game(cls, game: "SpadesGame") -> "Position":
        """The position of a four-handed game in its play phase. Raises DoubleDummyError otherwise."""
        if game.phase is not PLAYING:
            raise DoubleDummyError("the game is not in its play phase")
        plays = game.trick
        leader = plays[0][0] if plays else game.turn
        return cls.of_ruleset(
            game.ruleset,
            [game.hand(seat) for seat in range(game.players)],
            leader,
            [card for _, card in plays],
            spades_broken=game.spades_broken,
            hand_number=game.hand_number,
        )

    @property
    def to_play(self) -> Seat:
        """The seat whose turn it is."""
        return (self.leader + len(self.trick)) % 4

    @property
    def tricks_left(self) -> int:
        """The tricks still to be won, the one in progress included."""
        return self.hands[self.leader].bit_count() + (1 if self.trick else 0)


@dataclass(frozen=True, slots=True)
class Solution:
    """What `solve` found. `tricks[side]` is the most tricks side 0 (seats 0 and 2) or side 1 (seats 1
    and 3) takes from the position, the trick in progress included, when both play perfectly (the
    two add up to `tricks_left`). `card_tricks[card]` is, for each legal card of the seat to play
    (`to_play`), the tricks that seat's side takes after playing it; the best cards reach
    `tricks[to_play % 2]`. `nodes` counts the positions searched (for benchmarks)."""

    tricks: tuple[int, int]
    to_play: Seat
    card_tricks: dict[Card, int] = field(default_factory=dict)
    nodes: int = 0

    @property
    def best_cards(self) -> list[Card]:
        """The legal cards that keep the side's best result, lowest card number first."""
        best = self.tricks[self.to_play % 2]
        return sorted(card for card, won in self.card_tricks.items() if won == best)


@dataclass(frozen=True, slots=True)
class _Tables:
    """One deck's renumbering, built once."""

    inside: tuple[int, ...]  # engine card -> internal number (-1 when not in the deck)
    outside: dict[int, Card]  # internal number -> engine card


def _tables(order: CardOrder) -> _Tables:
    inside = [-1] * 54
    outside: dict[int, Card] = {}
    for card in order.cards:
        number = order.suit[card] * _WIDTH + order.power[card]
        inside[card] = number
        outside[number] = card
    return _Tables(tuple(inside), outside)


_TABLES: Final = {name: _tables(order) for name, order in ORDERS.items()}


def _check(position: Position) -> None:
    """Raise DoubleDummyError with a sentence for a position that cannot occur."""
    if position.deck not in ORDERS:
        raise DoubleDummyError(f"unknown deck {position.deck!r}; known: {', '.join(ORDERS)}")
    if position.spades_break not in SPADES_BREAKS:
        raise DoubleDummyError(f"spades_break must be one of {', '.join(SPADES_BREAKS)}")
    if position.play_rule not in PLAY_RULES:
        raise DoubleDummyError(f"play_rule must be one of {', '.join(PLAY_RULES)}")
    if len(position.hands) != 4:
        raise DoubleDummyError(f"a position has 4 hands, not {len(position.hands)}")
    if not isinstance(position.leader, int) or not 0 <= position.leader < 4:
        raise DoubleDummyError(f"the leader is a seat from 0 to 3, not {position.leader!r}")
    if len(position.trick) > 3:
        raise DoubleDummyError("a trick in progress holds at most 3 cards")
    deck = ORDERS[position.deck].deck
    seen = 0
    for seat, hand in enumerate(position.hands):
        if not isinstance(hand, int) or hand < 0 or hand & ~deck:
            raise DoubleDummyError(
                f"seat {seat} holds a card that is not in the {position.deck} deck"
            )
        if hand & seen:
            raise DoubleDummyError("a card is held by two seats")
        seen |= hand
    for card in position.trick:
        if not isinstance(card, int) or not 0 <= card < 54 or not deck >> card & 1:
            raise DoubleDummyError(
                f"the trick holds {card!r}, not a card of the {position.deck} deck"
            )
        if seen >> card & 1:
            raise DoubleDummyError(f"{card_text(card)} is both in the trick and in a hand")
        seen |= 1 << card
    left = position.hands[position.to_play].bit_count()
    for offset in range(4):
        seat = (position.leader + offset) % 4
        want = left - 1 if offset < len(position.trick) else left
        if position.hands[seat].bit_count() != want:
            raise DoubleDummyError("the hands and the trick in progress do not add up")
    if position.tricks_left > MAX_TRICKS:
        raise DoubleDummyError(f"a hand holds at most {MAX_TRICKS} cards")
    if position.tricks_left == 0:
        raise DoubleDummyError("no trick is left to play")


def solve(position: Position, *, per_card: bool = True) -> Solution:
    """Solve `position` exactly (see `Solution`); with `per_card=False` only the tricks each side
    takes, which is faster. Raises DoubleDummyError for a position that cannot occur."""
    return Solver().solve(position, per_card=per_card)


class BudgetExceeded(Exception):
    """`Solver.solve` searched its `budget` of positions without an answer. The solver is still
    usable (what it learnt is kept)."""


class Solver:
    """Solves many positions under the same rules, keeping what it learns between them: its table's
    answers are facts about every position of the same shape (suit lengths, the holders of the
    cards that mattered), so the positions of one hand, solved one after another, share most of
    their work. Memory grows with the positions searched: use one per hand or game."""

    def __init__(self) -> None:
        # (spades_break, play_rule) -> that rule's memo (results differ between rules).
        self._memos: dict[tuple[str, str], _Memo] = {}

    def solve(
        self,
        position: Position,
        *,
        per_card: bool = True,
        guess: int | None = None,
        budget: int | None = None,
    ) -> Solution:
        """`solve(position)`, with the tables of the positions solved before. `guess` (side 0's
        tricks, when known roughly: the last position's answer) is asked first; `budget` caps the
        positions searched (`Solution.nodes`), raising BudgetExceeded past it. Raises
        DoubleDummyError for a position that cannot occur."""
        _check(position)
        tables = _TABLES[position.deck]
        inside = tables.inside
        hands = [0, 0, 0, 0]
        for seat in range(4):
            mask = position.hands[seat]
            while mask:
                low = mask & -mask
                hands[seat] |= 1 << inside[low.bit_length() - 1]
                mask ^= low
        trick = [inside[card] for card in position.trick]
        memo = self._memos.setdefault((position.spades_break, position.play_rule), _Memo())
        search = _Search(
            hands,
            leader=position.leader,
            trick=trick,
            broken=position.spades_broken,
            break_on_play=position.spades_break == "played",
            play_rule=position.play_rule,
            memo=memo,
            budget=budget,
        )
        to_play = position.to_play
        side = to_play % 2
        left = position.tricks_left
        ours = search.exact(0, left, guess)  # side 0's tricks
        card_tricks: dict[Card, int] = {}
        if per_card:
            target = ours if side == 0 else left - ours
            for number, equals in search.root_moves():
                won0 = search.exact_after(number, ours, side)
                won = won0 if side == 0 else left - won0
                for card in equals:
                    card_tricks[tables.outside[card]] = won
            assert max(card_tricks.values()) == target
        return Solution((ours, left - ours), to_play, card_tricks, search.nodes)


class _Memo:
    """What searches under one rule share: the transposition table and the memos of codes and runs
    (pure functions of the cards, kept because positions come back)."""

    def __init__(self) -> None:
        # The transposition table: (the suit lengths of each hand, the leader, spades broken) ->
        # entries [holders mask, holders, lower bound, upper bound, the cards counted in each suit
        # (5 bits a suit), the lead that last settled it or -1], one per set of deciding cards.
        self.table: dict[int, list[list[int]]] = {}
        self.suit_keys: dict[tuple[int, int, int, int, int], _SuitCode] = {}
        # The four hands at a trick's start -> `_Described`.
        self.codes: dict[tuple[int, int, int, int], _Described] = {}
        # (legal cards, other live cards) -> `_runs` of them.
        self.runs_of: dict[tuple[int, int], tuple[tuple[int, ...], tuple[int, ...]]] = {}


# A suit's holdings by relative rank: two bits (the seat) per remaining card, from the lowest,
# after a leading 1 (so the top card is the lowest two bits); for the spade suit's sure tricks,
# how many tricks side 0 and side 1 surely take from the run of top cards one of them holds and
# how long that run is (meaningful for spades only, the callers read them only there); the four
# seats' lengths in the suit (4 bits each); and its k highest cards for each k (engine's numbers).
_SuitCode = tuple[int, int, int, int, int, tuple[int, ...]]
# A position at a trick's start: its relative-rank code (32 bits a suit), the suit lengths of each
# hand (16 bits a suit), side 0's and side 1's sure spade tricks and the cards they rest on, and
# each suit's k highest cards for each k.
_Described = tuple[
    int, int, int, int, int, tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]
]


class _Search:
    """The search over one position: its state is mutated and restored as it goes."""

    def __init__(
        self,
        hands: list[int],
        *,
        leader: int,
        trick: list[int],
        broken: bool,
        break_on_play: bool,
        play_rule: str,
        memo: "_Memo",
        budget: int | None = None,
    ) -> None:
        self.hands = hands
        self.leader = leader
        self.trick = trick
        self.broken = broken
        self.break_on_play = break_on_play
        self.play_rule = play_rule
        self.table = memo.table
        self.nodes = 0
        self.budget = budget
        self._suit_keys = memo.suit_keys
        self._codes = memo.codes
        self._runs_of = memo.runs_of

    # -- the exact count from null-window searches ---------------------------------------------------
    def exact(self, low: int, high: int, guess: int | None = None) -> int:
        """Side 0's tricks from the current state, known to lie in [low, high]; `guess`, if given,
        is asked first and then its neighbour (a right guess settles it in two searches)."""
        if guess is not None and low < high:
            guess = min(max(guess, low), high)
            if guess > low and not self.reach(guess):
                high = guess - 1
                if low < high and self.reach(high):
                    low = high
            else:
                low = guess
                if low < high and not self.reach(low + 1):
                    high = low
        while low < high:
            target = (low + high + 1) // 2
            if self.reach(target):
                low = target
            else:
                high = target - 1
        return low

    def root_moves(self) -> list[tuple[int, list[int]]]:
        """Each run of equivalent legal cards at the root: (the card searched, all the run's cards)."""
        seat = (self.leader + len(self.trick)) % 4
        legal = self._legal(seat)
        return self._runs(seat, legal)

    def exact_after(self, number: int, guess: int, side: int) -> int:
        """Side 0's tricks after the seat to play plays internal card `number` (restored after)."""
        hands, trick = self.hands, self.trick
        seat = (self.leader + len(trick)) % 4
        left = hands[seat].bit_count() + (1 if trick else 0)
        saved = (list(hands), list(trick), self.leader, self.broken)
        won = self._play(seat, number)
        # Side 0's tricks from here are `won` (this trick, if it just ended) plus the rest.
        rest = hands[self.leader].bit_count() + (1 if self.trick else 0)
        if rest == 0:
            result = won
        else:
            probe = min(max(guess - won, 0), rest)
            # The guess is usually right for the best cards: confirm it with two probes.
            if probe > 0 and not self.reach(probe):
                result = won + self.exact(0, probe - 1)
            elif probe < rest and self.reach(probe + 1):
                result = won + self.exact(probe + 1, rest)
            else:
                result = won + probe
        self.hands[:], self.trick[:] = saved[0], saved[1]
        self.leader, self.broken = saved[2], saved[3]
        assert 0 <= result <= left
        return result

    def _play(self, seat: int, number: int) -> int:
        """Play a card for `seat` at the root; 1 if it ends a trick side 0 wins, else 0."""
        self.hands[seat] ^= 1 << number
        trick = self.trick
        trick.append(number)
        suit = _SUIT_OF[number]
        led = _SUIT_OF[trick[0]]
        if suit == TRUMP and not self.broken and (self.break_on_play or led != TRUMP):
            self.broken = True
        if len(trick) < 4:
            return 0
        winner = (self.leader + _winner_index(trick)) % 4
        self.trick = []
        self.leader = winner
        return 1 if winner % 2 == 0 else 0

    # -- legal plays and their equivalence ---------------------------------------------------------
    def _legal(self, seat: int) -> int:
        hand = self.hands[seat]
        trick = self.trick
        if trick:
            follow = hand & _SUITM[_SUIT_OF[trick[0]]]
            if follow:
                return follow
            if self.play_rule == "pressure":
                return hand & _TRUMPM or hand
            if self.play_rule == "nothing_but_spades":
                return hand & _NON_TRUMPM or hand
            return hand
        if not self.broken or self.play_rule == "nothing_but_spades":
            return hand & _NON_TRUMPM or hand
        return hand

    def _runs(self, seat: int, legal: int) -> list[tuple[int, list[int]]]:
        others = 0
        for other in range(4):
            if other != seat:
                others |= self.hands[other]
        for number in self.trick:
            others |= 1 << number
        runs: list[tuple[int, list[int]]] = []
        previous = -2
        mask = legal
        while mask:
            low = mask & -mask
            number = low.bit_length() - 1
            mask ^= low
            between = (1 << number) - (1 << (previous + 1)) if previous >= 0 else 0
            if runs and _SUIT_OF[previous] == _SUIT_OF[number] and not others & between:
                runs[-1][1].append(number)
            else:
                runs.append((number, [number]))
            previous = number
        return runs

    # -- the null-window search ----------------------------------------------------------------------
    def reach(self, target: int) -> bool:
        """Can side 0 take at least `target` of the remaining tricks (from the current state)?"""
        return self._reach(target)[0]

    def _reach(self, target: int) -> tuple[bool, int]:
        """`reach`, with the cards whose holders decided the answer (DDS's winning ranks): the answer
        holds for every position with the same suit lengths in each hand whose cards at or above
        the lowest of these, in each suit, have the same holders."""
        hands = self.hands
        trick = self.trick
        table = self.table
        suit_keys = self._suit_keys
        break_on_play = self.break_on_play
        rule = self.play_rule
        pressure = rule == "pressure"
        no_trumping = rule == "nothing_but_spades"
        state = [self.leader, self.broken]
        nodes = 0
        # The lead to try first at the trick starting now, and the lead that last cut off.
        first = [-1]
        cut = [-1]
        codes = self._codes
        runs = self._runs_of
        limit = MAX_NODES if self.budget is None else self.budget - self.nodes

        def describe(raw: tuple[int, int, int, int]) -> _Described:
            """The position's relative-rank code, lengths, sure tricks and top cards (`_Described`)."""
            code = 0
            lengths = 0
            tops: list[tuple[int, ...]] = []
            suit: _SuitCode = (0, 0, 0, 0, 0, ())
            for s in range(4):
                shift = _WIDTH * s
                holdings = (
                    raw[0] >> shift & _SUIT_BITS,
                    raw[1] >> shift & _SUIT_BITS,
                    raw[2] >> shift & _SUIT_BITS,
                    raw[3] >> shift & _SUIT_BITS,
                    s,
                )
                known = suit_keys.get(holdings)
                if known is None:
                    known = suit_keys[holdings] = _suit_code(holdings)
                suit = known
                code |= suit[0] << 32 * s
                lengths |= suit[4] << 16 * s
                tops.append(suit[5])
            # `suit` is the spade suit's: the sure tricks rest on the holders of its top run.
            return (
                code,
                lengths,
                suit[1],
                suit[2],
                suit[5][suit[3]],
                tops[0],
                tops[1],
                tops[2],
                tops[3],
            )

        def close(live: int, relevant: int) -> tuple[int, int, int]:
            """Widen `relevant` to every live card at or above its lowest card in each suit; with the
            mask of those cards' holders in the relative-rank code (a suit's top card is its lowest
            two bits) and how many they are in each suit."""
            closed = 0
            counts = 0
            mask = 0
            for s in range(4):
                mine = relevant & _SUITM[s]
                if mine:
                    prefix = live & _SUITM[s] & ~((mine & -mine) - 1)
                    closed |= prefix
                    k = prefix.bit_count()
                    counts |= k << 5 * s
                    mask |= ((1 << 2 * k) - 1) << 32 * s
            return closed, mask, counts

        def search(target: int) -> tuple[bool, int]:
            nonlocal nodes
            n = len(trick)
            leader = state[0]
            if n == 0:
                left = hands[leader].bit_count()
                if target <= 0:
                    return True, 0
                if target > left:
                    return False, 0
                if left == 1:
                    cards = [hands[(leader + i) % 4] for i in range(4)]
                    cards = [c.bit_length() - 1 for c in cards]
                    index = _winner_index(cards)
                    return (leader + index) % 2 == 0, _deciding(cards, index)
                # The position's description, memoised on the hands themselves (a position is
                # reached by many orders of play).
                raw = (hands[0], hands[1], hands[2], hands[3])
                known = codes.get(raw)
                if known is None:
                    known = codes[raw] = describe(raw)
                # A seat holding the top spades takes them whatever the others do.
                if known[2] >= target:
                    return True, known[4]
                if left - known[3] < target:
                    return False, known[4]
                code = known[0]
                key = known[1] << 3 | leader << 1 | state[1]
                bucket = table.get(key)
                hint = -1
                if bucket is not None:
                    for entry in bucket:
                        if code & entry[0] == entry[1]:
                            if entry[2] >= target or entry[3] < target:
                                counts = entry[4]
                                relevant = (
                                    known[5][counts & 31]
                                    | known[6][counts >> 5 & 31]
                                    | known[7][counts >> 10 & 31]
                                    | known[8][counts >> 15]
                                )
                                return entry[2] >= target, relevant
                            if hint < 0:
                                hint = entry[5]
                quick, quick_relevant = quick_tricks(leader)
                if leader % 2 == 0:
                    if quick >= target:
                        return True, quick_relevant
                elif left - quick < target:
                    return False, quick_relevant
                nodes += 1
                if nodes > limit:
                    raise BudgetExceeded(f"more than {self.budget} positions searched")
                first[0] = hint
                result, relevant = play_trick_card(0, target)
                live = raw[0] | raw[1] | raw[2] | raw[3]
                relevant, mask, counts = close(live, relevant)
                value = code & mask
                if bucket is None:
                    bucket = table[key] = []
                for entry in bucket:
                    if entry[0] == mask and entry[1] == value:
                        break
                else:
                    entry = [mask, value, 0, left, counts, -1]
                    bucket.append(entry)
                if result:
                    entry[2] = max(entry[2], target)
                else:
                    entry[3] = min(entry[3], target - 1)
                entry[5] = cut[0]
                return result, relevant
            return play_trick_card(n, target)

        def quick_tricks(leader: int) -> tuple[int, int]:
            """Tricks the leader surely takes by cashing, on lead, its cards above every other live
            card of their suit: side suits first, each as many rounds as every opponent still
            holding a spade can follow (so none of them can trump; under pressure the partner too,
            or it would have to trump and take the lead), then spades if it may lead them. With the
            cards counted (a position where the leader holds at least these wins at least as
            many)."""
            hand = hands[leader]
            left_opponent = hands[(leader + 1) % 4]
            right_opponent = hands[(leader + 3) % 4]
            partner_hand = hands[(leader + 2) % 4]
            partner_trumps = partner_hand & _TRUMPM
            others = left_opponent | right_opponent | partner_hand
            left_trumps = left_opponent & _TRUMPM
            right_trumps = right_opponent & _TRUMPM
            total = 0
            relevant = 0
            for s in range(3):
                suit_mask = _SUITM[s]
                mine = hand & suit_mask
                if not mine:
                    continue
                rest = others & suit_mask
                if rest:
                    cut_at = rest.bit_length()
                    run = (mine >> cut_at).bit_count()
                    if run:
                        relevant |= mine >> cut_at << cut_at
                else:
                    run = mine.bit_count()
                if left_trumps:
                    run = min(run, (left_opponent & suit_mask).bit_count())
                if right_trumps:
                    run = min(run, (right_opponent & suit_mask).bit_count())
                if pressure and partner_trumps:
                    # Under pressure a partner out of the suit must trump, and takes the lead.
                    run = min(run, (partner_hand & suit_mask).bit_count())
                total += run
            if state[1] and not no_trumping:
                mine = hand & _TRUMPM
                rest = others & _TRUMPM
                if rest:
                    cut_at = rest.bit_length()
                    total += (mine >> cut_at).bit_count()
                    relevant |= mine >> cut_at << cut_at
                else:
                    total += mine.bit_count()
            return total, relevant

        def play_trick_card(n: int, target: int) -> tuple[bool, int]:
            leader = state[0]
            seat = (leader + n) % 4
            hand = hands[seat]
            # The legal plays (engine.spades.SpadesGame.legal_play_mask's rules).
            if n:
                led = _SUIT_OF[trick[0]]
                legal = hand & _SUITM[led]
                if not legal:
                    if pressure:
                        legal = hand & _TRUMPM or hand
                    elif no_trumping:
                        legal = hand & _NON_TRUMPM or hand
                    else:
                        legal = hand
            else:
                led = -1
                legal = (hand & _NON_TRUMPM or hand) if not state[1] or no_trumping else hand
            maximizing = seat % 2 == 0
            moves, lowest = order_moves(seat, n, legal)
            if n == 0:
                hint = first[0]
                if hint >= 0 and legal >> hint & 1 and moves[0] != hint:
                    at = moves.index(hint) if hint in moves else -1
                    if at > 0:
                        moves.insert(0, moves.pop(at))
                        lowest.insert(0, lowest.pop(at))
            broken = state[1]
            relevant = 0
            for number in moves:
                bit = 1 << number
                hands[seat] = hand ^ bit
                if n == 0:
                    led = _SUIT_OF[number]
                if not broken and number >= 3 * _WIDTH and (break_on_play or led != TRUMP):
                    state[1] = True
                if n < 3:
                    trick.append(number)
                    result, found = search(target) if n < 2 else play_trick_card(3, target)
                    trick.pop()
                else:
                    trick.append(number)
                    index = _winner_index(trick)
                    winner = (leader + index) % 4
                    deciding = _deciding(trick, index)
                    played = trick[:]
                    trick.clear()
                    state[0] = winner
                    result, found = search(target - 1 if winner % 2 == 0 else target)
                    found |= deciding
                    state[0] = leader
                    trick[:] = played
                    trick.pop()
                state[1] = broken
                hands[seat] = hand
                if result == maximizing:
                    if n == 0:
                        cut[0] = number
                    return result, found
                relevant |= found
            if n == 0:
                cut[0] = -1
            # Every card was refuted, one card of each run of equivalent cards standing for the
            # run: where a card the answer rests on lies in or below a run, the whole run must
            # keep its holder for the others to stay equivalent.
            for number, low in zip(moves, lowest, strict=True):
                if low != number and relevant & _SUITM[_SUIT_OF[number]] & ((2 << number) - 1):
                    relevant |= 1 << low
            return not maximizing, relevant

        def order_moves(seat: int, n: int, legal: int) -> tuple[list[int], list[int]]:
            """One card per run of equivalent cards (its highest), the likeliest to cut off first;
            and the lowest card of each one's run."""
            others = hands[0] | hands[1] | hands[2] | hands[3]
            others &= ~hands[seat]
            for number in trick:
                others |= 1 << number
            # The runs depend on the legal cards and the other live cards alone, and the same
            # pair comes back in many orders of play.
            known = runs.get((legal, others))
            if known is None:
                known = runs[legal, others] = _runs(legal, others)
            reps, lows = known
            if len(reps) < 2:
                return list(reps), list(lows)
            pairs = list(zip(reps, lows, strict=True))
            if n == 0:
                # Lead the top card of a suit first when nobody else holds a higher one (highest
                # first), then the rest, low first. (Leading low toward the partner's top cards
                # early was tried: no fewer positions on whole deals, so it is not done.)
                winners = []
                rest = []
                for pair in pairs:
                    number = pair[0]
                    if not others & _SUITM[_SUIT_OF[number]] & ~((2 << number) - 1):
                        winners.append(pair)
                    else:
                        rest.append(pair)
                winners.reverse()
                ordered = winners + rest
            else:
                # Who wins so far, and is it the partner?
                best_index = _winner_index(trick)
                best = trick[best_index]
                partner_wins = best_index == n - 2
                beat = []
                lose = []
                best_suit = _SUIT_OF[best]
                for pair in pairs:
                    number = pair[0]
                    s = _SUIT_OF[number]
                    if (s == best_suit and number > best) or (s == TRUMP and best_suit != TRUMP):
                        beat.append(pair)
                    else:
                        lose.append(pair)
                ordered = lose + beat if partner_wins else beat + lose
            return [p[0] for p in ordered], [p[1] for p in ordered]

        result = search(target)
        self.nodes += nodes
        return result


def _runs(legal: int, others: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The runs of equivalent cards among `legal` (no card of `others` between them, one suit),
    ascending: the highest card of each and the lowest."""
    reps: list[int] = []
    lows: list[int] = []
    previous = -1
    mask = legal
    while mask:
        low = mask & -mask
        number = low.bit_length() - 1
        mask ^= low
        if (
            reps
            and _SUIT_OF[previous] == _SUIT_OF[number]
            and not others & ((1 << number) - (1 << (previous + 1)))
        ):
            reps[-1] = number
        else:
            reps.append(number)
            lows.append(number)
        previous = number
    return tuple(reps), tuple(lows)


def _deciding(trick: list[int], index: int) -> int:
    """The winning card of a whole trick as a card the result rests on, when it beat another card
    of its suit by rank (a card that won alone in its suit would win whatever its rank)."""
    card = trick[index]
    suit = _SUIT_OF[card]
    for i, other in enumerate(trick):
        if i != index and _SUIT_OF[other] == suit:
            return 1 << card
    return 0


def _winner_index(trick: list[int]) -> int:
    """The position in a four-card (or shorter) trick of internal numbers of the winning card."""
    best = trick[0]
    index = 0
    best_suit = _SUIT_OF[best]
    for i in range(1, len(trick)):
        number = trick[i]
        s = _SUIT_OF[number]
        if s == best_suit:
            if number > best:
                best, index = number, i
        elif s == TRUMP:
            best, index, best_suit = number, i, TRUMP
    return index


def _suit_code(holdings: tuple[int, int, int, int, int]) -> _SuitCode:
    """Suit `holdings[4]`'s `_SuitCode` from the four seats' holdings in it (bits 0..16)."""
    h0, h1, h2, h3, suit = holdings
    everything = h0 | h1 | h2 | h3
    code = 1
    seats: list[int] = []
    mask = everything
    while mask:
        low = mask & -mask
        mask ^= low
        seat = 0 if h0 & low else 1 if h1 & low else 2 if h2 & low else 3
        code = code << 2 | seat
        seats.append(seat)
    sure = [0, 0]
    run = 0
    if seats:
        side = seats[-1] % 2
        shares = [0, 0, 0, 0]
        for seat in reversed(seats):
            if seat % 2 != side:
                break
            shares[seat] += 1
            run += 1
        sure[side] = max(shares[side], shares[side + 2])
    lengths = h0.bit_count() | h1.bit_count() << 4 | h2.bit_count() << 8 | h3.bit_count() << 12
    tops = [0]
    rest = everything
    while rest:
        rest ^= 1 << (rest.bit_length() - 1)
        tops.append((everything & ~rest) << _WIDTH * suit)
    return code, sure[0], sure[1], run, lengths, tuple(tops)
