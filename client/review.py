"""`spades replay FILE --analyze`: each hand reviewed double-dummy (engine/review.py), with a
progress bar, stoppable with Ctrl-C (what was analysed is kept and shown).

The review's lines for a hand: the tricks each side could make at the start of play against its
bid and what it took, the cards that cost their side tricks (marked in the trick lines too) and
the tricks each seat's play lost; a hand the solver does not play (three-handed, Hearts) says so.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.text import Text

from client.render import card_text
from engine.cards import card_text as card_notation
from engine.errors import EngineError
from engine.review import HandReview, NotReviewable, PlayedHand, Reviewer


def reviewers(
    records: Sequence[dict[str, Any]], rulesets: Sequence[Any], budget: int | None
) -> list[Reviewer | str]:
    """A Reviewer per record, or the sentence saying why its hand is not analysed."""
    out: list[Reviewer | str] = []
    for record, ruleset in zip(records, rulesets, strict=True):
        if ruleset is None:
            out.append("not analysed: the record does not say its rules")
            continue
        try:
            out.append(Reviewer(PlayedHand.of_record(record, ruleset), budget=budget))
        except NotReviewable as exc:
            out.append(f"not analysed: {exc.message}")
        except EngineError as exc:
            out.append(f"not analysed: the record does not replay ({exc.message})")
    return out


def analyze(
    jobs: Sequence[Reviewer | str], advance: Callable[[], None]
) -> tuple[list[HandReview | str], bool]:
    """Run every review, calling `advance` after each position; on KeyboardInterrupt (Ctrl-C)
    stop and keep what was analysed. Each hand's review (or its sentence), and whether it ran to
    the end."""
    done: list[HandReview | str] = []
    stopped = False
    for job in jobs:
        if isinstance(job, str):
            done.append(job)
            continue
        if not stopped:
            try:
                for _ in job.steps():
                    advance()
            except KeyboardInterrupt:
                stopped = True
        done.append(job.review())
    return done, not stopped


def analyze_with_bar(
    jobs: Sequence[Reviewer | str], console: Console
) -> tuple[list[HandReview | str], bool]:
    """`analyze` with a rich progress bar (on the console's stream, gone when done)."""
    total = sum(job.positions for job in jobs if not isinstance(job, str))
    columns = (
        TextColumn("analysing"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("positions"),
        TimeElapsedColumn(),
        TextColumn("· Ctrl-C stops"),
    )
    with Progress(*columns, console=console, transient=True) as progress:
        task = progress.add_task("analysing", total=total)
        return analyze(jobs, lambda: progress.advance(task))


def cost_mark(review: HandReview | str | None, index: int) -> Text:
    """After a card in a trick line: ` -1` (tricks it cost its side), ` ?` if not analysed, nothing
    for a card that kept the best result or without a review."""
    if not isinstance(review, HandReview) or index >= len(review.cards):
        return Text()
    cost = review.cards[index].cost
    if cost is None:
        return Text(" ?", style="dim")
    return Text(f" -{cost}", style="bold red") if cost else Text()


def review_lines(
    review: HandReview | str | None,
    names: Sequence[str],
    side_names: Sequence[str],
    bids: Sequence[tuple[int, str]],
    budget: int | None,
) -> list[Text]:
    """The hand's review under its score (nothing without one)."""
    if review is None:
        return []
    if isinstance(review, str):
        return [Text(f"   double-dummy: {review}", style="yellow")]
    lines = []
    if review.double_dummy is None:
        lines.append(Text("   double-dummy at the start of play: not analysed (budget)"))
    else:
        taken = review.taken
        parts = []
        for side in (0, 1):
            who = side_names[side] if side < len(side_names) else f"side {side}"
            said = " + ".join(text for seat, text in bids if seat % 2 == side)
            bid = f"bid {said}, " if said else ""
            took = f"took {taken[side]}" if taken else "took ?"
            parts.append(f"{who} {review.double_dummy[side]} ({bid}{took})")
        lines.append(Text(f"   double-dummy at the start of play: {'; '.join(parts)}"))
    costly = [card for card in review.cards if card.cost]
    if costly:
        line = Text("   cards that cost tricks: ")
        for at, card in enumerate(costly):
            if at:
                line.append(", ")
            line.append(f"trick {card.trick} {names[card.seat]} ")
            line.append_text(card_text(card_notation(card.card)))
            line.append(f" -{card.cost}", style="bold red")
        lines.append(line)
    lost = review.lost
    lines.append(
        Text(
            "   tricks lost by play: "
            + ", ".join(f"{names[seat]} {lost[seat]}" for seat in range(4))
            + f" (total {sum(lost)})"
        )
    )
    missing = review.not_analysed
    if missing:
        cards = f"{missing} card{'s' if missing > 1 else ''} (marked ?)"
        if review.complete:
            why = f"(budget): {cards}, a position past {budget or 0:,} searched positions"
        else:
            why = f"(stopped): {cards}, the analysis was stopped before them"
        lines.append(Text(f"   not analysed {why}", style="yellow"))
    return lines
