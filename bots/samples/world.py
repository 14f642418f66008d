"""Determinization: deal the cards a seat cannot see, consistently with what play has shown, and set up an
engine game in that position so the rest of the hand can be played out by the engine itself.

Sampling: every unseen card goes to a seat that may hold it: not a suit the seat has shown void in, and
the cards known to be somewhere (face up, exposed, passed by me) stay there. The most constrained seat
is filled first; when the constraints cannot all be met (rare: a void shown before a pass), they are
dropped for that sample rather than looping.

Position: the engine has no public "start from this position" constructor, so `build_world` creates a
game with `new_game` and sets the state of the play phase on it. This is the one module of bots/ that
knows the engines' private field names; `tests/bots/test_world.py` checks that a world built from a
real game's view and real hands plays out exactly like a copy of that game, so a change in the engine
shows up there first. A public `Game.position(view, hands)` in the engine would replace this.
"""

import math
import random
from typing import Any

from bots.samples import hearts_policy, spades_policy
from bots.samples.situation import Situation
from bots.sdk.view import BotView
from engine.actions import Bid, LookAtHand
from engine.cards import Card, CardMask
from engine.game import Phase, new_game
from engine.ordering import card_order

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
    game: Any = new_game(view.ruleset, dealer=view.dealer)
    if view.is_hearts:
        _hearts_position(game, view, hands)
    else:
        _spades_position(game, view, hands)
    return game


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


def _spades_position(game: Any, view: BotView, hands: list[CardMask]) -> None:
    n = view.players
    bid_rule, play_rule = view.ruleset.rules_for_hand(view.hand_number)
    game._phase = Phase.PLAYING
    game._hand_number = view.hand_number
    game._hand_type = view.hand_type
    game._bid_rule = bid_rule
    game._play_rule = play_rule
    game._scores = list(view.scores)
    game._bags = list(view.bags)
    game._hands = list(hands)
    game._dealt = tuple(hands)
    game._face_up = list(view.face_up) or [0] * n
    game._exposed = list(view.exposed) or [0] * n
    game._bids = list(view.bids)
    game._bid_order = [b for b in view.bids if b is not None]
    game._looked = [True] * n
    game._turn = view.to_act[0]
    game._leader = view.leader
    game._trick = [card for _, card in view.trick]
    game._led = view.suit_of(view.trick[0][1]) if view.trick else -1
    game._broken = view.broken
    game._tricks = list(view.tricks_won)
    game._played = view.played_mask
    winners = _winners(view)
    game._winners = winners
    plays: list[int] = []
    for plays_of_trick in view.history[: len(winners)]:
        plays.extend(seat << 6 | card for seat, card in plays_of_trick)
    if len(plays) != len(winners) * n:
        plays = [0] * (len(winners) * n)
    game._plays = plays + [seat << 6 | card for seat, card in view.trick]
    game._last_trick = [card for _, card in view.last_trick]
    game._last_leader = view.last_trick[0][0] if view.last_trick else -1
    game._forced_lead = -1


def _hearts_position(game: Any, view: BotView, hands: list[CardMask]) -> None:
    n = view.players
    game._phase = Phase.PLAYING
    game._hand_number = view.hand_number
    game._scores = list(view.scores)
    game._hands = list(hands)
    game._dealt = tuple(hands)
    game._direction = view.pass_direction or "none"
    game._trick = [card for _, card in view.trick]
    game._trick_mask = sum(1 << card for _, card in view.trick)
    leading = view.trick_winner()
    if view.trick and leading is not None:
        game._led_mask = view.order.suit_masks[view.suit_of(view.trick[0][1])]
        game._best_seat, game._best = leading
    else:
        game._led_mask, game._best, game._best_seat = 0, -1, -1
    game._leader = view.leader
    game._turn = view.to_act[0]
    done = sum(view.tricks_won)
    game._trick_number = done + 1
    game._broken = view.broken
    game._tricks = list(view.tricks_won)
    game._played = view.played_mask
    winners = _winners(view)
    game._trick_winners = winners
    taken = [0] * n
    if len(view.history) >= done:
        for plays, winner in zip(view.history[:done], winners, strict=False):
            for _, card in plays:
                taken[winner] |= 1 << card
    else:
        _taken_from_points(view, taken)
    game._taken = taken
    game._plays = [play for plays in view.history[:done] for play in plays] + list(view.trick)
    game._last_trick = view.last_trick
    game._last_winner = view.last_winner


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
    game: Any, seat: int, legal: CardMask, goals: dict[Any, str] | None = None
) -> Situation:
    """The heuristic's view of `seat` in a simulated game (read from the game's state)."""
    ruleset = game._ruleset
    n = ruleset.players
    if ruleset.game == "hearts":
        leader = game._leader
        trick = tuple(((leader + i) % n, card) for i, card in enumerate(game._trick))
        return Situation(
            ruleset=ruleset,
            order=HEARTS_ORDER,
            seat=seat,
            players=n,
            hand=game._hands[seat],
            legal=legal,
            trick=trick,
            bids=(None,) * n,
            tricks=tuple(game._tricks),
            played=game._played,
            bags=0,
            voids=(0,) * n,
        )
    return Situation(
        ruleset=ruleset,
        order=game._order,
        seat=seat,
        players=n,
        hand=game._hands[seat],
        legal=legal,
        trick=game.trick,
        bids=tuple(game._bids),
        tricks=tuple(game._tricks),
        played=game._played,
        bags=game._bags[game.side_of(seat)],
        voids=(0,) * n,
        goals=goals,
    )


def play_out(game: Any, first: Card, goals: dict[Any, str] | None = None) -> None:
    """Play `first` for the seat to act, then the rest of the hand with the heuristic for every seat
    (both engines' lean path: `legal_play_mask` and `play_fast`)."""
    choose = (
        hearts_policy.choose_play if game._ruleset.game == "hearts" else spades_policy.choose_play
    )
    game.play_fast(first)
    while game._phase is Phase.PLAYING:
        seat = game._turn
        legal = game.legal_play_mask(seat)
        if legal & (legal - 1) == 0:
            game.play_fast(legal.bit_length() - 1)
        else:
            game.play_fast(choose(situation_in(game, seat, legal, goals)))


def build_bidding_world(view: BotView, hands: list[CardMask]) -> Any | None:
    """An engine game at this seat's bid, with these hands and the bids made so far; None for the
    variants this does not cover (only plain four-handed bidding with the standard deck is searched).

    Public engine calls do the work (`deal_fixed`, `apply`); only the hand number, the scores and the
    bags are set directly, since a fresh game starts at 0-0.
    """
    r = view.ruleset
    plain = (
        not view.is_hearts
        and view.phase == "bidding"
        and view.looked
        and r.players == 4
        and r.deck == "standard"
        and not r.face_up_cards
        and not r.hand_schedule
        and r.bid_rule == "free"
        and not r.blind_nil_exchange
    )
    if not plain:
        return None
    game: Any = new_game(r, dealer=view.dealer)
    game._hand_number = view.hand_number - 1
    game._scores = list(view.scores)
    game._bags = list(view.bags)
    game.deal_fixed(hands)
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


def apply_bid(game: Any, bid: Any) -> None:
    """Make a bid in a simulated game, looking at the hand first when the seat has not yet."""
    if not bid.blind and not game._looked[bid.seat]:
        game.apply(LookAtHand(bid.seat))
    game.apply(bid)


def finish_bidding_and_play(game: Any) -> None:
    """The other seats bid as the heuristic would, then everyone plays the hand out with it."""
    order = game._order
    for _ in range(8):
        if game._phase is not Phase.BIDDING:
            break
        seat = game._turn
        partner = (seat + 2) % 4
        legal = [a for a in game.legal_actions(seat) if isinstance(a, Bid) and not a.blind]
        if not legal:
            game.apply(LookAtHand(seat))
            continue
        if not game._looked[seat]:
            game.apply(LookAtHand(seat))
        side = game.side_of(seat)
        chosen = spades_policy.choose_bid(
            legal,
            game._hands[seat],
            order,
            players=4,
            partner_bid=game._bids[partner],
            bags=game._bags[side],
            bag_limit=game._ruleset.bag_limit,
            bags_counted=game._ruleset.bags != "off",
        )
        game.apply(chosen)
    goals: dict[Any, str] = {}
    while game._phase is Phase.PLAYING:
        seat = game._turn
        legal_mask = game.legal_play_mask(seat)
        if legal_mask & (legal_mask - 1) == 0:
            game.play_fast(legal_mask.bit_length() - 1)
        else:
            game.play_fast(spades_policy.choose_play(situation_in(game, seat, legal_mask, goals)))
