"""`ladder_matches` and `ladder_show`: a person plays a rated match on a real server, then anyone asks.

Also the answers' shape from a stored history (`server.ladder.desk.wire_match`, `store.record`),
and the per-address entrant limit (`ladder_limit`, which keeps the connection).
"""

import dataclasses
from pathlib import Path

import trio

from protocol.messages import (
    Act,
    Entrant,
    Error,
    LadderEnter,
    LadderLeave,
    LadderMatches,
    LadderShow,
    LadderStandings,
    MatchEnded,
    Matches,
    MatchStarted,
    Message,
    Ok,
    Ping,
    Pong,
    Register,
    Registered,
    Standings,
    YourTurn,
)
from protocol.types import ClientKind, MatchStatus
from server.ladder import store as ladder_store
from server.ladder.desk import wire_match
from server.storage import Tx, write_transaction
from tests.server.ladder.conftest import ServerFactory, ladder_of
from tests.server.ladder.made import rated_match, void_match
from tests.server.ladder.test_service import FAST
from tests.server.wire_client import WireClient

MAX_MESSAGES = 2000  # a one-hand match is far fewer messages than this


async def person(port: int, name: str) -> WireClient:
    """A person's connection (hello kind human), registered as `name`."""
    client = await WireClient.connect(port)
    await client.hello(kind=ClientKind.HUMAN)
    assert isinstance(await client.request(Register(name=name)), Registered)
    return client


async def play_one_match(client: WireClient) -> tuple[list[MatchStarted], MatchEnded]:
    """Answer every turn with the first legal action until the match is over."""
    started: list[MatchStarted] = []
    for _ in range(MAX_MESSAGES):
        message: Message | None = await client.receive()
        assert message is not None, "the server closed the connection"
        if isinstance(message, MatchStarted):
            started.append(message)
        elif isinstance(message, YourTurn):
            act = Act(table=message.table, version=message.version, action=message.legal[0])
            reply = await client.request(act)
            assert isinstance(reply, Ok | Error), reply  # stale if our clock ran out meanwhile
        elif isinstance(message, MatchEnded):
            return started, message
    raise AssertionError("no match_ended")


async def test_a_person_plays_a_rated_match_and_anyone_can_look_it_up(
    make_server: ServerFactory,
) -> None:
    settings = dataclasses.replace(FAST, seed=11)
    with trio.fail_after(60):
        async with (
            make_server(ladder=True, ladder_settings=settings) as server,
            trio.open_nursery() as nursery,
        ):
            service = ladder_of(server)
            ada = await person(server.port, "ada")
            assert isinstance(await ada.request(LadderEnter()), Ok)
            for spec in ("random", "heuristic", "search,ms=5"):
                await service.add_house_bot(spec)
            started, ended = await play_one_match(ada)
            # match_started comes once: a match is one table, and no deal is played twice.
            (begun,) = started
            assert begun.match == ended.match and begun.table == ended.table
            assert "ada" in begun.players and begun.hands == settings.hands
            assert isinstance(await ada.request(LadderLeave()), Ok)
            await service.wait_rated(1)

            viewer = await WireClient.connect(server.port)
            await viewer.hello()  # not logged in: looking needs no account
            listed = await viewer.request(LadderMatches())
            mine = await viewer.request(LadderMatches(entrant="ada", limit=5))
            nobody = await viewer.request(LadderMatches(entrant="nobody"))
            shown = await viewer.request(LadderShow(name="ada"))
            house = await viewer.request(LadderShow(name="house:random"))
            unknown = await viewer.request(LadderShow(name="nobody"))
            standings = await viewer.request(LadderStandings())
            await viewer.aclose()
            await ada.aclose()
            nursery.cancel_scope.cancel()

        # The stored answers need no running ladder.
        async with make_server() as again:
            late = await WireClient.connect(again.port)
            await late.hello()
            after = await late.request(LadderMatches(entrant="ada"))
            await late.aclose()

    assert isinstance(listed, Matches) and isinstance(mine, Matches)
    (match,) = listed.matches
    assert mine.matches == listed.matches
    assert isinstance(after, Matches) and after.matches == listed.matches
    assert isinstance(nobody, Matches) and nobody.matches == []
    assert match.match == ended.match and match.status is MatchStatus.RATED
    assert match.preset == "standard" and match.time is not None
    assert sorted(n for team in match.teams for n in team) == sorted(started[0].players)
    assert [h.table for h in match.halves] == [started[0].table]
    assert match.points is not None
    for team in (0, 1):
        assert match.points[team] == sum(h.points[team] for h in match.halves)
    a, b = match.points
    assert match.winner == (None if a == b else (0 if a > b else 1))
    assert match.forfeits == [] and len(match.ratings) == 4
    # match_ended told ada the same points and rating move.
    (result,) = [r for r in ended.results if r.name == "ada"]
    team = 0 if "ada" in match.teams[0] else 1
    assert result.score == match.points[team]
    (move,) = [r for r in match.ratings if r.name == "ada"]
    assert (move.before, move.after) == (result.rating_before, result.rating_after)

    assert isinstance(shown, Entrant)
    assert shown.name == "ada" and shown.kind is ClientKind.HUMAN and shown.games == 1
    assert shown.wins + shown.draws + shown.losses == 1 and shown.forfeits == 0
    assert shown.rating == move.after and shown.recent == listed.matches
    assert isinstance(standings, Standings)
    assert shown.rank == next(s.rank for s in standings.entries if s.name == "ada")
    assert isinstance(house, Entrant) and house.kind is ClientKind.BOT
    assert isinstance(unknown, Error) and unknown.code == "no_such_entrant"


async def test_one_address_may_enter_only_so_many_and_keeps_its_connection(
    make_server: ServerFactory,
) -> None:
    settings = dataclasses.replace(FAST, max_per_owner=1)
    with trio.fail_after(20):
        async with (
            make_server(ladder=True, ladder_settings=settings) as server,
            trio.open_nursery() as nursery,
        ):
            ladder_of(server)
            first = await person(server.port, "first")
            second = await person(server.port, "second")
            assert isinstance(await first.request(LadderEnter()), Ok)
            refused = await second.request(LadderEnter())
            assert isinstance(refused, Error) and refused.code == "ladder_limit", refused
            assert isinstance(await second.request(Ping()), Pong)  # still connected
            assert isinstance(await first.request(LadderLeave()), Ok)
            assert isinstance(await second.request(LadderEnter()), Ok)
            await first.aclose()
            await second.aclose()
            nursery.cancel_scope.cancel()


def test_stored_matches_become_wire_matches(tmp_path: Path) -> None:
    with write_transaction(tmp_path / "made.db") as tx:
        _check_wire_matches(tx)


def _check_wire_matches(tx: Tx) -> None:
    four = ["ada", "b1", "b2", "b3"]
    first = rated_match(tx, four, [(100, 40), (20, 60)], humans=["ada"])
    drawn = rated_match(tx, four, [(50, 50), (30, 30)], humans=["ada"])
    forfeited = rated_match(tx, four, [(200, -100)], forfeits=["ada"], humans=["ada"])
    void = void_match(tx, four)

    rows = ladder_store.matches(tx, "ada")
    wire = [wire_match(row) for row in rows]
    assert [w.match for w in wire] == [void, forfeited, drawn, first]  # newest first
    v, f, d, w = wire
    assert v.status is MatchStatus.VOID and v.points is None and v.winner is None
    assert v.halves == [] and v.ratings == []
    assert f.forfeits == ["ada"] and f.winner == 1 and f.points == [200, -100]
    assert [h.points for h in f.halves] == [[200, -100]]
    assert [r.name for r in f.ratings] == ["ada"]  # only the forfeiter's rating moved
    assert d.winner is None and d.points == [80, 80]
    assert w.winner == 0 and w.points == [120, 100]
    assert [h.points for h in w.halves] == [[100, 40], [20, 60]]
    assert w.teams == [["ada", "b2"], ["b1", "b3"]]

    assert ladder_store.record(tx, "ada") == {"wins": 1, "draws": 1, "losses": 1, "forfeits": 1}
    assert ladder_store.record(tx, "b1") == {"wins": 1, "draws": 1, "losses": 1, "forfeits": 0}
    assert len(ladder_store.matches(tx, "ada", limit=2)) == 2
