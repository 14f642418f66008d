"""Whole events of bots on a real server (127.0.0.1, port 0, SQLite in tmp_path): a 16-entrant
individual Swiss of 4 rounds and an 8-pair knockout, every entrant a client over TCP that checks in
and plays each seat it is given; the standings, the bracket and the records checked."""

from __future__ import annotations

import json
import time
from functools import partial
from pathlib import Path

import trio

from protocol.event_messages import EventFormat, EventStatus, RoundStatus
from protocol.messages import (
    EventCreate,
    EventEnded,
    EventInfo,
    EventRecords,
    EventRoundPaired,
    EventShow,
    HandRecords,
    Message,
)
from server.app import Server, local_config, running_server
from server.cli import main
from tests.server.events.players import (
    check_in,
    create_event,
    enter_all,
    play_until_ended,
    register,
    start_events,
)
from tests.server.wire_client import WireClient

LATER = 3600.0


async def announce(host: WireClient, **settings: object) -> str:
    values: dict[str, object] = {
        "name": "Test event",
        "boards": 1,
        "starts_at": time.time() + LATER,
        "bot_turn_ms": 2000,
        "no_show_grace": 60.0,
        "round_gap": 0.2,
    }
    values.update(settings)
    return await create_event(host, EventCreate(**values))  # type: ignore[arg-type]


async def all_records(client: WireClient, event: str) -> list[dict[str, object]]:
    """Every record of the event, a page at a time."""
    out: list[dict[str, object]] = []
    start: int | None = 0
    for _ in range(100):
        if start is None:
            return out
        page = await client.request(EventRecords(event=event, start=start))
        assert isinstance(page, HandRecords) and page.records
        out.extend(page.records)
        start = page.next
    raise AssertionError("more than 100 pages")


async def run_field(
    server: Server, event: str, clients: list[WireClient]
) -> tuple[list[EventEnded], list[list[Message]]]:
    """Check everyone in, start the event, and play it to its end."""
    for client in clients:
        await check_in(client, event)
    start_events(server)
    ended: list[EventEnded] = []
    seen: list[list[Message]] = [[] for _ in clients]
    async with trio.open_nursery() as nursery:

        async def play(index: int) -> None:
            ended.append(await play_until_ended(clients[index], seen[index]))

        for index in range(len(clients)):
            nursery.start_soon(play, index)
    return ended, seen


async def test_a_16_player_individual_swiss_of_4_rounds_runs_to_its_end(tmp_path: Path) -> None:
    config = local_config(tmp_path / "events.db", events_open=True)
    async with running_server(config) as server:
        with trio.fail_after(240):
            names = [f"bot{index:02d}" for index in range(16)]
            clients = list(
                (await enter_all(partial(WireClient.connect, server.port), names)).values()
            )
            event = await announce(
                clients[0], format=EventFormat.SWISS_INDIVIDUAL, rounds=4, max_entrants=16
            )
            for client in clients:
                await register(client, event)
            ended, seen = await run_field(server, event, clients)
            shown = await clients[0].request(EventShow(event=event))
            records = await all_records(clients[0], event)
            for client in clients:
                await client.aclose()
    assert isinstance(shown, EventInfo)
    assert shown.summary.status is EventStatus.FINISHED and shown.summary.round == 4
    assert len(ended) == 16 and all(e.standings == ended[0].standings for e in ended)
    # Every player was told each of the 4 rounds, and sat at a table of four every time.
    for notices in seen:
        assert [n.round for n in notices if isinstance(n, EventRoundPaired)] == [1, 2, 3, 4]
    assert [r.status for r in shown.rounds] == [RoundStatus.FINISHED] * 4
    assert all(
        len(r.tables) == 4 and all(len(t.boards) == 1 for t in r.tables) for r in shown.rounds
    )
    # Partners rotate: nobody partners the same player twice.
    partners: set[frozenset[str]] = set()
    for round_ in shown.rounds:
        for table in round_.tables:
            for pair in (frozenset(table.seats[0::2]), frozenset(table.seats[1::2])):
                assert pair not in partners
                partners.add(pair)
    lines = shown.standings
    assert [line.place for line in lines] == list(range(1, 17))
    assert all(line.boards == 4 and line.forfeits == 0 for line in lines)
    assert sorted(lines, key=lambda s: (-s.percent, -s.margin)) == lines
    assert ended[0].standings == lines[:16]
    assert len(records) == 16
    assert {r["event"] for r in records} == {
        f"{event}/r{r}/t{t}" for r in range(1, 5) for t in range(1, 5)
    }
    # A board is the same deal at every table of its round.
    for round_no in range(1, 5):
        deals = {
            str(r["seed"]) for r in records if str(r["event"]).startswith(f"{event}/r{round_no}/")
        }
        assert len(deals) == 1


def export(db: Path, event: str, out: Path) -> int:
    """`spades-server events export EVENT --out OUT --db DB`; its exit code."""
    try:
        main(["events", "export", event, "--out", str(out), "--db", str(db)])
    except SystemExit as exit_:
        return int(exit_.code or 0)
    return 0


async def test_an_8_pair_knockout_runs_to_its_final(tmp_path: Path) -> None:
    config = local_config(tmp_path / "events.db", events_open=True)
    async with running_server(config) as server:
        with trio.fail_after(240):
            names = [f"ko{index:02d}" for index in range(16)]
            clients = list(
                (await enter_all(partial(WireClient.connect, server.port), names)).values()
            )
            event = await announce(
                clients[0], format=EventFormat.KNOCKOUT_PAIRS, rounds=0, max_entrants=8
            )
            for index, client in enumerate(clients):
                await register(client, event, partner=f"ko{index ^ 1:02d}")
            ended, _seen = await run_field(server, event, clients)
            shown = await clients[0].request(EventShow(event=event))
            for client in clients:
                await client.aclose()
    assert isinstance(shown, EventInfo)
    assert shown.summary.status is EventStatus.FINISHED and shown.summary.rounds == 3
    assert len(shown.entrants) == 8 and not any(e.house for e in shown.entrants)
    assert [len(r.tables) for r in shown.rounds] == [4, 2, 1]
    matches = shown.matches
    assert [(m.round, m.table_no) for m in matches] == [
        (1, 1),
        (1, 2),
        (1, 3),
        (1, 4),
        (2, 1),
        (2, 2),
        (3, 1),
    ]
    assert all(m.winner in (m.a, m.b) for m in matches)
    # The winners of round 1 meet in round 2, and theirs in the final.
    assert {m.a for m in matches[4:6]} | {m.b for m in matches[4:6]} == {
        m.winner for m in matches[:4]
    }
    final = matches[6]
    assert {final.a, final.b} == {matches[4].winner, matches[5].winner}
    assert shown.standings[0].key == final.winner
    assert ended[0].standings[0].key == final.winner
    # The host's export: the same standings and bracket, and every board's record.
    out = tmp_path / "export"
    assert export(tmp_path / "events.db", event, out) == 0
    written = json.loads((out / "standings.json").read_text(encoding="utf-8"))
    assert written["event"] == event and written["status"] == "finished"
    assert [(s["key"], s["place"], s["names"]) for s in written["standings"]] == [
        (s.key, s.place, s.names) for s in shown.standings
    ]
    assert [m["winner"] for m in written["matches"]] == [m.winner for m in matches]
    records = [json.loads(line) for line in (out / "records.jsonl").read_text().splitlines()]
    boards = sum(len(t.boards) for r in shown.rounds for t in r.tables)
    assert len(records) == boards >= 7  # one board a match, and any extra boards
    assert all(r["format"] == "spades-hand/1" for r in records)
    # Each record names who sat where, as the round's table did.
    seated = {(r.round, t.table_no): t.seats for r in shown.rounds for t in r.tables}
    for record in records:
        round_no, table_no = (int(part[1:]) for part in record["event"].split("/")[1:])
        assert record["names"] == seated[(round_no, table_no)], record["event"]
    again = tmp_path / "again"
    assert export(tmp_path / "events.db", event, again) == 0
    for name in ("standings.json", "records.jsonl"):
        assert (out / name).read_bytes() == (again / name).read_bytes()
    assert export(tmp_path / "events.db", "E99", tmp_path / "none") == 1
    assert not (tmp_path / "none").exists()
