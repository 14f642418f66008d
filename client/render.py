"""The play screen as a pure function: (table state, screen state, now) -> exactly `height` lines of
rich `Text`, at most `width` cells wide. Designed for 80x24:

    line 1        header: game, table, hand, who you are, connection status
    lines 2-12    the table: the seat across at the top, left and right seats at the sides, you at the
                  bottom, the trick in the middle (or an overlay: /scores, /last, /verify,
                  an event's /standings).
                  Each seat: where it sits and its account, its bid and tricks, its cards left and
                  its clock when it is to act (or how long its seat is held, if it dropped)
    line 13       scores and bags (Spades) or penalty points (Hearts) per side
    line 14       whose turn, what to do, the clock
    lines 15-17   your hand by suit, suit symbols in colour, the number to type under each legal card
    lines 18-22   what happened (events and chat); after a hand, its result until the next is under way;
                  /help, while it is open (so the table and the clock stay in view)
    line 23       the last refusal, or a failed deal check in reverse video
    line 24       the prompt with what you are typing

A taller terminal gives the extra lines to what happened; one at least 110 columns wide shows, beside
the table, the scores hand by hand and the last trick. Colour is decoration only: legal cards also
carry a number and illegal ones a dot, so the screen reads the same with `NO_COLOR` set (rich honours
it in the console).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from rich.console import Group
from rich.text import Text

from client import panels
from client.results import bags_text, minutes
from client.state import SeatClock, TableState
from client.state import label as card_label
from engine.seat_names import who

WIDTH = 80
HEIGHT = 24
TABLE_LINES = 11
LOG_LINES = 5
SIDE = 24  # width of the left and right seat columns
WIDE = 110  # from this width on, a column beside the table (scores, the last trick)
GAP = 2  # between the table and that column
RED = "red"
SUITS_SHOWN = ("C", "D", "H", "S", "J")


@dataclass
class Screen:
    """What the screen shows besides the table: the typed line and an overlay, if any."""

    buffer: str = ""
    overlay: str = ""  # "", "help", "scores", "last", "verify", "standings"
    title: str = ""  # the server's address
    panel: tuple[str, ...] = ()  # the lines of "standings" (an event's, fetched by the session)


def card_text(card: str, *, bold: bool = False, dim: bool = False) -> Text:
    """A card with its suit coloured (hearts and diamonds red)."""
    style = RED if card[-1] in "HD" and card not in ("BJ", "LJ") else ""
    if bold:
        style = f"bold {style}".strip()
    if dim:
        style = f"dim {style}".strip()
    return Text(card_label(card), style=style)


def _fit(text: Text, width: int, align: str = "left") -> Text:
    out = text.copy()
    out.truncate(width, overflow="ellipsis")
    out.align(align, width)  # type: ignore[arg-type]
    return out


def _join(*parts: Text) -> Text:
    out = Text()
    for part in parts:
        out.append_text(part)
    return out


def positions(state: TableState) -> dict[int, str]:
    """Seat -> where it sits on screen: bottom (you), left, top, right."""
    n = state.players
    me = state.seat if state.seat is not None else 0
    places = {4: ["bottom", "left", "top", "right"], 3: ["bottom", "left", "right"]}.get(
        n, ["bottom", "top"]
    )
    return {(me + i) % n: places[i] for i in range(n) if i < len(places)}


def clock_text(clock: SeatClock, now: float) -> str:
    """A seat's time left, `23s`, or `+41s` once it is into its bank."""
    left = clock.deadline - now
    if left > 0 or clock.bank_ms == 0:
        return f"{max(0, math.ceil(left))}s"
    return f"+{clock.seconds_left(now)}s"


def waiting_for(state: TableState, now: float) -> str:
    """Who the table waits for, with their clocks: `West 23s, North +41s`."""
    parts = []
    for seat in state.acting():
        if seat == state.seat:
            continue
        clock = state.clocks.get(seat)
        parts.append(state.place(seat) + (f" ⏱ {clock_text(clock, now)}" if clock else ""))
    return ", ".join(parts)


def seat_panel(state: TableState, seat: int, width: int, now: float = 0.0) -> list[Text]:
    """Three lines: where the seat sits and its account (with the dealer's mark); its bid, tricks
    and points; its cards left, and its clock when it is to act (or the hold left if it dropped)."""
    v = state.view
    name = Text()
    name.append(state.place(seat), style="bold")
    player = who(state.player(seat))
    if player and seat != state.seat:
        name.append(f" ({player})")
    dealer = v.get("dealer") == seat and bool(v.get("hand_number"))
    if dealer and len(name) + 4 <= width:
        name.append(" (D)", style="dim")
        dealer = False  # marked on the name line; otherwise on the cards line, below
    bits: list[str] = []
    bids = v.get("bids") or []
    if state.game == "spades":
        bid = bids[seat] if seat < len(bids) else None
        bits.append(f"bid {bid['text']}" if isinstance(bid, dict) else "bid –")
    tricks = v.get("tricks") or []
    bits.append(f"won {tricks[seat] if seat < len(tricks) else 0}")
    if state.game == "hearts":
        points = v.get("points") or []
        bits.append(f"pts {points[seat] if seat < len(points) else 0}")
    status = Text()
    if dealer:  # the name line is full: the dealer's mark goes here instead of being cut
        status.append("dealer · ", style="dim")
    sizes = v.get("hand_sizes") or []
    if seat in state.away:  # dropped: how long its seat is still held, instead of its cards
        held = state.away[seat]
        status.append("away" + (f" {minutes(held - now)}" if held is not None else ""), "bold")
    elif seat != state.seat and seat < len(sizes) and isinstance(sizes[seat], int):
        status.append(f"{sizes[seat]} card{'' if sizes[seat] == 1 else 's'}", style="dim")
    if seat in state.acting() and seat != state.seat:
        status.append(" ◆", style="yellow")  # to act (from `turn`, or the snapshot)
        clock = state.clocks.get(seat)
        if clock is not None:
            status.append(f" {clock_text(clock, now)}", style="yellow")
    return [
        _fit(name, width, "center"),
        _fit(Text(" · ".join(bits), style="dim"), width, "center"),
        _fit(status, width, "center"),
    ]


def trick_cells(state: TableState, plays: list[list[object]]) -> dict[str, Text]:
    where = positions(state)
    out: dict[str, Text] = {}
    for seat, card in plays:
        if isinstance(seat, int) and isinstance(card, str):
            out[where.get(seat, "top")] = _join(Text("["), card_text(card, bold=True), Text("]"))
    return out


def table_area(state: TableState, screen: Screen, width: int, now: float = 0.0) -> list[Text]:
    """The eleven lines of the table, or of the overlay that replaces it (not /help: that goes
    where the log is, so the table stays in view while the clock runs)."""
    if screen.overlay and screen.overlay != "help":
        lines = (
            list(screen.panel)
            if screen.overlay == "standings"
            else panels.overlay_lines(state, screen.overlay, TABLE_LINES, width)
        )
        return [_fit(Text(line), width) for line in lines[:TABLE_LINES]] + [
            Text("") for _ in range(TABLE_LINES - min(TABLE_LINES, len(lines)))
        ]
    where = {place: seat for seat, place in positions(state).items()}
    centre = width - 2 * SIDE
    blank = [Text(""), Text(""), Text("")]
    top = seat_panel(state, where["top"], centre, now) if "top" in where else blank
    left = seat_panel(state, where["left"], SIDE, now) if "left" in where else blank
    right = seat_panel(state, where["right"], SIDE, now) if "right" in where else blank
    bottom = seat_panel(state, where["bottom"], centre, now) if "bottom" in where else blank
    if state.seat is not None:  # our own cards and clock are below the table
        bottom = [Text(""), bottom[0], bottom[1]]
    trick = state.view.get("trick") or []
    cells = trick_cells(state, trick)
    caption = Text("")
    last = state.view.get("last_trick") or []
    if last:
        winner = int(state.view.get("last_winner", -1))
        caption = Text(f"last → {state.place(winner)}: ", style="dim")
        for index, (_, card) in enumerate(last):
            caption.append(" " if index else "")
            caption.append_text(card_text(card, dim=True))
    pad = Text(" " * SIDE)

    def mid(text: Text | None) -> Text:
        return _fit(text or Text(""), centre, "center")

    def sides(row: int, middle: Text | None) -> Text:
        return _join(_fit(left[row], SIDE, "center"), mid(middle), _fit(right[row], SIDE, "center"))

    lr = Text("")
    if "left" in cells or "right" in cells:
        gap = max(2, centre - 14)
        lr = _join(cells.get("left", Text("     ")), Text(" " * gap), cells.get("right", Text("")))
    return [
        _join(pad, mid(top[0])),
        _join(pad, mid(top[1])),
        _join(pad, mid(top[2])),
        _join(pad, mid(cells.get("top"))),
        sides(0, None),
        sides(1, lr),
        sides(2, cells.get("bottom")),
        _join(pad, mid(caption)),
        _join(pad, mid(bottom[0])),
        _join(pad, mid(bottom[1])),
        _join(pad, mid(bottom[2])),
    ]


def scores_line(state: TableState, width: int) -> Text:
    scores = state.view.get("scores") or []
    bags = state.view.get("bags") or []
    out = Text()
    out.append("Scores  ", style="bold")
    for index, score in enumerate(scores):
        out.append(f"{state.side_name(index)} {score}")
        if state.bags_shown and index < len(bags):
            out.append(f" ({bags_text(bags[index])})", style="dim")
        out.append("   ")
    if state.game == "hearts" and state.view.get("pass_direction"):
        out.append(f"pass {state.view['pass_direction']}", style="dim")
    return _fit(out, width)


def turn_line(state: TableState, now: float, width: int) -> Text:
    if state.game_over is not None:
        won = state.seat is not None and state.seat in state.game_over.winners
        text = "Game over — you won!" if won else "Game over."
        return _fit(Text(f"{text}  /scores for the hands, /quit to leave", style="bold"), width)
    if state.status:
        return _fit(Text(state.status, style="bold yellow"), width)
    turn = state.turn
    if turn is None:
        others = waiting_for(state, now)
        if state.seat is None:
            text = f"Watching. To act: {others}" if others else "Watching."
            return _fit(Text(text, style="dim"), width)
        if not state.view.get("hand_number"):
            return _fit(Text("Waiting for the game to start…", style="dim"), width)
        if others:
            return _fit(Text(f"Waiting for {others}", style="dim"), width)
        return _fit(Text("Waiting for the other players…", style="dim"), width)
    left = max(0, math.ceil(turn.deadline - now))
    kinds = turn.kinds()
    if "play" in kinds:
        what = "play a card: its number, or QS / 10h / Q♠"
    elif "bid" in kinds:
        what = "bid: " + ", ".join(_bid_hints(state))
        if "look" in kinds:
            what += "; or 'look' at your cards"
    elif kinds & {"pass", "exchange", "discard"}:
        count = next((len(a.cards or []) for a in turn.legal if a.cards), 0)
        verb = next(iter(kinds & {"pass", "exchange", "discard"}))
        receiver = state.pass_receiver() if verb == "pass" else None
        to = f" to {state.name(receiver)}" if receiver is not None else ""
        what = f"{verb} {count} cards{to}: e.g. '1 2 3' or 'QS AH KH'"
    elif "keep_drawn" in kinds:
        what = "'keep' the drawn card, or 'discard' it and take the next"
    else:
        what = "you may: " + ", ".join(f"'{kind}'" for kind in sorted(kinds))
    clock = f"{left} s" + (f" + bank {turn.bank_ms // 1000} s" if turn.bank_ms else "")
    out = Text()
    out.append("YOUR TURN ", style="bold reverse")
    out.append(f" {what}  ")
    out.append(f"⏱ {clock}", style="bold red" if left <= 5 else "bold")
    return _fit(out, width)


def _bid_hints(state: TableState) -> list[str]:
    """The kinds of bid on offer, from the legal list: a number, nil, blind nil."""
    legal = [a for a in (state.turn.legal if state.turn else []) if a.kind.value == "bid"]
    if len(legal) <= 4:  # few choices: name them in the engine's words
        from client.commands import bid_words

        return [f"'{bid_words(a)}'" for a in legal]
    numbers = sorted({a.tricks for a in legal if a.tricks and not a.blind and not a.moe})
    hints = []
    if numbers:
        hints.append(f"{numbers[0]} to {numbers[-1]}" if len(numbers) > 1 else str(numbers[0]))
    if any(a.tricks == 0 and not a.blind and not a.moe for a in legal):
        hints.append("nil")
    if any(a.tricks == 0 and a.blind for a in legal):
        hints.append("blind nil")
    if any(a.tricks and a.blind for a in legal):
        hints.append("'3 blind'")
    return hints or ["see /help"]


def hand_lines(state: TableState, width: int) -> list[Text]:
    """Your cards grouped by suit, and under each legal card the number to type."""
    hand = state.hand()
    if state.seat is None:
        return [Text(""), Text(""), Text("")]
    if not hand:
        looked = state.view.get("looked") or []
        hidden = state.seat < len(looked) and not looked[state.seat]
        msg = "Your cards are face down: 'look' to see them, or bid blind." if hidden else ""
        return [Text("Hand"), _fit(Text(msg, style="dim"), width), Text("")]
    legal_cards = _legal_cards(state)
    cards_row = Text()
    cards_row.append("Hand  ", style="bold")
    numbers = Text("      ")
    previous = ""
    for index, card in enumerate(hand, start=1):
        suit = "J" if card in ("BJ", "LJ") else card[1]
        if previous and suit != previous:
            cards_row.append("  ")
            numbers.append("  ")
        previous = suit
        legal = card in legal_cards
        label = card_text(card, bold=legal, dim=bool(legal_cards) and not legal)
        label.align("left", 4)
        cards_row.append_text(label)
        if legal:
            numbers.append(f"{index:<4}", style="cyan")
        else:
            numbers.append("·   " if legal_cards else "    ", style="dim")
    received = state.view.get("received") or []
    drawn = state.view.get("drawn")
    extra = Text("")
    if isinstance(drawn, str):
        extra = Text("      drawn: ")
        extra.append_text(card_text(drawn, bold=True))
        extra.append("   keep it, or discard it and take the next", style="dim")
    elif received:
        extra = Text(f"      received: {' '.join(card_label(c) for c in received)}", style="dim")
    return [_fit(cards_row, width), _fit(numbers, width), _fit(extra, width)]


def _legal_cards(state: TableState) -> set[str]:
    if state.turn is None:
        return set()
    out: set[str] = set()
    for action in state.turn.legal:
        if action.card:
            out.add(action.card)
        if action.cards:
            out.update(action.cards)
    return out


def log_lines(state: TableState, rows: int, width: int, *, help_open: bool = False) -> list[Text]:
    """What happened, newest last; after a hand, its result on top until the next is under way;
    with `help_open`, /help instead (the table above stays as it is)."""
    if help_open:
        shown = [_fit(Text(line), width) for line in panels.help_lines(rows, width)[:rows]]
        return shown + [Text("")] * (rows - len(shown))
    boxed: list[Text] = []
    if state.result is not None:
        boxed = [_fit(Text(line, style="bold"), width) for line in state.result.lines[:rows]]
    room = rows - len(boxed)
    log = list(state.log)[-room:] if room > 0 else []
    shown = [
        _fit(Text(line, style="dim" if i < len(log) - 1 else ""), width)
        for i, line in enumerate(log)
    ]
    return boxed + [Text("")] * (room - len(shown)) + shown


def render(
    state: TableState, screen: Screen, now: float, width: int = WIDTH, height: int = HEIGHT
) -> Group:
    """The whole screen; exactly `height` lines (never more), each at most `width` cells."""
    width = max(40, min(width, 120))
    if state.paused_at is not None:
        now = state.paused_at  # play is paused: every clock shows what it had left then
    main = WIDTH if width >= WIDE else width
    lines: list[Text] = []
    header = Text()
    header.append(f" {state.game.capitalize()} ", style="bold reverse")
    header.append(f" table {state.table}" if state.table else " not at a table")
    if state.view.get("hand_number"):
        header.append(f" · hand {state.view['hand_number']}")
    if state.seat is not None:
        header.append(f" · you are seat {state.seat}", style="dim")
    else:
        header.append(" · watching", style="dim")
    if screen.title:
        header.append(f" · {screen.title}", style="dim")
    lines.append(_fit(header, width))
    body = table_area(state, screen, main, now)
    body.append(scores_line(state, main))
    body.append(turn_line(state, now, main))
    body.extend(hand_lines(state, main))
    if width >= WIDE:
        side = width - main - GAP
        column = panels.side_column(state, len(body), side)
        column += [""] * (len(body) - len(column))
        body = [
            _join(_fit(row, main), Text(" " * GAP), _fit(Text(text, style="dim"), side))
            for row, text in zip(body, column, strict=True)
        ]
    lines.extend(body)
    rows = LOG_LINES + max(0, height - HEIGHT)
    lines.extend(log_lines(state, rows, width, help_open=screen.overlay == "help"))
    if state.alarm:
        lines.append(_fit(Text(f"!! {state.alarm} !!", style="bold reverse red"), width))
    else:
        lines.append(_fit(Text(state.notice, style="bold yellow"), width))
    prompt = Text()
    prompt.append("> ", style="bold")
    prompt.append(screen.buffer)
    prompt.truncate(width - 1)  # not padded: the cursor is left just after what was typed
    lines.append(prompt)
    budget = max(1, height)
    if len(lines) > budget:
        # A short terminal: keep the table's lower half, the hand and the prompt.
        lines = lines[len(lines) - budget :]
    return Group(*lines)
