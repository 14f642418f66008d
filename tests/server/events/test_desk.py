"""`event_info` of a very big event still fits one frame: its oldest rounds lose their boards
first, then their tables; the standings and the latest round stay whole."""

from __future__ import annotations

from protocol.event_messages import (
    EventBoard,
    EventFormat,
    EventInfo,
    EventRound,
    EventStanding,
    EventStatus,
    EventSummary,
    EventTable,
    RoundStatus,
)
from protocol.wire import encode_body
from server.events.desk import INFO_BUDGET, fitted


def big_event(rounds: int, tables: int, boards: int) -> EventInfo:
    names = [f"player-{i:03d}" for i in range(4 * tables)]
    return EventInfo(
        id=1,
        summary=EventSummary(
            event="E1",
            name="Marathon",
            format=EventFormat.SWISS_INDIVIDUAL,
            status=EventStatus.RUNNING,
            starts_at=1.0,
            entrants=4 * tables,
            rounds=rounds,
            round=rounds,
            boards=boards,
            preset="standard",
        ),
        rounds=[
            EventRound(
                round=r,
                status=RoundStatus.FINISHED,
                tables=[
                    EventTable(
                        table_no=t,
                        table=f"E1-r{r}-t{t}",
                        seats=names[4 * (t - 1) : 4 * t],
                        entrants=[f"e{4 * (t - 1) + s}" for s in range(1, 5)],
                        boards=[EventBoard(board=b, ns=-120, ew=230) for b in range(1, boards + 1)],
                    )
                    for t in range(1, tables + 1)
                ],
            )
            for r in range(1, rounds + 1)
        ],
        standings=[
            EventStanding(
                place=i + 1,
                key=f"e{i + 1}",
                names=[n],
                percent=50.0,
                boards=1,
                margin=0,
                forfeits=0,
            )
            for i, n in enumerate(names)
        ],
    )


def test_a_big_event_is_trimmed_from_its_oldest_round_to_fit_a_frame() -> None:
    info = big_event(rounds=20, tables=16, boards=26)
    assert len(encode_body(info)) > INFO_BUDGET
    fit = fitted(info)
    assert len(encode_body(fit)) <= INFO_BUDGET
    assert fit.standings == info.standings and fit.summary == info.summary
    assert fit.rounds[-1] == info.rounds[-1]  # the latest round whole
    assert not any(t.boards for t in fit.rounds[0].tables)  # the oldest without its boards
    assert [r.round for r in fit.rounds] == list(range(1, 21))


def test_an_event_that_fits_is_left_as_it_is() -> None:
    info = big_event(rounds=3, tables=4, boards=2)
    assert fitted(info) == info
