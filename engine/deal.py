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
5. When the ruleset draws the first dealer (`first_dealer = "random"`), it is the first uniform integer
   below the number of players (step 2) from the stream of the first hand's seed followed by the bytes
   "/first-dealer" (`first_dealer`).
"""

import hashlib
import struct
from collections.abc import Iterator, Sequence
from operator import mod

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
    fast = _shuffled_fast(seed, list(deck))
    if fast is not None:
        return fast
    cards = list(deck)
    words = random_words(seed)
    for i in range(len(cards) - 1, 0, -1):
        j = uniform_below(words, i + 1)
        cards[i], cards[j] = cards[j], cards[i]
    return cards


_COUNTERS = tuple(counter.to_bytes(8, "big") for counter in range(16))
# A word is rejected only when it is at least 2**64 - (2**64 mod n) > 2**64 - n; for decks under 64
# cards no word below this bound is ever rejected, so one max() over the words replaces 51 checks.
_SAFE_BELOW = _WORD_SPACE - 64
_UNPACK = tuple(struct.Struct(f">{blocks * 4}Q").unpack for blocks in range(17))
# For a deck of n cards: the positions i = n - 1 down to 1, and their moduli i + 1 = n down to 2.
_POSITIONS = tuple(tuple(range(n - 1, 0, -1)) for n in range(65))
_MODULI = tuple(tuple(range(n, 1, -1)) for n in range(65))


def _shuffled_fast(seed: bytes, deck: list[Card]) -> list[Card] | None:
    """The same shuffle with the words hashed in one batch (the deal is on every bot's hot path).

    Returns None in the (about 1 in 10**16) case that a word could be rejected, or for decks of 64
    cards or more; the caller then runs the plain algorithm above, which is the definition.
    """
    n = len(deck)
    if n < 2:
        return deck
    if n > 64:
        return None
    blocks = (n + 2) // 4
    sha = hashlib.sha256
    digest = b"".join([sha(seed + counter).digest() for counter in _COUNTERS[:blocks]])
    words = _UNPACK[blocks](digest)
    if max(words) >= _SAFE_BELOW:
        return None
    # j for i = n - 1 down to 1 is word % (i + 1): the modulos in one map, then the swaps.
    for i, j in zip(_POSITIONS[n], map(mod, words, _MODULI[n]), strict=True):
        deck[i], deck[j] = deck[j], deck[i]
    return deck


#: Appended to the first hand's seed for the stream the first dealer is drawn from, so the draw does
#: not disturb the shuffle (docs/rules.md, "The deal").
FIRST_DEALER_LABEL = b"/first-dealer"


def first_dealer(seed: bytes, players: int) -> int:
    """The seat that deals the first hand when the ruleset draws it: the first uniform integer below
    `players` from the random stream of `seed || "/first-dealer"`. Anyone holding the first hand's seed
    (revealed after that hand) can check it."""
    return uniform_below(random_words(seed + FIRST_DEALER_LABEL), players)


def commitment(seed: bytes) -> str:
    """The hex SHA-256 of a seed, published before the deal so the seed cannot be changed later."""
    return hashlib.sha256(seed).hexdigest()
