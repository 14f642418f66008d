"""The four-handed playout loop: one pass per trick over local variables (SpadesGame.playout).

It is `legal_play_mask` and `play_fast` unrolled for four seats and the normal play rule, drawing one
`rand()` per card exactly as the card-by-card loop does (a test checks they agree card for card).
"""

from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from engine.cards import Card
from engine.ordering import TRUMP

if TYPE_CHECKING:
    from engine.spades import SpadesGame

CARD_OF_BIT: Final[dict[int, Card]] = {1 << card: card for card in range(54)}


def playout_four(game: "SpadesGame", rand: Callable[[], float]) -> None:
    """Four-handed playout from the start of a trick under the normal play rule: one loop pass
    per trick, everything in locals (the rules of legal_play_mask and play_fast, unrolled)."""
    card_of = CARD_OF_BIT
    hands = game._hands
    plays = game._plays
    winners = game._winners
    tricks = game._tricks
    suit = game._suit
    suit_masks = game._suit_masks
    trumps = game._trumps
    others = ~trumps
    keys_by_led = game._keys
    total = game._tricks_per_hand
    break_on_play = game._break_on_play
    turn = game._turn
    broken = game._broken
    played = game._played
    forced = game._forced_lead
    version = game._version
    while True:
        s0 = turn
        hand = hands[s0]
        if forced >= 0:
            m = 1 << forced
            forced = -1
        elif broken:
            m = hand
        else:
            m = hand & others or hand
        k = rand() * m.bit_count()
        while k >= 1.0:
            m &= m - 1
            k -= 1.0
        b0 = m & -m
        hands[s0] = hand ^ b0
        c0 = card_of[b0]
        led = suit[c0]
        follow = suit_masks[led]
        s1 = (s0 + 1) & 3
        hand = hands[s1]
        m = hand & follow or hand
        k = rand() * m.bit_count()
        while k >= 1.0:
            m &= m - 1
            k -= 1.0
        b1 = m & -m
        hands[s1] = hand ^ b1
        s2 = (s0 + 2) & 3
        hand = hands[s2]
        m = hand & follow or hand
        k = rand() * m.bit_count()
        while k >= 1.0:
            m &= m - 1
            k -= 1.0
        b2 = m & -m
        hands[s2] = hand ^ b2
        s3 = (s0 + 3) & 3
        hand = hands[s3]
        m = hand & follow or hand
        k = rand() * m.bit_count()
        while k >= 1.0:
            m &= m - 1
            k -= 1.0
        b3 = m & -m
        hands[s3] = hand ^ b3
        c1 = card_of[b1]
        c2 = card_of[b2]
        c3 = card_of[b3]
        all_bits = b0 | b1 | b2 | b3
        played |= all_bits
        if not broken and all_bits & trumps and (break_on_play or led != TRUMP):
            broken = True  # a spade led unbroken (from a hand of only spades) breaks only "played"
        keys = keys_by_led[led]
        best = keys[c0]
        w = s0
        key = keys[c1]
        if key > best:
            best = key
            w = s1
        key = keys[c2]
        if key > best:
            best = key
            w = s2
        key = keys[c3]
        if key > best:
            best = key
            w = s3
        plays += (s0 << 6 | c0, s1 << 6 | c1, s2 << 6 | c2, s3 << 6 | c3)
        version += 4
        tricks[w] += 1
        winners.append(w)
        turn = w
        if len(winners) == total:
            break
    game._version = version
    game._trick = []
    game._turn = game._leader = turn
    game._led = led
    game._broken = broken
    game._played = played
    game._forced_lead = forced
    game._last_trick = [c0, c1, c2, c3]
    game._last_leader = s0
    game._finish_hand()
