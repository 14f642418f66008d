"""Faults: the server killed with SIGKILL mid-play, and a database that can no longer be written.

`kill -9` runs no shutdown code at all: what is on disk is exactly what was committed. After a
restart the database must be whole (`PRAGMA integrity_check`), every hand recorded before the kill
must still be there, unchanged and once, and every unfinished game must resume and finish.
"""

from __future__ import annotations

import contextlib
import json
import resource
import sqlite3
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import trio

from protocol.messages import (
    Act,
    CreateTable,
    Joined,
    ListTables,
    Ok,
    Reply,
    ServicePaused,
    Snapshot,
    TableCreated,
    Tables,
    YourTurn,
)
from protocol.types import Game
from tests.hostile.peer import Peer, round_trip, welcomed
from tests.hostile.proc import ServerProcess

GAMES = 20


@dataclass(frozen=True)
class DbState:
    integrity: str
    status: dict[int, str]
    records: dict[tuple[int, int], str]
    deals: dict[int, int]
    actions: dict[int, list[int]]
    results: dict[int, int]


def read_db(path: Path) -> DbState:
    """Everything the checks need, read with a plain sqlite3 connection (recovering the WAL as
    any reader would after a crash)."""
    conn = sqlite3.connect(path)
    try:
        integrity = "; ".join(row[0] for row in conn.execute("PRAGMA integrity_check"))
        status = {gid: st for gid, st in conn.execute("SELECT id, status FROM games")}
        records = {
            (gid, hand): record
            for gid, hand, record in conn.execute(
                "SELECT game_id, hand_no, record FROM hand_records"
            )
        }
        deals = dict(conn.execute("SELECT game_id, COUNT(*) FROM hands GROUP BY game_id"))
        actions: dict[int, list[int]] = {}
        for gid, seq in conn.execute("SELECT game_id, seq FROM actions ORDER BY game_id, seq"):
            actions.setdefault(gid, []).append(seq)
        results = dict(conn.execute("SELECT game_id, COUNT(*) FROM results GROUP BY game_id"))
    finally:
        conn.close()
    return DbState(integrity, status, records, deals, actions, results)


def count_hand_records(path: Path) -> tuple[int, int]:
    """(hand records, finished games), read-only, while the server runs."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        hands = conn.execute("SELECT COUNT(*) FROM hand_records").fetchone()[0]
        done = conn.execute("SELECT COUNT(*) FROM games WHERE status = 'finished'").fetchone()[0]
    finally:
        conn.close()
    return int(hands), int(done)


async def open_bot_tables(port: int, count: int, target: int) -> list[str]:
    async with await welcomed(port, "organiser") as peer:
        tables = []
        for _ in range(count):
            reply = await peer.request(
                CreateTable(
                    game=Game.SPADES,
                    preset="standard",
                    options={"target_score": target},
                    bots=[0, 1, 2, 3],
                )
            )
            assert isinstance(reply, TableCreated), reply
            tables.append(reply.table)
        return tables


async def poll(check: Callable[[], bool], seconds: float, what: str) -> None:
    """Wait for `check()` to hold, looking every 50 ms, for at most `seconds`."""
    for _ in range(int(seconds / 0.05) + 1):
        if check():
            return
        await trio.sleep(0.05)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


async def test_kill_9_with_twenty_games_in_progress_loses_nothing(tmp_path: Path) -> None:
    db = tmp_path / "crash.db"
    # One organiser opens every table (more than the 16 one address may by default).
    server = ServerProcess(db, "--max-tables-per-address", str(GAMES))
    with server, trio.fail_after(110):
        await open_bot_tables(server.port, GAMES, target=300)
        # Let every table get some hands on disk, but not finish.
        await poll(lambda: count_hand_records(db)[0] >= GAMES, 40, f"{GAMES} hand records")
        server.kill9()
        crashed = read_db(db)
        assert crashed.integrity == "ok"
        unfinished = {gid for gid, st in crashed.status.items() if st == "running"}
        assert len(crashed.status) == GAMES
        assert len(unfinished) >= GAMES // 2, crashed.status  # most were mid-game when killed

        server.start()
        await poll(lambda: count_hand_records(db)[1] == GAMES, 80, "every resumed game to finish")
        assert server.stop() == 0
        final = read_db(db)
        resumed = server.logs().count('"game_resumed"')
    assert final.integrity == "ok"
    assert resumed == len(unfinished)
    assert set(final.status.values()) == {"finished"}
    # Every hand recorded before the kill is still there, byte for byte.
    for key, record in crashed.records.items():
        assert final.records.get(key) == record, key
    for gid in final.status:
        hands = sorted(hand for (g, hand) in final.records if g == gid)
        # Each hand exactly once, numbered 1..n without a gap, one per deal.
        assert hands == list(range(1, len(hands) + 1)), (gid, hands)
        assert len(hands) == final.deals[gid], (gid, hands, final.deals[gid])
        # The action log is one unbroken sequence (nothing replayed twice, nothing skipped).
        seqs = final.actions[gid]
        assert seqs == list(range(len(seqs))), gid
        assert final.results[gid] == 4
        last = json.loads(final.records[(gid, hands[-1])])
        assert isinstance(last, dict)


@pytest.mark.parametrize(
    ("flags", "setting", "level"),
    [
        ((), "normal", 1),
        (("--durability", "normal"), "normal", 1),
        (("--durability", "full"), "full", 2),
    ],
    ids=["default", "normal", "full"],
)
async def test_the_durability_setting_is_the_pragma_in_effect(
    tmp_path: Path, flags: tuple[str, ...], setting: str, level: int
) -> None:
    """`serve` commits with `synchronous=NORMAL` unless `--durability full` asks for FULL; the
    `listening` line reports the level SQLite reads back on the writer's own connection."""
    server = ServerProcess(tmp_path / "durable.db", *flags, "--no-ladder")
    with server, trio.fail_after(30):
        async with await welcomed(server.port, "durable") as peer:
            reply = await peer.request(ListTables())
            assert isinstance(reply, Tables)
        listening = [
            json.loads(line) for line in server.logs().splitlines() if '"listening"' in line
        ]
        assert server.stop() == 0
    assert len(listening) == 1, server.logs()
    assert listening[0]["durability"] == setting
    assert listening[0]["synchronous"] == level


# ---------------------------------------------------------------- a database that cannot be written


@dataclass
class Fault:
    """Where the database lives, and how to make it unwritable and whole again."""

    db: Path
    inflict: Callable[[ServerProcess], None]
    repair: Callable[[ServerProcess], None]


def _chattr(flag: str, paths: list[Path]) -> None:
    existing = [str(p) for p in paths if p.exists()]
    if existing:
        subprocess.run(["chattr", flag, *existing], check=True, capture_output=True, timeout=10)


@contextlib.contextmanager
def read_only_db(tmp_path: Path) -> Iterator[Fault]:
    """`chattr +i` on the database and its WAL: even root cannot write them (chmod would not stop
    root). The `-shm` index is left alone: it is memory-mapped, and an immutable mapping makes the
    process die of SIGBUS inside SQLite, which says nothing about the server."""
    db = tmp_path / "ro.db"
    files = [db, tmp_path / "ro.db-wal"]
    probe = tmp_path / "probe"
    probe.touch()
    try:
        _chattr("+i", [probe])
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("chattr +i is not available here")
    _chattr("-i", [probe])
    try:
        yield Fault(db, lambda _server: _chattr("+i", files), lambda _server: _chattr("-i", files))
    finally:
        _chattr("-i", files)


@contextlib.contextmanager
def full_disk(tmp_path: Path) -> Iterator[Fault]:
    """A full disk for the server alone: its file-size limit (RLIMIT_FSIZE, set with prlimit on the
    running process) is lowered to the current size of its WAL, so the next commit cannot grow it
    and SQLite reports SQLITE_FULL ("database or disk is full"), as on a full disk. A small tmpfs
    would be closer to life but kills SQLite with SIGBUS through its memory-mapped `-shm` index."""
    db = tmp_path / "full.db"
    wal = tmp_path / "full.db-wal"
    target: list[int] = []

    def inflict(server: ServerProcess) -> None:
        size = max(wal.stat().st_size if wal.exists() else 0, 1)
        # The soft limit is what the kernel enforces; the hard one stays, so it can be lifted again.
        resource.prlimit(server.pid, resource.RLIMIT_FSIZE, (size, resource.RLIM_INFINITY))
        target.append(server.pid)

    def repair(server: ServerProcess) -> None:
        if server.alive():
            unlimited = (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
            resource.prlimit(server.pid, resource.RLIMIT_FSIZE, unlimited)

    yield Fault(db, inflict, repair)


FAULTS = {"read-only": read_only_db, "disk-full": full_disk}


async def _until_resumed_and_answered(peer: Peer, rid: int | None) -> tuple[ServicePaused, Reply]:
    """Read on until play resumes and request `rid` is answered, in whichever order they come
    (the caller bounds the wait)."""
    resumed: ServicePaused | None = None
    reply: Reply | None = None
    for _ in range(10_000):
        message = await peer.receive()
        assert message is not None, "the server closed the connection"
        if isinstance(message, ServicePaused) and not message.paused:
            resumed = message
        elif isinstance(message, Reply) and message.id == rid:
            reply = message
        if resumed is not None and reply is not None:
            return resumed, reply
    raise AssertionError("play never resumed, or the request was never answered")


@pytest.mark.parametrize("kind", sorted(FAULTS))
async def test_an_unwritable_database_pauses_new_games_and_they_open_once_it_is_writable(
    tmp_path: Path, kind: str
) -> None:
    """A database that cannot be written (a full disk, a read-only file) is an outage (issue 38):
    the server says play is paused, with a sentence, to everyone; nothing half-made appears; every
    client is still served; and the game asked for opens once the disk is writable again."""
    with FAULTS[kind](tmp_path) as fault:
        server = ServerProcess(fault.db, workdir=tmp_path)
        with server, trio.fail_after(60):
            ada = await welcomed(server.port, "ada")
            bystander = await welcomed(server.port, "bystander")
            fault.inflict(server)
            rid = await ada.send(
                CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
            )
            with trio.fail_after(10):  # said at once, not after some client timeout
                paused = await ada.expect(ServicePaused)
                told = await bystander.expect(ServicePaused)
            assert paused.paused and told.paused, (paused, told)
            assert paused.reason is not None and len(paused.reason) > 10, paused
            assert server.alive(), server.log_tail()
            # Nothing half-made: no table appears, nothing answered the request; both clients
            # are still served.
            listing = await bystander.request(ListTables())
            assert isinstance(listing, Tables) and listing.tables == [], listing
            await round_trip(bystander)
            assert not any(isinstance(m, Reply) and m.id == rid for m in ada.received)
            fault.repair(server)
            # Once the disk is writable again, so is the server: play resumes by itself and the
            # request that waited is answered.
            resumed, reply = await _until_resumed_and_answered(ada, rid)
            assert resumed.paused_ms is not None and resumed.paused_ms > 0, resumed
            assert isinstance(reply, TableCreated), reply
            again = await bystander.request(
                CreateTable(game=Game.SPADES, preset="standard", bots=[0, 1, 2, 3])
            )
            assert isinstance(again, TableCreated), again


@pytest.mark.parametrize("kind", sorted(FAULTS))
async def test_an_action_that_cannot_be_stored_waits_and_is_never_told_before_it_is(
    tmp_path: Path, kind: str
) -> None:
    """An act while the database cannot be written is neither refused nor lost (issue 38): play
    pauses, nothing tells of the card (no `ok`, no event) while it is not on disk; once the disk is
    writable the act is answered `ok`, and after a crash the game resumes from the disk with it."""
    with FAULTS[kind](tmp_path) as fault:
        server = ServerProcess(fault.db, workdir=tmp_path)
        with server, trio.fail_after(90):
            ada = await Peer.connect(server.port)
            await ada.hello()
            token = await ada.register("ada")
            created = await ada.request(
                CreateTable(
                    game=Game.HEARTS,
                    preset="hearts",
                    options={"max_hands": 1, "target_score": 0, "hearts_pass_cycle": ["none"]},
                    bots=[1, 2, 3],
                    sit=0,
                )
            )
            assert isinstance(created, TableCreated), created
            turn = await ada.expect(YourTurn)
            before = len(ada.received)
            fault.inflict(server)
            rid = await ada.send(
                Act(table=created.table, version=turn.version, action=turn.legal[0])
            )
            with trio.fail_after(10):
                paused = await ada.expect(ServicePaused)
            assert paused.paused, paused
            assert server.alive()
            await round_trip(ada)
            # Not told: no `ok`, and no event tells of a card that is not on disk.
            waiting = ada.received[before:]
            assert not any(isinstance(m, Reply) and m.id == rid for m in waiting), waiting
            assert [m for m in waiting if hasattr(m, "version")] == []
            fault.repair(server)
            _resumed, reply = await _until_resumed_and_answered(ada, rid)
            assert isinstance(reply, Ok), reply
            # After a crash, the game resumes where the disk says it was: past the act.
            server.kill9()
            server.start()
            back = await Peer.connect(server.port)
            await back.hello(token=token)
            assert isinstance(await back.expect(Joined), Joined)
            snapshot = await back.expect(Snapshot)
            assert snapshot.table == created.table
            assert snapshot.version > turn.version, (snapshot.version, turn.version)


# ---------------------------------------------------------------- backups


def online_backup(source: Path, target: Path) -> str:
    """What docs/operations.md tells operators to do: SQLite's online backup, from another process,
    while the server runs. Returns the copy's `PRAGMA integrity_check`."""
    src = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    dst = sqlite3.connect(target)
    try:
        src.backup(dst)
        return "; ".join(row[0] for row in dst.execute("PRAGMA integrity_check"))
    finally:
        dst.close()
        src.close()


async def test_an_online_backup_is_whole_and_restores(tmp_path: Path) -> None:
    """A backup taken while games are being played is a consistent database: a server started on
    the copy resumes the games that were running at that moment and finishes them."""
    live, copy = tmp_path / "live.db", tmp_path / "backup.db"
    server = ServerProcess(live, workdir=tmp_path)
    with server, trio.fail_after(90):
        await open_bot_tables(server.port, 6, target=200)
        await poll(lambda: count_hand_records(live)[0] >= 6, 40, "six hand records")
        assert online_backup(live, copy) == "ok"
        assert server.stop() == 0
    saved = read_db(copy)
    running = {gid for gid, st in saved.status.items() if st == "running"}
    assert saved.integrity == "ok" and saved.records and running
    restored = ServerProcess(copy, workdir=tmp_path)
    with restored, trio.fail_after(90):
        await poll(lambda: count_hand_records(copy)[1] == 6, 80, "the restored games to finish")
        assert restored.stop() == 0
        assert restored.logs().count('"game_resumed"') == len(running)
    final = read_db(copy)
    assert final.integrity == "ok" and set(final.status.values()) == {"finished"}
    for key, record in saved.records.items():
        assert final.records[key] == record
