"""What a table writes to the store, and when: its game, each deal's seed, each action with what it
finished (a hand's record, the game's result), and who sits while it waits for players.

One `GameRecorder` per table, used by the table task alone. Each method returns once its write has
committed (or raises `StorageError`, with nothing of it written), which is what lets the table keep
its write-ahead order: nothing is told before it is on disk.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from engine.events import Event as EngineEvent
from engine.game import Game
from engine.records import hand_to_record

if TYPE_CHECKING:
    from server.seating import SeatState
    from server.storage import Store, Tx

# (seat, account id, final score, place) per seat, as the results are stored.
ResultRow = tuple[int, int | None, int, int]


@dataclass
class GameRecorder:
    """The store-facing half of one table: numbering of deals and actions, and the writes."""

    store: Store
    table_id: str
    game_id: int | None = None
    actions: int = 0  # actions persisted: the next one's `seq`
    deals: int = 0  # deals persisted: the next one's number
    #: Told (game id, hand number) once a finished hand's record is stored: the statistics' job
    #: (`server.stats.StatsJob.post`), which never waits, so the table never waits for it.
    on_hand: Callable[[int, int], None] | None = None

    async def start_game(self, game: str, ruleset: Any, seats: list[dict[str, Any]]) -> int:
        table_id = self.table_id

        def persist(tx: Tx) -> int:
            return tx.insert_game(table_id, game, ruleset, seats)

        self.game_id = await self.store.call(persist)
        return self.game_id

    async def record_deal(self, seed: bytes, digest: str) -> None:
        """The deal's secret seed, before anything of the deal is shown to anyone."""
        assert self.game_id is not None
        game_id, deal_no, first_seq = self.game_id, self.deals, self.actions

        def persist(tx: Tx) -> None:
            tx.insert_hand(
                game_id,
                hand_no=deal_no,
                seed=seed.hex(),
                commitment=digest,
                first_seq=first_seq,
            )

        await self.store.call(persist)
        self.deals += 1

    async def record_action(
        self,
        *,
        seat: int,
        action: dict[str, Any],
        source: str,
        bank_left_ms: int | None,
        after: Game,
        events: list[EngineEvent],
        results: list[ResultRow] | None,
    ) -> None:
        """One applied action, in one transaction with what it finished: the hand's record when
        `events` end a hand of `after` (the game with the action applied), and `results` (and the
        table closed) when they end the game."""
        assert self.game_id is not None
        game_id, seq, table_id = self.game_id, self.actions, self.table_id
        records = finished_hand_records(after, events, game_id)

        def persist(tx: Tx) -> None:
            tx.insert_action(
                game_id,
                seq,
                seat=seat,
                action=action,
                source=source,
                bank_left_ms=bank_left_ms,
            )
            for hand_no, record in records:
                tx.insert_hand_record(game_id, hand_no, record)
            if results is not None:
                tx.finish_game(game_id, "finished", results)
                tx.close_table(table_id)

        await self.store.call(persist)
        self.actions += 1
        if self.on_hand is not None:
            for hand_no, _record in records:
                self.on_hand(game_id, hand_no)

    async def store_seats(self, seats: list[dict[str, Any]]) -> None:
        """Who plays each seat of the game in play (an abandoned seat is marked)."""
        assert self.game_id is not None
        game_id = self.game_id
        await self.store.call(lambda tx: tx.update_game_seats(game_id, seats))

    async def store_waiting_seats(self, seats: list[int | None]) -> None:
        """Who sits at a table still waiting for players (reopened so after a restart)."""
        table_id = self.table_id
        await self.store.call(lambda tx: tx.update_table_seats(table_id, seats))

    async def abort(self) -> None:
        """Close the table, and end its game in play (if any) unfinished: stored as aborted, with
        no results, so a restart resumes neither (the operator's `close_table`)."""
        table_id, game_id = self.table_id, self.game_id

        def persist(tx: Tx) -> None:
            if game_id is not None and tx.game_status(game_id) == "running":
                tx.finish_game(game_id, "aborted", [])
            tx.close_table(table_id)

        await self.store.call(persist)

    async def close_table(self) -> None:
        """Mark the table closed (a restart does not reopen it)."""
        table_id = self.table_id
        await self.store.call(lambda tx: tx.close_table(table_id))


def finished_hand_records(
    game: Game, events: list[EngineEvent], game_id: int
) -> list[tuple[int, Any]]:
    """The `spades-hand/1` record of the hand `events` finished, if they finished one."""
    if not any(e.kind == "hand_scored" for e in events):
        return []
    history = game.histories[-1]
    return [(history.hand_number, hand_to_record(history, game.ruleset, game_id=str(game_id)))]


def game_seats(seats: Sequence[SeatState]) -> list[dict[str, Any]]:
    """Who plays each seat, as the game's record keeps it (and a restart reads it back): the account,
    the built-in bot's name for a bot's seat, and `abandoned` for a seat its player gave up."""
    return [
        {
            "account": s.account.id if s.account else None,
            "bot": s.bot.name if s.bot and not s.abandoned else None,
            **({"abandoned": True} if s.abandoned else {}),
        }
        for s in seats
    ]
