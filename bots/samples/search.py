"""`search`: determinized Monte Carlo over the card play and the bid, reading the other seats.

For each card decision, until its time is up: draw a world (every hidden card given to a seat) and the
way each other seat plays in it, set the engine up in that position, and for every legal card (one per
group of equivalent cards) play the hand out; score it with the engine's own scoring. Every card is
tried in the same worlds with the same random draws, so the comparison is paired and the deal's noise
cancels. The card with the best mean is played, unless it beats the heuristic's own choice by less
than `confidence` standard errors of the paired difference (a few dozen worlds do not tell a small
edge from noise, and the heuristic's card is a sound default).

Worlds come from `reading` (plain four-handed Spades): each other seat is read as the heuristic, as
another sensible player or as a random one, from what it bid and played this hand (and, across hands,
from the whole of each finished hand). A Markov chain over the hidden cards visits the worlds that
explain the bids and plays (a nil bidder without high spades, a seat that played second-hand low
without a lower card of the suit) in proportion to how well they do, always keeping the suits a seat
has shown void in empty. In the playouts the seats read as random play at random, the others as the
heuristic (partner included), and my own seat attacks an opponent's standing nil (`nil_play`) and
goes for a set as long as `set_margin` says (the heuristic's 3 by default). Other
variants sample uniformly, weighed by the bids (`world.plausible_hands`).

Bids (plain four-handed Spades) are checked the same way: in drawn worlds the rest of the bidding and
the play are simulated (random seats bidding at random); the tricks my side took then score every bid
near the heuristic's, and the least bid, with the engine's own scoring, and a nil gets playouts of its
own. The learned bid (`bid_model`: trees fitted offline on the true-deal values of 160,000 deals)
joins them where it applies (the standard preset's rules): each candidate's gain over the
heuristic's bid is the mean of the two, the worlds' and the model's (`bid_model=even`, the default:
the model weighs as much as all the worlds sampled, however many the time allowed), or the model
counting as `bid_model=K` worlds (0 leaves it out: the search's bid alone, the default until
2026-12-02; K = 50 was the default until 2026-12-03); `bid_model=inf` bids by the model alone,
sampling no world (about a millisecond a bid). Passes and the other decisions are the heuristic's.
`search_bids=false` or `search_play=false` turns one half off (the heuristic decides there), to
measure what each half is worth.

The result of a playout is the hand's points for my side minus the best other side's (Spades), or the
others' mean points minus mine (Hearts), so bags, nils and the moon count as the rules count them.

Budget: `ms` milliseconds a decision (default 200) on average over the hand (`pace=hand`, the
default): the hand's time (`ms` for the bid and for each card) is one bank; the bid takes up to three
decisions' worth, and each card decision an even share of what is left among the searched decisions
still to come, so the time a forced card (one legal card, or one group) does not use goes to the
decisions that search. `pace=decision`: `ms` each decision. Never more than half the time the clock
leaves.
Or `worlds=N`: exactly N sampled worlds per card decision and `bid_factor` x N (4N by default) per
bid, whatever the time (still never more than half the clock left, when there is a clock). A fixed
number of worlds makes the bot's play a function of its seed alone, and its strength the same on a
loaded machine as on a quiet one (benchmarks). The bid gets more worlds because it is worth the most
points (a nil is +-100) and costs the least a world: one playout, and one more for a nil.
"""

import math
import random
import time
from typing import Any

from bots.samples import bid_model
from bots.samples.bid_features import bid_features
from bots.samples.heuristic import HeuristicBot
from bots.samples.reading import SLIP, Chain, Reading, TableBelief
from bots.samples.spades_policy import SET_MARGIN
from bots.samples.world import (
    apply_bid,
    build_bidding_world,
    build_world,
    finish_bidding_and_play,
    plain_bid,
    plausible_hands,
    play_out,
    sample_hands,
    score_bids,
)
from bots.sdk.bot import Decision
from bots.sdk.view import BotView
from engine.actions import Action, Bid
from engine.cards import DIAMONDS, SPADES, Card, CardMask, make_card
from engine.double_dummy import Position, Solver
from engine.ordering import CardOrder

#: Always finish at least this many worlds when there is time at all, so tiny budgets still search.
MIN_WORLDS = 2
#: With `pace=hand`: the bid may take this many decisions' time (it is worth the most points, and
#: four times the bid's time had bought +2.3 a hand, docs/bots.md).
PACED_BID_SHARE = 3.0
#: With `pace=hand`: the share of the card decisions still to come that are searched at all (about a
#: third have one legal card or one group of equivalent cards, and take no time).
PACED_SEARCHED_SHARE = 0.7
QUEEN_OF_SPADES = make_card(10, SPADES)
JACK_OF_DIAMONDS = make_card(9, DIAMONDS)


class SearchBot(HeuristicBot):
    """The heuristic, plus a determinized Monte Carlo search of its bids and card play."""

    name = "search"

    def __init__(
        self,
        seed: int | None = None,
        ms: float = 200.0,
        max_worlds: int = 10_000,
        candidates: int = 4,
        clock: str = "wall",
        *,
        worlds: int | None = None,
        bid_factor: int = 4,
        burn: int = 40,
        steps: int = 16,
        slip: float = SLIP,
        confidence: float = 1.0,
        nil_tactics: bool = True,
        search_bids: bool = True,
        search_play: bool = True,
        bid_model: float | str = "even",
        set_margin: int = SET_MARGIN,
        pace: str = "hand",
        dd_tricks: int = 0,
    ) -> None:
        super().__init__(seed)
        if clock not in ("wall", "cpu"):
            raise ValueError("clock is 'wall' (the real deadline) or 'cpu' (this process's time)")
        if pace not in ("decision", "hand"):
            raise ValueError(
                f"pace is 'decision' (ms each decision) or 'hand' (ms a decision on average over "
                f"the hand), not {pace!r}"
            )
        if worlds is not None and (isinstance(worlds, bool) or not isinstance(worlds, int)):
            raise ValueError(f"worlds is a whole number of worlds per decision, not {worlds!r}")
        if worlds is not None and worlds < 1:
            raise ValueError(f"worlds is at least 1, not {worlds}")
        for flag, value in (("search_bids", search_bids), ("search_play", search_play)):
            if not isinstance(value, bool):
                raise ValueError(f"{flag} is true or false, not {value!r}")
        if bid_model != "even" and (
            isinstance(bid_model, bool)
            or not isinstance(bid_model, int | float)
            or not bid_model >= 0
        ):
            raise ValueError(
                f"bid_model is 'even' (as weighty as the worlds sampled), a weight in worlds of 0 "
                f"or more, or inf (the model alone), not {bid_model!r}"
            )
        if (
            isinstance(set_margin, bool)
            or not isinstance(set_margin, int)
            or not 0 <= set_margin <= 13
        ):
            raise ValueError(
                f"set_margin is a whole number of tricks from 0 to 13, not {set_margin!r}"
            )
        if isinstance(bid_factor, bool) or not isinstance(bid_factor, int) or bid_factor < 1:
            raise ValueError(f"bid_factor is a whole number of at least 1, not {bid_factor!r}")
        if (
            isinstance(dd_tricks, bool)
            or not isinstance(dd_tricks, int)
            or not 0 <= dd_tricks <= 13
        ):
            raise ValueError(
                f"dd_tricks is a whole number of tricks from 0 to 13, not {dd_tricks!r}"
            )
        # Issue 42 item 4, an experiment (off by default: it measured weaker, docs/bots.md): with
        # at most this many cards in my hand, no nil bid, four-handed Spades, each world scores
        # every card by the double-dummy solver's tricks for my side instead of playouts.
        self.dd_tricks = dd_tricks
        # A fixed count of worlds replaces the time budget: `ms` is then unused.
        self.fixed_worlds = worlds
        # "cpu" is for benchmarks on a shared machine: the same thinking whatever else runs.
        self.now = time.perf_counter if clock == "wall" else time.process_time
        self.budget = ms / 1000.0
        self.max_worlds = max_worlds
        self.candidates = candidates  # samples per world weighed against the bids (1: uniform)
        self.last_worlds = 0  # worlds sampled for the last decision (for tests and benchmarks)
        # With `worlds=N` a bid samples `bid_factor` x N worlds. The bid is one decision a hand but
        # the one worth the most (a nil is +-100, a set 10x the bid), and 12 worlds judge a nil's
        # odds crudely; it is also cheap: one or two playouts a world where a card tries every
        # candidate. At N=12, 4x gained +3.84 [+1.63, +6.05] points a hand on the bid alone (1,000
        # paired deals, heuristic play everywhere) for about a third more CPU per hand.
        self.bid_factor = bid_factor
        # My playouts attack an opponent's nil (bots.samples.nil_play).
        self.nil_tactics = nil_tactics
        # My seat's set margin in the playouts (spades_policy.choose_play): 4 gained +3.1 a hand
        # head to head against the search with 3 (two runs of 1,000 duplicate pairs) but about
        # -1.3 against two heuristic bots (docs/bots.md), so the default stays the heuristic's 3.
        self.set_margin = set_margin
        # Either half of the search may be switched off (the heuristic's bid, or its card, is then
        # played): what each half is worth is measured this way (docs/bots.md).
        self.search_bids = search_bids
        self.search_play = search_play
        # The learned bid (bots.samples.bid_model) counts as this many sampled worlds when the bid's
        # values are averaged: 0 leaves it out, inf bids by it alone (no worlds are sampled), None
        # ("even") as many as were sampled. A weight about the worlds' count did best wherever it
        # was measured: 50 against 0 with the ~57 worlds of an unpaced 50 ms bid (+3.21 and +3.58
        # a hand head to head), 150 against 50 with the ~155 of a paced one (+3.25); docs/bots.md.
        self.bid_model: float | None = None if bid_model == "even" else float(bid_model)
        # How many standard errors a card must gain over the heuristic's own choice to be played
        # instead: with a few dozen worlds, a small mean difference is mostly the worlds' noise.
        self.confidence = confidence
        self.slip = slip  # how often the reading expects a heuristic-like seat to do otherwise
        self.burn = burn  # chain steps before the first world of a decision
        # Chain steps between two worlds. 16 beat 8 head to head by +3.66 [+0.98, +6.33] a hand
        # (1,000 duplicate pairs at 50 ms paced, docs/bots.md) though it gives fewer worlds: worlds
        # further apart are less alike, and 4 did worse than 8.
        self.steps = steps
        self.belief: TableBelief | None = None  # what the other seats play like, across hands
        self.last_seen: BotView | None = None  # my last play-phase view of the hand in play
        # `pace=hand`: the hand's time (`ms` for each of its decisions) is one bank the decisions
        # draw on, so the time a forced card does not use goes to the bid and the early tricks,
        # where more worlds change the most. `bank` is what is left of it for this hand.
        self.paced = pace == "hand"
        self.bank = 0.0
        self.bank_hand: tuple[int, int] = (-1, 0)  # (hand number, cards in my hand) last seen

    def decide(self, view: BotView) -> Action:
        """Before the first decision of a hand, learn from the last one (its cards are all known by
        now) how each other seat plays; then decide."""
        if self.belief is None:
            self.belief = TableBelief.fresh(view.players)
        last = self.last_seen
        if last is not None and last.hand_number != view.hand_number:
            self.belief.learn(last, self.random)
            self.last_seen = None
        if view.phase == "playing":
            self.last_seen = view
        return super().decide(view)

    def _open_bank(self, view: BotView) -> None:
        """A new hand opens a new bank: `ms` for the bid and for each card in the hand. A hand is new
        when its number changes, or when my hand holds more cards than at my last decision (a new
        game's first hand has the number the last game's had)."""
        cards = view.hand_mask.bit_count()
        number, before = self.bank_hand
        if view.hand_number != number or cards > before:
            self.bank = self.budget * (cards + 1)
        self.bank_hand = (view.hand_number, cards)

    def _draw(self, view: BotView, chain: Chain | None) -> tuple[list[int], int] | None:
        """A world (every seat's cards) and the seats that play it at random."""
        if chain is None:
            hands = plausible_hands(view, self.random, self.candidates)
            return None if hands is None else (hands, 0)
        return chain.next_world(self.burn, self.steps)

    def _chain(self, view: BotView) -> Chain | None:
        template = sample_hands(view, self.random)
        if template is None:
            return None
        belief = self.belief or TableBelief.fresh(view.players)
        reading = Reading.of(view, belief.priors(), template, self.slip)
        if reading is None:
            return None
        return Chain(view, reading, template, self.random)

    def play(self, view: BotView) -> Decision:
        legal = view.legal_cards
        if len(legal) == 1:
            return legal[0]
        preferred = super().play(view)
        if not self.search_play:
            self.last_worlds = 0
            return preferred
        groups = equivalent_groups(view, legal)
        if len(groups) == 1:
            self.last_worlds = 0
            return preferred
        # One playout per group of equivalent cards (its lowest card stands for it): fewer
        # candidates, more worlds in the same time.
        candidates = [group[0] for group in groups]
        budget = self._budget(view)
        started = self.now()
        deadline = started + budget
        limit = self._world_limit()
        values: dict[Card, list[float]] = {card: [] for card in candidates}
        self.goals: dict[Any, str] = {}  # the playouts' goal cache: valid for this decision only
        chain = None if view.is_hearts else self._chain(view)
        voids = view.voids
        self.shown_voids = tuple(sum(1 << s for s in voids.get(p, ())) for p in range(view.players))
        worlds = 0
        solver = Solver() if self._double_dummy(view) else None
        while worlds < limit and (worlds < MIN_WORLDS or self.now() < deadline):
            drawn = self._draw(view, chain)
            if drawn is None:
                break
            hands, randoms = drawn
            base = build_world(view, hands)
            if base is None:
                break
            if solver is not None:
                # Every card's tricks for my side in this world, from one solve.
                solved = solver.solve(Position.of_game(base), per_card=True).card_tricks
                for card in candidates:
                    values[card].append(float(solved[card]))
                worlds += 1
                continue
            # The same random choices for every candidate card: the comparison stays paired.
            seed = self.random.getrandbits(32)
            for card in candidates:
                values[card].append(self._value(view, base.copy(), card, randoms, seed))
            worlds += 1
            if budget <= 0 and worlds >= MIN_WORLDS:
                break
        self._spend(started)
        self.last_worlds = worlds
        if worlds == 0:
            return preferred
        totals = {card: sum(v) for card, v in values.items()}
        best = max(totals.values())
        mine = next(group[0] for group in groups if preferred in group)
        # Ties (common late in a hand) go to the heuristic's own choice, and so does a card that
        # is better by less than `confidence` standard errors of the paired difference.
        if totals[mine] == best:
            return preferred
        chosen = max(candidates, key=lambda c: (totals[c], -c))
        if self.confidence > 0 and worlds > 1:
            diffs = [a - b for a, b in zip(values[chosen], values[mine], strict=True)]
            mean = sum(diffs) / worlds
            spread = sum((d - mean) ** 2 for d in diffs) / (worlds - 1)
            if mean <= self.confidence * math.sqrt(spread / worlds):
                return preferred
        return chosen

    def bid(self, view: BotView) -> Decision:
        """The heuristic's bid, checked by simulation: in sampled worlds the hand is bid out and
        played by the heuristic; the tricks my side takes then score every nearby bid (with the
        engine's scoring), and a nil is played out on its own. The best mean wins."""
        base = super().bid(view)
        if not isinstance(base, Bid) or not plain_bid(base) or not self.search_bids:
            return base
        plain = {b.tricks: b for b in view.legal_bids if plain_bid(b)}
        # Nearby numbers, and the least one: with a partner whose bid already sinks the contract
        # (one read as random, say), each trick bid only adds to the set.
        near = {
            *range(base.tricks - 2, base.tricks + 3),
            min((n for n in plain if n > 0), default=1),
        }
        numbers = sorted(n for n in near if n > 0 and n in plain)
        tries: list[Bid] = []
        if base.tricks > 0:
            tries.append(base)
        elif numbers or any(n > 0 for n in plain):
            fallback = [n for n in plain if n > 0]
            numbers = numbers or [min(fallback)]
            tries.append(plain[numbers[0]])
        nil = plain.get(0)
        fixed_weight = self.bid_model  # None: as many worlds as the bid samples
        use_model = fixed_weight is None or fixed_weight > 0
        learned = self._learned_gains(view, base, plain) if use_model else {}
        if learned and fixed_weight is not None and math.isinf(fixed_weight):
            self.last_worlds = 0
            return _best_bid(plain, base, learned)
        if nil is not None and (base.tricks <= 2 or learned.get(0, 0.0) > 0):
            tries.append(nil)
        totals: dict[int, float] = dict.fromkeys([*numbers, *([0] if nil in tries else [])], 0.0)
        if len(totals) <= 1:
            return base
        budget = self._budget(view)
        started = self.now()
        deadline = started + budget
        limit = self._world_limit(self.bid_factor)
        worlds = 0
        side = view.my_side
        chain = self._chain(view)
        candidates = {n: plain[n] for n in numbers}
        while worlds < limit and (worlds < MIN_WORLDS or self.now() < deadline):
            drawn = self._draw(view, chain)
            world = None if drawn is None else build_bidding_world(view, drawn[0])
            if world is None or drawn is None:
                return base
            randoms = drawn[1]
            seed = self.random.getrandbits(32)
            for trial in tries:
                game = world.copy()
                apply_bid(game, trial)
                finish_bidding_and_play(
                    game,
                    randoms,
                    random.Random(seed) if randoms else None,
                    view.seat if self.nil_tactics else None,
                    self.set_margin,
                )
                deltas = [a - b for a, b in zip(game.scores, view.scores, strict=True)]
                theirs = max(d for s, d in enumerate(deltas) if s != side)
                if trial.tricks == 0:
                    totals[0] += deltas[side] - theirs
                    continue
                scored = score_bids(
                    game,
                    view.seat,
                    view.sides[side],
                    candidates,
                    score=view.scores[side],
                    bags=view.bags[side],
                )
                for number, delta in scored.items():
                    totals[number] += delta - theirs
            worlds += 1
        self._spend(started)
        self.last_worlds = worlds
        if learned and base.tricks in totals:
            # Each bid's gain over the base bid: the worlds' mean and the model's, weighed as
            # `bid_model` worlds (or as many as were sampled) against the worlds sampled (the
            # model's is the steadier guess where the worlds are few; the worlds see what the model
            # cannot: the score, and the other seats as this table's reading has them).
            weight = worlds if fixed_weight is None else fixed_weight
            searched = {n: (t - totals[base.tricks]) / worlds for n, t in totals.items()}
            blended = {
                n: (weight * learned.get(n, g) + worlds * g) / (weight + worlds)
                for n, g in searched.items()
            }
            return _best_bid(plain, base, blended)
        best = max(totals.values())
        if totals.get(base.tricks) == best:
            return base
        return plain[max(totals, key=lambda n: (totals[n], n))]

    def _learned_gains(self, view: BotView, base: Bid, plain: dict[int, Bid]) -> dict[int, float]:
        """The learned bid's gain over the base bid for each legal candidate, by bid number (0: nil);
        empty where the model does not apply (a nil base bid, or not a view of the bidding)."""
        if base.tricks == 0 or not view.hand_mask or not bid_model.applies(view.ruleset):
            return {}
        seat = view.seat
        features = bid_features(
            view.hand_mask,
            view.order,
            position=(seat - view.dealer - 1) % 4,
            partner_bid=view.bids[(seat + 2) % 4],
            opponent_bids=(view.bids[(seat + 1) % 4], view.bids[(seat + 3) % 4]),
            base=base.tricks,
            bags=(view.bags[view.my_side], view.bags[1 - view.my_side]) if view.bags else (0, 0),
        )
        gains: dict[int, float] = {base.tricks: 0.0}
        for name, gain in bid_model.shipped().gains(features).items():
            offset = bid_model.OFFSETS[name]
            number = 0 if offset is None else base.tricks + offset
            if number in plain and (offset is None or number > 0):
                gains[number] = gain
        return gains

    def _double_dummy(self, view: BotView) -> bool:
        """Whether this card decision scores its worlds double-dummy (`dd_tricks`)."""
        return (
            0 < view.hand_mask.bit_count() <= self.dd_tricks
            and not view.is_hearts
            and view.ruleset.partnerships
            # Plain bids only: a nil, or a variant bid (no spade trumps, Moe...), wants other
            # tricks than the most for my side.
            and all(
                bid is not None and bid.tricks > 0 and bid == Bid(seat=bid.seat, tricks=bid.tricks)
                for bid in view.bids
            )
        )

    def _budget(self, view: BotView) -> float:
        """Seconds this decision may take: `ms` (with `pace=hand`, its share of what the hand has
        left), or unbounded with `worlds`; at most half the clock."""
        budget = self.budget if self.fixed_worlds is None else math.inf
        if self.paced and self.fixed_worlds is None:
            self._open_bank(view)
            bank = max(0.0, self.bank)
            if view.phase == "bidding":
                budget = min(bank, self.budget * PACED_BID_SHARE)
            else:
                # Share alike with the card decisions still to come that will be searched (the
                # last card is forced, and about a third of the others too).
                later = PACED_SEARCHED_SHARE * (view.hand_mask.bit_count() - 1)
                budget = bank / max(1.0, later)
        if view.deadline is not None:
            budget = min(budget, max(0.0, view.deadline * 0.5 - 0.05))
        return budget

    def _spend(self, started: float) -> None:
        """Take a search's time, from `started` on, out of the hand's bank (`pace=hand`)."""
        if self.paced and self.fixed_worlds is None:
            self.bank -= self.now() - started

    def _world_limit(self, factor: int = 1) -> int:
        """The most worlds a decision samples: `worlds` (times `factor`, for a bid), or `max_worlds`
        when the budget is time (a timed bid keeps the time of any other decision)."""
        if self.fixed_worlds is None:
            return self.max_worlds
        return min(self.fixed_worlds * factor, self.max_worlds)

    def _value(self, view: BotView, game: object, card: Card, randoms: int, seed: int) -> float:
        rng = random.Random(seed) if randoms else None
        me = view.seat if self.nil_tactics else None
        play_out(
            game,
            card,
            self.goals,
            randoms=randoms,
            rng=rng,
            voids=self.shown_voids,
            me=me,
            set_margin=self.set_margin,
        )
        scores: tuple[int, ...] = game.scores  # type: ignore[attr-defined]
        deltas = [after - before for after, before in zip(scores, view.scores, strict=True)]
        mine = view.my_side
        if view.is_hearts:
            others = [d for side, d in enumerate(deltas) if side != mine]
            return float(sum(others) / len(others) - deltas[mine])
        return float(deltas[mine] - max(d for side, d in enumerate(deltas) if side != mine))


def _best_bid(plain: dict[int, Bid], base: Bid, gains: dict[int, float]) -> Bid:
    """The bid of the highest gain over the base bid (the base bid's is 0, and it wins a tie)."""
    number = max(gains, key=lambda n: (gains[n], n == base.tricks))
    return base if gains[number] <= gains.get(base.tricks, 0.0) else plain[number]


def equivalent_groups(view: BotView, cards: list[Card]) -> list[list[Card]]:
    """The cards split into groups that play alike: same suit, and no card still out ranks between
    them (with the KQ of spades and the AS played, the K and Q are one choice). The lowest first.

    Hearts' point cards that stand out (the queen of spades, the jack of diamonds) stay alone.
    """
    order = view.order
    out_mask = view.unseen_mask
    special = (1 << QUEEN_OF_SPADES) | (1 << JACK_OF_DIAMONDS) if view.is_hearts else 0
    ordered = sorted(cards, key=lambda c: (order.suit[c], order.power[c]))
    groups: list[list[Card]] = []
    for card in ordered:
        if groups and not special >> card & 1 and not special >> groups[-1][-1] & 1:
            last = groups[-1][-1]
            if order.suit[last] == order.suit[card] and not _between(order, out_mask, last, card):
                groups[-1].append(card)
                continue
        groups.append([card])
    return groups


def _between(order: CardOrder, mask: CardMask, low: Card, high: Card) -> bool:
    """Whether `mask` holds a card of the same suit ranking strictly between `low` and `high`."""
    rest = mask & order.suit_masks[order.suit[low]]
    while rest:
        bit = rest & -rest
        card = bit.bit_length() - 1
        rest ^= bit
        if order.power[low] < order.power[card] < order.power[high]:
            return True
    return False
