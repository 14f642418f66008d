"""The double-dummy part of the player statistics (server/hand_analysis.py): a game is recorded
and its next hand dealt while a hand's analysis runs; each hand is counted once, per account; the
solver's process answers, is killed past its time, and refuses what it cannot analyse."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import trio

from engine.records import game_records, hand_to_record
from engine.review import PlayedHand, Reviewer
from engine.ruleset import PRESETS, Ruleset
from protocol.messages import (
    GameOver,
    HandDealt,
    PlayerStats,
    Stats,
)
from server.app import local_config, running_server
from server.dd_worker import analyse
from server.hand_analysis import HandAnalysis, analyse_in_process
from server.storage import Store, Tx
from tests.engine.helpers import fill_deal, play_random_game, random_action, spades
from tests.server.wire_client import watch_bots_game


def _record() -> dict[str, Any]:
    game = play_random_game(PRESETS["standard"], random.Random(3), max_hands=1)
    record: dict[str, Any] = json.loads(json.dumps(game_records(game)[0]))
    return record


async def test_a_game_goes_on_while_a_hand_is_analysed(tmp_path: Path) -> None:
    """The analysis of the first hand is held until the game is over: the game is recorded to its
    end and its second hand dealt meanwhile; then both hands are counted, once each."""
    release = trio.Event()
    began = trio.Event()
    started: list[int] = []

    async def held(record: dict[str, Any]) -> list[int] | None:
        started.append(record["hand_number"])
        began.set()
        await release.wait()
        return [1, 0, 2, 0]

    with trio.fail_after(60):
        config = local_config(tmp_path / "s.db", hand_analysis=True)
        async with running_server(config) as server:
            assert server.analysis is not None
            server.analysis.analyse = held
            server.analysis.busy = lambda: False  # a shared test machine may be loaded
            client, created = await watch_bots_game(
                server.port, {"target_score": 0, "max_hands": 2}
            )
            over = await client.expect(GameOver)
            assert over.table == created.table
            dealt = [m.hand_number for m in client.received if isinstance(m, HandDealt)]
            assert 2 in dealt  # the next hand was dealt while the first one's analysis ran
            stored = await server.store.call(lambda tx: list(tx.hand_records()))
            assert [r["hand_number"] for r in stored] == [1, 2]  # and both were recorded
            # No analysis has finished: the game did not wait for one. The first hand's is under way
            # (held), the second's queued behind it.
            assert not release.is_set() and server.analysis.analysed == 0
            await began.wait()
            assert started == [1]
            release.set()
            await server.stats.idle.wait()
            await server.analysis.idle.wait()
            assert started == [1, 2] and server.analysis.analysed == 2
            name = "bot:heuristic"
            reply = await client.request(Stats(name=name))
            assert isinstance(reply, PlayerStats), reply
            # One account at all four seats: each hand adds one hand a seat and 1 + 0 + 2 + 0.
            assert (reply.dd_hands, reply.dd_tricks_lost) == (8, 6)
            await client.aclose()


async def test_a_hand_is_analysed_once_and_skipped_when_busy(store: Store) -> None:
    calls: list[int] = []

    async def fake(record: dict[str, Any]) -> list[int] | None:
        calls.append(record["hand_number"])
        return [3, 1, 0, 0]

    def setup(tx: Tx) -> tuple[int, int]:
        a = tx.insert_account("ada", None, None, is_bot=False, is_guest=False)
        tx.insert_table("t", {})
        return a, tx.insert_game("t", "spades", {}, [])

    ada, game = await store.call(setup)
    busy = False
    job = HandAnalysis(store, analyse=fake, busy=lambda: busy)
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            await nursery.start(job.run)
            record = {"hand_number": 1}
            job.post((game, 1, record, [ada, None, ada, None]))
            job.post((game, 1, record, [ada, None, ada, None]))  # again: counted once
            await job.idle.wait()
            assert await store.call(lambda tx: tx.dd_stats(ada)) == (2, 3)  # two seats: 3 + 0
            busy = True
            job.post((game, 2, {"hand_number": 2}, [ada, None, None, None]))
            await job.idle.wait()
            assert job.skipped == 1 and calls == [1, 1]
            assert await store.call(lambda tx: tx.dd_stats(ada)) == (2, 3)
            nursery.cancel_scope.cancel()


def test_the_worker_answers_and_refuses_with_a_reason() -> None:
    record = _record()
    # A budget of one position analyses only the last few cards: not complete, so not counted.
    answer = analyse({"record": record, "budget": 1})
    assert answer["complete"] is False and len(answer["lost"]) == 4
    assert "error" in analyse({"record": {**record, "plays": [[0, "ZZ"]]}, "budget": 1})
    three = {**record, "ruleset": PRESETS["three-player"].to_dict()}  # the solver's game is four
    assert "error" in analyse({"record": three, "budget": 1})
    assert "error" in analyse("nonsense")


def _quick_record() -> dict[str, Any]:
    """A whole hand the solver analyses in well under a second: seats 0 and 1 hold the spades and
    hearts, 2 and 3 the diamonds and clubs, played at random (some cards cost tricks)."""
    rng = random.Random(0)
    high = [f"{r}{s}" for s in "SH" for r in "23456789TJQKA"]
    low = [f"{r}{s}" for s in "DC" for r in "23456789TJQKA"]
    rng.shuffle(high)
    rng.shuffle(low)
    game = spades()
    fixed = {0: " ".join(high[:13]), 1: " ".join(high[13:]), 2: " ".join(low[:13])}
    game.deal_fixed(fill_deal(game.ruleset, fixed))
    for _ in range(200):
        if game.histories:
            break
        game.apply(random_action(game, rng))
    record: dict[str, Any] = json.loads(json.dumps(hand_to_record(game.histories[0], game.ruleset)))
    return record


async def test_the_solver_process_answers_as_the_engine_does() -> None:
    record = _quick_record()
    review = Reviewer(PlayedHand.of_record(record, Ruleset.from_stored(record["ruleset"]))).run()
    assert review.complete and review.not_analysed == 0 and any(review.lost)
    with trio.fail_after(60):
        assert await analyse_in_process(record) == list(review.lost)


async def test_the_process_is_killed_past_its_time_and_an_incomplete_hand_is_none() -> None:
    record = _record()
    with trio.fail_after(60):
        # A whole hand takes the solver seconds: past 0.2 s the process is killed.
        assert await analyse_in_process(record, seconds=0.2) is None
        assert await analyse_in_process(record, budget=1, seconds=30) is None
