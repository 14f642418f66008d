"""The lobby: the registry of open tables, table creation, and lobby-wide chat and notices.

The lobby only finds tables and starts their tasks; whatever changes a table (a seat taken, an
action) is a command in that table's inbox, handled by the table task alone. On start it reopens
every unfinished game found in the store by replaying its persisted deals and actions, and every
table that was still waiting for players, with the accounts seated at it.
"""

from __future__ import annotations

import contextlib
import secrets
import string
from typing import TYPE_CHECKING, Any

import structlog
import trio

from engine.errors import EngineError
from protocol.errors import ErrorCode
from protocol.messages import ChatMessage, CreateTable, Message, TableChanged, TableClosed
from protocol.types import TableInfo, TableStatus
from server import accounts
from server.accounts import Account
from server.storage import StorageError, WaitingTable
from server.table import CloseUnoccupiedCommand, Command, Table, TableConfig, TableError

if TYPE_CHECKING:
    from server.app import Server
    from server.session import Session

log = structlog.get_logger("server.lobby")

CODE_ALPHABET = string.ascii_uppercase + string.digits


class Lobby:
    """Tables by id, and the sessions watching the lobby."""

    def __init__(self, server: Server) -> None:
        self.server = server
        self.tables: dict[str, Table] = {}
        self._nursery: trio.Nursery | None = None
        self._bot_accounts: dict[str, Account] = {}
        self.creators: dict[str, int] = {}  # table id -> account that opened it

    # ---------------------------------------------------------------- life

    async def start(self, nursery: trio.Nursery) -> None:
        """Remember where table tasks run, resume every unfinished game in the store, and reopen
        every table that was waiting for players."""
        self._nursery = nursery
        stored_games = await self.server.store.call(lambda tx: tx.unfinished_games())
        for stored in stored_games:
            config = TableConfig.from_json(stored.table_config)
            table = self._new_table(config)
            try:
                table.replay(stored)
            except (EngineError, ValueError, KeyError) as exc:
                log.error("recovery_failed", table=config.table_id, game=stored.id, error=str(exc))
                continue
            await self._restore_seats(table, stored.seats)
            # Awaited at once: the lambda never outlives this pass of the loop.
            creator = await self.server.store.call(
                lambda tx: tx.table_creator(config.table_id)  # noqa: B023
            )
            if creator is not None:
                self.creators[config.table_id] = creator
            self.tables[config.table_id] = table
            await nursery.start(self._run_table, table)
            log.info(
                "game_resumed",
                table=config.table_id,
                game=stored.id,
                actions=len(stored.actions),
                version=table.game.version,
            )

        for waiting in await self.server.store.call(lambda tx: tx.waiting_tables()):
            await self._reopen_waiting(waiting)

    async def _reopen_waiting(self, waiting: WaitingTable) -> None:
        """Open again a table that had no game yet: its config, built-in bots (seated by its task),
        and its accounts' seats, held for them as after a disconnect (the reconnect grace from now
        on). Guests' seats too: a guest comes back with its resume token. Only a guest from before
        resume tokens (none stored) has its seat freed."""
        assert self._nursery is not None
        try:
            config = TableConfig.from_json(waiting.config)
            table = self._new_table(config)
        except (EngineError, ValueError, KeyError, TypeError) as exc:
            log.error("reopen_failed", table=waiting.id, error=str(exc))
            return
        table.reopens = True
        now = trio.current_time()
        for index, account_id in enumerate(waiting.seats[: config.players]):
            if account_id is None or index in config.bots:
                continue
            row = await self.server.store.call(
                lambda tx: tx.account_by_id(int(account_id))  # noqa: B023 (awaited at once)
            )
            if row is None or accounts.cannot_return(row):
                continue
            state = table.seats[index]
            state.account = Account(row.id, row.name, row.is_bot, row.is_guest)
            state.dropped_at = now
        if waiting.seats != table.waiting_seats():
            # Seats nobody can come back to were freed: stored at once, so the stored seats are
            # the table's.
            seats = table.waiting_seats()
            try:
                await self.server.store.call(
                    lambda tx: tx.update_table_seats(config.table_id, seats)
                )
            except StorageError as exc:  # the table opens anyway; a later change stores them
                log.warning("seats_not_stored", table=config.table_id, error=str(exc))
        if waiting.creator is not None:
            self.creators[config.table_id] = waiting.creator
        self.tables[config.table_id] = table
        await self._nursery.start(self._run_table, table)
        log.info(
            "table_reopened",
            table=config.table_id,
            seats=[s.account.name for s in table.seats if s.account is not None],
        )

    async def _restore_seats(self, table: Table, seats: list[dict[str, Any]]) -> None:
        now = trio.current_time()
        for index, seat in enumerate(seats):
            account_id = seat.get("account")
            if account_id is None:
                continue
            row = await self.server.store.call(
                lambda tx: tx.account_by_id(int(account_id))  # noqa: B023 (awaited at once)
            )
            if row is None:
                continue
            state = table.seats[index]
            state.account = Account(row.id, row.name, row.is_bot, row.is_guest)
            if index not in table.config.bots:
                # Held for its player as after a disconnect: the clock and fallback play on.
                state.dropped_at = now
                # A guest from before resume tokens has none to come back with: played at once.
                state.abandoned = accounts.cannot_return(row)

    async def stop(self) -> None:
        """Nothing to flush: every applied action is already durable. Table tasks are cancelled."""
        log.info("lobby_stopping", tables=len(self.tables))

    async def bot_account(self, name: str) -> Account:
        if name not in self._bot_accounts:
            self._bot_accounts[name] = await accounts.builtin_bot(self.server.store, name)
        return self._bot_accounts[name]

    def _new_table(self, config: TableConfig) -> Table:
        table = Table(
            config=config,
            store=self.server.store,
            bot_account=self.bot_account,
            inbox_size=self.server.config.limits.table_inbox_size,
            max_spectators=self.server.config.limits.max_spectators,
        )
        table.on_change = self._table_changed
        return table

    async def _run_table(
        self, table: Table, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
    ) -> None:
        try:
            await table.run(task_status=task_status)
        except Exception:
            # A bug in one table must not take the server down; the game resumes after a restart.
            table.log.exception("table_crashed")
        finally:
            self.tables.pop(table.table_id, None)
            self.creators.pop(table.table_id, None)
            closed = TableClosed(table=table.table_id)
            for _seat, occupant in table.audience():
                occupant.deliver(closed)
            self.notify(closed)

    # ---------------------------------------------------------------- requests

    def listing(
        self, game: str | None, status: TableStatus | None, open_seats: bool
    ) -> list[TableInfo]:
        infos = []
        for table in self.tables.values():
            if game is not None and table.config.game != game:
                continue
            if status is not None and table.status is not status:
                continue
            if open_seats and not table.free_seats():
                continue
            infos.append(table.info())
        return infos[:200]

    async def create(self, request: CreateTable, creator: Account) -> Table:
        """Open a table; raises `TableError` (bad_options, table_limit, rate_limited) with nothing
        opened."""
        limits = self.server.config.limits
        if len(self.tables) >= limits.max_tables:
            # Not server_full: that code closes the connection, and a full lobby should not.
            raise TableError(ErrorCode.TABLE_LIMIT, "the server has no room for another table")
        mine = sum(1 for t in self.tables if self.creators.get(t) == creator.id)
        if mine >= limits.max_tables_per_account:
            raise TableError(
                ErrorCode.RATE_LIMITED,
                f"you already have {mine} open tables; let some finish first",
            )
        options = dict(request.options)
        try:
            from engine.ruleset import Ruleset

            ruleset = Ruleset.from_preset(request.preset, **options)
        except EngineError as exc:
            raise TableError(ErrorCode.BAD_OPTIONS, exc.message) from None
        if ruleset.game != request.game.value:
            raise TableError(
                ErrorCode.BAD_OPTIONS,
                f"preset {request.preset!r} plays {ruleset.game}, not {request.game.value}",
            )
        if request.seats is not None and request.seats != ruleset.players:
            raise TableError(
                ErrorCode.BAD_OPTIONS,
                f"this ruleset seats {ruleset.players}; set the 'players' option to change it",
            )
        bots = tuple(sorted(set(request.bots)))
        if any(seat >= ruleset.players for seat in bots):
            raise TableError(ErrorCode.BAD_OPTIONS, f"bot seats must be below {ruleset.players}")
        if request.sit is not None and (request.sit >= ruleset.players or request.sit in bots):
            raise TableError(ErrorCode.BAD_OPTIONS, f"seat {request.sit} is not free to sit in")
        cfg = self.server.config
        turn_ms = request.clock.turn_ms if request.clock is not None else None
        config = TableConfig(
            table_id=self._new_id(),
            game=ruleset.game,
            preset=request.preset,
            options=options,
            players=ruleset.players,
            bots=bots,
            human_turn_ms=turn_ms if turn_ms else int(cfg.human_clock * 1000),
            bot_turn_ms=turn_ms if turn_ms else int(cfg.bot_clock * 1000),
            bank_ms=request.clock.bank_ms if request.clock is not None else 0,
            private=request.private,
            code="".join(secrets.choice(CODE_ALPHABET) for _ in range(6))
            if request.private
            else None,
            grace_s=cfg.reconnect_grace,
            builtin_bot=cfg.builtin_bot,
            fallback_bot=cfg.fallback_bot,
        )
        table = self._new_table(config)
        table.reopens = True  # a lobby table waiting for players is reopened after a restart
        self.creators[config.table_id] = creator.id  # counted at once, as the table opens
        try:
            await self.adopt(table, creator=creator.id)
        except BaseException:
            self.creators.pop(config.table_id, None)
            raise
        log.info("table_created", table=config.table_id, game=config.game, bots=list(bots))
        return table

    async def adopt(self, table: Table, *, creator: int | None = None) -> None:
        """Open `table` (built here or by the ladder) as the lobby's own: stored, listed, run in
        the tables nursery, and announced (`table_changed`). Raises what the store raises
        (`StorageError`) with nothing opened. Limits are the caller's to check. A table that
        `reopens` is stored with its seats (and `creator`), to be reopened after a restart while
        it waits for players."""
        config = table.config
        seats = table.waiting_seats() if table.reopens else None
        await self.server.store.call(
            lambda tx: tx.insert_table(
                config.table_id, config.to_json(), seats=seats, creator=creator
            )
        )
        table.on_change = self._table_changed
        self.tables[config.table_id] = table
        assert self._nursery is not None
        await self._nursery.start(self._run_table, table)
        self._table_changed(table)

    def _new_id(self) -> str:
        for _ in range(16):  # bounded; 48 random bits make a clash vanishingly rare
            table_id = secrets.token_urlsafe(6).replace("-", "x").replace("_", "y")
            if table_id not in self.tables:
                return table_id
        raise TableError(ErrorCode.INTERNAL, "could not pick a table id")  # pragma: no cover

    def find(self, table_id: str, code: str | None = None) -> Table:
        """The table, if it exists and `code` opens it; raises `TableError` otherwise."""
        table = self.tables.get(table_id)
        if table is None:
            raise TableError(ErrorCode.NO_SUCH_TABLE, f"no table {table_id!r}")
        if table.config.private and code != table.config.code:
            raise TableError(
                ErrorCode.PRIVATE_TABLE, "this table is private: the join code is wrong"
            )
        return table

    async def submit(self, table: Table, command: Command) -> None:
        """Hand a command to the table task (waits while its bounded inbox is full)."""
        try:
            try:
                table.send_inbox.send_nowait(command)  # no pause when there is room
            except trio.WouldBlock:
                await table.send_inbox.send(command)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise TableError(ErrorCode.NO_SUCH_TABLE, "the table has closed") from None

    def submit_later(self, table: Table, command: Command) -> None:
        """Like `submit`, from code that may not wait (a session that is going away)."""
        try:
            table.send_inbox.send_nowait(command)
        except trio.WouldBlock:
            nursery = self.server.connections_nursery or self._nursery
            if nursery is not None:
                nursery.start_soon(self._submit_quietly, table, command)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass

    async def _submit_quietly(self, table: Table, command: Command) -> None:
        with contextlib.suppress(trio.ClosedResourceError, trio.BrokenResourceError):
            await table.send_inbox.send(command)

    def close_unoccupied(self, now: float, ttl: float) -> None:
        """Ask every waiting table that has had nobody seated for `ttl` seconds to close (called by
        the server's sweep; each table checks again in its own task, which alone may change it)."""
        for table in list(self.tables.values()):
            if table.unoccupied_for(now) >= ttl:
                self.submit_later(table, CloseUnoccupiedCommand(ttl=ttl))

    def tables_held_by(self, account_id: int) -> list[Table]:
        return [t for t in self.tables.values() if t.holds_seat(account_id) is not None]

    # ---------------------------------------------------------------- notices

    def notify(self, message: Message) -> None:
        """Tell every session watching the lobby."""
        for session in list(self.server.sessions):
            if session.watching_lobby:
                session.deliver(message)

    def chat(self, session: Session, text: str) -> None:
        assert session.account is not None
        line = ChatMessage(scope="lobby", name=session.account.name, text=text)  # type: ignore[arg-type]
        for other in list(self.server.sessions):
            if other.account is not None:
                other.deliver(line)

    def _table_changed(self, table: Table) -> None:
        self.notify(TableChanged(table=table.info()))
