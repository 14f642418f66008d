"""Twins on a real server: two matches dealt the same deals at two tables at once, by eight different
accounts, and a spectator of the table ahead sees a deal only once the other table has played it.

Eight people enter; the ladder is held (no room for matches) until all eight are in, so its first
round seats all of them: one pair of twins. The test plays every seat with the first legal action,
and holds one player of the second table on its first turn, so the first table runs a deal ahead.
"""

import dataclasses

import pytest
import trio

from protocol.messages import (
    Act,
    DealCommitment,
    DealSeed,
    Joined,
    LadderEnter,
    MatchEnded,
    MatchStarted,
    Message,
    Ok,
    Pong,
    Spectate,
    YourTurn,
)
from server.ladder import store as ladder_store
from server.ladder.ratings import recompute
from server.ladder.settings import LadderSettings
from server.storage import StorageError, Tx, read_transaction
from tests.server.ladder.conftest import ServerFactory, ladder_of
from tests.server.ladder.test_queries import person
from tests.server.ladder.test_service import dealt_deals
from tests.server.watching import a_deal_late

SETTINGS = LadderSettings(hands=2, interval=0.05, seed=21, max_matches=0, twin_wait=60.0)
MAX_MESSAGES = 3000  # a two-hand match is far fewer messages than this


async def test_twins_share_their_deals_and_the_table_ahead_is_watched_a_deal_late(
    make_server: ServerFactory,
) -> None:
    names = [f"p{i}" for i in range(8)]
    with trio.fail_after(120):
        async with (
            make_server(ladder=True, ladder_settings=SETTINGS) as server,
            trio.open_nursery() as nursery,
        ):
            service = ladder_of(server)
            players = {name: await person(server.port, name) for name in names}
            for client in players.values():
                assert isinstance(await client.request(LadderEnter()), Ok)
            tables: dict[str, str] = {}
            all_started = trio.Event()
            go = {name: trio.Event() for name in names}
            ahead_dealt_again = trio.Event()
            ended = {name: trio.Event() for name in names}

            async def play(name: str) -> None:
                client = players[name]
                for _ in range(MAX_MESSAGES):
                    message: Message | None = await client.receive()
                    assert message is not None, f"{name}'s connection closed"
                    if isinstance(message, MatchStarted):
                        tables[name] = message.table
                        if len(tables) == len(names):
                            all_started.set()
                    elif isinstance(message, YourTurn):
                        await go[name].wait()
                        action = message.legal[0]
                        await client.send(
                            Act(table=message.table, version=message.version, action=action)
                        )
                    elif isinstance(message, DealSeed) and message.hand_number == 1:
                        if tables[name] == tables[names[0]]:
                            ahead_dealt_again.set()
                    elif isinstance(message, MatchEnded):
                        ended[name].set()
                        return
                raise AssertionError(f"{name}: no match_ended")

            for name in names:
                nursery.start_soon(play, name)
            # All eight are in: make room for two matches. The first round pairs them up.
            service.settings = dataclasses.replace(SETTINGS, max_matches=2)
            service.wake()
            await all_started.wait()
            ahead = tables[names[0]]
            (behind,) = {t for t in tables.values() if t != ahead}
            at_ahead = [n for n in names if tables[n] == ahead]
            at_behind = [n for n in names if tables[n] == behind]
            assert len(at_ahead) == len(at_behind) == 4

            watcher = await person(server.port, "watcher")
            before = len(watcher.received)
            assert isinstance(await watcher.request(Spectate(table=ahead)), Joined)
            stalled = at_behind[0]
            for name in names:
                if name != stalled:
                    go[name].set()
            # The table ahead plays its first deal through while the other waits on one player.
            await ahead_dealt_again.wait()
            db = server.config.db_path
            await a_deal_late(watcher, before, db, ahead, behind, go[stalled])
            for event in ended.values():
                await event.wait()
            # It saw the table as it was when it came (the snapshot first, held with the rest),
            # then every deal after it, in order.
            told = [m for m in watcher.received[before:] if not isinstance(m, Pong)]
            assert [m.TYPE for m in told[:2]] == ["joined", "snapshot"]
            commitments = [m.hand_number for m in told if isinstance(m, DealCommitment)]
            assert commitments in ([1, 2], [2])
            await service.wait_rated(2)
            for client in (*players.values(), watcher):
                await client.aclose()
            nursery.cancel_scope.cancel()

    with read_transaction(server.config.db_path) as tx:
        history = ladder_store.rated_outcomes(tx)
        assert len(history) == 2
        first, second = history
        assert first.twin == second.match_id and second.twin == first.match_id
        assert [s for s, _ in first.deals] == [s for s, _ in second.deals]
        assert set(first.entrants).isdisjoint(second.entrants)
        # Eight accounts, two deals each (and the next round may have begun): never a deal twice.
        dealt = dealt_deals(tx)
        assert len(dealt) == len(set(dealt)) >= 16
        rebuilt = recompute(ladder_store.rated_outcomes(tx))
        assert ladder_store.current_ratings(tx) == {int(k): v for k, v in rebuilt.items()}


async def test_twins_cut_short_by_the_server_stopping_are_void_and_never_rated(
    make_server: ServerFactory,
) -> None:
    names = [f"q{i}" for i in range(8)]
    with trio.fail_after(60):
        async with make_server(ladder=True, ladder_settings=SETTINGS) as server:
            service = ladder_of(server)
            players = [await person(server.port, name) for name in names]
            for client in players:
                assert isinstance(await client.request(LadderEnter()), Ok)
            service.settings = dataclasses.replace(SETTINGS, max_matches=2)
            service.wake()
            # Both matches start, and nobody plays a card: the server stops under them.
            tables = {(await client.expect(MatchStarted)).table for client in players}
            assert len(tables) == 2
            # (The players stay connected: a drop would be a forfeit. The server hangs up on them.)
        for client in players:
            await client.aclose()
        async with make_server(ladder=True, ladder_settings=SETTINGS) as again:
            assert ladder_of(again).ratings == {}
    with read_transaction(server.config.db_path) as tx:
        matches = ladder_store.matches(tx, limit=10)
        assert [m["status"] for m in matches] == ["void", "void"]
        assert ladder_store.rated_outcomes(tx) == [] and ladder_store.current_ratings(tx) == {}


async def test_a_twin_whose_game_cannot_be_kept_is_void_and_the_other_is_rated_alone(
    make_server: ServerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The first twin table to finish cannot store its game (the store fails under it): that match
    # is void, never rated, and its twin is rated as a match played alone, on its own deals.
    names = [f"r{i}" for i in range(8)]
    real_link = ladder_store.link_game
    failed: list[str] = []

    def link_or_fail(tx: Tx, match: str, half: int, game_id: int) -> None:
        if not failed:
            failed.append(match)
            raise StorageError("the disk is full (the test's)")
        real_link(tx, match, half, game_id)

    monkeypatch.setattr(ladder_store, "link_game", link_or_fail)
    with trio.fail_after(120):
        async with (
            make_server(ladder=True, ladder_settings=SETTINGS) as server,
            trio.open_nursery() as nursery,
        ):
            service = ladder_of(server)
            players = {name: await person(server.port, name) for name in names}
            for client in players.values():
                assert isinstance(await client.request(LadderEnter()), Ok)
            told: dict[str, list[Message]] = {name: [] for name in names}
            told_ended: set[str] = set()
            four_told = trio.Event()  # the rated match's four have read its `match_ended`

            async def play(name: str) -> None:
                client = players[name]
                for _ in range(MAX_MESSAGES):
                    message = await client.receive()
                    if message is None:
                        return
                    told[name].append(message)
                    if isinstance(message, MatchEnded):
                        told_ended.add(name)
                        if len(told_ended) == 4:
                            four_told.set()
                    if isinstance(message, YourTurn):
                        action = message.legal[0]
                        await client.send(
                            Act(table=message.table, version=message.version, action=action)
                        )

            for name in names:
                nursery.start_soon(play, name)
            service.settings = dataclasses.replace(SETTINGS, max_matches=2)
            service.wake()
            await service.wait_voided(1)
            await service.wait_rated(1)
            await four_told.wait()  # told after the rating is stored: read before hanging up
            # No further matches: the history is these two.
            service.settings = SETTINGS
            for client in players.values():
                await client.aclose()
            nursery.cancel_scope.cancel()

    (void_match,) = failed
    with read_transaction(server.config.db_path) as tx:
        stored = {m["match"]: m for m in ladder_store.matches(tx, limit=10)}
        history = ladder_store.rated_outcomes(tx)
        current = ladder_store.current_ratings(tx)
    assert stored[void_match]["status"] == "void" and stored[void_match]["changes"] == {}
    (alone,) = history
    assert alone.match_id != void_match and alone.twin is None
    assert stored[alone.match_id]["twin"] is None and len(alone.deals) == SETTINGS.hands
    # Only the rated match's four have ratings, and they are what the history rebuilds to.
    assert set(current) == {int(e) for e in alone.entrants}
    assert current == {int(k): v for k, v in recompute(history).items()}
    # Its players were told it ended; the void match's were not (it is not rated).
    ended = {n for n, seen in told.items() if any(isinstance(m, MatchEnded) for m in seen)}
    assert len(ended) == 4
    started = {n: next(m for m in seen if isinstance(m, MatchStarted)) for n, seen in told.items()}
    assert {started[n].match for n in ended} == {alone.match_id}
