"""`ladder_records` (issue 19, item 3): a bot author fetches a finished ladder match's hand records,
its table's, with every seat's decisions and clock use, and learns why a match was forfeited.

Before: there was no way to fetch a ladder match's hands, and the store kept only the forfeiters'
names (`matches` said who forfeited, never why).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import trio

from engine.records import replay
from protocol.messages import (
    Act,
    Error,
    LadderEnter,
    LadderMatches,
    LadderRecords,
    MatchEnded,
    Matches,
    MatchRecords,
    MatchStarted,
    Message,
    Ok,
    SeatLost,
    YourTurn,
)
from protocol.types import ClientKind
from server.ladder import store as ladder_store
from server.ladder.desk import LadderArchive
from server.storage import Tx
from server.storage.sqlite_driver import SqliteDriver
from tests.server.ladder.conftest import ServerFactory, ladder_of
from tests.server.ladder.made import rated_match
from tests.server.ladder.test_service import FAST, register_bot
from tests.server.stores import autocommit_tx, sqlite_target
from tests.server.wire_client import WireClient

MAX_MESSAGES = 4000  # a two-hand match is far fewer messages than this
HANDS = 2


async def all_records(client: WireClient, match: str) -> tuple[list[dict[str, Any]], int]:
    """Every record of `match`, page by page; and how many pages it took."""
    records: list[dict[str, Any]] = []
    start: int | None = 0
    pages = 0
    while start is not None and pages < 100:
        page = await client.request(LadderRecords(match=match, start=start))
        assert isinstance(page, MatchRecords), page
        assert page.match == match and page.total >= len(records) + len(page.records)
        records.extend(page.records)
        start, pages = page.next, pages + 1
    return records, pages


async def play_a_match(
    client: WireClient, *, silent: bool = False
) -> tuple[list[MatchStarted], MatchEnded, list[Message]]:
    """Play (or, `silent`, let the clock run out at) every turn until `match_ended`; on the first
    `match_started`, ask for the running match's records (they must be refused)."""
    started: list[MatchStarted] = []
    refusals: list[Message] = []
    for _ in range(MAX_MESSAGES):
        message = await client.receive()
        assert message is not None, "the server closed the connection"
        if isinstance(message, MatchStarted):
            if not started:
                refusals.append(await client.request(LadderRecords(match=message.match)))
            started.append(message)
        elif isinstance(message, YourTurn) and not silent:
            act = Act(table=message.table, version=message.version, action=message.legal[0])
            assert isinstance(await client.request(act), Ok | Error)
        elif isinstance(message, MatchEnded):
            return started, message, refusals
    raise AssertionError("no match_ended")


async def test_a_finished_match_gives_its_hands_with_every_decision_and_its_clock(
    make_server: ServerFactory,
) -> None:
    settings = dataclasses.replace(FAST, hands=HANDS, seed=21)
    with trio.fail_after(90):
        async with make_server(ladder=True, ladder_settings=settings) as server:
            service = ladder_of(server)
            for spec in ("random", "heuristic", "search,ms=5"):
                await service.add_house_bot(spec)
            bot = await WireClient.connect(server.port)
            await bot.hello(token=await register_bot(server, "author-bot"), kind=ClientKind.BOT)
            assert isinstance(await bot.request(LadderEnter()), Ok)
            started, ended, refusals = await play_a_match(bot)
            await service.wait_rated(1)
            records, pages = await all_records(bot, ended.match)
            # One record a page when a page holds less than a record: the same records.
            paged = await LadderArchive(server.store, page_bytes=1).answer(
                LadderRecords(match=ended.match, start=0)
            )
            unknown = await bot.request(LadderRecords(match="m-999"))
            nonsense = await bot.request(LadderRecords(match="not-a-match"))
            await bot.aclose()

    # While the match was played its records were refused (a twin may still be playing its deals).
    (refused,) = refusals
    assert isinstance(refused, Error) and refused.code == "no_such_match"
    assert "still being played" in refused.message
    for answer in (unknown, nonsense):
        assert isinstance(answer, Error) and answer.code == "no_such_match", answer

    assert pages == 1  # four records of a ladder hand fit one page
    # A match is one table: one match_started, its HANDS deals, all different.
    (start,) = started
    assert len(records) == HANDS
    assert {r["ladder"]["table"] for r in records} == {start.table} == {ended.table}
    assert len({r["seed"] for r in records}) == HANDS
    # The table's game replays through the engine, and says who sat where.
    assert replay(records) == tuple(records[-1]["score"]["after"])
    for record in records:
        assert record["format"] == "spades-hand/1"
        assert record["names"] == start.players
        ladder = record["ladder"]
        assert ladder["match"] == ended.match
        assert (ladder["half"], ladder["halves"]) == (1, 1)
        assert "twin" not in ladder  # a lone bot with the house bots plays alone
        assert ladder["turn_ms"] == [server.config.bot_clock * 1000] * 4
        assert ladder["forfeits"] == []
        # One clock entry per action, for the same seat, with a time and who chose it.
        assert len(record["clock"]) == len(record["actions"])
        for action, clock in zip(record["actions"], record["clock"], strict=True):
            assert clock["seat"] == action["seat"]
            assert isinstance(clock["ms"], int) and clock["ms"] >= 0
            mine = record["names"][clock["seat"]] == "author-bot"
            # A house bot is "bot" (or "fallback" had it let its clock run out).
            assert clock["by"] == "player" if mine else clock["by"] in ("bot", "fallback")
    assert isinstance(paged, MatchRecords)
    assert paged.records == records[0:1] and paged.next == 1 and paged.total == len(records)


async def test_why_a_match_was_forfeited_is_kept_and_shown(make_server: ServerFactory) -> None:
    settings = dataclasses.replace(FAST, hands=HANDS, seed=3, cooldown=600, max_timeouts=2)
    with trio.fail_after(90):
        async with make_server(bot_clock=0.05, ladder=True, ladder_settings=settings) as server:
            service = ladder_of(server)
            for spec in ("random", "heuristic", "search,ms=5"):
                await service.add_house_bot(spec)
            silent = await WireClient.connect(server.port)
            await silent.hello(token=await register_bot(server, "silent"), kind=ClientKind.BOT)
            assert isinstance(await silent.request(LadderEnter()), Ok)
            _started, ended, _ = await play_a_match(silent, silent=True)
            lost = [m for m in silent.received if isinstance(m, SeatLost)]
            await service.wait_rated(1)
            listed = await silent.request(LadderMatches(entrant="silent"))
            records, _pages = await all_records(silent, ended.match)
            await silent.aclose()

    assert [m.reason for m in lost] == ["forfeited"]
    assert isinstance(listed, Matches)
    (match,) = listed.matches
    assert match.forfeits == ["silent"] and match.forfeit_reasons == {"silent": "timeouts"}
    assert sorted(match.bots) == sorted(n for team in match.teams for n in team)
    # The records say it too, and who chose each of the seat's moves: the clock's fallback twice
    # (the forfeit), then the fallback bot seated for the account ("bot"; or the clock's fallback
    # again whenever that bot is late itself on this 50 ms clock), never the silent player.
    assert len(records) == HANDS  # the fallback bot played the seat to the end
    assert records[0]["ladder"]["forfeits"] == [{"name": "silent", "reason": "timeouts"}]
    seat = records[0]["names"].index("silent")
    by = [c["by"] for r in records for c in r["clock"] if c["seat"] == seat]
    assert by[:2] == ["fallback", "fallback"] and set(by) <= {"fallback", "bot"}


def test_a_match_stored_before_the_reasons_were_kept_still_reads(tmp_path: Path) -> None:
    # Rows written before the reasons were kept hold a list of forfeiters' ids (SQLite's
    # `forfeits` column): they read with no reason, and rate as they did.
    with autocommit_tx(sqlite_target("sqlite-file", tmp_path)) as tx:
        assert isinstance(tx.driver, SqliteDriver)
        match = rated_match(
            tx, ["a", "b", "c", "d"], [(10, 20)], forfeits=["b"], reasons={"b": "left"}
        )
        seq = ladder_store.match_seq(match)
        (kept,) = ladder_store.matches(tx)
        assert kept["forfeits"] == ["b"] and kept["forfeit_reasons"] == {"b": "left"}
        (stored,) = tx.driver.conn.execute(
            "SELECT forfeits FROM ladder_matches WHERE seq = ?", (seq,)
        ).fetchone()
        account = next(iter(json.loads(stored)))
        tx.driver.conn.execute(
            "UPDATE ladder_matches SET forfeits = ? WHERE seq = ?",
            (json.dumps([int(account)]), seq),
        )
        (row,) = ladder_store.matches(tx)
        assert row["forfeits"] == ["b"] and row["forfeit_reasons"] == {}
        (outcome,) = ladder_store.rated_outcomes(tx)
        assert outcome.forfeits == frozenset({account})
        assert ladder_store.current_ratings(tx) == ladder_store.rebuild_ratings(tx)


def test_the_store_keeps_what_the_records_and_the_listing_need(tx: Tx) -> None:
    # On every engine: forfeit reasons kept with a rated match, each account's kind beside its
    # rating, and each action's time (and the game's start) read back with the game.
    bot = tx.insert_account("a-bot", None, None, is_bot=True, is_guest=False)
    ada = tx.insert_account("ada", None, None, is_bot=False, is_guest=False)
    seq = tx.insert_match(
        preset="standard", options={}, hands=1, teams=((bot, ada), (ada, bot)), created_at=1.0
    )
    order = tx.rate_match(
        seq,
        points=[1, 2],
        forfeits=[bot, ada],
        halves=[],
        changes={},
        finished_at=2.0,
        forfeit_reasons={bot: "timeouts"},
    )
    assert order == 1
    row = tx.match(seq)
    assert row is not None and row.forfeits == [bot, ada]
    assert row.forfeit_reasons == {bot: "timeouts"}  # ada's reason was not given
    tx.set_rating(bot, "ladder", mu=1.0, sigma=2.0, games=1)
    tx.set_rating(ada, "ladder", mu=1.0, sigma=2.0, games=1)
    kinds = {r.name: r.is_bot for r in tx.rated_accounts("ladder")}
    assert kinds == {"a-bot": True, "ada": False}
    tx.insert_table("t", {"game": "spades"})
    game = tx.insert_game("t", "spades", {}, [{"account": bot}] * 4)
    tx.insert_action(game, 0, seat=0, action={"kind": "bid"}, source="player")
    tx.insert_action(game, 1, seat=1, action={"kind": "bid"}, source="fallback")
    stored = tx.load_game(game)
    assert stored is not None and stored.created_at is not None
    first, second = stored.actions
    assert first.at is not None and second.at is not None
    assert stored.created_at <= first.at <= second.at
