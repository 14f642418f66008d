"""Scoring a finished Spades hand, per side (a team, or one seat in two- and three-handed play).

Pure functions of the bids, the tricks and the running scores; docs/rules.md gives the rules with
worked examples. The order of work for a side:

1. Each special bid is scored on its own: nil (plain, blind, two-handed double), blind bids, Moe.
   A nil bidder's tricks then help the partner's contract (`nil_tricks_help_partner`), count only as
   bags (000, the default), or are ignored (`nil_scored_independently`, 002).
2. The ordinary bids add up to the contract (10 for 200 replaces it with 10): made scores 10 a trick
   (`no_spade_trumps_value`, 40, for a "no spade trumps" bid) plus `overtrick_points` per overtrick;
   missed loses as much.
3. Bemo / Big Bemo bonuses, then bags: counted, by the score's last digit (001), off (not tracked,
   overtricks still scored), or no_bags (003: overtricks neither scored nor tracked).

Then, once every side is scored, `game_result` says whether the game ends and who won.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from engine.actions import Bid
from engine.game import Outcome
from engine.ruleset import Ruleset

TWO_HANDED_DOUBLE_NIL_MADE = 200
TWO_HANDED_DOUBLE_NIL_FAILED = 100
MOE = {"little": (6, 150), "big": (8, 300)}
BEMO = {"bemo": (6, 60), "big_bemo": (9, 90)}
TEN_FOR_200 = 200


@dataclass(slots=True)
class SideResult:
    """One side's result: points scored this hand, new score, bags after, remarks, Boston made."""

    delta: int
    after: int
    bags_after: int
    notes: tuple[str, ...]
    boston: bool


def longest_run(winners: Sequence[int], seats: Sequence[int]) -> int:
    """The longest stretch of consecutive tricks won by these seats."""
    best = run = 0
    for winner in winners:
        run = run + 1 if winner in seats else 0
        best = max(best, run)
    return best


def score_side(
    ruleset: Ruleset,
    seats: Sequence[int],
    bids: Sequence[Bid],
    tricks: Sequence[int],
    winners: Sequence[int],
    *,
    score: int,
    bags: int,
    spade_winners: frozenset[int] = frozenset(),
    forfeit: bool = False,
    explain: bool = False,
) -> SideResult:
    """Score one side. `spade_winners`: seats that won a trick with a spade (for no-trump bids);
    `forfeit`: a failed TRAM claim with the "forfeit_bid" penalty sets this side's contract;
    `explain`: also write the remarks for people (`notes`), which the hot path does without."""
    r = ruleset
    delta = 0
    notes: list[str] = []  # written only when `explain`: the f-strings cost more than the scoring
    contract = pool = loose_bags = doubled = 0
    ten = bag_free = nst_failed = False
    for seat in seats:
        bid, took = bids[seat], tricks[seat]
        if bid.moe:
            need, value = MOE[bid.moe]
            made = longest_run(winners, seats) >= need
            delta += value if made else -value
            bag_free = bag_free or made
            if explain:
                notes.append(f"seat {seat} {bid.describe()} {'made' if made else 'failed'}")
            pool += took
        elif not bid.tricks:  # nil of any kind (Bid.is_nil, Moe aside), without the call
            if bid.double_nil:
                gain, loss = TWO_HANDED_DOUBLE_NIL_MADE, TWO_HANDED_DOUBLE_NIL_FAILED
            else:
                gain = loss = r.blind_nil_value if bid.blind else r.nil_value
            delta += gain if took == 0 else -loss
            if explain:
                notes.append(f"seat {seat} {bid.describe()} {'made' if took == 0 else 'failed'}")
            if r.nil_scored_independently:
                pass
            elif r.nil_tricks_help_partner:
                pool += took
            else:
                loose_bags += took
        elif bid.blind:
            # 003: exact earns the bonus, short loses it; a surplus helps the partner (or is bags).
            base = 10 * bid.tricks
            if took == bid.tricks:
                delta += base + r.blind_bid_bonus
            elif took > bid.tricks:
                delta += base
                pool += took - bid.tricks
            else:
                delta -= base + r.blind_bid_bonus
            if explain:
                notes.append(f"seat {seat} {bid.describe()} took {took}")
        elif bid.ten_for_200:
            ten = True
            pool += took
        else:
            contract += bid.tricks
            pool += took
            if bid.no_trumps:
                doubled += bid.tricks
                nst_failed = nst_failed or seat in spade_winners
    if ten:
        contract = 10
    over = 0
    if contract:
        made = pool >= contract and not forfeit and not nst_failed
        # A "no trumps" bid's tricks are worth no_spade_trumps_value each instead of 10 (003).
        value = TEN_FOR_200 if ten else 10 * contract + (r.no_spade_trumps_value - 10) * doubled
        if made:
            delta += value
            over = pool - contract
        else:
            delta -= value
        if explain:
            notes.append(f"contract {contract} {'made' if made else 'set'} with {pool}")
    else:
        over = pool
    for seat in seats:
        bemo = bids[seat].bemo
        if bemo:
            need, value = BEMO[bemo]
            made = contract > 0 and pool >= contract and all(w in seats for w in winners[:need])
            delta += value if made else -value
            if explain:
                notes.append(f"seat {seat} {bemo.replace('_', ' ')} {'made' if made else 'failed'}")
    over = 0 if bag_free else over + loose_bags
    if r.bags == "no_bags":
        # 003 "No Bags": "a partnership would not receive any points for overtricks".
        return SideResult(
            delta, score + delta, 0, tuple(notes), _boston(r, seats, tricks, contract)
        )
    delta += r.overtrick_points * over
    if r.bags == "counted":
        bags += over
        while bags >= r.bag_limit:
            bags -= r.bag_limit
            delta -= r.bag_penalty
            if explain:
                notes.append(f"{r.bag_limit} bags: -{r.bag_penalty}")
    elif r.bags == "last_digit":
        crossings = (score % 10 + over) // 10
        delta -= r.bag_penalty * crossings
        bags = (score + delta) % 10
        if crossings and explain:
            notes.append(f"last digit passed 9: -{r.bag_penalty * crossings}")
    else:
        bags = 0
    return SideResult(delta, score + delta, bags, tuple(notes), _boston(r, seats, tricks, contract))


def _boston(r: Ruleset, seats: Sequence[int], tricks: Sequence[int], contract: int) -> bool:
    """A Boston made: the side bid every trick and took them all."""
    return r.boston and contract >= r.tricks_per_hand and sum(tricks[s] for s in seats) == contract


def game_result(
    r: Ruleset,
    scores: Sequence[int],
    sides: tuple[tuple[int, ...], ...],
    hand_number: int,
    bostons: Sequence[int],
) -> Outcome | None:
    """The game's result once hand `hand_number` is scored (`scores`: per side, after it; `bostons`:
    the sides that made a Boston this hand), or None while the game goes on. A Boston ends it at once;
    a game of `max_hands` hands ends after its last (level scores then are a draw); otherwise the one
    side in the lead wins at the losing floor or the target, and a tie plays on."""
    if bostons:
        return Outcome(sides[bostons[0]], tuple(scores), sides, "boston")
    best = max(scores)
    alone = scores.count(best) == 1  # one side leads
    if r.max_hands and hand_number >= r.max_hands:
        # The game is that many hands long (Crazy Spades: 15); level scores then are a draw.
        if not alone:
            return Outcome((), tuple(scores), sides, "draw")
        return Outcome(sides[scores.index(best)], tuple(scores), sides, "hands")
    if not alone:
        return None  # a true tie past the target (or at the floor) plays on
    if r.losing_floor_enabled and min(scores) <= r.losing_floor:
        return Outcome(sides[scores.index(best)], tuple(scores), sides, "floor")
    if r.target_score and best >= r.target_score:
        return Outcome(sides[scores.index(best)], tuple(scores), sides, "target")
    return None
