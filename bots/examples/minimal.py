from bots.sdk import Bot, BotView


class MinimalBot(Bot):
    """Bids its aces and kings; wins a trick as cheaply as it can, else plays its lowest card."""

    def bid(self, view: BotView) -> int:
        return max(1, sum(1 for card in view.hand if view.power(card) >= 11))

    def play(self, view: BotView) -> int:
        cards = sorted(view.legal_cards, key=view.power)
        leader = view.trick_winner()
        for card in cards:
            if leader is None or view.beats(card, leader[1]):
                return card
        return cards[0]
