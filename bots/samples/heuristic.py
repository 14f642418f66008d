"""`heuristic`: a sound, fast player of every preset, Spades and Hearts (see the two policy modules).

It looks at its cards before bidding (it never bids blind, except where the hand type says all bids
are blind), keeps a drawn card in two-handed Spades when it is a spade or an honour, and never claims.
"""

from bots.samples import hearts_policy, spades_policy
from bots.samples.situation import from_view
from bots.sdk.bot import Bot, Decision
from bots.sdk.view import BotView
from engine.actions import Action, Bid, KeepDrawn, LookAtHand
from engine.cards import SPADES, Card


class HeuristicBot(Bot):
    """Card-counting rules of thumb: second hand low, third hand high, cover the nil, duck the bags."""

    name = "heuristic"

    def bid(self, view: BotView) -> Decision:
        for action in view.legal:
            if isinstance(action, LookAtHand):
                return action
        bids = view.legal_bids
        if not view.looked:
            # All bids are blind this hand: bid an average hand's tricks.
            return min(bids, key=lambda b: (abs(b.tricks - 3), b.tricks))
        partner = view.partner
        rules = view.ruleset
        return spades_policy.choose_bid(
            bids,
            view.hand_mask,
            view.order,
            players=view.players,
            partner_bid=None if partner is None else view.bids[partner],
            bags=view.bags[view.my_side] if view.bags else 0,
            bag_limit=rules.bag_limit,
            bags_counted=rules.bags != "off",
        )

    def play(self, view: BotView) -> Decision:
        situation = from_view(view)
        if view.is_hearts:
            return hearts_policy.choose_play(situation)
        return spades_policy.choose_play(situation)

    def pass_cards(self, view: BotView) -> Decision:
        return hearts_policy.choose_pass(view.hand_mask, view.order, view.choose_count)

    def exchange(self, view: BotView) -> Decision:
        """Blind nil: the nil bidder gives its highest cards, the partner its lowest."""
        mine = view.bids[view.seat]
        return self._by_power(view, highest=mine is not None and mine.is_nil)

    def discard(self, view: BotView) -> Decision:
        """Joker Spades: drop the lowest side cards. Two-handed double nil: drop the highest."""
        mine = view.bids[view.seat]
        return self._by_power(view, highest=mine is not None and mine.is_nil)

    def other(self, view: BotView) -> Decision:
        for action in view.legal:
            if isinstance(action, LookAtHand):
                return action
        if view.drawn is not None:
            keep = view.suit_of(view.drawn) == SPADES or view.power(view.drawn) >= 10
            return KeepDrawn(view.seat, keep)
        plain: list[Action] = [a for a in view.legal if isinstance(a, Bid | KeepDrawn)]
        return (plain or list(view.legal))[0]

    @staticmethod
    def _by_power(view: BotView, *, highest: bool) -> list[Card]:
        def key(card: Card) -> tuple[int, int]:
            trump = view.suit_of(card) == SPADES and not view.is_hearts
            return (trump if not highest else 0, view.power(card) * (-1 if highest else 1))

        return sorted(view.hand, key=key)[: view.choose_count]
