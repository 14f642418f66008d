"""`spades replay`: step through a recorded game, hand by hand, trick by trick.

Reads the client's own journal (`spades-client-hand/1`, client/journal.py) or the server's hand records
(`spades-hand/1`, as written by `spades-server export` and `spades ladder records`). Each hand is
re-checked on the way: the seed against its commitment, and the deal re-dealt by the engine from the
seed (client/verify.py). A ladder match's records also say which match a hand is of, how long each seat
took, and which moves the server's fallback chose when a clock ran out (docs/hand-records.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text

from client.render import card_text
from client.results import bags_text, name_seats, notes_by_side, said_of
from client.review import cost_mark, review_lines
from client.verify import engine_deal
from engine.actions import Bid, action_from_dict
from engine.deal import commitment
from engine.errors import EngineError
from engine.review import HandReview
from engine.ruleset import Ruleset
from engine.seat_names import seat_label, side_word

# An arena record's seats of the first bot named on the command line (the author's, as a rule).
FIRST_BOT_MARK = "*"


@dataclass
class ReplayHand:
    """One hand, in the shape the replay shows."""

    game_id: str
    game: str
    hand_number: int
    dealer: int
    players: int
    names: list[str]
    deal: list[list[str]] | None
    bids: list[tuple[int, str]]
    passes: list[tuple[int, int, list[str] | None]]
    tricks: list[tuple[list[tuple[int, str]], int | None, int]]  # plays, winner, trick number
    sides: list[list[int]]
    delta: list[int]
    after: list[int]
    bags_after: list[int]
    notes: list[str]
    check: str
    missed: list[int]  # tricks the client did not see (it was disconnected)
    context: str = (
        ""  # where the hand was played, beyond its game (a ladder match, an old one's half)
    )
    side_names: list[str] = field(default_factory=list)  # `North-South`, `your side`, per side
    legend: str = ""  # what a mark on a seat's name means (an arena record's first bot)
    fallback_bids: frozenset[int] = frozenset()  # indices of `bids` the clock's fallback chose
    fallback_plays: frozenset[int] = frozenset()  # indices into the plays, in order
    clock: list[str] = field(default_factory=list)  # how long each seat took, for people
    # `--analyze`: the hand's double-dummy review, or why it is not analysed (client/review.py).
    review: HandReview | str | None = None
    budget: int | None = None  # the review's budget of searched positions a position


def record_ruleset(record: dict[str, Any]) -> Ruleset | None:
    try:
        if isinstance(record.get("ruleset"), dict):
            # As it was when the hand was played: options added since take their old rule.
            return Ruleset.from_stored(record["ruleset"])
        if record.get("preset"):
            return Ruleset.from_preset(str(record["preset"]), **dict(record.get("options") or {}))
    except (EngineError, TypeError):
        return None
    return None


def check_record(record: dict[str, Any]) -> str:
    """One line: does the seed match the commitment, and does the engine deal what was recorded?"""
    seed_hex, promised = record.get("seed"), record.get("commitment")
    if not isinstance(seed_hex, str):
        return "no seed recorded: not checked"
    try:
        seed = bytes.fromhex(seed_hex)
    except ValueError:
        return "MISMATCH: the seed is not hex"
    if isinstance(promised, str) and commitment(seed) != promised:
        return "MISMATCH: SHA-256 of the seed is not the commitment"
    ruleset = record_ruleset(record)
    deal = record.get("deal")
    if ruleset is None or not isinstance(deal, list):
        return "seed matches the commitment; deal not re-checked"
    try:
        dealt = engine_deal(ruleset, seed, int(record.get("dealer", 0)))
    except EngineError as exc:
        return f"seed matches the commitment; the engine could not re-deal: {exc.message}"
    if not any(dealt):
        return "seed matches the commitment (drawn from a stock: no deal to compare)"
    if [sorted(h) for h in dealt] != [sorted(h) for h in deal]:
        return "MISMATCH: the engine deals something else from this seed"
    return "verified: seed matches the commitment and the engine re-deals these hands"


def _bid_text(raw: dict[str, Any]) -> tuple[int, str]:
    if "text" in raw:
        return int(raw["seat"]), str(raw["text"])
    shape = {k: v for k, v in raw.items() if k not in ("seat", "bid", "kind")}
    action = action_from_dict({"kind": "bid", "tricks": raw.get("bid", 0), **shape}, seat=0)
    assert isinstance(action, Bid)
    return int(raw["seat"]), action.describe()


def to_hand(record: dict[str, Any]) -> ReplayHand:
    """A record of either format as a ReplayHand; raises ValueError/KeyError/TypeError/EngineError."""
    players = int(record["players"])
    seat = record.get("seat")
    names, legend = seat_names(record, players)
    plays = [(int(p[0]), str(p[1])) for p in record.get("plays", [])]
    winners = [int(w) for w in record.get("trick_winners", [])]
    numbers = [int(n) for n in record.get("tricks_seen") or range(1, len(winners) + 1)]
    tricks = []
    for index in range(0, len(plays), players):
        at = index // players
        tricks.append(
            (
                plays[index : index + players],
                winners[at] if at < len(winners) else None,
                numbers[at] if at < len(numbers) else at + 1,
            )
        )
    missed = [int(n) for n in record.get("missed_tricks") or []]
    transfers = list(record.get("passes") or []) + list(record.get("exchanges") or [])
    score = record.get("score") or {}
    deal = record.get("deal")
    fallback_bids, fallback_plays, clock = _clock(record, names)
    ladder = record.get("ladder")
    context = _ladder_context(ladder) if isinstance(ladder, dict) else ""
    sides = [[int(s) for s in side] for side in score.get("sides", [])]
    return ReplayHand(
        game_id=str(record.get("game_id") or "?"),
        game=str(record.get("game") or "spades"),
        hand_number=int(record["hand_number"]),
        dealer=int(record.get("dealer", 0)),
        players=players,
        names=names,
        deal=[list(h) for h in deal] if isinstance(deal, list) else None,
        bids=[_bid_text(b) for b in record.get("bids", [])],
        passes=[(int(t["giver"]), int(t["receiver"]), t.get("cards")) for t in transfers],
        tricks=tricks,
        sides=sides,
        delta=list(score.get("delta", [])),
        after=list(score.get("after", [])),
        bags_after=list(score.get("bags_after", [])),
        notes=[str(n) for n in record.get("notes", [])],
        check=check_record(record),
        missed=missed,
        context=context,
        fallback_bids=fallback_bids,
        fallback_plays=fallback_plays,
        clock=clock,
        side_names=[_side_name(side, players, seat) for side in sides],
        legend=legend,
    )


def seat_names(record: dict[str, Any], players: int) -> tuple[list[str], str]:
    """Each seat as the replay names it (`West (heuristic)`, `You`), and what a mark means.

    The client's own journal names its reader's seat `You` and the others by their accounts; an
    arena record names each seat by its entrant and marks the first bot named (`South
    (my_bot:MyBot)*`), so its author finds it on either side of a duplicate pair; a ladder
    match's records marks the reader's accounts (`yours`, added by `spades ladder records`)."""
    seat = record.get("seat")
    arena = record.get("arena")
    accounts = record.get("names") or []
    entrants: list[Any] = []
    legend = ""
    if isinstance(arena, dict) and isinstance(arena.get("seats"), list):
        accounts = arena["seats"]
        given = arena.get("entrants")
        entrants = given if isinstance(given, list) else []
        if 0 in entrants:
            first = accounts[entrants.index(0)]
            legend = f"{FIRST_BOT_MARK} marks the first bot named ({first})"
    # A ladder match fetched with `spades ladder records`: the reader's own accounts.
    yours = {str(n) for n in record.get("yours") or []} if not entrants else set()
    if yours:
        legend = f"{FIRST_BOT_MARK} marks yours ({', '.join(sorted(yours))})"
    names = []
    for s in range(players):
        account = accounts[s] if s < len(accounts) and accounts[s] else None
        first = s < len(entrants) and entrants[s] == 0
        mark = FIRST_BOT_MARK if first or (account is not None and str(account) in yours) else ""
        label = seat_label(s, players, str(account) if account else None, mark=mark)
        names.append("You" if s == seat else label)
    return names, legend


def _side_name(side: list[int], players: int, seat: object) -> str:
    """`North-South`, or `your side (North-South)` in the reader's own journal."""
    word = side_word(side, players)
    if isinstance(seat, int) and seat in side:
        return "You" if len(side) == 1 else f"your side ({word})"
    return word


def _ladder_context(ladder: dict[str, Any]) -> str:
    """`match m-12` (a match is one table), or an old duplicate pair's `match m-3 · half 2 of 2`."""
    halves = ladder.get("halves", 2)
    where = f"match {ladder.get('match')}"
    return where if halves == 1 else f"{where} · half {ladder.get('half')} of {halves}"


def _clock(
    record: dict[str, Any], names: list[str]
) -> tuple[frozenset[int], frozenset[int], list[str]]:
    """From a record's `clock` (one entry per action): the bids and plays the clock's fallback
    chose, and a line on each seat's times. Nothing when the record has no clock."""
    clock, actions = record.get("clock"), record.get("actions")
    if not (isinstance(clock, list) and isinstance(actions, list) and len(clock) == len(actions)):
        return frozenset(), frozenset(), []
    bids: set[int] = set()
    plays: set[int] = set()
    counts = {"bid": 0, "play": 0}
    times: dict[int, list[int]] = {}
    fallbacks: dict[int, int] = {}
    for action, entry in zip(actions, clock, strict=True):
        kind, seat = action.get("kind"), int(entry.get("seat", action.get("seat", 0)))
        if entry.get("by") == "fallback":
            fallbacks[seat] = fallbacks.get(seat, 0) + 1
            if kind in counts:
                (bids if kind == "bid" else plays).add(counts[kind])
        else:
            times.setdefault(seat, []).append(int(entry.get("ms", 0)))
        if kind in counts:
            counts[kind] += 1
    parts = [
        f"{names[seat]} {sum(ms) / len(ms) / 1000:.2f} s avg, {max(ms) / 1000:.2f} s max"
        for seat, ms in sorted(times.items())
        if ms and seat < len(names)
    ]
    lines = [f"time per decision: {'; '.join(parts)}"] if parts else []
    for seat, count in sorted(fallbacks.items()):
        if seat < len(names):
            lines.append(
                f"{names[seat]}'s clock ran out {count} time{'s' if count > 1 else ''}:"
                " the server's fallback chose those moves (marked)"
            )
    return frozenset(bids), frozenset(plays), lines


def cards_line(cards: list[str]) -> Text:
    out = Text()
    for index, card in enumerate(cards):
        if index:
            out.append(" ")
        out.append_text(card_text(card))
    return out


def hand_intro(hand: ReplayHand) -> list[Text]:
    """The hand's heading, the deal, the bids and the passes."""
    where = f" · {hand.context}" if hand.context else ""
    lines = [
        Text(
            f"── {hand.game.capitalize()} · game {hand.game_id}{where} · hand {hand.hand_number} "
            f"· {hand.names[hand.dealer]} dealt",
            style="bold",
        ),
    ]
    style = "bold red" if hand.check.startswith("MISMATCH") else "dim"
    lines.append(Text(f"   deal check: {hand.check}", style=style))
    if hand.legend:
        lines.append(Text(f"   {hand.legend}", style="dim"))
    if hand.deal:
        width = max(14, *(len(name) for name in hand.names))
        for seat, cards in enumerate(hand.deal):
            line = Text(f"   {hand.names[seat]:<{width}} ")
            line.append_text(cards_line(sorted(cards, key=_card_order)))
            lines.append(line)
    if hand.bids:
        bids = ", ".join(
            f"{hand.names[s]} {text}" + (" (fallback)" if i in hand.fallback_bids else "")
            for i, (s, text) in enumerate(hand.bids)
        )
        lines.append(Text(f"   bids: {bids}"))
    if hand.missed:
        tricks = ", ".join(str(n) for n in hand.missed)
        lines.append(Text(f"   (not seen while disconnected: trick {tricks})", style="yellow"))
    for giver, receiver, passed in hand.passes:
        line = Text(f"   {hand.names[giver]} passed ")
        # As the deal and the tricks show cards (`K♣ 6♦`), not in the record's notation.
        line.append_text(cards_line(list(passed)) if passed else Text("(unseen cards)"))
        line.append(f" to {hand.names[receiver]}")
        lines.append(line)
    return lines


def _card_order(card: str) -> int:
    from engine.cards import parse_card

    try:
        return parse_card(card)
    except EngineError:
        return 99


def trick_line(hand: ReplayHand, index: int) -> Text:
    plays, winner, number = hand.tricks[index]
    first = sum(len(trick[0]) for trick in hand.tricks[:index])  # plays before this trick
    line = Text(f"   trick {number:>2}: ")
    for position, (seat, card) in enumerate(plays):
        if position:
            line.append(", ")
        line.append(f"{hand.names[seat]} ")
        line.append_text(card_text(card, bold=seat == winner))
        line.append_text(cost_mark(hand.review, first + position))
        if first + position in hand.fallback_plays:
            line.append(" (fallback)", style="yellow")
    if winner is not None:
        line.append(f"  → {hand.names[winner]}", style="bold")
    return line


def side_name(hand: ReplayHand, index: int) -> str:
    if index < len(hand.side_names):
        return hand.side_names[index]
    return f"side {index}"


def score_lines(hand: ReplayHand) -> list[Text]:
    """The hand's score by side, then the engine's notes, each said of its side and its seats
    (`North-South: contract 5 made with 7`, `West (heuristic) nil failed`)."""
    parts = []
    for index in range(len(hand.sides)):
        who = side_name(hand, index)
        delta = hand.delta[index] if index < len(hand.delta) else 0
        after = hand.after[index] if index < len(hand.after) else 0
        bags = (
            f" ({bags_text(hand.bags_after[index])})"
            if hand.game == "spades" and index < len(hand.bags_after)
            else ""
        )
        parts.append(f"{who} {delta:+d} → {after}{bags}")
    lines = [Text(f"   score: {'; '.join(parts)}", style="bold")]
    lines.extend(Text(f"   {note}", style="dim") for note in said_notes(hand))
    lines.extend(Text(f"   {line}", style="dim") for line in hand.clock)
    lines.extend(review_lines(hand.review, hand.names, hand.side_names, hand.bids, hand.budget))
    return lines


def said_notes(hand: ReplayHand) -> list[str]:
    """The engine's notes (`contract 5 made with 7`, `seat 1 nil failed`) with their seats named
    and each note of a whole side (its contract, its bags) said of that side."""

    def name(seat: int) -> str:
        return hand.names[seat] if 0 <= seat < len(hand.names) else f"seat {seat}"

    if len(hand.sides) < 2:
        return [name_seats(note, name) for note in hand.notes]
    return [
        said_of(note, side_name(hand, index), name)
        for index, notes in enumerate(notes_by_side(hand.notes, hand.sides))
        for note in notes
    ]


def run_replay(
    hands: list[ReplayHand], show: Callable[[Text], None], ask: Callable[[str], str] | None
) -> None:
    """Show every hand; with `ask` (a prompt function: one key on a terminal), pause after each
    trick: any key for the next trick, `n` for the next hand, `q` to stop. Without it, print the
    whole game."""
    for hand_index, hand in enumerate(hands):
        for line in hand_intro(hand):
            show(line)
        skip = False
        for index in range(len(hand.tricks)):
            show(trick_line(hand, index))
            if ask is not None and not skip:
                answer = ask("[any key] next trick · n next hand · q quit ").strip().lower()
                if answer == "q":
                    return
                skip = answer == "n"
        for line in score_lines(hand):
            show(line)
        last = hand_index + 1 == len(hands)
        if ask is not None and not last and ask("[any key] next hand · q quit ").strip() == "q":
            return
