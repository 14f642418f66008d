"""Reading the table: what the other seats' bids and plays say about their cards and how they play.

Each other seat is modelled as one of three players:

- *heuristic*: bids and plays what `bots.samples.spades_policy` would with its cards, but for a slip now
  and then (`SLIP`): a slipped bid lies near the hand's trick estimate, a slipped card is any legal one;
- *player*: someone else who plays sensibly (a person, another bot): the heuristic's card `AGREEMENT`
  of the time, any legal card otherwise, and a bid near its hand's trick estimate;
- *random*: any legal bid or card, uniformly.

For a guess at the hidden cards (a world), the likelihood of everything a seat did this hand follows
from its whole hand as dealt (its cards now plus the ones it played): replay each of its bids and cards
in the public position it was made in, and ask what each model would have done there. A seat that bid
nil rarely holds high spades, a seat that bid five holds strength, a seat that played second-hand low
holds nothing lower in the suit: worlds that explain the play well weigh more. The same numbers say
which model fits a seat (a partner that plays at random is read as random, and the search plays its
playouts that way), and a whole hand, its cards all known at the end, moves the belief about a seat
for the next hands (`TableBelief`).

Everything is read from the public record of the hand (the bids, the tricks) and the seat's own view:
nothing here looks at a hidden card. Plain four-handed Spades only (the standard deck, free bidding, no
face-up cards or exchanges); other variants fall back to the bids-only weighting of `world`.
"""

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

from bots.samples import spades_policy
from bots.samples.situation import Situation
from bots.samples.world import plain_spades, sample_hands
from bots.sdk.view import BotView, Play
from engine.actions import Bid, LookAtHand
from engine.cards import Card, CardMask
from engine.game import Phase
from engine.ordering import CardOrder
from engine.spades import SpadesGame

#: The models, in the order of every per-model tuple here.
HEURISTIC, PLAYER, RANDOM = 0, 1, 2
MODELS = ("heuristic", "player", "random")
#: How often a heuristic seat does something the heuristic would not.
SLIP = 0.1
#: How often another sensible player plays the card the heuristic would.
AGREEMENT = 0.7
#: What a seat is, before anything is known about it.
PRIOR = (0.45, 0.45, 0.10)
#: The belief in a seat's model never goes past these log-odds (e^12: about 160,000 to one).
LOG_ODDS_LIMIT = 12.0
#: Bid slips spread around the hand's trick estimate with these standard deviations (tricks).
NIL_SPREAD = 1.0
BID_SPREAD = 1.5

Evidence = tuple[float, float, float]  # log-likelihoods under each model

_NEG_INF = -math.inf


@dataclass(frozen=True, slots=True)
class CardChoice:
    """One card another seat played this hand, with the public position it played it in."""

    seat: int
    card: Card
    before: CardMask  # the cards the seat had played earlier this hand
    trick: tuple[Play, ...]  # the trick so far, before this card
    tricks: tuple[int, ...]  # tricks won per seat before this card
    played: CardMask  # every card played before this one
    broken: bool  # spades broken before this card
    voids: tuple[int, ...]  # per seat, a bit per suit shown void before this card
    forced: bool  # the rules named the card (a forced first lead)


@dataclass(frozen=True, slots=True)
class BidChoice:
    """One bid another seat made this hand, with what it could bid and what it knew."""

    seat: int
    bid: Bid
    legal: tuple[Bid, ...]
    partner_bid: Bid | None
    bags: int


def covered(view: BotView) -> bool:
    """Whether the reading models this variant: plain four-handed Spades (`world.plain_spades`;
    two-handed double nil cannot be on with four players)."""
    return plain_spades(view)


def played_by(view: BotView) -> list[CardMask] | None:
    """The cards each seat played this hand, from the tricks the view remembers (None when the
    memory misses some: after a reconnect)."""
    plays = complete_plays(view)
    if plays is None:
        return None
    out = [0] * view.players
    for seat, card in plays:
        out[seat] |= 1 << card
    return out


def complete_plays(view: BotView) -> list[Play] | None:
    """Every card played this hand, in order, when the view's memory holds all of them."""
    done = sum(view.tricks_won) if view.tricks_won else 0
    history = view.history[:done]
    if len(history) < done or any(len(t) != view.players for t in history):
        return None
    plays = [play for trick in history for play in trick]
    plays.extend(view.trick)
    mask = 0
    for _, card in plays:
        mask |= 1 << card
    if mask != view.played_mask:
        return None
    return plays


class Reading:
    """The evidence of one hand so far as one seat sees it, and the likelihood of a world under it.

    Built by `Reading.of(view, priors, template)`; `mixed(seat, hand)` scores a guess at one seat's
    whole hand. Per-seat results are cached by that hand, so a world that shares a seat's cards with
    an earlier one costs nothing for that seat (the chain's steps change two seats at a time).
    """

    def __init__(
        self,
        view: BotView,
        priors: Sequence[Sequence[float]],
        bids: list[BidChoice],
        cards: list[CardChoice],
        played: list[CardMask],
        *,
        slip: float = SLIP,
    ) -> None:
        self.view = view
        self.slip = slip
        self.seat = view.seat
        self.order: CardOrder = view.order
        self.ruleset = view.ruleset
        self.others = [s for s in range(view.players) if s != view.seat]
        self.bids = {choice.seat: choice for choice in bids}
        self.cards: dict[int, list[CardChoice]] = {s: [] for s in self.others}
        for choice in cards:
            self.cards[choice.seat].append(choice)
        self.played = played
        self.final_bids = view.bids
        # Per seat: the log of each model's prior probability this hand.
        self.log_prior = [tuple(math.log(max(p, 1e-12)) for p in seat) for seat in priors]
        self.goals: dict[tuple[int, tuple[int, ...], int], str] = {}
        self.cache: dict[tuple[int, CardMask], Evidence] = {}
        self.between = _between_masks(self.order)
        # Per seat and card played: the cards of the hand the heuristic's choice there depends on.
        # A card that followed suit was chosen among the cards of the suit led, and only those
        # (whether a partner's winner holds is asked of that suit; a partner's ruff I cannot beat
        # either way, and then I play my lowest whatever else I hold); a lead, a discard or a ruff
        # depends on the whole hand (0 here). A chain step swaps one card in each of two hands, so
        # a followed card's evidence is mostly found again in `play_cache`.
        order = self.order
        self.relevant = {
            seat: [
                order.suit_masks[order.suit[c.trick[0][1]]]
                if c.trick and order.suit[c.card] == order.suit[c.trick[0][1]]
                else 0
                for c in plays
            ]
            for seat, plays in self.cards.items()
        }
        self.play_cache: dict[tuple[int, int, CardMask], Evidence] = {}
        # Per bid read: the heuristic's bidding in that position, for any hand.
        self.bid_plans = {seat: self._bid_plan(choice) for seat, choice in self.bids.items()}

    @classmethod
    def of(
        cls,
        view: BotView,
        priors: Sequence[Sequence[float]],
        template: list[CardMask],
        slip: float = SLIP,
    ) -> "Reading | None":
        """The reading of `view`, or None for a variant it does not model. `template` is any
        world consistent with the view (current hands): the public record is replayed on it once
        to learn what each bid could have been and whether spades were broken at each card."""
        if not covered(view):
            return None
        played = played_by(view)
        plays = complete_plays(view)
        if played is None or plays is None:
            played = [0] * view.players
            plays = []
        start = [hand | done for hand, done in zip(template, played, strict=True)]
        game = SpadesGame(view.ruleset, dealer=view.dealer)
        try:
            game.deal_fixed(start, hand_number=view.hand_number, scores=view.scores, bags=view.bags)
        except Exception:  # an inconsistent view: read nothing rather than fail the decision
            return cls(view, priors, [], [], played, slip=slip)
        bids: list[BidChoice] = []
        side_bags = view.bags
        for _ in range(8):
            if game.phase is not Phase.BIDDING:
                break
            seat = game.to_act()[0]
            made = view.bids[seat]
            if made is None:
                break
            actions = game.legal_actions(seat)
            if not made.blind and LookAtHand(seat) in actions:
                game.apply(LookAtHand(seat))
                actions = game.legal_actions(seat)
            legal = tuple(a for a in actions if isinstance(a, Bid) and not a.blind)
            if seat != view.seat and not made.blind and made in legal:
                partner = (seat + 2) % 4
                bids.append(
                    BidChoice(
                        seat=seat,
                        bid=made,
                        legal=legal,
                        partner_bid=game.bids[partner],
                        bags=side_bags[game.side_of(seat)] if side_bags else 0,
                    )
                )
            try:
                game.apply(made)
            except Exception:
                return cls(view, priors, bids, [], played, slip=slip)
        cards: list[CardChoice] = []
        if plays and game.phase is Phase.PLAYING:
            cards = _card_choices(view, game, plays)
        return cls(view, priors, bids, cards, played, slip=slip)

    def seat_evidence(self, seat: int, hand: CardMask) -> Evidence:
        """The log-likelihood under each model of all `seat` did this hand, had it been dealt
        `hand`. All -inf for a hand the rules say could not have played that way."""
        key = (seat, hand)
        found = self.cache.get(key)
        if found is not None:
            return found
        h = p = r = 0.0
        choice = self.bids.get(seat)
        if choice is not None:
            dh, dp, dr = self.bid_evidence(choice, hand)
            h += dh
            p += dp
            r += dr
        relevant = self.relevant[seat]
        play_cache = self.play_cache
        for index, play in enumerate(self.cards[seat]):
            held = hand & ~play.before
            mask = relevant[index]
            if mask:
                play_key = (seat, index, held & mask)
                evidence = play_cache.get(play_key)
                if evidence is None:
                    evidence = play_cache[play_key] = self.card_evidence(play, held)
                dh, dp, dr = evidence
            else:
                dh, dp, dr = self.card_evidence(play, held)
            if dr == _NEG_INF:
                h = p = r = _NEG_INF
                break
            h += dh
            p += dp
            r += dr
        found = self.cache[key] = (h, p, r)
        return found

    def mixed(self, seat: int, hand: CardMask) -> tuple[float, float]:
        """log P(all `seat` did | it was dealt `hand`), over the models as the seat's prior weighs
        them, and P(it plays at random | that). (-inf, 0) for an impossible hand."""
        evidence = self.seat_evidence(seat, hand)
        if evidence[RANDOM] == _NEG_INF:
            return _NEG_INF, 0.0
        prior = self.log_prior[seat]
        terms = [prior[m] + evidence[m] for m in range(3)]
        top = max(terms)
        total = top + math.log(sum(math.exp(t - top) for t in terms))
        return total, math.exp(terms[RANDOM] - total)

    def _bid_plan(self, choice: BidChoice) -> spades_policy.BidPlan:
        """The heuristic's bidding in the position `choice` was made in."""
        return spades_policy.BidPlan(
            list(choice.legal),
            players=4,
            partner_bid=choice.partner_bid,
            bags=choice.bags,
            bag_limit=self.ruleset.bag_limit,
            bags_counted=self.ruleset.bags != "off",
        )

    def bid_evidence(self, choice: BidChoice, hand: CardMask) -> Evidence:
        order = self.order
        estimate = spades_policy.estimate_tricks(hand, order, 4)
        plan = self.bid_plans.get(choice.seat)
        if plan is None or self.bids.get(choice.seat) is not choice:  # a choice made elsewhere
            plan = self._bid_plan(choice)
        chosen = plan.choose(hand, order, estimate)
        spread = NIL_SPREAD if choice.bid.tricks == 0 else BID_SPREAD
        near = math.exp(-((estimate - choice.bid.tricks) ** 2) / (2 * spread * spread)) / (
            math.sqrt(2 * math.pi) * spread
        )
        slip = self.slip
        likely = (1.0 - slip) * (chosen == choice.bid) + slip * near
        return (
            math.log(max(likely, 1e-300)),
            math.log(max(near, 1e-300)),
            -math.log(len(choice.legal)),
        )

    def card_evidence(self, play: CardChoice, hand: CardMask) -> Evidence:
        legal = legal_for(self.ruleset.play_rule, self.order, hand, play.trick, play.broken)
        bit = 1 << play.card
        if not legal & bit:
            return _NEG_INF, _NEG_INF, _NEG_INF
        if play.forced or legal == bit:
            return 0.0, 0.0, 0.0
        n = legal.bit_count()
        situation = Situation(
            ruleset=self.ruleset,
            order=self.order,
            seat=play.seat,
            players=4,
            hand=hand,
            legal=legal,
            trick=play.trick,
            bids=self.final_bids,
            tricks=play.tricks,
            played=play.played,
            bags=0,
            voids=play.voids,
            goals=self.goals,
        )
        pick = spades_policy.choose_play(situation)
        same = pick == play.card or not self.between[pick][play.card] & ~(hand | play.played)
        slip = self.slip
        uniform = -math.log(n)
        if same and self.order.suit[pick] == self.order.suit[play.card]:
            return (
                math.log((1.0 - slip) + slip / n),
                math.log(AGREEMENT + (1.0 - AGREEMENT) / n),
                uniform,
            )
        return math.log(slip / n), math.log((1.0 - AGREEMENT) / n), uniform


def _card_choices(view: BotView, game: SpadesGame, plays: list[Play]) -> list[CardChoice]:
    """Replay the hand's plays on a template game, noting each other seat's public position."""
    order = view.order
    out: list[CardChoice] = []
    before = [0] * view.players
    voids = [0] * view.players
    trick: list[Play] = []
    for seat, card in plays:
        if game.phase is not Phase.PLAYING or game.turn != seat:
            return out
        if seat != view.seat:
            out.append(
                CardChoice(
                    seat=seat,
                    card=card,
                    before=before[seat],
                    trick=tuple(trick),
                    tricks=game.tricks,
                    played=game.played,
                    broken=game.spades_broken,
                    voids=tuple(voids),
                    forced=not trick and game.forced_lead is not None,
                )
            )
        if trick and order.suit[card] != order.suit[trick[0][1]]:
            voids[seat] |= 1 << order.suit[trick[0][1]]
        before[seat] |= 1 << card
        if not game.hand(seat) >> card & 1:
            return out
        game.play_fast(card)
        trick.append((seat, card))
        if len(trick) == view.players:
            trick = []
    return out


def legal_for(
    rule: str, order: CardOrder, hand: CardMask, trick: tuple[Play, ...], broken: bool
) -> CardMask:
    """The cards `hand` may play in this position (the engine's `legal_play_mask`, for a hand that
    is a guess: tests/bots/test_reading.py checks the two agree)."""
    trumps = order.trumps
    if trick:
        follow = hand & order.suit_masks[order.suit[trick[0][1]]]
        if follow:
            return follow
        if rule == "normal":
            return hand
        if rule == "pressure":
            return hand & trumps or hand
        return hand & ~trumps or hand
    if not broken or rule == "nothing_but_spades":
        other = hand & ~trumps
        if other:
            return other
    return hand


_BETWEEN: dict[str, list[list[CardMask]]] = {}


def _between_masks(order: CardOrder) -> list[list[CardMask]]:
    """[a][b]: the cards ranking strictly between a and b (the whole deck if their suits differ)."""
    found = _BETWEEN.get(order.name)
    if found is not None:
        return found
    size = 54
    table = [[order.deck] * size for _ in range(size)]
    cards = [c for c in range(size) if order.deck >> c & 1]
    for a in cards:
        for b in cards:
            if order.suit[a] != order.suit[b]:
                continue
            low, high = sorted((order.power[a], order.power[b]))
            mask = 0
            for c in cards:
                if order.suit[c] == order.suit[a] and low < order.power[c] < high:
                    mask |= 1 << c
            table[a][b] = mask
    _BETWEEN[order.name] = table
    return table


@dataclass(slots=True)
class TableBelief:
    """What a bot believes about the other seats across the hands of a game: per seat, the log of
    each model's probability. Moved at each new hand by the whole previous hand (every card is
    known by then), and read by each hand's `Reading` as its prior."""

    log_weights: list[list[float]]

    @classmethod
    def fresh(cls, players: int) -> "TableBelief":
        return cls([[math.log(p) for p in PRIOR] for _ in range(players)])

    def priors(self) -> list[list[float]]:
        """Per seat, each model's probability."""
        out = []
        for weights in self.log_weights:
            top = max(weights)
            raw = [math.exp(w - top) for w in weights]
            total = sum(raw)
            out.append([x / total for x in raw])
        return out

    def randomness(self) -> list[float]:
        """Per seat, the probability that it plays at random."""
        return [p[RANDOM] for p in self.priors()]

    def learn(self, last_view: BotView, rng: random.Random) -> None:
        """Take in a finished hand, seen at my last decision in it: every seat's cards are known
        but the last few (the seats that played after me in the last trick), which are guessed
        consistently with the play."""
        if not covered(last_view) or last_view.phase != "playing":
            return
        hands = sample_hands(last_view, rng)
        if hands is None:
            return
        reading = Reading.of(last_view, [PRIOR] * last_view.players, hands)
        if reading is None or not any(reading.cards.values()):
            return
        for seat in reading.others:
            evidence = reading.seat_evidence(seat, hands[seat] | reading.played[seat])
            if evidence[RANDOM] == _NEG_INF:
                continue
            moved = [w + e for w, e in zip(self.log_weights[seat], evidence, strict=True)]
            top = max(moved)
            self.log_weights[seat] = [max(w - top, -LOG_ODDS_LIMIT) for w in moved]


class Chain:
    """A Markov chain over worlds that wanders toward those that explain the play (Metropolis):
    each step swaps one unseen card between two other seats (a card may go only to a seat not
    shown void in its suit) and keeps the swap with probability min(1, likelihood ratio). Its
    worlds are then drawn from the posterior, not from the uniform deal that starts it."""

    def __init__(self, view: BotView, reading: Reading, hands: list[CardMask], rng: random.Random):
        self.reading = reading
        self.rng = rng
        self.hands = list(hands)
        order = view.order
        voids = view.voids
        self.banned = [0] * view.players
        for seat, suits in voids.items():
            for suit in suits:
                self.banned[seat] |= order.suit_masks[suit]
        self.fixed = [view.known_cards(s) for s in range(view.players)]
        self.seats = [s for s in reading.others if hands[s] & ~self.fixed[s]]
        self.score = [0.0] * view.players
        self.randomness = [0.0] * view.players
        for seat in reading.others:
            self._rescore(seat, hands[seat])
        self.steps = 0  # swaps tried (for tests)
        self.accepted = 0  # swaps kept
        self.burned = False  # whether the first stretch, away from the uniform start, is run

    def _mixed(self, seat: int, hand: CardMask) -> tuple[float, float]:
        return self.reading.mixed(seat, hand | self.reading.played[seat])

    def _rescore(self, seat: int, hand: CardMask) -> None:
        self.score[seat], self.randomness[seat] = self._mixed(seat, hand)

    def step(self) -> None:
        seats = self.seats
        if len(seats) < 2:
            return
        rng = self.rng
        a, b = rng.sample(seats, 2)
        hands = self.hands
        give = hands[a] & ~self.fixed[a] & ~self.banned[b]
        take = hands[b] & ~self.fixed[b] & ~self.banned[a]
        if not give or not take:
            return
        x = _pick(give, rng)
        y = _pick(take, rng)
        new_a = hands[a] ^ x | y
        new_b = hands[b] ^ y | x
        score_a, random_a = self._mixed(a, new_a)
        score_b, random_b = self._mixed(b, new_b)
        self.steps += 1
        old = self.score[a] + self.score[b]
        new = score_a + score_b
        if new == _NEG_INF:
            return
        if old == _NEG_INF or new >= old or rng.random() < math.exp(new - old):
            hands[a], hands[b] = new_a, new_b
            self.score[a], self.score[b] = score_a, score_b
            self.randomness[a], self.randomness[b] = random_a, random_b
            self.accepted += 1

    def next_world(self, burn: int, steps: int) -> tuple[list[CardMask], int]:
        """Walk on (`burn` steps the first time, `steps` after) and give the world reached."""
        for _ in range(steps if self.burned else burn):
            self.step()
        self.burned = True
        return self.world()

    def world(self) -> tuple[list[CardMask], int]:
        """The chain's world now, and the seats that play it at random (drawn per seat)."""
        randoms = 0
        for seat in self.reading.others:
            p = self.randomness[seat]
            if p > 0.0 and self.rng.random() < p:
                randoms |= 1 << seat
        return list(self.hands), randoms


def _pick(mask: CardMask, rng: random.Random) -> CardMask:
    """One bit of a non-empty mask, uniformly."""
    index = int(rng.random() * mask.bit_count())
    while index:
        mask &= mask - 1
        index -= 1
    return mask & -mask
