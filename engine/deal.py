"""The seeded shuffle: a documented, language-independent function of a seed (docs/rules.md).

Anyone holding a hand's seed can recompute its deal: the server publishes SHA-256(seed) before the deal
and the seed after the hand. The algorithm:

1. The random stream is the concatenation of SHA-256(seed || counter) for counter = 0, 1, 2, ...,
   the counter as 8 bytes big-endian; it is read as unsigned 64-bit big-endian words.
2. A uniform integer in [0, n) is drawn by rejection: take the next word w; if w >= 2**64 - (2**64 mod n)
   take another; the result is w mod n.
3. Fisher-Yates: for i from len(deck) - 1 down to 1, draw j in [0, i + 1) and swap deck[i] and deck[j].
4. The deck starts in canonical order: ascending card number (2C..AC, 2D..AD, 2H..AH, 2S..AS, LJ, BJ),
   holding only the cards the ruleset plays with.
"""

import hashlib
from collections.abc import Iterator, Sequence

from engine.cards import Card

_WORD_SPACE = 1 << 64


def random_words(seed: bytes) -> Iterator[int]:
    """The unbounded stream of 64-bit words derived from a seed."""
    counter = 0
    while True:
        block = hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()
        for offset in range(0, 32, 8):
            yield int.from_bytes(block[offset : offset + 8], "big")
        counter += 1


def uniform_below(words: Iterator[int], n: int) -> int:
    """An unbiased integer in [0, n) drawn from the stream (rejection sampling)."""
    limit = _WORD_SPACE - (_WORD_SPACE % n)
    for word in words:
        if word < limit:
            return word % n
    raise AssertionError("the word stream is infinite")  # pragma: no cover


def shuffled(seed: bytes, deck: Sequence[Card]) -> list[Card]:
    """The deck after the seeded Fisher-Yates shuffle; the same seed always gives the same order."""
    cards = list(deck)
    words = random_words(seed)
    for i in range(len(cards) - 1, 0, -1):
        j = uniform_below(words, i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


def commitment(seed: bytes) -> str:
    """The hex SHA-256 of a seed, published before the deal so the seed cannot be changed later."""
    return hashlib.sha256(seed).hexdigest()
