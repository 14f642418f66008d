"""The play screen's text panels: the overlays (/help, /scores, /last, /verify), the hand's result,
and the column a wide terminal shows beside the table (the scores hand by hand, the last trick).

Plain lines of text from the table state; client/render.py places and styles them.
"""

from __future__ import annotations

from client.state import TableState
from client.state import label as card_label

# /help in the lines under the hand, where the log is, so the table and the clock stay in view
# while it is open (the server's clock does not stop for it). Every line fits 80 columns.
COMPACT_HELP = (
    "Cards: QS, qs, 10h, Q♠ or the number under it · bids: 3, bid 3, nil, blind nil",
    "Pass three: 'QS AH KH' or '1 5 9' · /say TEXT chat · /last the last trick",
    "/scores hand by hand · /verify the deal checks · /code a private table's code",
    "/quit leave (your seat is held a while) · Enter on an empty line closes this",
)


def help_lines(rows: int = 99, width: int = 80) -> list[str]:
    """/help: one command a line when `rows` has room for that, else four lines of them all."""
    from client.commands import SLASH_COMMANDS

    full = [
        "Type a card (QS, qs, 10h, Q♠) or the number under it; a bid as 3 (or bid 3),",
        "nil, blind nil, when offered; pass three cards as 'QS AH KH' or '1 5 9'.",
        *SLASH_COMMANDS.values(),
        "(Enter on an empty line closes this; the table and your clock stay in view.)",
    ]
    if len(full) <= rows and max(len(line) for line in full) <= width:
        return full
    return list(COMPACT_HELP)


def scores_lines(state: TableState, rows: int, width: int) -> list[str]:
    """The scores hand by hand, newest last, in at most `rows` lines (the header included)."""
    if not state.scored:
        return ["No hand has been scored yet."]
    count = len(state.scored[-1].after)
    sides = [state.side_name(i) for i in range(count)]
    cell = max(8, min(16, (width - 6) // max(1, count)))
    out = ["hand  " + "".join(f"{s[: cell - 2]:>{cell}}" for s in sides)]
    shown = state.scored[-max(1, rows - 1) :]
    for hand in shown:
        cells = "".join(
            f"{f'{d:+d} → {a}':>{cell}}" for d, a in zip(hand.delta, hand.after, strict=False)
        )
        out.append(f"{hand.label:>4}  {cells}")
    if any(not hand.seen for hand in state.scored):
        out.append("* played while you were away: one row, the totals' change")
    return out[:rows]


def last_trick_lines(state: TableState) -> list[str]:
    last = state.view.get("last_trick") or []
    if not last:
        return ["No trick has been won yet this hand."]
    winner = state.place(int(state.view.get("last_winner", -1)))
    plays = ", ".join(f"{state.place(s)} {card_label(c)}" for s, c in last)
    return [f"Last trick, won by {winner}:", f"  {plays}"]


def verify_lines(state: TableState, rows: int) -> list[str]:
    if not state.checks:
        return ["No hand has finished yet: the seed is revealed after each hand."]
    lines: list[str] = []
    for number in sorted(state.checks)[-3:]:
        check = state.checks[number]
        lines.append(f"Hand {number}: {check.verdict.value}")
        lines.extend(f"  {line}" for line in check.lines)
    return lines[-rows:]


def overlay_lines(state: TableState, overlay: str, rows: int, width: int) -> list[str]:
    """The text of /help, /scores, /last and /verify, in at most `rows` lines."""
    if overlay == "help":
        return help_lines(rows, width)[:rows]
    if overlay == "scores":
        return scores_lines(state, rows, width)
    if overlay == "last":
        return last_trick_lines(state)
    if overlay == "verify":
        return verify_lines(state, rows)
    return []


def side_column(state: TableState, rows: int, width: int) -> list[str]:
    """A wide terminal's column beside the table: the scores hand by hand, then the last trick
    with who played what."""
    trick = ["", *side_trick(state)]
    scores = ["Scores", *scores_lines(state, max(2, rows - len(trick) - 1), width)]
    return [*scores, *trick][:rows]


def side_trick(state: TableState) -> list[str]:
    last = state.view.get("last_trick") or []
    if not last:
        return ["Last trick: none yet this hand"]
    winner = state.place(int(state.view.get("last_winner", -1)))
    return [f"Last trick, won by {winner}:"] + [
        f"  {state.place(int(s)):<8} {card_label(str(c))}" for s, c in last
    ]
