"""Soak: 64 tables of bots play for about five minutes while clients drop and come back at random.

A real `spades-server` subprocess on 127.0.0.1 with its own database. Bot tables are replaced as
their games end; a few people (test clients) play at tables of their own and vanish mid-hand and
return with their token; churners watch random tables and hang up; observers watch every table and
count the hands they see scored. When time is up no new game starts and every game is played out.

Then it checks, and exits 1 if any check fails:
- `PRAGMA integrity_check` is ok and every game is finished;
- hand records in the database == hands dealt (the server's `hand_dealt` log lines) == hands the
  observers saw scored (an observer the server drops as a slow consumer comes back and counts the
  hands it missed from its new snapshot);
- the server's memory is flat: the last quarter's median RSS is within 20 % (+8 MiB) of the
  second quarter's (the first quarter is warm-up);
- the WAL stays bounded: its largest size (the `-wal` file, sampled twice a second) is at most
  `WAL_SIZE_LIMIT` (64 MiB), whatever the length of the run (it once grew to 391 MB in a run).

Run: .venv/bin/python bench/soak.py [--minutes 5] [--tables 64]. Prints one JSON line at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import random
import sqlite3
import statistics
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from protocol.messages import (
    Act,
    CreateTable,
    Error,
    GameOver,
    Guest,
    HandScored,
    Joined,
    Leave,
    ListTables,
    Snapshot,
    Spectate,
    TableClosed,
    TableCreated,
    Tables,
    YourTurn,
)
from protocol.types import Game
from server.storage.sqlite import WAL_SIZE_LIMIT
from tests.hostile import peer as peer_module
from tests.hostile.peer import Peer, welcomed
from tests.hostile.proc import ServerProcess

Options = dict[str, bool | int | str | list[str]]
SPADES: Options = {"target_score": 200}
HEARTS: Options = {"max_hands": 2, "target_score": 0}


@dataclass
class Stats:
    tables_created: int = 0
    games_over_seen_by_players: int = 0
    player_drops: int = 0
    player_resumes: int = 0
    churner_visits: int = 0
    observers_dropped: int = 0
    tables_missed: int = 0
    rss_kib: list[int] = field(default_factory=list)
    wal_bytes_max: int = 0
    hands_seen: set[tuple[str, int]] = field(default_factory=set)


class Observer:
    """Watches the tables it is given and records every hand it sees scored."""

    def __init__(self, port: int, stats: Stats) -> None:
        self.port = port
        self.stats = stats
        self.send, self.receive = trio.open_memory_channel[str](1024)
        self.watching: set[str] = set()
        self.asked: dict[int, str] = {}  # request id of a spectate -> its table
        self.sending = trio.Lock()  # two tasks send on the one stream
        self.peer: Peer | None = None

    async def run(self, done: trio.Event) -> None:
        """Watch until `done` and nothing is left to watch; a dropped connection (a slow consumer:
        we decode in Python, on a shared core) comes back and re-watches, counting from snapshots."""
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._subscribe)
            for _ in range(1000):  # reconnections, bounded
                self.peer = peer = await welcomed(self.port)
                await peer.request(Guest())
                for table in sorted(self.watching):
                    await self._spectate(peer, table)
                if await self._watch(peer, done):
                    break
                self.stats.observers_dropped += 1
                await peer.aclose()
            nursery.cancel_scope.cancel()

    async def _watch(self, peer: Peer, done: trio.Event) -> bool:
        """True when done, False when the server dropped us."""
        for _ in range(100_000_000):  # bounded by the connection's life
            message = await peer.receive()
            peer.received.clear()
            if message is None:
                return False
            if isinstance(message, Error) and message.id in self.asked:
                # The table ended and closed while we were away: its last hands went unseen.
                table = self.asked.pop(message.id)
                if table in self.watching:
                    self.watching.discard(table)
                    self.stats.tables_missed += 1
            elif isinstance(message, HandScored):
                self.stats.hands_seen.add((message.table, message.hand_number))
            elif isinstance(message, Snapshot) and message.table in self.watching:
                # Hands scored before we came in are counted from the snapshot.
                number = int(message.view.get("hand_number", 0))
                over = message.view.get("phase") == "game_over"
                for hand in range(1, number + (1 if over else 0)):
                    self.stats.hands_seen.add((message.table, hand))
                if over:
                    await self._leave(peer, message.table)
            elif isinstance(message, GameOver | TableClosed) and message.table in self.watching:
                # A finished table closes once nobody watches it.
                await self._leave(peer, message.table)
            if done.is_set() and not self.watching:
                return True
        return True

    async def _leave(self, peer: Peer, table: str) -> None:
        self.watching.discard(table)
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            async with self.sending:
                await peer.send(Leave(table=table))

    async def _spectate(self, peer: Peer, table: str) -> None:
        rid = peer.next_id()
        self.asked[rid] = table
        with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
            async with self.sending:
                await peer.send(Spectate(id=rid, table=table))

    async def _subscribe(self) -> None:
        async for table in self.receive:
            self.watching.add(table)
            if self.peer is not None:
                await self._spectate(self.peer, table)


async def keep_bot_tables(
    port: int, count: int, observers: list[Observer], stop: trio.Event, stats: Stats
) -> None:
    """Keep `count` all-bot tables playing until `stop`; replace each one whose game ends."""
    async with await welcomed(port, "soak-organiser") as peer:
        mine: set[str] = set()

        async def open_one(index: int) -> None:
            game = Game.SPADES if index % 2 == 0 else Game.HEARTS
            reply = await peer.request(
                CreateTable(
                    game=game,
                    preset="standard" if game is Game.SPADES else "hearts",
                    options=SPADES if game is Game.SPADES else HEARTS,
                    bots=[0, 1, 2, 3],
                )
            )
            assert isinstance(reply, TableCreated), reply
            mine.add(reply.table)
            stats.tables_created += 1
            await observers[index % len(observers)].send.send(reply.table)

        listing = await peer.request(ListTables())  # from now on, the lobby's notices come to us
        assert isinstance(listing, Tables)
        for index in range(count):
            await open_one(index)
        index = count
        while mine:
            message = await peer.receive()
            peer.received.clear()
            assert message is not None, "the organiser was disconnected"
            if isinstance(message, TableClosed) and message.table in mine:
                mine.discard(message.table)
                if not stop.is_set():
                    await open_one(index)
                    index += 1


async def person(
    port: int, number: int, observers: list[Observer], stop: trio.Event, stats: Stats
) -> None:
    """Plays its own table against three bots, drops the connection at random, comes back."""
    rng = random.Random(number)
    peer = await welcomed(port)
    token = await peer.register(f"soak-person-{number}")
    table: str | None = None
    for _ in range(1_000_000):  # bounded: each pass handles one message
        if table is None:
            if stop.is_set():
                break
            reply = await peer.request(
                CreateTable(
                    game=Game.HEARTS, preset="hearts", options=HEARTS, bots=[1, 2, 3], sit=0
                )
            )
            if isinstance(reply, Error):
                assert reply.code == "already_seated", reply
                table = (await peer.expect(Joined)).table
                continue
            assert isinstance(reply, TableCreated), reply
            table = reply.table
            stats.tables_created += 1
            await observers[number % len(observers)].send.send(table)
        message = await peer.receive()
        peer.received.clear()
        if message is None:
            raise AssertionError(f"person {number} was disconnected by the server")
        finished_snapshot = (
            isinstance(message, Snapshot)
            and message.table == table
            and message.view.get("phase") == "game_over"
        )
        if finished_snapshot or (isinstance(message, GameOver) and message.table == table):
            stats.games_over_seen_by_players += 1
            await peer.send(Leave(table=table))  # the finished table closes once we are gone
            table = None
        elif isinstance(message, YourTurn) and message.table == table:
            if rng.random() < 0.03:
                # Vanish mid-hand; the clock plays for us until we are back.
                await peer.aclose()
                stats.player_drops += 1
                await trio.sleep(rng.uniform(0, 2))
                peer = await Peer.connect(port)
                await peer.hello(token=token)
                with trio.move_on_after(3):
                    joined = await peer.expect(Joined)
                    stats.player_resumes += 1
                    table = joined.table
                    continue
                table = None  # the game ended while we were away
                continue
            action = rng.choice(message.legal)
            await peer.send(Act(table=table, version=message.version, action=action))
    await peer.aclose()


async def churner(port: int, number: int, stop: trio.Event, stats: Stats) -> None:
    """Watches a random table for a moment, then leaves or hangs up, again and again."""
    rng = random.Random(1000 + number)
    while not stop.is_set():
        async with await welcomed(port) as peer:
            await peer.request(Guest())
            listing = await peer.request(ListTables())
            assert isinstance(listing, Tables)
            if listing.tables:
                table = rng.choice(listing.tables).table
                await peer.request(Spectate(table=table))
                stats.churner_visits += 1
                with trio.move_on_after(rng.uniform(0, 3)):
                    while (await peer.receive()) is not None:
                        peer.received.clear()
                if rng.random() < 0.5:
                    await peer.send(Leave(table=table))
        peer_module.OPEN_PEERS.clear()
        await trio.sleep(rng.uniform(0, 1))


async def sample_memory(server: ServerProcess, stats: Stats, done: trio.Event) -> None:
    while not done.is_set():
        stats.rss_kib.append(server.rss_kib())
        with trio.move_on_after(5):
            await done.wait()


async def sample_wal(wal: Path, stats: Stats, done: trio.Event) -> None:
    """The WAL file's size, twice a second: the store checkpoints it so it stays bounded."""
    while not done.is_set():
        with contextlib.suppress(FileNotFoundError):
            stats.wal_bytes_max = max(stats.wal_bytes_max, wal.stat().st_size)  # noqa: ASYNC240
        with trio.move_on_after(0.5):
            await done.wait()


def database_figures(db: Path) -> tuple[str, dict[str, int], int]:
    conn = sqlite3.connect(db)
    try:
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        statuses = dict(conn.execute("SELECT status, COUNT(*) FROM games GROUP BY status"))
        records = conn.execute("SELECT COUNT(*) FROM hand_records").fetchone()[0]
    finally:
        conn.close()
    return str(integrity), {str(k): int(v) for k, v in statuses.items()}, int(records)


async def soak(args: argparse.Namespace) -> int:
    workdir = Path(tempfile.mkdtemp(prefix="spades-soak-"))
    server = ServerProcess(
        workdir / "soak.db",
        "--human-clock",
        "1",
        "--bot-clock",
        "2",
        "--reconnect-grace",
        "10",
        # Every soak client is on 127.0.0.1: its tables and its many guests come from one address.
        "--max-tables-per-address",
        "1000",
        "--max-guests-per-address",
        "100000",
    )
    stats = Stats()
    stop, done = trio.Event(), trio.Event()
    drained = False
    with server:
        observers = [Observer(server.port, stats) for _ in range(args.observers)]
        async with trio.open_nursery() as nursery:
            nursery.start_soon(sample_memory, server, stats, done)
            nursery.start_soon(sample_wal, workdir / "soak.db-wal", stats, done)
            for observer in observers:
                nursery.start_soon(observer.run, done)
            with trio.move_on_after(args.minutes * 60 + args.drain) as budget:
                async with trio.open_nursery() as players:
                    players.start_soon(
                        keep_bot_tables,
                        server.port,
                        args.tables - args.people,
                        observers,
                        stop,
                        stats,
                    )
                    for number in range(args.people):
                        players.start_soon(person, server.port, number, observers, stop, stats)
                    for number in range(args.churners):
                        players.start_soon(churner, server.port, number, stop, stats)
                    await trio.sleep(args.minutes * 60)
                    stop.set()  # no new games; the nursery ends when every game is played out
            drained = not budget.cancelled_caught
            done.set()
            for _ in range(300):  # up to 30 s for the observers to see their last tables end
                if not any(observer.watching for observer in observers):
                    break
                await trio.sleep(0.1)
            nursery.cancel_scope.cancel()
        status = server.stop()
        logs = server.logs()
    dealt = logs.count('"hand_dealt"')
    integrity, games, records = database_figures(workdir / "soak.db")
    figures = {"integrity": integrity, "games": games, "hand_records": records}
    rss = stats.rss_kib
    quarter = max(1, len(rss) // 4)
    early = statistics.median(rss[quarter : 2 * quarter] or rss)
    late = statistics.median(rss[-quarter:])
    checks = {
        "server_exit_ok": status == 0,
        "drained": drained,
        "integrity_ok": integrity == "ok",
        "all_games_finished": set(games) <= {"finished"},
        "records_equal_hands_dealt": records == dealt,
        # Exact unless an observer was dropped and a table ended entirely while it was away.
        "records_equal_hands_seen": records == len(stats.hands_seen)
        or (stats.tables_missed > 0 and records >= len(stats.hands_seen)),
        "memory_flat": late <= early * 1.2 + 8 * 1024,
        "wal_bounded": stats.wal_bytes_max <= WAL_SIZE_LIMIT,
    }
    emit(
        {
            "bench": "soak",
            "minutes": args.minutes,
            "tables": args.tables,
            "tables_created": stats.tables_created,
            "hands_dealt": dealt,
            "hands_seen": len(stats.hands_seen),
            **figures,
            "player_drops": stats.player_drops,
            "player_resumes": stats.player_resumes,
            "churner_visits": stats.churner_visits,
            "observers_dropped": stats.observers_dropped,
            "tables_missed_by_observers": stats.tables_missed,
            "rss_kib_early": early,
            "rss_kib_late": late,
            "rss_kib_max": max(rss),
            "wal_bytes_max": stats.wal_bytes_max,
            "db_bytes": (workdir / "soak.db").stat().st_size,
            "checks": checks,
            "workdir": str(workdir),
        }
    )
    return 0 if all(checks.values()) else 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--minutes", type=float, default=5.0)
    parser.add_argument("--tables", type=int, default=64)
    parser.add_argument("--people", type=int, default=12, help="tables with a person who drops")
    parser.add_argument("--churners", type=int, default=8)
    parser.add_argument("--observers", type=int, default=8)
    parser.add_argument("--drain", type=float, default=180.0, help="seconds to let games finish")
    args = parser.parse_args()
    sys.exit(trio.run(soak, args))


if __name__ == "__main__":
    main()
