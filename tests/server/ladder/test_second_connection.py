"""A bot's owner looks at the ladder with the bot's own token while the bot plays a match: nothing
moves (issue 15, item 1), and `ladder_leave` from that second connection takes effect after the match
in progress, which the bot plays to its end (item 2). A real server on 127.0.0.1."""

from __future__ import annotations

import dataclasses

import trio

from protocol.messages import (
    LadderLeave,
    LadderMatches,
    LadderStandings,
    Matches,
    MatchStarted,
    Message,
    Ok,
    SeatLost,
    Standings,
)
from protocol.types import ClientKind
from server.ladder import store as ladder_store
from server.storage import read_transaction
from tests.server.ladder.conftest import ServerFactory, ladder_of
from tests.server.ladder.test_service import FAST, register_bot, runner_for
from tests.server.wire_client import WireClient


async def test_the_owners_queries_do_not_touch_the_bots_match_and_leave_waits_for_its_end(
    make_server: ServerFactory,
) -> None:
    settings = dataclasses.replace(FAST, hands=2)
    with trio.fail_after(90):
        async with (
            make_server(ladder=True, ladder_settings=settings) as server,
            trio.open_nursery() as nursery,
        ):
            service = ladder_of(server)
            for spec in ("random", "heuristic", "search,ms=5"):
                await service.add_house_bot(spec)
            token = await register_bot(server, "mybot")
            seen: list[Message] = []
            started = trio.Event()

            def watch(message: Message) -> None:
                seen.append(message)
                if isinstance(message, MatchStarted):
                    started.set()

            runner = runner_for(server, "heuristic", token, seed=4, on_message=watch)
            nursery.start_soon(runner.run)
            await started.wait()
            # The owner, from another terminal holding the same token, looks and then leaves.
            owner = await WireClient.connect(server.port)
            await owner.hello(token=token, kind=ClientKind.BOT)
            assert isinstance(await owner.request(LadderStandings()), Standings)
            assert isinstance(await owner.request(LadderMatches(entrant="mybot")), Matches)
            left = await owner.request(LadderLeave())
            assert isinstance(left, Ok) and left.note and "match in progress" in left.note
            await owner.aclose()
            # The bot plays its match to the end, and is then gone from the ladder.
            await service.wait_rated(1)
            for _ in range(400):  # the ladder prunes a leaving entrant at its next round
                if not any(e.account.name == "mybot" for e in service.entrants.values()):
                    break
                await trio.sleep(0.05)
            assert not any(e.account.name == "mybot" for e in service.entrants.values())
            nursery.cancel_scope.cancel()
    with read_transaction(server.config.db_path) as tx:
        stored = ladder_store.matches(tx)
    (match,) = [m for m in stored if any("mybot" in team for team in m["teams"])]
    assert match["status"] == "rated" and match["forfeits"] == [], match
    assert len(match["games"]) == 1  # a match is one table
    # The bot's seat went back to the ladder at the end of the match, and it was told so.
    assert [m.reason for m in seen if isinstance(m, SeatLost)] == ["match_over"]
