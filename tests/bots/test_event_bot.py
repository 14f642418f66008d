"""`spades-bot run BOT --event EVENT [--partner NAME]` (issue 43): the runner registers for the event
if need be, checks in, plays every round's table it is seated at, and stops once the event has
ended, with the final standings in its stats.

A real server in this process (127.0.0.1, port 0) with its events service; the bots are the SDK's
runner over TCP. Events start a second or two after they are announced and play one board a round,
so a whole event takes seconds.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import trio

from bots.registry import make_bot
from bots.sdk.register import register_bot
from bots.sdk.runlog import RunStats
from bots.sdk.runner import BotRunner, RunnerConfig, RunnerError
from client.events import bracket_lines
from protocol import messages as m
from protocol.event_messages import EventEntry, EventFormat, EventInfo
from server.app import Server, local_config, running_server
from tests.server.wire_client import WireClient

#: Seconds from announcing an event to its start: time enough to register every runner.
LEAD = 2.0


@pytest.fixture
async def server(tmp_path: Path) -> AsyncIterator[Server]:
    config = local_config(tmp_path / "events.db", events_open=True)
    async with running_server(config) as running:
        yield running


async def announce(server: Server, token: str, **fields: Any) -> EventInfo:
    """An event announced by the account of `token` (the server lets any account: events_open)."""
    client = await WireClient.connect(server.port)
    try:
        await client.hello(token=token)
        request = m.EventCreate(
            name=fields.pop("name", "Test night"),
            starts_at=time.time() + fields.pop("lead", LEAD),
            round_gap=fields.pop("round_gap", 0.2),
            boards=fields.pop("boards", 1),
            **fields,
        )
        reply = await client.request(request)
        assert isinstance(reply, m.EventInfo), reply
        return reply
    finally:
        await client.aclose()


async def show(server: Server, event: str) -> EventInfo:
    client = await WireClient.connect(server.port)
    try:
        await client.hello()
        reply = await client.request(m.EventShow(event=event))
        assert isinstance(reply, m.EventInfo), reply
        return reply
    finally:
        await client.aclose()


async def bot_tokens(server: Server, *names: str) -> dict[str, str]:
    return {name: (await register_bot("127.0.0.1", server.port, name)).token for name in names}


def runner(server: Server, token: str, event: str, partner: str | None = None) -> BotRunner:
    config = RunnerConfig(
        host="127.0.0.1",
        port=server.port,
        token=token,
        event=event,
        partner=partner,
        games=0,
        backoff=(0.05, 0.2),
    )
    return BotRunner(make_bot("random", 7), config)


async def run_all(
    runners: list[BotRunner], limit: float = 60, *, pairs_in_turn: bool = False
) -> list[RunStats]:
    """Run them all to their end. `pairs_in_turn`: start them two by two (a pair naming each
    other), each two once the two before have registered: the server partners lone registrants
    with each other, and a pair's second registration naming a partner taken that way is refused
    (/work/notes/evterm_to_evserver.md), which is not what these tests are about."""
    results: list[RunStats] = []

    async def one(r: BotRunner) -> None:
        results.append(await r.run())

    with trio.fail_after(limit):
        async with trio.open_nursery() as nursery:
            for index, r in enumerate(runners):
                if pairs_in_turn and index and index % 2 == 0:
                    # Polled: a runner's registration has no event of its own to wait on.
                    while not all(x._registered for x in runners[:index]):  # noqa: ASYNC110
                        await trio.sleep(0.01)
                nursery.start_soon(one, r)
    return results


async def test_two_pairs_of_bots_play_a_swiss_to_its_end(server: Server) -> None:
    tokens = await bot_tokens(server, "ann-bot", "ben-bot", "cat-bot", "dan-bot")
    info = await announce(
        server, tokens["ann-bot"], format=EventFormat.SWISS_PAIRS, rounds=2, boards=1
    )
    event = info.summary.event
    runners = [
        runner(server, tokens["ann-bot"], event, partner="ben-bot"),
        runner(server, tokens["ben-bot"], event, partner="ann-bot"),
        runner(server, tokens["cat-bot"], event, partner="dan-bot"),
        runner(server, tokens["dan-bot"], event, partner="cat-bot"),
    ]
    stats = await run_all(runners, pairs_in_turn=True)
    for r in runners:
        end = r.stats.event_end
        assert end is not None and end["event"] == event and not end["cancelled"]
        # Two rounds, each one table of one board: a game a round, at the seat it was told.
        assert [x["round"] for x in r.stats.rounds] == [1, 2], r.stats.rounds
        assert len(r.stats.games) == 2
        assert [g["table"] for g in r.stats.games] == [x["table"] for x in r.stats.rounds]
        assert r.stats.fallbacks == 0
    standings = runners[0].stats.event_end["standings"]  # type: ignore[index]
    assert sorted(tuple(sorted(s["names"])) for s in standings) == [
        ("ann-bot", "ben-bot"),
        ("cat-bot", "dan-bot"),
    ]
    assert [s["place"] for s in standings] == [1, 2]
    assert len(stats) == 4 and all("2 event rounds" in s.summary() for s in stats)
    final = await show(server, event)
    assert final.summary.status.value == "finished"
    # The standings the runners were told are the event's own.
    assert [s.key for s in final.standings] == [s["key"] for s in standings]


async def test_a_registered_bot_checks_in_and_the_field_is_filled(server: Server) -> None:
    """A bot registered before (another run) just checks in; alone in a pairs event without a
    partner, the server partners it and fills the field with its house bots."""
    tokens = await bot_tokens(server, "solo-bot")
    info = await announce(
        server, tokens["solo-bot"], format=EventFormat.SWISS_PAIRS, rounds=1, boards=1
    )
    event = info.summary.event
    client = await WireClient.connect(server.port)
    await client.hello(token=tokens["solo-bot"])
    assert isinstance(await client.request(m.EventRegister(event=event)), m.Ok)
    await client.aclose()
    solo = runner(server, tokens["solo-bot"], event)
    await run_all([solo])
    assert solo.stats.event_end is not None and len(solo.stats.rounds) == 1
    final = await show(server, event)
    assert any(e.house for e in final.entrants)


async def test_refusals_end_the_run_in_one_sentence(server: Server) -> None:
    tokens = await bot_tokens(server, "late-bot", "host-bot")
    with trio.fail_after(20), pytest.raises(RunnerError, match="no_such_event"):
        await runner(server, tokens["late-bot"], "E99").run()
    # An event open to people only takes no bot.
    info = await announce(
        server, tokens["host-bot"], format=EventFormat.SWISS_PAIRS, rounds=1, entry=EventEntry.PEOPLE,
        lead=60,
    )  # fmt: skip
    with trio.fail_after(20), pytest.raises(RunnerError, match="not_allowed"):
        await runner(server, tokens["late-bot"], info.summary.event).run()


async def test_four_pairs_of_bots_play_a_knockout(server: Server) -> None:
    """The losers of round 1 play no more but wait, checked in, for the end as the finalists do."""
    names = [f"k{i}-bot" for i in range(8)]
    tokens = await bot_tokens(server, *names)
    info = await announce(
        server, tokens[names[0]], format=EventFormat.KNOCKOUT_PAIRS, rounds=2, boards=1
    )
    event = info.summary.event
    runners = [
        runner(server, tokens[name], event, partner=names[i ^ 1]) for i, name in enumerate(names)
    ]
    await run_all(runners, pairs_in_turn=True)
    played = sorted(len(r.stats.rounds) for r in runners)
    assert played == [1, 1, 1, 1, 2, 2, 2, 2], played  # two pairs went out in round 1
    for r in runners:
        assert r.stats.event_end is not None and not r.stats.event_end["cancelled"]
    final = await show(server, event)
    assert final.summary.status.value == "finished"
    assert len(final.matches) == 3 and all(x.winner is not None for x in final.matches)
    champion = next(x.winner for x in final.matches if x.round == 2)
    assert final.standings[0].key == champion
    # `spades event` draws it: the champion's pair at the end of the winner's line.
    lines = bracket_lines(final, 80)
    assert lines[0].split() == ["Round", "1", "Final", "Winner"], lines
    pair = next(" & ".join(e.names) for e in final.entrants if e.key == champion)
    assert lines[4].rstrip().endswith(f"├─{pair}"), lines


async def test_a_cancelled_event_ends_the_run(server: Server) -> None:
    tokens = await bot_tokens(server, "wait-bot")
    info = await announce(
        server, tokens["wait-bot"], format=EventFormat.SWISS_PAIRS, rounds=1, lead=60
    )
    event = info.summary.event
    waiting = runner(server, tokens["wait-bot"], event)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_all, [waiting], 30)
        with trio.fail_after(20):
            # Polled: the runner's check-in has no event of its own to wait on.
            while waiting._play_request is not None or not waiting._registered:  # noqa: ASYNC110
                await trio.sleep(0.01)
        client = await WireClient.connect(server.port)
        await client.hello(token=tokens["wait-bot"])
        assert isinstance(await client.request(m.EventCancel(event=event)), m.Ok)
        await client.aclose()
    assert waiting.stats.event_end == {"event": event, "cancelled": True, "standings": []}


async def test_a_dropped_runner_checks_in_again_and_plays_on(server: Server) -> None:
    """The line drops in the middle of round 1: the runner reconnects, checks in again, gets its
    seat back (the server holds it for the table's grace) and plays the event to its end."""
    tokens = await bot_tokens(server, "drop-bot", "mate-bot")
    info = await announce(
        server, tokens["drop-bot"], format=EventFormat.SWISS_PAIRS, rounds=2, boards=1
    )
    event = info.summary.event
    turns = 0

    def cut_the_line(message: m.Message) -> None:
        nonlocal turns
        if isinstance(message, m.YourTurn):
            turns += 1
            if turns == 3:  # in round 1, mid-hand
                dropping.disconnect()

    dropping = runner(server, tokens["drop-bot"], event, partner="mate-bot")
    dropping.on_message = cut_the_line
    mate = runner(server, tokens["mate-bot"], event, partner="drop-bot")
    await run_all([dropping, mate], pairs_in_turn=True)
    assert dropping.stats.connections == 2
    assert [x["round"] for x in dropping.stats.rounds] == [1, 2]
    assert dropping.stats.event_end is not None and len(dropping.stats.games) == 2
    final = await show(server, event)
    mine = next(s for s in final.standings if "drop-bot" in s.names)
    assert mine.forfeits == 0  # back within the grace: nothing forfeited
