"""How `spades events` and `spades event EVENT` show the server's replies: pure functions of the
messages, printed through rich's console at 80 and 120 columns (every line fits, nothing is cut
that a reader needs), the knockout bracket drawn as text, the play screen's round notice and
standings, and the parsing of `spades events create`'s options."""

from __future__ import annotations

import dataclasses
from datetime import datetime

import pytest
from rich.console import Console, RenderableType

from client.events import (
    bracket_lines,
    checked_in_line,
    create_request,
    ended_lines,
    event_view,
    events_view,
    parse_start,
    round_notice,
    standings_lines,
    standings_panel,
)
from protocol import messages as m
from protocol.event_messages import (
    EventBoard,
    EventEntrant,
    EventEntry,
    EventFormat,
    EventInfo,
    EventMatch,
    EventRound,
    EventStanding,
    EventStatus,
    EventSummary,
    EventTable,
    RoundStatus,
)

NOW = 1_765_000_000.0
NAMES = [
    "ada", "bob", "cy", "dee", "eve", "fay", "gil", "hal",
    "ivy", "jo", "kim", "lu", "max", "ned", "oz", "pia",
]  # fmt: skip


def summary(**changes: object) -> EventSummary:
    fields: dict[str, object] = {
        "event": "E1",
        "name": "Club night",
        "format": EventFormat.KNOCKOUT_PAIRS,
        "status": EventStatus.RUNNING,
        "starts_at": NOW - 600,
        "entrants": 8,
        "rounds": 3,
        "round": 2,
        "boards": 2,
        "preset": "standard",
        "host": "ada",
    }
    fields.update(changes)
    return EventSummary(**fields)  # type: ignore[arg-type]


PAIRS = [
    EventEntrant(key=f"p{i + 1}", names=[NAMES[2 * i], NAMES[2 * i + 1]], house=i == 7)
    for i in range(8)
]


def standing(place: int, entrant: EventEntrant, percent: float) -> EventStanding:
    return EventStanding(
        place=place,
        key=entrant.key,
        names=list(entrant.names),
        percent=percent,
        boards=4,
        margin=120 - 30 * place,
        forfeits=0,
    )


def knockout(*later: EventMatch) -> EventInfo:
    """Eight pairs seeded 1v8, 4v5, 2v7, 3v6; round 1 played, and `later` matches."""
    first = [
        EventMatch(round=1, table_no=1, a="p1", b="p8", won_a=2, won_b=0, winner="p1"),
        EventMatch(round=1, table_no=2, a="p4", b="p5", won_a=1, won_b=1, winner="p5"),
        EventMatch(round=1, table_no=3, a="p2", b="p7", won_a=0, won_b=2, winner="p7"),
        EventMatch(round=1, table_no=4, a="p3", b="p6", won_a=2, won_b=0, winner="p3"),
    ]
    return EventInfo(summary=summary(), entrants=PAIRS, matches=[*first, *later])


def printed(renderable: RenderableType, width: int) -> str:
    console = Console(width=width, record=True, highlight=False)
    console.print(renderable)
    text = console.export_text()
    assert all(len(line) <= width for line in text.splitlines()), text
    return text


@pytest.mark.parametrize("width", [80, 120])
def test_the_listing_fits_with_every_id_whole(width: int) -> None:
    events = [
        summary(),
        summary(
            event="E12",
            name="A rather long name for an event that goes on and on",
            format=EventFormat.SWISS_INDIVIDUAL,
            status=EventStatus.REGISTERING,
            starts_at=NOW + 900,
            round=0,
            rounds=4,
        ),
        summary(event="E3", format=EventFormat.SWISS_PAIRS, status=EventStatus.FINISHED),
    ]
    text = printed(events_view(events, width), width)
    for word in ("E1 ", "E12", "E3 ", "registering", "running", "finished", "knockout"):
        assert word in text, text
    assert "Swiss indiv." in text and "Swiss pairs" in text
    assert "-/4" in text and "2/3" in text  # the round: none yet, then the one in progress
    # The whole name, wrapped rather than cut.
    assert "A rather" in text and "on and on" in text and "…" not in text, text
    assert ("standard" in text and "host" in text) == (width >= 100), text


def test_the_bracket_joins_each_pair_to_its_next_match() -> None:
    info = knockout(
        EventMatch(round=2, table_no=1, a="p1", b="p5", won_a=1, won_b=0),
        EventMatch(round=2, table_no=2, a="p3", b="p7", won_a=0, won_b=0),
    )
    lines = bracket_lines(info, 80)
    assert lines[0].split() == ["Round", "1", "Round", "2", "Final", "Winner"]
    grid = lines[1:]
    assert len(grid) == 15  # 8 pairs: rows 0, 2, ..., 14
    assert all(len(line) <= 80 for line in lines), "\n".join(lines)
    # Round 1 in the order the winners went on: p1-p8 and p4-p5 feed round 2's first match.
    assert grid[0].startswith("ada & bob 2 ─") and grid[0].endswith("┐")
    assert grid[2].startswith("oz & pia 0 ─") and "─┘" in grid[2]
    assert grid[4].startswith("gil & hal 1") and grid[6].startswith("ivy & jo 1")
    assert grid[8].startswith("eve & fay 2") and grid[10].startswith("kim & lu 0")
    assert grid[12].startswith("cy & dee 0") and grid[14].startswith("max & ned 2")
    # Round 2's pairs sit where their matches join, halfway between their two feeders.
    column = grid[1].index("├")
    assert grid[1][column:].startswith("├─ada & bob 1")
    assert grid[5][column:].startswith("├─ivy & jo 0")
    assert grid[9][column:].startswith("├─eve & fay 0")
    assert grid[13][column:].startswith("├─max & ned 0")
    assert [grid[row][column] for row in range(7)] == ["┐", "├", "┘", " ", "┐", "├", "┘"]
    final = grid[3].index("├")  # round 2's two first pairs join at the final's first slot
    assert [grid[row][final] for row in range(1, 6)] == ["┐", "│", "├", "│", "┘"]
    # The final is not paired yet, nor won.
    assert "…" in grid[3] and "…" in grid[11] and grid[7].rstrip().endswith("├─…")


def test_a_finished_bracket_names_the_winner_and_later_rounds_place_the_first() -> None:
    # Round 2 paired the other way round from table order: the bracket follows the winners.
    info = knockout(
        EventMatch(round=2, table_no=1, a="p3", b="p7", won_a=2, won_b=0, winner="p3"),
        EventMatch(round=2, table_no=2, a="p1", b="p5", won_a=0, won_b=2, winner="p5"),
        EventMatch(round=3, table_no=1, a="p3", b="p5", won_a=1, won_b=2, winner="p5"),
    )
    # Announced with room for 64 pairs (6 rounds), played by 8: the field's three rounds drawn.
    info = dataclasses.replace(info, summary=summary(rounds=6, status=EventStatus.FINISHED))
    head, *grid = bracket_lines(info, 120)
    assert head.split() == ["Round", "1", "Round", "2", "Final", "Winner"]
    assert grid[0].startswith("eve & fay 2") and grid[2].startswith("kim & lu 0")
    assert grid[4].startswith("cy & dee 0") and grid[6].startswith("max & ned 2")
    assert grid[8].startswith("ada & bob 2") and grid[12].startswith("gil & hal 1")
    assert "├─eve & fay 1" in grid[3] and "├─ivy & jo 2" in grid[11]
    assert grid[7].rstrip().endswith("├─ivy & jo")  # the winner's column


def test_the_bracket_waits_for_round_one_and_cuts_names_to_fit() -> None:
    waiting = EventInfo(summary=summary(round=0, status=EventStatus.REGISTERING), entrants=PAIRS)
    assert bracket_lines(waiting) == ["The bracket is drawn once round 1 is paired."]
    long_names = [
        EventEntrant(key=e.key, names=[n * 6 for n in e.names], house=e.house) for e in PAIRS
    ]
    info = EventInfo(summary=summary(), entrants=long_names, matches=knockout().matches)
    lines = bracket_lines(info, 80)
    assert all(len(line) <= 80 for line in lines)
    assert "adaadaadaadaadaa…" in lines[1]


@pytest.mark.parametrize("width", [80, 120])
def test_an_event_shows_entrants_standings_and_the_round(width: int) -> None:
    swiss = summary(format=EventFormat.SWISS_PAIRS, rounds=4, round=2)
    tables = [
        EventTable(
            table_no=1,
            table="t12",
            seats=["ada", "eve", "bob", "fay"],
            boards=[EventBoard(board=1, ns=120, ew=-40), EventBoard(board=2, ns=-50, ew=60)],
        ),
        EventTable(table_no=2, table=None, seats=["cy", "gil", "dee", "hal"]),
    ]
    info = EventInfo(
        summary=swiss,
        entrants=[
            *PAIRS[:6],
            EventEntrant(key="p7", names=["max", "ned"], withdrawn=True),
            PAIRS[7],
        ],
        rounds=[
            EventRound(round=1, status=RoundStatus.FINISHED, tables=[]),
            EventRound(round=2, status=RoundStatus.PLAYING, tables=tables),
        ],
        standings=[standing(i + 1, PAIRS[i], 70 - 5 * i) for i in range(8)],
    )
    text = printed(event_view(info, NOW, width, mine="pia"), width)
    flat = " ".join(text.split())
    assert "E1 · Club night · Swiss pairs · 4 rounds of 2 boards · standard" in flat
    assert "running: round 2 of 4 · 8 entrants · people and bots · host ada" in flat
    assert "Entrants (8): ada & bob, cy & dee," in flat and "max & ned (withdrawn)" in flat
    assert "Standings" in text and "70.0%" in text and "+90" in text
    assert "oz & pia (house)" in flat  # the server's bots, in the standings
    assert "8*" in text  # pia's line
    assert "Round 2 (playing)" in text
    assert "ada & bob" in text and "eve & fay" in text
    assert "1) 120:-40 2) -50:60" in flat
    assert "Round 1" not in text.replace("Round 1 ", "")  # the latest round unless asked
    asked = printed(event_view(info, NOW, width, round_no=1), width)
    assert "Round 1 (finished)" in asked and "Round 2" not in asked
    assert "spades event E1 --play" in flat


def test_registering_says_when_it_starts_and_how_to_enter() -> None:
    info = EventInfo(
        summary=summary(
            status=EventStatus.REGISTERING,
            round=0,
            starts_at=NOW + 600,
            entry=EventEntry.PEOPLE,
            format=EventFormat.SWISS_INDIVIDUAL,
        )
    )
    text = " ".join(printed(event_view(info, NOW), 80).split())
    assert "registering: starts" in text and "(in 10 min)" in text and "people only" in text
    assert "Entrants: none yet" in text
    assert "spades event E1 --register` enters" in text  # no partner in an individual
    assert "spades-bot run BOT --event E1" in text


def test_a_registration_not_open_yet_says_when_it_opens() -> None:
    info = EventInfo(
        summary=summary(
            status=EventStatus.REGISTERING, round=0, starts_at=NOW + 3600,
            registration_opens=NOW + 600,
        )
    )  # fmt: skip
    text = " ".join(printed(event_view(info, NOW), 80).split())
    assert "registration opens" in text and "(in 10 min)" in text and "starts" in text
    opened = " ".join(printed(event_view(info, NOW + 601), 80).split())
    assert "registering: starts" in opened


def test_the_round_notice_and_the_standings_on_the_play_screen() -> None:
    notice = m.EventRoundPaired(
        event="E1",
        round=2,
        table="t7",
        seat=1,
        names=["ada", "bob", "cy", "dee"],
        boards=3,
        starts_in=9.2,
    )
    line = round_notice(notice)
    assert line == (
        "E1 round 2: table t7, you sit West with dee against South ada, North cy;"
        " 3 boards, opens in 10 s"
    )
    lines = standings_lines(
        [standing(i + 1, PAIRS[i], 70 - 5 * i) for i in range(8)], mine="pia", limit=3
    )
    assert len(lines) == 5 and lines[3].strip() == "…"
    assert lines[4].startswith("  8* oz & pia") and "35.0%" in lines[4]
    assert all(len(x) <= 80 for x in lines)
    info = EventInfo(
        summary=summary(),
        rounds=[EventRound(round=1, status=RoundStatus.FINISHED, tables=[])],
        standings=[standing(i + 1, PAIRS[i], 70 - 5 * i) for i in range(8)],
    )
    panel = standings_panel(info, "ada")
    assert panel[0].startswith("E1 Club night: standings after round 1 of 3")
    assert len(panel) <= 11 and panel[1].startswith("  1* ada & bob")
    empty = standings_panel(EventInfo(summary=summary(round=1)), "ada")
    assert empty[1] == "No round has finished yet."


def test_where_the_event_stands_at_the_check_in() -> None:
    soon = summary(status=EventStatus.REGISTERING, round=0, starts_at=NOW + 90, entrants=3)
    assert checked_in_line(soon, NOW).startswith("E1 Club night starts ")
    assert checked_in_line(soon, NOW).endswith("(in 2 min) with 3 entrants.")
    assert checked_in_line(summary(), NOW) == "E1 Club night: round 2 of 3 is under way."
    over = summary(status=EventStatus.FINISHED)
    assert checked_in_line(over, NOW) == "E1 Club night is finished."


def test_the_end() -> None:
    ended = m.EventEnded(
        event="E1", standings=[standing(i + 1, PAIRS[i], 70 - 5 * i) for i in range(8)]
    )
    lines = ended_lines(ended, "cy")
    assert lines[0].startswith("Event E1 is over. Final standings")
    assert lines[2].startswith("  2* cy & dee") and len(lines) == 9
    assert ended_lines(m.EventEnded(event="E1", standings=[], cancelled=True)) == [
        "Event E1 was cancelled."
    ]


def test_start_times() -> None:
    assert parse_start("+10m", NOW) == NOW + 600
    assert parse_start("+ 90s", NOW) == NOW + 90
    assert parse_start("+2h", NOW) == NOW + 7200
    assert parse_start("+5", NOW) == NOW + 300  # minutes
    local = datetime.fromtimestamp(NOW).astimezone()
    later = parse_start(f"{(local.hour + 1) % 24:02d}:{local.minute:02d}", NOW)
    assert 0 < later - NOW <= 3600  # the next time the clock shows it
    earlier = parse_start(f"{local.hour:02d}:{local.minute:02d}", NOW + 120)
    assert 86_000 < earlier - NOW <= 86_400
    assert (
        parse_start("2026-12-05T20:30:00+00:00", NOW)
        == datetime.fromisoformat("2026-12-05T20:30:00+00:00").timestamp()
    )
    for bad in ("soon", "25:00", "+10y", "12:75"):
        with pytest.raises(ValueError, match="--start"):
            parse_start(bad, NOW)


def test_create_requests() -> None:
    swiss = create_request(
        "Club night",
        format=EventFormat.SWISS_PAIRS,
        rounds=4,
        boards=3,
        starts_at=NOW,
        clock=20,
        round_gap=5,
    )
    assert (swiss.rounds, swiss.boards, swiss.human_turn_ms, swiss.round_gap) == (4, 3, 20000, 5)
    assert swiss.entry is EventEntry.BOTH and swiss.preset == "standard"
    knock = create_request(
        "Cup", format=EventFormat.KNOCKOUT_PAIRS, rounds=None, boards=4, starts_at=NOW,
        max_entrants=8,
    )  # fmt: skip
    assert knock.rounds == 0  # as many as the field needs
    window = create_request(
        "Late", format=EventFormat.SWISS_PAIRS, rounds=2, boards=1, starts_at=NOW + 60,
        registration_opens=NOW,
    )  # fmt: skip
    assert window.registration_opens == NOW
    with pytest.raises(ValueError, match="--registration-opens must be before --start"):
        create_request(
            "X", format=EventFormat.SWISS_PAIRS, rounds=2, boards=1, starts_at=NOW,
            registration_opens=NOW,
        )  # fmt: skip
    with pytest.raises(ValueError, match="--rounds is needed"):
        create_request("X", format=EventFormat.SWISS_INDIVIDUAL, rounds=None, boards=1, starts_at=0)
    for bad in ({"boards": 0}, {"clock": 2}, {"max_entrants": 1}, {"round_gap": -1}):
        kwargs: dict[str, object] = {"rounds": 2, "boards": 2, **bad}
        with pytest.raises(ValueError):
            create_request("X", format=EventFormat.SWISS_PAIRS, starts_at=0, **kwargs)  # type: ignore[arg-type]
