"""Checking a dealt hand after the fact: the revealed seed against the commitment, and the deal itself.

Before each deal the server commits to SHA-256 of a secret seed; after the hand it reveals the seed.
The client then

1. checks `engine.deal.commitment(seed)` equals the commitment it was sent before the deal;
2. re-deals the hand with the engine (a fresh game of the table's ruleset with the same dealer,
   `game.deal(seed)`), so the shuffle and the dealing order are the engine's, not ours;
3. checks that the cards it was dealt are the engine's hand for its seat, and that every card anyone
   played was dealt to that seat (or to a seat that passed or exchanged cards to it this hand).

Nothing here decides a rule: the engine deals, we compare.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.deal import commitment as commitment_of
from engine.errors import EngineError
from engine.game import new_game
from engine.ruleset import Ruleset


class Verdict(enum.Enum):
    """How a hand's check came out."""

    VERIFIED = "verified"
    MISMATCH = "MISMATCH"
    UNCHECKED = "unchecked"  # something needed was not seen (joined mid-hand, unknown rules)


@dataclass(frozen=True, slots=True)
class DealCheck:
    """The result for one hand, with a line per thing checked."""

    hand_number: int
    verdict: Verdict
    lines: tuple[str, ...]
    deal: tuple[tuple[str, ...], ...] | None = None  # every seat's dealt cards, when recomputed


@dataclass(slots=True)
class HandEvidence:
    """What the client saw of one hand, gathered as the events came."""

    hand_number: int
    dealer: int
    seat: int | None
    commitment: str | None = None
    my_cards: tuple[str, ...] | None = None  # as dealt, before any pass or exchange
    plays: list[tuple[int, str]] = field(default_factory=list)
    transfers: list[tuple[int, int]] = field(default_factory=list)  # (giver, receiver)
    joined_midway: bool = False  # from a snapshot's commitment: the deal itself was not seen


def engine_deal(ruleset: Ruleset, seed: bytes, dealer: int) -> tuple[tuple[str, ...], ...]:
    """Every seat's hand as the engine deals it from `seed` with `dealer` dealing."""
    game = new_game(ruleset, dealer=dealer)
    for event in game.deal(seed):
        data = event.to_dict()
        if data.get("kind") == "hand_dealt":
            return tuple(tuple(hand) for hand in data["hands"])
    raise EngineError("the engine dealt no hand")  # pragma: no cover - every deal has one


def check_hand(evidence: HandEvidence, seed_hex: str, ruleset: Ruleset | None) -> DealCheck:
    """Check a finished hand against its revealed seed (see the module docstring)."""
    n = evidence.hand_number
    lines: list[str] = []
    try:
        seed = bytes.fromhex(seed_hex)
    except ValueError:
        return DealCheck(n, Verdict.MISMATCH, (f"the revealed seed {seed_hex!r} is not hex",))
    if evidence.commitment is None:
        lines.append("no commitment was seen before this deal (joined during the hand)")
        return DealCheck(n, Verdict.UNCHECKED, tuple(lines))
    digest = commitment_of(seed)
    if digest != evidence.commitment:
        lines.append(
            f"SHA-256 of the seed is {digest[:16]}…, but the server committed to "
            f"{evidence.commitment[:16]}… before the deal"
        )
        return DealCheck(n, Verdict.MISMATCH, tuple(lines))
    lines.append(f"seed matches the commitment {digest[:16]}… sent before the deal")
    if ruleset is None:
        lines.append("the table's rules are unknown here, so the deal was not recomputed")
        return DealCheck(n, Verdict.UNCHECKED, tuple(lines))
    try:
        deal = engine_deal(ruleset, seed, evidence.dealer)
    except EngineError as exc:
        lines.append(f"the engine could not re-deal this hand: {exc.message}")
        return DealCheck(n, Verdict.UNCHECKED, tuple(lines))
    if not any(deal):
        lines.append("this variant draws its hands from a stock; the stock order was not checked")
        return DealCheck(n, Verdict.VERIFIED, tuple(lines), None)
    problems = _compare(evidence, deal)
    if problems:
        return DealCheck(n, Verdict.MISMATCH, tuple(lines + problems), deal)
    if evidence.joined_midway:
        lines.append("joined during the hand: the cards as dealt were not seen, only those played")
    if evidence.my_cards is not None and evidence.seat is not None:
        lines.append(f"the engine re-dealt your {len(evidence.my_cards)} cards exactly")
    lines.append(f"all {len(evidence.plays)} cards played were dealt to the seats that played them")
    return DealCheck(n, Verdict.VERIFIED, tuple(lines), deal)


def _compare(evidence: HandEvidence, deal: Sequence[Sequence[str]]) -> list[str]:
    problems: list[str] = []
    seat = evidence.seat
    mine = evidence.my_cards
    dealt = deal[seat] if seat is not None and 0 <= seat < len(deal) else None
    if mine is not None and dealt is not None and sorted(mine) != sorted(dealt):
        problems.append(
            "the cards you were dealt are not the engine's deal for your seat: "
            f"got {' '.join(mine)}, expected {' '.join(dealt)}"
        )
    sources: dict[int, set[int]] = {s: {s} for s in range(len(deal))}
    for giver, receiver in evidence.transfers:
        sources.setdefault(receiver, {receiver}).add(giver)
    for player, card in evidence.plays:
        allowed = sources.get(player, {player})
        if not any(0 <= s < len(deal) and card in deal[s] for s in allowed):
            problems.append(f"seat {player} played {card}, which the seed did not deal to it")
    return problems
