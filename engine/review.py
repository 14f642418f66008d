"""Hand review: which cards of a finished hand cost their side tricks, double-dummy (issue 42).

For every card played, the position just before it is solved (`engine.double_dummy`): the most
tricks the side to play could take from there, against what it can take after the card it chose
(the tricks the next position is worth, plus this trick if the card ended it and the side won it).
The difference is what the card cost; a card that keeps the best result costs nothing. This is the
solver's per-card answer for the card played, read off the next position's solution, so each
position is solved once, for its tricks only.

The positions are solved from the last card to the first with one `Solver`: the endings solved
first are the sub-positions of the earlier ones, so the table they leave makes the early positions
(the dearest) cheaper, and the played card's value is the guess for the position before it (most
cards are right). A position that needs more than `budget` searched positions is left unanalysed,
and so are the costs that depend on it: `CardReview.cost` is then None ("not analysed"), never a
guess. The counts are tricks, not points: a side protecting a nil, or setting one, may give up
tricks on purpose, and a card that does so shows as costing them.

Only four-handed (partnership) Spades is analysed, as the solver plays it; `PlayedHand.of_history`
and `of_record` raise NotReviewable with a sentence for a three- or two-handed hand or Hearts.
"""

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.actions import Bid
from engine.cards import Card, CardMask, Seat, card_text, parse_card
from engine.double_dummy import BudgetExceeded, Position, Solver
from engine.errors import EngineError
from engine.history import HandHistory
from engine.ruleset import Ruleset
from engine.spades import SpadesGame

#: Positions a position's search may visit before it is left unanalysed, by default: a few seconds
#: at most (most positions of a hand take far fewer; the opening lead's can take many more).
DEFAULT_BUDGET = 60_000


class NotReviewable(EngineError, ValueError):
    """A hand the review cannot analyse (not four-handed Spades, cards missing or not legal); the
    message says why. Nothing was solved."""

    code = "not_reviewable"


@dataclass(frozen=True, slots=True)
class PlayedHand:
    """A four-handed Spades hand as played: each seat's cards when play began and the cards played
    in order (fewer than all when a claim ended the hand)."""

    ruleset: Ruleset
    hand_number: int
    dealer: Seat
    hands: tuple[CardMask, CardMask, CardMask, CardMask]
    plays: tuple[tuple[Seat, Card], ...]
    tricks: tuple[int, ...]  # tricks won per seat, as recorded

    @classmethod
    def of_history(cls, history: HandHistory, ruleset: Ruleset) -> "PlayedHand":
        """The hand of an engine hand record (`engine.records.record_to_hand`)."""
        hands = list(history.deal)
        for seat in range(len(hands)):
            hands[seat] &= ~history.discarded
        for transfer in history.transfers:
            for card in transfer.cards:
                hands[transfer.giver] &= ~(1 << card)
                hands[transfer.receiver] |= 1 << card
        return cls.of_plays(
            ruleset,
            history.hand_number,
            history.dealer,
            history.plays,
            history.tricks,
            dealt=hands,
        )

    @classmethod
    def of_record(cls, record: Mapping[str, Any], ruleset: Ruleset) -> "PlayedHand":
        """The hand of a record of either format (`spades-hand/1`, the client's journal): its
        `plays`, `hand_number`, `dealer`, `tricks` and, when a claim cut play short, `deal`."""
        if record.get("missed_tricks"):
            raise NotReviewable("the client missed tricks of this hand (it was not connected)")
        try:
            plays = [(int(seat), parse_card(str(card))) for seat, card in record.get("plays", [])]
            deal = record.get("deal")
            dealt = None
            if (
                isinstance(deal, list)
                and not record.get("exchanges")
                and not record.get("discarded")
            ):
                dealt = [sum(1 << parse_card(str(c)) for c in hand) for hand in deal]
            return cls.of_plays(
                ruleset,
                int(record.get("hand_number", 1)),
                int(record.get("dealer", 0)),
                plays,
                tuple(int(t) for t in record.get("tricks") or ()),
                dealt=dealt,
            )
        except (TypeError, ValueError) as exc:
            if isinstance(exc, NotReviewable):
                raise
            raise NotReviewable(f"the record's plays cannot be read: {exc}") from None

    @classmethod
    def of_plays(
        cls,
        ruleset: Ruleset,
        hand_number: int,
        dealer: Seat,
        plays: Sequence[tuple[Seat, Card]],
        tricks: Sequence[int] = (),
        *,
        dealt: Sequence[CardMask] | None = None,
    ) -> "PlayedHand":
        """From the cards played (every card of every hand, unless `dealt` gives the hands when
        play began, as a claim leaves cards unplayed)."""
        if ruleset.game != "spades":
            raise NotReviewable("Hearts hands are not analysed: the solver plays Spades")
        if not ruleset.partnerships:
            raise NotReviewable(
                f"a {ruleset.players}-handed hand is not analysed: the double-dummy solver plays"
                " four-handed (partnership) Spades only"
            )
        if not plays:
            raise NotReviewable("no card was played")
        played = [0, 0, 0, 0]
        for seat, card in plays:
            if not 0 <= seat < 4:
                raise NotReviewable(f"a play names seat {seat}")
            played[seat] |= 1 << card
        if all(mask.bit_count() == 13 for mask in played):
            start = played  # every card was played: the hands are what each seat played
        elif dealt is None or len(dealt) != 4:
            raise NotReviewable("the record does not show every seat's cards (a claim?)")
        else:
            start = list(dealt)
            if any(played[s] & ~start[s] for s in range(4)):
                raise NotReviewable("a seat played a card it was not dealt")
        h0, h1, h2, h3 = start
        return cls(ruleset, hand_number, dealer, (h0, h1, h2, h3), tuple(plays), tuple(tricks))

    def positions(self) -> tuple[list[Position], list[int]]:
        """The position before each card played and the one after the last (one more than the
        plays); and, for each card, 1 if it ends a trick side 0 wins, else 0. The engine plays the
        cards. Raises NotReviewable when a play is not legal where it was made."""
        game = SpadesGame.position(
            self.ruleset,
            hands=self.hands,
            dealer=self.dealer,
            bids=[Bid(seat=s, tricks=1) for s in range(4)],  # play does not depend on bids
            leader=self.plays[0][0],
            # An ending (tests, puzzles): the tricks before it are counted as done.
            tricks_won=[13 - self.hands[self.plays[0][0]].bit_count(), 0, 0, 0],
            hand_number=self.hand_number,
        )
        out = []
        won = []
        for seat, card in self.plays:
            if (
                game.tricks_done == 13
                or game.turn != seat
                or not game.legal_play_mask(seat) >> card & 1
            ):
                raise NotReviewable(f"seat {seat}'s {card_text(card)} is not a legal play there")
            out.append(Position.of_game(game))
            done = game.tricks_done
            game.play_fast(card)
            won.append(1 if game.tricks_done > done and game.last_trick_winner % 2 == 0 else 0)
        out.append(Position.of_game(game) if game.tricks_done < 13 else _END)
        return out, won


# The position after the last trick: worth nothing to either side.
_END = Position((0, 0, 0, 0), 0)


@dataclass(frozen=True, slots=True)
class CardReview:
    """One card played: `best`, the most tricks its side (`seat % 2`) could take from the position
    before it; `after`, what it can take after it (this trick included if the card ended it). Either
    is None when its position was not analysed (budget)."""

    index: int  # into the hand's plays
    trick: int  # 1 for the first trick
    seat: Seat
    card: Card
    best: int | None
    after: int | None

    @property
    def cost(self) -> int | None:
        """The tricks this card cost its side (0 for a best card), None if not analysed."""
        if self.best is None or self.after is None:
            return None
        return self.best - self.after


@dataclass(frozen=True, slots=True)
class HandReview:
    """What is known of a hand so far. `double_dummy` is each side's tricks at the start of play
    (None until the opening position is solved); `cards` one review per card played, in order."""

    hand: PlayedHand
    double_dummy: tuple[int, int] | None
    cards: tuple[CardReview, ...]
    complete: bool = True  # every position was tried (a cost unknown is then the budget's)

    @property
    def lost(self) -> tuple[int, int, int, int]:
        """Tricks each seat's cards cost its side (the analysed cards only)."""
        out = [0, 0, 0, 0]
        for card in self.cards:
            out[card.seat] += card.cost or 0
        return out[0], out[1], out[2], out[3]

    @property
    def not_analysed(self) -> int:
        """Cards whose cost is not known (a position past its budget, or not reached yet)."""
        return sum(1 for card in self.cards if card.cost is None)

    @property
    def taken(self) -> tuple[int, int] | None:
        """The tricks each side took, as recorded (None when the record does not say)."""
        if len(self.hand.tricks) != 4:
            return None
        t = self.hand.tricks
        return t[0] + t[2], t[1] + t[3]


class Reviewer:
    """Reviews one hand position by position: `steps()` solves one position a step (the last card's
    first) and yields, so a caller can show progress and stop; `review()` says what is known so
    far. Raises NotReviewable (from the constructor) for a play that is not legal."""

    def __init__(self, hand: PlayedHand, *, budget: int | None = DEFAULT_BUDGET) -> None:
        self.hand = hand
        self.budget = budget
        self._positions, self._won = hand.positions()
        # Side 0's tricks from each position (None: not solved, or past its budget).
        self._values: list[int | None] = [None] * len(self._positions)
        if self._positions[-1] is _END:
            self._values[-1] = 0
        self._solver = Solver()
        self._complete = False  # the first position has been tried

    @property
    def positions(self) -> int:
        """Positions to solve: one per card played (and the one a claim left)."""
        return sum(1 for value in self._values if value is None)

    def steps(self) -> Iterator[int]:
        """Solve the positions from the last to the first, yielding each one's index after it."""
        for index in range(len(self._positions) - 1, -1, -1):
            if self._values[index] is not None:
                continue
            position = self._positions[index]
            guess = None
            following = self._values[index + 1] if index + 1 < len(self._values) else None
            if following is not None:
                guess = following + self._won[index]  # the card played was the best
            try:
                solution = self._solver.solve(
                    position, per_card=False, guess=guess, budget=self.budget
                )
                self._values[index] = solution.tricks[0]
            except BudgetExceeded:
                pass  # its value stays None: the cards around it are "not analysed (budget)"
            self._complete = index == 0
            yield index

    def run(self) -> "HandReview":
        """Every step, then the review."""
        for _ in self.steps():
            pass
        return self.review()

    def review(self) -> HandReview:
        values = self._values
        cards = []
        for index, (seat, card) in enumerate(self.hand.plays):
            left = self._positions[index].tricks_left
            before, after = values[index], values[index + 1]
            after0 = None if after is None else after + self._won[index]
            side = seat % 2
            cards.append(
                CardReview(
                    index,
                    index // 4 + 1,
                    seat,
                    card,
                    None if before is None else (before if side == 0 else left - before),
                    None if after0 is None else (after0 if side == 0 else left - after0),
                )
            )
        first = values[0]
        return HandReview(
            self.hand,
            None if first is None else (first, self._positions[0].tricks_left - first),
            tuple(cards),
            complete=self._complete or all(v is not None for v in values),
        )
