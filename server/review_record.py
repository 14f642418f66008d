"""Which hand records the server reviews (`review`, docs/protocol.md "Hand review"), and the hand
it reviews from each: pure, the engine's dealing and rules only.

The answer must never help anyone at a table: a record of a hand still in play (its own cards, the
cards seen so far, guesses at the rest) must get nothing. So a record is reviewed only when

- its deal is the engine's deal from its seed (`seed`, `dealer`, its ruleset): a hand's seed is
  secret until the hand is over (docs/protocol.md, Deal commitments), so a record of a hand in play
  cannot carry it, and a made-up seed deals a hand no table is playing;
- the hands reviewed are those the seed dealt (after the exchanges the record shows), never the
  record's own `deal` (which must then agree) nor cards inferred from its plays;
- its play is finished: all 52 cards played, or whole tricks then a claim (the record says so and
  its `tricks` add up to 13), every card from the hand of the seat that played it.

Both record formats are read: the server's `spades-hand/1` (its `ruleset`) and the page's and the
terminal client's `spades-client-hand/1` (its `preset` and `options`). The engine then plays the
cards (`engine.review.PlayedHand.positions`), so an illegal play is refused there.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from engine.cards import CardMask, card_text, parse_card
from engine.dealing import deal_hands
from engine.errors import EngineError
from engine.review import NotReviewable, PlayedHand
from engine.ruleset import Ruleset

FORMATS: Final = ("spades-hand/1", "spades-client-hand/1")


def record_size(record: Mapping[str, Any]) -> int:
    """The record's size as JSON, in bytes (what the size cap counts; what the worker is sent).
    Raises NotReviewable for a record JSON cannot hold (msgpack's bytes, say)."""
    try:
        return len(json.dumps(record, separators=(",", ":")).encode())
    except (TypeError, ValueError):
        raise NotReviewable("a hand record holds only what JSON holds (no bytes)") from None


def _ruleset(record: Mapping[str, Any]) -> Ruleset:
    stored = record.get("ruleset")
    if isinstance(stored, Mapping):
        return Ruleset.from_stored(stored)
    preset = record.get("preset")
    options = record.get("options") or {}
    if isinstance(preset, str) and isinstance(options, Mapping):
        return Ruleset.from_preset(preset, **{str(k): v for k, v in options.items()})
    raise NotReviewable("the record does not say its rules (`ruleset`, or `preset` and `options`)")


def _seat(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 4:
        raise NotReviewable(f"{what} is not a seat 0..3")
    return value


def reviewable_hand(record: Any) -> PlayedHand:
    """The hand to review from `record`, or NotReviewable with the sentence saying why not (see
    the module docstring). Nothing is solved here: a few milliseconds of dealing and checking."""
    if not isinstance(record, Mapping):
        raise NotReviewable("a hand record is a map")
    if record.get("format") not in FORMATS:
        raise NotReviewable(f"the record's format is not one of {', '.join(FORMATS)}")
    try:
        ruleset = _ruleset(record)
    except EngineError as exc:
        raise NotReviewable(f"the record's rules are not the engine's: {exc.message}") from None
    if ruleset.game != "spades" or ruleset.players != 4 or not ruleset.partnerships:
        raise NotReviewable("only four-handed (partnership) Spades is reviewed")
    seed_text = record.get("seed")
    try:
        seed = bytes.fromhex(seed_text) if isinstance(seed_text, str) else b""
    except ValueError:
        seed = b""
    if not seed:
        raise NotReviewable("the record has no seed (hex): its deal cannot be checked")
    dealer = _seat(record.get("dealer"), "`dealer`")
    dealt = deal_hands(ruleset, seed, dealer)
    if any(dealt.face_up) or dealt.set_aside:
        raise NotReviewable("a deal with cards face up or set aside is not reviewed")
    hands: list[CardMask] = list(dealt.hands)
    claimed = record.get("deal")
    if claimed is not None:
        try:
            shown = [sum(1 << parse_card(str(c)) for c in hand) for hand in claimed]
        except (TypeError, EngineError):
            raise NotReviewable("the record's `deal` is not four lists of cards") from None
        if shown != hands:
            raise NotReviewable("the record's deal is not the one its seed deals")
    for key in ("exchanges", "passes"):
        for moved in record.get(key) or []:
            if not isinstance(moved, Mapping) or not isinstance(moved.get("cards"), list):
                raise NotReviewable("an exchange of cards the record does not show")
            giver = _seat(moved.get("giver"), "an exchange's giver")
            receiver = _seat(moved.get("receiver"), "an exchange's receiver")
            for text in moved["cards"]:
                card = parse_card(str(text)) if isinstance(text, str) else -1
                if card < 0 or not hands[giver] >> card & 1:
                    raise NotReviewable("an exchange gives a card its giver does not hold")
                hands[giver] &= ~(1 << card)
                hands[receiver] |= 1 << card
    raw_plays = record.get("plays")
    if not isinstance(raw_plays, list):
        raise NotReviewable("the record has no `plays`")
    plays = []
    for item in raw_plays:
        if not (isinstance(item, list | tuple) and len(item) == 2 and isinstance(item[1], str)):
            raise NotReviewable("a play is [seat, card]")
        seat = _seat(item[0], "a play's seat")
        try:
            card = parse_card(item[1])
        except EngineError:
            raise NotReviewable(f"a play's card {item[1][:8]!r} is not a card") from None
        if not hands[seat] >> card & 1:
            raise NotReviewable(f"seat {seat} played {card_text(card)}, not in its dealt hand")
        plays.append((seat, card))
    tricks = record.get("tricks")
    claimed_rest = (
        isinstance(tricks, list)
        and len(tricks) == 4
        and all(isinstance(t, int) and not isinstance(t, bool) for t in tricks)
        and sum(tricks) == ruleset.tricks_per_hand
    )
    # A claim ended it: the server's record says so (`claim`); the client's lists the claimed
    # tricks' winners past the plays' (`trick_winners`). Either way whole tricks were played.
    winners = record.get("trick_winners")
    if record.get("format") == FORMATS[0]:
        claim = bool(record.get("claim"))
    else:
        claim = isinstance(winners, list) and len(winners) == ruleset.tricks_per_hand
    whole = len(plays) == 4 * ruleset.tricks_per_hand
    ended = claim and claimed_rest and len(plays) % 4 == 0
    if record.get("missed_tricks") or not (whole or ended):
        raise NotReviewable("the hand's play is not finished (or not every card was seen)")
    try:
        return PlayedHand.of_plays(
            ruleset,
            int(record.get("hand_number") or 1),
            dealer,
            plays,
            tuple(tricks) if claimed_rest and isinstance(tricks, list) else (),
            dealt=hands,
        )
    except (TypeError, ValueError) as exc:
        if isinstance(exc, NotReviewable):
            raise
        raise NotReviewable(f"the record's hand cannot be read: {exc}") from None
