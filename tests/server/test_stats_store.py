"""Player statistics in the store, on each engine (the `tx` fixture): a hand is counted once
however often it is posted, and a rebuild from the stored hands gives the same counters."""

import random
from typing import Any

import trio

from engine.hand_stats import TALLY_FIELDS, Tally, hand_tallies
from engine.records import game_records
from engine.ruleset import PRESETS
from server.stats import StatsJob, count_hand, player_stats, rebuild
from server.storage import Store, Tx
from tests.engine.helpers import play_random_game


def _store_game(tx: Tx, seed: int, names: list[str]) -> tuple[int, list[dict[str, Any]], list[int]]:
    """A random finished game stored as a table stores one: its seats' accounts, every action and
    every hand's record (no dead deals in the standard preset)."""
    game = play_random_game(PRESETS["standard"], random.Random(seed), max_hands=4)
    ids = []
    for name in names:
        found = tx.account_by_name(name)
        ids.append(
            found.id
            if found is not None
            else tx.insert_account(name, None, None, is_bot=True, is_guest=False)
        )
    table = f"t{seed}"
    tx.insert_table(table, {"game": "spades"})
    seats = [{"account": a, "bot": None} for a in ids]
    game_id = tx.insert_game(table, "spades", PRESETS["standard"].to_dict(), seats)
    records = game_records(game, game_id=str(game_id))
    seq = 0
    for record in records:
        for action in record["actions"]:
            tx.insert_action(game_id, seq, seat=action["seat"], action=action, source="player")
            seq += 1
        tx.insert_hand_record(game_id, record["hand_number"], record)
    # Finished (a running game would be resumed by a server opening the file), its side ahead
    # placed first.
    score = records[-1]["score"]
    best = max(score["after"])
    results = [
        (seat, ids[seat], after, 1 if after == best else 2)
        for side, after in zip(score["sides"], score["after"], strict=True)
        for seat in side
    ]
    tx.finish_game(game_id, "finished", results)
    tx.close_table(table)
    return game_id, records, ids


def _counters(tx: Tx, names: list[str]) -> dict[str, dict[str, int]]:
    out = {}
    for name in names:
        reply = player_stats(tx, name)
        assert reply is not None
        out[name] = {f: getattr(reply, f) for f in TALLY_FIELDS}
    return out


def test_each_hand_counts_once_and_a_rebuild_gives_the_same_counters(tx: Tx) -> None:
    names = ["ada", "bob", "cy", "dee"]
    stored = [_store_game(tx, seed, names) for seed in (1, 2)]
    hands = [(game_id, r["hand_number"]) for game_id, records, _ in stored for r in records]
    random.Random(7).shuffle(hands)
    for game_id, hand_no in hands:
        assert count_hand(tx, game_id, hand_no)
    # Posted again (a retry, a sweep meeting a queued hand): nothing more is added.
    for game_id, hand_no in hands:
        assert not count_hand(tx, game_id, hand_no)
    assert tx.uncounted_hands(100) == []
    counted = _counters(tx, names)
    # What the fold gives for the same records, summed by hand.
    expected = [Tally() for _ in names]
    for _, records, _ in stored:
        for record in records:
            for seat, tally in enumerate(hand_tallies(record)):
                expected[seat] += tally
    for seat, name in enumerate(names):
        fold = expected[seat].as_dict()
        got = counted[name]
        assert got["hands"] == fold["hands"] == len(hands)
        for field in TALLY_FIELDS:
            if field not in ("decisions", "decision_ms"):
                assert got[field] == fold[field], field
        # Every action of the seat is one timed decision.
        actions = sum(
            1
            for _, records, _ in stored
            for r in records
            for a in r["actions"]
            if a["seat"] == seat
        )
        assert got["decisions"] == actions
    ada = player_stats(tx, "ada")
    assert ada is not None and ada.games == 2 and 0 <= ada.wins <= 2
    assert rebuild(tx) == len(hands)
    assert _counters(tx, names) == counted


def test_the_sweep_finds_what_is_not_counted(tx: Tx) -> None:
    game_id, records, _ = _store_game(tx, 3, ["ada", "bob", "cy", "dee"])
    assert count_hand(tx, game_id, 1)
    left = tx.uncounted_hands(100)
    assert left == [(game_id, r["hand_number"]) for r in records[1:]]
    assert tx.uncounted_hands(1) == left[:1]


def test_an_account_without_counted_hands_has_zeros_and_a_stranger_none(tx: Tx) -> None:
    tx.insert_account("eve", None, None, is_bot=False, is_guest=False)
    reply = player_stats(tx, "EVE")
    assert reply is not None and reply.name == "eve" and reply.kind == "human"
    assert reply.hands == 0 and reply.games == 0 and reply.decision_ms == 0
    assert player_stats(tx, "nobody") is None
    assert not count_hand(tx, 10**6, 1)  # no such hand: nothing counted


def test_an_expired_guest_takes_its_statistics_with_it(tx: Tx) -> None:
    from tests.server.test_guest_expiry import guest

    gone = guest(tx, "guest-gone", 1000.0)
    kept = tx.insert_account("ada", None, None, is_bot=False, is_guest=False)
    tx.insert_table("t", {})
    game = tx.insert_game("t", "spades", {}, [])  # an unfinished game: no results
    tx.insert_hand_record(game, 1, {})
    assert tx.count_stats_hand(game, 1, {gone: [1] * len(TALLY_FIELDS), kept: [2] * 11})
    assert tx.player_stats(gone) == [1] * len(TALLY_FIELDS)
    assert tx.expire_guests(5000.0, []) == 1
    assert tx.account_by_id(gone) is None and tx.player_stats(gone) is None
    assert tx.player_stats(kept) == [2] * 11


async def test_posting_never_waits_and_the_sweep_counts_what_the_queue_left(
    store: Store,
) -> None:
    """A table's post returns at once even when the job is not running and its queue is full; the
    hands the queue could not take are counted by the sweep once the job runs."""
    with trio.fail_after(60):
        stored = await store.call(lambda tx: _store_game(tx, 5, ["ada", "bob", "cy", "dee"]))
        game_id, records, _ = stored
        job = StatsJob(store, queue_size=1)
        for record in records:  # far more than fit: none of these may wait
            job.post(game_id, record["hand_number"])
        assert job.left_for_sweep == len(records) - 1
        async with trio.open_nursery() as nursery:
            await nursery.start(job.run)
            await job.idle.wait()
            assert await store.call(lambda tx: tx.uncounted_hands(100)) == []
            ada = await store.call(lambda tx: player_stats(tx, "ada"))
            assert ada is not None and ada.hands == len(records)
            # A hand posted again once counted adds nothing.
            job.post(game_id, 1)
            await job.idle.wait()
            again = await store.call(lambda tx: player_stats(tx, "ada"))
            assert again == ada
            nursery.cancel_scope.cancel()


def test_the_ladder_standings_and_entrant_carry_the_statistics_beside_the_rating(tx: Tx) -> None:
    from server.ladder.desk import _stored_entrant, _stored_standings
    from server.ladder.store import RATING_KEY

    ada = tx.insert_account("ada", None, None, is_bot=False, is_guest=False)
    bot = tx.insert_account("bot-b", None, None, is_bot=True, is_guest=False)
    tx.set_rating(ada, RATING_KEY, mu=30.0, sigma=2.0, games=3)
    tx.set_rating(bot, RATING_KEY, mu=20.0, sigma=2.0, games=3)
    tx.insert_table("t", {})
    game = tx.insert_game("t", "spades", {}, [])
    tx.insert_hand_record(game, 1, {})
    counts = Tally(hands=5, contracts=4, contracts_made=3, bags=2, nil_tried=1, blind_nil_tried=1)
    assert tx.count_stats_hand(game, 1, {ada: list(counts.as_dict().values())})
    first, second = _stored_standings(tx, 10)
    assert (first.name, first.hands, first.contracts, first.contracts_made) == ("ada", 5, 4, 3)
    assert (first.bags, first.nil_tried, first.nil_made) == (2, 2, 0)
    assert (second.name, second.hands, second.contracts) == ("bot-b", 0, 0)  # none counted yet
    shown = _stored_entrant(tx, "ada")  # `ladder_show` carries them too
    assert shown is not None and (shown.rank, shown.hands, shown.contracts_made) == (1, 5, 3)
    assert (shown.bags, shown.nil_tried, shown.nil_made) == (2, 2, 0)
