"""Player statistics: counted after each hand, off the table's task, and looked up by name.

A table that stores a finished hand posts its (game, hand) to `StatsJob.post`, which never waits:
the job's queue is bounded, and a hand that does not fit is left for the job's sweep, which counts
every stored hand not yet counted (at the job's start, and after a hand was left out). The job
reads the hand (its record, the game's seats and the actions' time stamps) in one store call,
folds it with the engine's `engine.hand_stats.hand_tallies` on its own task, and adds what each
account gets in one more, in one transaction with the note that the hand is counted
(`Tx.count_stats_hand`): a hand posted twice, a retry, or a sweep that meets a hand the queue
also holds, counts it once. `rebuild` empties the counters and counts every stored hand again,
which gives the same counters. Each four-handed Spades hand it counts it hands on, again without
waiting, to the double-dummy analysis (`server.hand_analysis`, `on_counted`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import structlog
import trio

from engine.errors import RecordError
from engine.hand_stats import Tally, hand_tallies
from protocol.messages import PlayerStats
from protocol.types import ClientKind
from server.hand_analysis import AnalysisJob, analysable
from server.hand_clocks import with_clocks
from server.storage import StorageError, Store, StoredGame, Tx

log = structlog.get_logger("server.stats")

#: How many hands one sweep counts before it lets posted hands go first.
SWEEP_BATCH = 64


def account_tallies(game: StoredGame, records: list[dict[str, Any]]) -> dict[int, list[int]]:
    """What the last of `records` (a game's hand records from its first) adds to each account's
    counters (`TALLY_FIELDS` order), by account id: seats without an account (a built-in bot's)
    are not counted. Raises `RecordError` for a record that cannot be read."""
    timed = with_clocks(records, game.actions, game.created_at or 0.0)
    tallies: dict[int, Tally] = {}
    for seat, tally in enumerate(hand_tallies(timed[-1])):
        holder = game.seats[seat] if seat < len(game.seats) else None
        account = holder.get("account") if isinstance(holder, dict) else None
        if isinstance(account, int):
            tallies[account] = tallies.get(account, Tally()) + tally
    return {account: list(tally.as_dict().values()) for account, tally in tallies.items()}


def seat_accounts(game: StoredGame) -> list[int | None]:
    """The account at each seat of a stored game (None: a seat without one)."""
    out: list[int | None] = []
    for holder in game.seats:
        account = holder.get("account") if isinstance(holder, dict) else None
        out.append(account if isinstance(account, int) else None)
    return out


def count_hand(tx: Tx, game_id: int, hand_no: int) -> bool:
    """Count one stored hand in one transaction (whole, as the job does in two store calls):
    False if it has no record or was counted already. A record that cannot be read is marked
    counted with nothing added, so it is not tried again."""
    found = tx.stats_hand_input(game_id, hand_no)
    if found is None:
        return False
    try:
        tallies = account_tallies(*found)
    except RecordError:
        tallies = {}
    return tx.count_stats_hand(game_id, hand_no, tallies)


def rebuild(tx: Tx) -> int:
    """Empty the statistics and count every stored hand again; returns how many were counted."""
    tx.forget_stats()
    counted = 0
    while hands := tx.uncounted_hands(SWEEP_BATCH):
        for game_id, hand_no in hands:
            if not count_hand(tx, game_id, hand_no):
                # A hand record without its game's stored actions: counted with nothing, so the
                # loop ends.
                tx.count_stats_hand(game_id, hand_no, {})
            counted += 1
    return counted


def player_stats(tx: Tx, name: str) -> PlayerStats | None:
    """The `player_stats` reply for the account named `name` (no request id yet); None if no
    account has the name. An account none of whose hands is counted yet has zeros."""
    account = tx.account_by_name(name)
    if account is None:
        return None
    counters = tx.player_stats(account.id)
    tally = Tally() if counters is None else Tally.from_values(counters)
    games, wins = tx.games_finished(account.id)
    dd_hands, dd_lost = tx.dd_stats(account.id)
    return PlayerStats(
        name=account.name,
        kind=ClientKind.BOT if account.is_bot else ClientKind.HUMAN,
        games=games,
        wins=wins,
        **tally.as_dict(),
        dd_hands=dd_hands,
        dd_tricks_lost=dd_lost,
    )


@dataclass
class StatsJob:
    """The background job: `post` from a table, `run` in the server's nursery."""

    store: Store
    queue_size: int = 256
    counted: int = 0  # hands counted by this job since the server started
    left_for_sweep: int = 0  # hands posted when the queue was full (the sweep counts them)
    failed: int = 0  # hands whose counting failed (the store was away): the sweep retries
    #: Told each hand it counted that the double-dummy analysis may take (four-handed Spades):
    #: `server.hand_analysis.HandAnalysis.post`, which never waits. None: no analysis.
    on_counted: Callable[[AnalysisJob], None] | None = None

    def __post_init__(self) -> None:
        self._send, self._receive = trio.open_memory_channel[tuple[int, int]](self.queue_size)
        self._sweep_owed = True  # hands may have been stored while no job ran
        self._pending = 0  # hands posted and not yet counted
        #: Set while the job has nothing to do: every posted hand counted, no sweep owed (tests
        #: wait for it rather than for time to pass).
        self.idle = trio.Event()

    def post(self, game_id: int, hand_no: int) -> None:
        """A table stored a finished hand. Never waits: a full queue leaves it to the sweep."""
        try:
            self._send.send_nowait((game_id, hand_no))
        except (trio.WouldBlock, trio.ClosedResourceError, trio.BrokenResourceError):
            self.left_for_sweep += 1
            self._sweep_owed = True
        else:
            self._pending += 1
            if self.idle.is_set():
                self.idle = trio.Event()

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        task_status.started()
        while True:
            if self._sweep_owed:
                await self._sweep()
            if self._pending == 0 and not self._sweep_owed:
                self.idle.set()
            game_id, hand_no = await self._receive.receive()
            await self._count(game_id, hand_no)
            self._pending -= 1

    async def _sweep(self) -> None:
        """Count the stored hands not yet counted, a batch at a time; give up until the next
        post if the store is away."""
        self._sweep_owed = False
        while True:
            try:
                hands = await self.store.call(lambda tx: tx.uncounted_hands(SWEEP_BATCH))
            except StorageError as exc:
                log.warning("stats_sweep_failed", error=str(exc))
                self._sweep_owed = True
                return
            for game_id, hand_no in hands:
                if not await self._count(game_id, hand_no):
                    return
            if len(hands) < SWEEP_BATCH:
                return

    async def _count(self, game_id: int, hand_no: int) -> bool:
        """Count one hand; False if the store failed (the sweep will try it again)."""
        try:
            found = await self.store.call(lambda tx: tx.stats_hand_input(game_id, hand_no))
            if found is None:
                return True  # no such hand stored: nothing to count
            try:
                tallies = account_tallies(*found)
            except RecordError as exc:
                log.warning("stats_unreadable_hand", game=game_id, hand=hand_no, error=str(exc))
                tallies = {}
            added = await self.store.call(lambda tx: tx.count_stats_hand(game_id, hand_no, tallies))
        except StorageError as exc:
            log.warning("stats_count_failed", game=game_id, hand=hand_no, error=str(exc))
            self.failed += 1
            self._sweep_owed = True
            return False
        self.counted += added
        if added and self.on_counted is not None and found is not None:
            game, records = found
            if analysable(records[-1]):
                self.on_counted((game_id, hand_no, records[-1], seat_accounts(game)))
        return True
