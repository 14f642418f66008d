"""The ladder on a real server: eight remote bots through the SDK runner, house bots, forfeits."""

import dataclasses
from collections.abc import Callable
from pathlib import Path

import trio

from bots.registry import make_bot
from bots.sdk.runner import BotRunner, RunnerConfig
from protocol.messages import (
    Error,
    Join,
    Joined,
    LadderEnter,
    LadderLeave,
    LadderStandings,
    MatchEnded,
    MatchStarted,
    Message,
    Ok,
    Register,
    Registered,
    Spectate,
    Standings,
    YourTurn,
)
from protocol.types import ClientKind
from server.app import Server, local_config, running_server
from server.ladder import store as ladder_store
from server.ladder.house import add_house_bots_command
from server.ladder.ratings import recompute
from server.ladder.scheduler import SchedulerSettings
from server.ladder.settings import LadderSettings
from server.storage import Tx, read_transaction, write_transaction
from tests.server.ladder.conftest import ServerFactory, ladder_of
from tests.server.wire_client import WireClient

FAST = LadderSettings(hands=1, interval=0.05, seed=7, scheduler=SchedulerSettings())


async def register_bot(server: Server, name: str) -> str:
    client = await WireClient.connect(server.port)
    await client.hello(kind=ClientKind.BOT)
    reply = await client.request(Register(name=name))
    assert isinstance(reply, Registered), reply
    await client.aclose()
    return reply.token


def runner_for(
    server: Server,
    spec: str,
    token: str,
    seed: int,
    on_message: Callable[[Message], None] | None = None,
) -> BotRunner:
    config = RunnerConfig(
        host="127.0.0.1", port=server.port, token=token, ladder=True, games=0, backoff=(0.05, 0.2)
    )
    return BotRunner(make_bot(spec, seed=seed), config, on_message=on_message)


async def test_eight_bots_play_rated_matches_and_a_dropped_bot_forfeits(
    make_server: ServerFactory,
) -> None:
    specs = ["random", "random", "heuristic", "heuristic", "search,ms=5", "search,ms=5"]
    specs += ["heuristic", "random"]
    # Matches that would start alone wait for a twin while others play: the eight fall in step.
    settings = dataclasses.replace(FAST, twin_wait=30.0)
    with trio.fail_after(100):
        async with make_server(ladder=True, ladder_settings=settings) as server:
            tokens = [await register_bot(server, f"lb{i}") for i in range(len(specs))]
            seen = {"matches": 0, "turns": 0, "dropped": 0}

            def drop_in_second_match(message: Message) -> None:
                # The last bot cuts its line on its third turn of its second match.
                if isinstance(message, MatchEnded):
                    seen["matches"] += 1
                    seen["turns"] = 0
                elif isinstance(message, YourTurn) and seen["matches"] == 1 and not seen["dropped"]:
                    seen["turns"] += 1
                    if seen["turns"] == 3:
                        seen["dropped"] = 1
                        runner.disconnect()

            async with trio.open_nursery() as nursery:
                service = ladder_of(server)
                runners = [
                    runner_for(server, spec, token, seed=i)
                    for i, (spec, token) in enumerate(zip(specs[:-1], tokens[:-1], strict=True))
                ]
                runner = runner_for(
                    server, specs[-1], tokens[-1], seed=99, on_message=drop_in_second_match
                )
                for each in [*runners, runner]:
                    nursery.start_soon(each.run)
                await service.wait_rated(6)
                # Keep going until the dropper's forfeit has been rated too.
                with trio.fail_after(60):
                    while not any(m["forfeits"] for m in _stored_matches(server)):
                        await service.wait_rated(service.rated + 1)
                client = await WireClient.connect(server.port)
                await client.hello(token=tokens[0], kind=ClientKind.BOT)
                standings = await client.request(LadderStandings(limit=50))
                await client.aclose()
                nursery.cancel_scope.cancel()

    assert isinstance(standings, Standings)
    names = {line.name for line in standings.entries}
    assert len(names) == 8 and all(line.games >= 1 for line in standings.entries)
    ratings = [line.rating for line in standings.entries]
    assert ratings == sorted(ratings, reverse=True)

    with read_transaction(server.config.db_path) as tx:
        _check_rated_history(tx)


def _check_rated_history(tx: Tx) -> None:
    rated = [m for m in ladder_store.matches(tx, limit=1000) if m["status"] == "rated"]
    assert len(rated) >= 6
    clean = [m for m in rated if not m["forfeits"]]
    for match in clean:
        # A match is one real game on the server, with its hand record.
        (game,) = match["games"]
        assert tx.hand_count(game) == (1, 1)
        assert len(match["changes"]) == 4
        seats = {tuple(t) for t in match["teams"]}
        assert len({n for t in seats for n in t}) == 4  # one account, one seat
    # Matches that started together were twins: dealt the very same seeds at two tables, by
    # eight different accounts; and no account was ever dealt the same deal twice.
    history = ladder_store.rated_outcomes(tx)
    twins = [(o, t) for o in history for t in history if o.twin == t.match_id]
    assert twins
    for one, other in twins:
        assert [seed for seed, _ in one.deals] == [seed for seed, _ in other.deals]
        assert set(one.entrants).isdisjoint(other.entrants)
    dealt = dealt_deals(tx)
    assert len(dealt) == len(set(dealt)) and len(dealt) >= 4 * len(rated)
    forfeited = [m for m in rated if m["forfeits"]]
    assert forfeited[0]["forfeits"] == ["lb7"]
    # Only the forfeiter's rating moved, and it moved down.
    moves = forfeited[0]["changes"]
    assert set(moves) == {"lb7"}
    assert moves["lb7"]["after"]["mu"] < moves["lb7"]["before"]["mu"]
    # Every clean match was rated deal by deal: its one deal, with its twin's when it had one.
    assert all(len(o.deals) == 1 for o in history if not o.forfeits)
    assert all(
        tuple(map(sum, zip(*(p for _, p in o.deals), strict=True))) == o.points for o in history
    )
    # The stored ratings are exactly the ones rebuilt from the stored history.
    rebuilt = recompute(ladder_store.rated_outcomes(tx))
    assert ladder_store.current_ratings(tx) == {int(k): v for k, v in rebuilt.items()}


def dealt_deals(tx: Tx) -> list[tuple[int, str]]:
    """(account, seed) for every seat of every game stored, and every deal it was dealt."""
    out: list[tuple[int, str]] = []
    for game_id in tx.game_ids():
        game = tx.load_game(game_id)
        assert game is not None
        for seat in game.seats:
            out.extend((seat["account"], hand.seed) for hand in game.hands)
    return out


def _stored_matches(server: Server) -> list[dict[str, object]]:
    with read_transaction(server.config.db_path) as tx:
        return ladder_store.matches(tx, limit=100)


async def test_house_bots_give_a_lone_bot_opponents(
    make_server: ServerFactory, tmp_path: Path
) -> None:
    # The host enters house bots with the CLI's function: before the server starts, and while the
    # ladder runs (it looks for new ones every `house_poll` seconds).
    path = tmp_path / "ladder.db"
    message = add_house_bots_command(path, ["random", "heuristic"])
    assert message == "entered on the ladder: house:random, house:heuristic"
    settings = dataclasses.replace(FAST, house_poll=0.05)
    with trio.fail_after(60):
        async with (
            make_server(ladder=True, ladder_settings=settings) as server,
            trio.open_nursery() as nursery,
        ):
            service = ladder_of(server)
            token = await register_bot(server, "lonely")
            nursery.start_soon(runner_for(server, "heuristic", token, seed=1).run)
            await trio.to_thread.run_sync(add_house_bots_command, path, ["search,ms=5"])
            await service.wait_rated(2)
            nursery.cancel_scope.cancel()
    with read_transaction(path) as tx:
        stored = ladder_store.matches(tx)
    for match in stored:
        names = {n for team in match["teams"] for n in team}
        assert names == {"lonely", "house:random", "house:heuristic", "house:search,ms=5"}


async def test_a_silent_bot_forfeits_by_timeouts_and_sits_out(make_server: ServerFactory) -> None:
    settings = LadderSettings(hands=1, interval=0.05, seed=3, max_timeouts=2, cooldown=600)
    with trio.fail_after(60):
        async with (
            make_server(bot_clock=0.05, ladder=True, ladder_settings=settings) as server,
            trio.open_nursery() as nursery,
        ):
            service = ladder_of(server)
            for spec in ("random", "heuristic", "search,ms=5"):
                await service.add_house_bot(spec)
            token = await register_bot(server, "silent")
            client = await WireClient.connect(server.port)
            await client.hello(token=token, kind=ClientKind.BOT)
            assert isinstance(await client.request(LadderEnter()), Ok)
            again = await client.request(LadderEnter())
            assert isinstance(again, Error) and again.code == "already_on_ladder"
            started = await client.expect(MatchStarted)
            assert "silent" in started.players
            # Anyone may watch a ladder table; nobody else may sit at it.
            other = await WireClient.connect(server.port)
            await other.hello(token=await register_bot(server, "intruder"))
            for seat in range(4):
                refused = await other.request(Join(table=started.table, seat=seat))
                assert isinstance(refused, Error) and refused.code == "table_full", refused
            assert isinstance(await other.request(Spectate(table=started.table)), Joined)
            await other.aclose()
            await service.wait_rated(1)
            (silent,) = [e for e in service.entrants.values() if e.account.name == "silent"]
            assert silent.benched_until > trio.current_time()  # sits out after a forfeit
            assert isinstance(await client.request(LadderLeave()), Ok)
            gone = await client.request(LadderLeave())
            assert isinstance(gone, Error) and gone.code == "not_on_ladder"
            await client.aclose()
            nursery.cancel_scope.cancel()
    with read_transaction(server.config.db_path) as tx:
        (match,) = ladder_store.matches(tx)
        row = tx.match(ladder_store.match_seq(match["match"]))
    assert match["forfeits"] == ["silent"] and len(match["games"]) == 1
    assert row is not None and row.halves[0]["seats"]


async def test_guests_cannot_enter_and_standings_answer_without_a_ladder(server: Server) -> None:
    from protocol.messages import Guest

    with trio.fail_after(20):
        client = await WireClient.connect(server.port)
        await client.hello()
        assert isinstance(await client.request(LadderStandings()), Standings)
        refused = await client.request(LadderEnter())
        assert isinstance(refused, Error) and refused.code == "not_on_ladder"
        await client.aclose()
    with trio.fail_after(20):
        # A database of its own: `server` still holds its own (one server per database).
        other_db = server.config.db_path.with_name("with-ladder.db")
        config = local_config(other_db, ladder=True, ladder_settings=FAST)
        async with running_server(config) as with_ladder:
            client = await WireClient.connect(with_ladder.port)
            await client.hello()
            await client.request(Guest())
            refused = await client.request(LadderEnter())
            assert isinstance(refused, Error) and refused.code == "not_authenticated"
            await client.aclose()


async def test_the_server_runs_its_own_ladder_by_default(make_server: ServerFactory) -> None:
    with trio.fail_after(20):
        async with make_server(ladder=True) as server:
            service = ladder_of(server)
            assert service.settings == LadderSettings()
            token = await register_bot(server, "solo")
            client = await WireClient.connect(server.port)
            await client.hello(token=token, kind=ClientKind.BOT)
            entered = await client.request(LadderEnter())
            assert isinstance(entered, Ok)
            assert service.entrants
            await client.aclose()
    # Alone on a server without house bots: told why it waits, and what the host can do.
    assert entered.note is not None
    assert entered.note.startswith("waiting for 3 more entrants: a match needs 4")
    assert "no other entrant is on the ladder" in entered.note
    assert "spades-server ladder add-house-bots" in entered.note


async def test_an_entrant_is_told_who_else_is_on_the_ladder(make_server: ServerFactory) -> None:
    with trio.fail_after(20):
        async with make_server(ladder=True) as server:
            service = ladder_of(server)
            await service.add_house_bot("random")
            notes = []
            clients = []
            for name in ("one", "two", "three"):
                client = await WireClient.connect(server.port)
                await client.hello(token=await register_bot(server, name), kind=ClientKind.BOT)
                entered = await client.request(LadderEnter())
                assert isinstance(entered, Ok)
                notes.append(entered.note)
                clients.append(client)
            for client in clients:
                await client.aclose()
    assert notes == [
        "waiting for 2 more entrants: a match needs 4 and 1 other entrant is on the ladder",
        "waiting for 1 more entrant: a match needs 4 and 2 others are on the ladder",
        "waiting for a match; 3 other entrants are on the ladder",
    ]


async def test_matches_wait_for_room_and_one_table_at_a_time_is_enough(
    make_server: ServerFactory,
) -> None:
    from server.config import Limits

    with trio.fail_after(40):
        async with (
            make_server(limits=Limits(max_tables=1), ladder=True, ladder_settings=FAST) as server,
            trio.open_nursery() as nursery,
        ):
            service = ladder_of(server)
            for spec in ("random", "heuristic", "search,ms=5"):
                await service.add_house_bot(spec)
            token = await register_bot(server, "roomy")
            nursery.start_soon(runner_for(server, "random", token, seed=3).run)
            await service.wait_rated(2)
            nursery.cancel_scope.cancel()
    with read_transaction(server.config.db_path) as tx:
        statuses = {m["status"] for m in ladder_store.matches(tx, limit=1000)}
    assert statuses <= {"rated", "void"}
    assert service.voided == 0


async def test_the_ladder_rebuilds_its_ratings_from_the_history_at_start(
    make_server: ServerFactory, tmp_path: Path
) -> None:
    # Ratings stored by other rules (an older server, another tau) are replaced at start by the
    # ones this server's rules give for the rated history.
    from server.ladder.ratings import RatingModel
    from tests.server.ladder import made

    path = tmp_path / "ladder.db"
    names = ["p0", "p1", "p2", "p3"]
    with write_transaction(path) as tx:
        made.rated_match(tx, names, [(120, 40), (60, 90)])
        made.rated_match(tx, [names[1], names[0], names[3], names[2]], [(10, 70)])
        stale = made.account(tx, "p0")
        tx.set_rating(stale, ladder_store.RATING_KEY, mu=99.0, sigma=0.5, games=7)
    settings = dataclasses.replace(FAST, tau=0.3)
    with trio.fail_after(30):
        async with (
            make_server(ladder=True, ladder_settings=settings) as server,
            trio.open_nursery() as nursery,
        ):
            service = ladder_of(server)
            nursery.cancel_scope.cancel()
    with read_transaction(path) as tx:
        expected = recompute(ladder_store.rated_outcomes(tx), RatingModel(tau=0.3))
        current = ladder_store.current_ratings(tx)
    assert service.ratings == expected
    assert current == {int(k): v for k, v in expected.items()}
    assert current[stale].mu != 99.0
