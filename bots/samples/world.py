"""Determinization: deal the cards a seat cannot see, consistently with what play has shown, and set up an
engine game in that position so the rest of the hand can be played out by the engine itself.

Sampling: every unseen card goes to a seat that may hold it: not a suit the seat has shown void in, and
the cards known to be somewhere (face up, exposed, passed by me) stay there. The most constrained seat
is filled first; when the constraints cannot all be met (rare: a void shown before a pass), they are
dropped for that sample rather than looping.

Position: `build_world` sets the engine up in the view's play position through the engines' public
constructors, `SpadesGame.position` and `HeartsGame.position`; `build_bidding_world` through
`deal_fixed` and `apply`. Nothing here touches the engines' private state (`tests/bots/test_world.py`
checks both that and that a world built from a real game's view and real hands plays out exactly like a
copy of that game).
"""

import math
import random
from typing import Any

from bots.samples import hearts_policy, nil_play, spades_policy
from bots.samples.situation import Situation
from bots.sdk.view import BotView
from engine.actions import Bid, LookAtHand
from engine.cards import Card, CardMask
from engine.game import Phase
from engine.hearts import HeartsGame
from engine.ordering import card_order
from engine.scoring import score_side
from engine.spades import SpadesGame

HEARTS_ORDER = card_order("standard")


def sample_hands(view: BotView, rng: random.Random, attempts: int = 20) -> list[CardMask] | None:
    """Hands for every seat (mine as it is) consistent with the view; None if the view is too
    incomplete to deal (a seat holding more cards than are unseen)."""
    n = view.players
    order = view.order
    known = [view.known_cards(seat) if seat != view.seat else 0 for seat in range(n)]
    pool_mask = view.unseen_mask
    for mask in known:
        pool_mask &= ~mask
    need = [
        view.hand_sizes[seat] - known[seat].bit_count() if seat != view.seat else 0
        for seat in range(n)
    ]
    pool = _cards(pool_mask)
    if any(x < 0 for x in need) or sum(need) > len(pool):
        return None
    voids = view.voids
    allowed: list[CardMask] = []
    for seat in range(n):
        banned = 0
        for suit in voids.get(seat, ()):
            banned |= order.suit_masks[suit]
        allowed.append(pool_mask & ~banned)
    seats = sorted((s for s in range(n) if need[s] > 0), key=lambda s: allowed[s].bit_count())
    for attempt in range(attempts + 1):
        relax = attempt == attempts
        hands = [known[seat] for seat in range(n)]
        hands[view.seat] = view.hand_mask
        left = pool_mask
        ok = True
        for seat in seats:
            choices = _cards(left if relax else left & allowed[seat])
            if len(choices) < need[seat]:
                ok = False
                break
            for card in rng.sample(choices, need[seat]):
                hands[seat] |= 1 << card
                left &= ~(1 << card)
        if ok:
            return hands
    return None


def plausible_hands(
    view: BotView, rng: random.Random, candidates: int = 4
) -> list[CardMask] | None:
    """Like `sample_hands`, but drawn among a few samples by how well each explains the bids.

    A uniform sample ignores what the bids said: that a nil bidder has no high cards, that a seat
    bidding five holds five tricks' worth. Each candidate is weighted by how close the heuristic's
    trick estimate of every other seat's hand (as it was when it bid: with its played cards back)
    comes to that seat's bid, and one is drawn by weight.
    """
    first = sample_hands(view, rng)
    if first is None or view.is_hearts or candidates <= 1:
        return first
    bidders = [
        (seat, bid)
        for seat, bid in enumerate(view.bids)
        if seat != view.seat and bid is not None and not bid.blind and not bid.moe
    ]
    if not bidders:
        return first
    played_by = [0] * view.players
    for plays in (*view.history, view.trick):
        for seat, card in plays:
            played_by[seat] |= 1 << card
    order = view.order
    pool = [first]
    for _ in range(candidates - 1):
        more = sample_hands(view, rng)
        if more is not None:
            pool.append(more)
    weights = []
    for hands in pool:
        log_weight = 0.0
        for seat, bid in bidders:
            estimate = spades_policy.estimate_tricks(
                hands[seat] | played_by[seat], order, view.players
            )
            spread = 0.8 if bid.tricks == 0 else 1.5
            log_weight -= (estimate - bid.tricks) ** 2 / (2 * spread * spread)
        weights.append(math.exp(max(-50.0, log_weight)))
    return rng.choices(pool, weights=weights)[0]


def build_world(view: BotView, hands: list[CardMask]) -> Any | None:
    """An engine game in the view's play position with these hands; None outside the play phase."""
    if view.phase != "playing" or not view.to_act:
        return None
    if view.is_hearts:
        return _hearts_position(view, hands)
    return _spades_position(view, hands)


def _winners(view: BotView) -> list[int]:
    """The winners of the tricks played so far, in order (from the hand memory when it is complete,
    else any order with the right counts: only Moe, Bemo and no-trumps scoring look at the order)."""
    done = sum(view.tricks_won)
    if len(view.history) >= done > 0:
        out = []
        for plays in view.history[:done]:
            winner = view.trick_winner(plays)
            out.append(winner[0] if winner else 0)
        if sorted(out) == sorted(s for s, n in enumerate(view.tricks_won) for _ in range(n)):
            return out
    return [seat for seat, count in enumerate(view.tricks_won) for _ in range(count)]


def _spades_position(view: BotView, hands: list[CardMask]) -> SpadesGame | None:
    bids = [bid for bid in view.bids if bid is not None]
    if len(bids) != view.players:
        return None
    winners = _winners(view)
    done = len(winners)
    return SpadesGame.position(
        view.ruleset,
        hands=hands,
        dealer=view.dealer,
        bids=bids,
        leader=view.leader,
        trick=view.trick,
        tricks_won=view.tricks_won,
        winners=winners,
        history=view.history[:done] if len(view.history) >= done else (),
        broken=view.broken,
        hand_number=view.hand_number,
        scores=view.scores,
        bags=view.bags,
        face_up=view.face_up or None,
        exposed=view.exposed or None,
        played=view.played_mask,
    )


def _hearts_position(view: BotView, hands: list[CardMask]) -> HeartsGame:
    n = view.players
    winners = _winners(view)
    done = len(winners)
    complete = len(view.history) >= done
    taken = [0] * n
    if complete:
        for plays, winner in zip(view.history[:done], winners, strict=False):
            for _, card in plays:
                taken[winner] |= 1 << card
    else:
        _taken_from_points(view, taken)
    return HeartsGame.position(
        view.ruleset,
        hands=hands,
        dealer=view.dealer,
        leader=view.leader,
        trick=view.trick,
        tricks_won=view.tricks_won,
        winners=winners,
        history=view.history[:done] if complete else (),
        taken=taken,
        played=view.played_mask,
        broken=view.broken,
        hand_number=view.hand_number,
        scores=view.scores,
        pass_direction=view.pass_direction or "none",
    )


def _taken_from_points(view: BotView, taken: list[CardMask]) -> None:
    """Without the trick history, give each seat played point cards worth its points this hand."""
    from engine.cards import HEARTS, SPADES, make_card

    queen = make_card(10, SPADES)
    hearts = [c for c in _cards(view.played_mask) if c // 13 == HEARTS and c < 52]
    for seat, points in enumerate(view.points):
        rest = points
        if rest >= 13 and view.played_mask >> queen & 1:
            taken[seat] |= 1 << queen
            rest -= 13
        for _ in range(max(0, rest)):
            if hearts:
                taken[seat] |= 1 << hearts.pop()


def _cards(mask: CardMask) -> list[Card]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def situation_in(
    game: SpadesGame,
    seat: int,
    legal: CardMask,
    goals: dict[Any, str] | None = None,
    voids: tuple[int, ...] | None = None,
) -> Situation:
    """The heuristic's view of `seat` in a simulated Spades game (read from the game's public state;
    `voids`, the suits each seat has shown void in, a bit per suit, are the caller's to keep)."""
    n = game.players
    return Situation(
        ruleset=game.ruleset,
        order=game.ruleset_order,
        seat=seat,
        players=n,
        hand=game.hand(seat),
        legal=legal,
        trick=game.trick,
        bids=game.bids,
        tricks=game.tricks,
        played=game.played,
        bags=game.bags[game.side_of(seat)],
        voids=voids or (0,) * n,
        goals=goals,
    )


def play_out(
    game: Any,
    first: Card,
    goals: dict[Any, str] | None = None,
    *,
    randoms: int = 0,
    rng: random.Random | None = None,
    voids: tuple[int, ...] | None = None,
    me: int | None = None,
    set_margin: int = spades_policy.SET_MARGIN,
) -> None:
    """Play `first` for the seat to act, then the rest of the hand with the heuristic for every seat
    (both engines' lean path: `legal_play_mask` and `play_fast`), except that the seats in
    `randoms` (a bit per seat; Spades) play any legal card, drawn from `rng`, and seat `me` plays
    the heuristic with the explicit nil cases of `nil_play` (and `set_margin`). `voids` are the
    suits each seat has shown void in so far (a bit per suit), which the heuristic reads as it does
    in a real game."""
    if isinstance(game, HeartsGame):
        _hearts_play_out(game, first)
        return
    play_spades(
        game,
        goals,
        randoms=randoms,
        rng=rng,
        voids=voids,
        first=first,
        me=me,
        set_margin=set_margin,
    )


def play_spades(
    game: SpadesGame,
    goals: dict[Any, str] | None = None,
    *,
    randoms: int = 0,
    rng: random.Random | None = None,
    voids: tuple[int, ...] | None = None,
    first: Card | None = None,
    me: int | None = None,
    set_margin: int = spades_policy.SET_MARGIN,
) -> None:
    """The rest of a Spades hand (`first` for the seat to act, when given): the heuristic at every
    seat but the `randoms`, which play at random, and `me`, which plays `nil_play`'s heuristic.
    The shown voids are kept as the cards fall."""
    n = game.players
    shown = voids or (0,) * n
    suit = game.ruleset_order.suit
    trick = game.trick
    led = suit[trick[0][1]] if trick else -1
    count = len(trick)
    while game.phase is Phase.PLAYING:
        seat = game.turn
        if first is not None:
            card, first = first, None
        else:
            legal = game.legal_play_mask(seat)
            if legal & (legal - 1) == 0:
                card = legal.bit_length() - 1
            elif randoms >> seat & 1 and rng is not None:
                card = random_card(legal, rng)
            elif seat == me:
                situation = situation_in(game, seat, legal, goals, shown)
                card = nil_play.choose_play(situation, set_margin)
            else:
                card = spades_policy.choose_play(situation_in(game, seat, legal, goals, shown))
        game.play_fast(card)
        if count == 0:
            led = suit[card]
        elif suit[card] != led and not shown[seat] >> led & 1:
            shown = (*shown[:seat], shown[seat] | 1 << led, *shown[seat + 1 :])
        count += 1
        if count == n:
            count = 0


def random_card(legal: CardMask, rng: random.Random) -> Card:
    """A card of a non-empty mask, uniformly."""
    index = int(rng.random() * legal.bit_count())
    while index:
        legal &= legal - 1
        index -= 1
    return (legal & -legal).bit_length() - 1


def _hearts_play_out(game: HeartsGame, first: Card) -> None:
    """`play_out` for Hearts. The engine shows a Hearts game's trick, tricks and played cards only in
    its views, so they are read once from the spectator view and then kept here as the cards fall
    (no trumps: the highest card of the suit led wins, and a card's number grows with its rank)."""
    public = game.spectator_view()
    ruleset = game.ruleset
    n = game.players
    trick = list(public.trick)
    tricks = list(public.tricks)
    played = public.played
    led = trick[0][1] // 13 if trick else -1
    best, best_seat = max(((c, s) for s, c in trick if c // 13 == led), default=(-1, -1))
    seat = game.to_act()[0]
    card = first
    while True:
        game.play_fast(card)
        trick.append((seat, card))
        played |= 1 << card
        suit = card // 13
        if led < 0:
            led, best, best_seat = suit, card, seat
        elif suit == led and card > best:
            best, best_seat = card, seat
        if len(trick) == n:
            tricks[best_seat] += 1
            trick = []
            led = -1
            seat = best_seat
            if game.phase is not Phase.PLAYING:
                return
        else:
            seat = seat + 1 if seat + 1 < n else 0
        legal = game.legal_play_mask(seat)
        if legal & (legal - 1) == 0:
            if not legal:  # not this seat's turn: cannot happen while the tracking is right
                raise RuntimeError(f"hearts playout lost track of the turn (seat {seat})")
            card = legal.bit_length() - 1
            continue
        card = hearts_policy.choose_play(
            Situation(
                ruleset=ruleset,
                order=HEARTS_ORDER,
                seat=seat,
                players=n,
                hand=game.hand(seat),
                legal=legal,
                trick=tuple(trick),
                bids=(None,) * n,
                tricks=tuple(tricks),
                played=played,
                bags=0,
                voids=(0,) * n,
            )
        )


def plain_spades(view: BotView) -> bool:
    """Whether the table plays plain four-handed Spades (the standard deck, free bidding, no face-up
    cards, hand schedule or exchange): the variant the search's bids and its reading model."""
    r = view.ruleset
    return (
        not view.is_hearts
        and r.players == 4
        and r.deck == "standard"
        and not r.face_up_cards
        and not r.hand_schedule
        and r.bid_rule == "free"
        and not r.blind_nil_exchange
    )


def build_bidding_world(view: BotView, hands: list[CardMask]) -> SpadesGame | None:
    """An engine game at this seat's bid, with these hands and the bids made so far; None for the
    variants this does not cover (only plain four-handed bidding with the standard deck is searched).

    Public engine calls do the work: `deal_fixed` (with the view's hand number, scores and bags, since
    a fresh game starts at 0-0) and `apply`.
    """
    if not (plain_spades(view) and view.phase == "bidding" and view.looked):
        return None
    r = view.ruleset
    game = SpadesGame(r, dealer=view.dealer)
    game.deal_fixed(hands, hand_number=view.hand_number, scores=view.scores, bags=view.bags)
    seat = (view.dealer + 1) % 4
    for _ in range(4):
        if seat == view.seat:
            return game
        bid = view.bids[seat]
        if bid is None:
            return None
        apply_bid(game, bid)
        seat = (seat + 1) % 4
    return None


def apply_bid(game: SpadesGame, bid: Bid) -> None:
    """Make a bid in a simulated game, looking at the hand first when the seat has not yet."""
    if not bid.blind and LookAtHand(bid.seat) in game.legal_actions(bid.seat):
        game.apply(LookAtHand(bid.seat))
    game.apply(bid)


def plain_bid(bid: Bid) -> bool:
    """A bid of tricks or a nil: not blind, nor one of the variants' special bids (the bids the
    search and the learned bid weigh)."""
    return not (
        bid.blind or bid.moe or bid.bemo or bid.no_trumps or bid.ten_for_200 or bid.double_nil
    )


def score_bids(
    game: SpadesGame,
    seat: int,
    side_seats: tuple[int, ...],
    candidates: dict[int, Bid],
    *,
    score: int,
    bags: int,
) -> dict[int, int]:
    """What each candidate bid of `seat` would have scored its side (the points the hand adds, by
    the engine's scoring) on the tricks a played-out `game` took, the other bids as they were: one
    playout judges every trick bid near the one it was played with."""
    bids = [b if b is not None else Bid(s, 0) for s, b in enumerate(game.bids)]
    winners = list(game.histories[-1].trick_winners)
    deltas: dict[int, int] = {}
    for number, bid in candidates.items():
        bids[seat] = bid
        result = score_side(
            game.ruleset, side_seats, bids, game.tricks, winners, score=score, bags=bags
        )
        deltas[number] = result.delta
    return deltas


def finish_bidding_and_play(
    game: SpadesGame,
    randoms: int = 0,
    rng: random.Random | None = None,
    me: int | None = None,
    set_margin: int = spades_policy.SET_MARGIN,
) -> None:
    """The other seats bid as the heuristic would, then everyone plays the hand out with it; the
    seats in `randoms` (a bit per seat) bid and play at random instead, drawn from `rng`, and `me`
    plays with `nil_play`'s nil cases (and `set_margin`)."""
    order = game.ruleset_order
    ruleset = game.ruleset
    for _ in range(8):
        if game.phase is not Phase.BIDDING:
            break
        seat = game.turn
        partner = (seat + 2) % 4
        actions = game.legal_actions(seat)
        if randoms >> seat & 1 and rng is not None:
            game.apply(rng.choice(actions))
            continue
        legal = [a for a in actions if isinstance(a, Bid) and not a.blind]
        if not legal:
            game.apply(LookAtHand(seat))
            continue
        if LookAtHand(seat) in actions:
            game.apply(LookAtHand(seat))
        side = game.side_of(seat)
        chosen = spades_policy.choose_bid(
            legal,
            game.hand(seat),
            order,
            players=4,
            partner_bid=game.bids[partner],
            bags=game.bags[side],
            bag_limit=ruleset.bag_limit,
            bags_counted=ruleset.bags != "off",
        )
        game.apply(chosen)
    play_spades(game, {}, randoms=randoms, rng=rng, me=me, set_margin=set_margin)
