"""The lobby: the registry of open tables, table creation, and who hears lobby-wide notices.

The lobby only finds tables and starts their tasks; whatever changes a table (a seat taken, an
action) is a command in that table's inbox, handled by the table task alone. On start it reopens
every unfinished game found in the store by replaying its persisted deals and actions, and every
table that was still waiting for players, with the accounts seated at it.

Lobby notices (`table_changed`, `table_closed`) go to the connections that asked for the listing
(`list_tables`), for the tables their listing's `game` filter covers; `table_closed` also goes to
everyone at the closing table. Lobby chat goes to every logged-in connection.
"""

from __future__ import annotations

import collections
import contextlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING

import structlog
import trio

from engine.errors import EngineError, RulesetError
from engine.ruleset import Ruleset
from protocol.errors import ErrorCode
from protocol.messages import ChatMessage, CreateTable, Message, TableChanged, TableClosed
from protocol.types import ChatScope, TableInfo, TableStatus
from server import accounts, seating
from server.accounts import Account
from server.cluster.remote import RemoteTable
from server.config import ServerConfig
from server.listing import LISTING_PAGE, Page, bounded_info
from server.peers import Peer
from server.quotas import JoinCodeGuard
from server.seats import decide_inline, decide_off_loop
from server.storage import StorageError, StoredGame, WaitingTable
from server.table import Table
from server.table_bots import BOT_SPECS, kind_of
from server.table_commands import (
    CloseUnoccupiedCommand,
    Command,
    JoinCommand,
    TableConfig,
    TableError,
)
from server.table_policy import LobbyPolicy, TablePolicy

if TYPE_CHECKING:
    from server.cluster.hooks import LobbyCluster
    from server.metrics import ActionMeter
    from server.ports import TableRef
    from server.storage import Store, Tx

log = structlog.get_logger("server.lobby")

# Join codes: letters and digits that cannot be misread for one another (no I, O, 0 or 1). Eight
# of 32 symbols are 40 bits: with wrong codes slowed down (`JoinCodeGuard`), a table outlives any
# guessing by far, and the code is still short to read out.
#: Commands waiting for room in one table's full inbox (`Lobby.submit_later`) before more are
#: refused: far more than a table's seats and spectators send as they go away at once.
BACKLOG = 1024
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 8


def new_join_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normal_code(given: str | None) -> str | None:
    """A join code as typed (`wuti miba`, `Wutimiba `) in the form the server made it: codes are
    upper case, and people read them out. Applied where a request enters, so that a table on
    another server of a cluster compares the same form."""
    return None if given is None else given.strip().replace(" ", "").upper()


def code_opens(given: str | None, code: str | None) -> bool:
    """Whether `given` is the table's join code, in either case (compared in constant time)."""
    if given is None or code is None:
        return False
    # Read aloud, a code loses its case: the alphabet is upper case alone, so folding the case
    # costs the code space nothing (still 32 ** 8), and a wrong code is still one guess.
    return hmac.compare_digest(given.strip().upper().encode(), code.upper().encode())


class Lobby:
    """Tables by id, the connections that hear the lobby, and the built-in bots' accounts."""

    def __init__(self, store: Store, config: ServerConfig) -> None:
        self.store = store
        self.config = config
        self.tables: dict[str, Table] = {}
        self.creators: dict[str, int] = {}  # table id -> account that opened it
        # table id -> the network address it was opened from (`quotas.network_of`); tables opened
        # before a restart, and the ladder's, have none.
        self.creator_networks: dict[str, str] = {}
        # table id -> its place in the listing (tables are listed in the order they opened; a
        # listing cursor is such a number)
        self._listed_as: dict[str, int] = {}
        self._next_listed = 1
        self.join_codes = JoinCodeGuard(config.limits)
        self._nursery: trio.Nursery | None = None
        # Commands `submit_later` could not put in a full inbox, per table, drained in order.
        self._backlogs: dict[Table, collections.deque[Command]] = {}
        self._bot_accounts: dict[str, Account] = {}
        self._listeners: dict[Peer, str | None] = {}  # peer -> the game its listing asked for
        self._members: set[Peer] = set()  # logged-in connections: they hear lobby chat
        # Set in a cluster (server/cluster/): the other servers' tables, notices and logins.
        self.cluster: LobbyCluster | None = None
        # What every table counts of its actions (the server's metrics); None: nothing counted.
        self.meter: ActionMeter | None = None
        # Told (game id, hand number) by every table once it stored a finished hand: the player
        # statistics' job (`server.stats.StatsJob.post`, which never waits). None: not counted.
        self.on_hand: Callable[[int, int], None] | None = None
        # The policy of an event's table (`TableConfig.event`) resumed after a restart: its deals,
        # reserved seats and house bots are the event's (`server.events.service`). None: no events.
        self.event_policy: Callable[[TableConfig], Awaitable[TablePolicy | None]] | None = None

    # ---------------------------------------------------------------- life

    async def start(self, nursery: trio.Nursery) -> None:
        """Remember where table tasks run, resume every unfinished game in the store, and reopen
        every table that was waiting for players."""
        self._nursery = nursery
        if self.cluster is not None:
            return  # a cluster server opens the tables it claims (`take_over`)
        for stored in await self.store.call(lambda tx: tx.unfinished_games()):
            await self._resume_game(stored)
        for waiting in await self.store.call(lambda tx: tx.waiting_tables()):
            await self._reopen_waiting(waiting)

    async def take_over(self, table_ids: Collection[str]) -> None:
        """Open the tables `table_ids` from the store, as a restart would (a cluster server
        claimed them: new, or from a server that died)."""
        wanted = set(table_ids)

        def load(tx: Tx) -> tuple[list[StoredGame], list[WaitingTable]]:
            games = []
            for table_id in sorted(wanted):
                game_id = tx.latest_game_at(table_id)
                if game_id is not None and tx.game_status(game_id) == "running":
                    stored = tx.load_game(game_id)
                    if stored is not None:
                        games.append(stored)
            return games, [w for w in tx.waiting_tables() if w.id in wanted]

        games, waiting = await self.store.call(load)
        for stored in games:
            if stored.table_id not in self.tables:
                await self._resume_game(stored)
        for table in waiting:
            if table.id not in self.tables:
                await self._reopen_waiting(table)

    async def _resume_game(self, stored: StoredGame) -> None:
        config = TableConfig.from_json(stored.table_config)
        policy = None
        if config.event is not None and self.event_policy is not None:
            policy = await self.event_policy(config)
        table = self.new_table(config, policy)
        try:
            table.restore(stored)
        except (EngineError, ValueError, KeyError) as exc:
            log.error("recovery_failed", table=config.table_id, game=stored.id, error=str(exc))
            return
        now = trio.current_time()
        for index, seat in enumerate(stored.seats):
            account_id = seat.get("account")
            if account_id is None:
                continue
            row = await self.store.call(
                lambda tx: tx.account_by_id(int(account_id))  # noqa: B023 (awaited at once)
            )
            if row is None:
                continue
            state = table.seats[index]
            state.account = Account(row.id, row.name, row.is_bot, row.is_guest)
            if index in table.config.bots:
                continue
            if seat.get("abandoned") or accounts.cannot_return(row):
                # Given up before the restart (or a guest from before resume tokens, with none
                # to come back with): the fallback plays it, as it did.
                state.abandoned = True
            else:
                # Held for its player as after a disconnect: the clock and fallback play on.
                state.dropped_at = now
        creator = await self.store.call(lambda tx: tx.table_creator(config.table_id))
        await self._open(table, creator)
        log.info(
            "game_resumed",
            table=config.table_id,
            game=stored.id,
            actions=len(stored.actions),
            version=table.game.version,
        )

    async def _reopen_waiting(self, waiting: WaitingTable) -> None:
        """Open again a table that had no game yet: its config, built-in bots (seated by its task),
        and its accounts' seats, held for them as after a disconnect (the reconnect grace from now
        on). Guests' seats too: a guest comes back with its resume token. Only a guest from before
        resume tokens (none stored) has its seat freed."""
        try:
            table = self.new_table(TableConfig.from_json(waiting.config))
        except (EngineError, ValueError, KeyError, TypeError) as exc:
            log.error("reopen_failed", table=waiting.id, error=str(exc))
            return
        config = table.config
        now = trio.current_time()
        for index, account_id in enumerate(waiting.seats[: config.players]):
            if account_id is None or index in config.bots:
                continue
            row = await self.store.call(
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
                await self.store.call(lambda tx: tx.update_table_seats(config.table_id, seats))
            except StorageError as exc:  # the table opens anyway; a later change stores them
                log.warning("seats_not_stored", table=config.table_id, error=str(exc))
        await self._open(table, waiting.creator)
        log.info(
            "table_reopened",
            table=config.table_id,
            seats=[s.account.name for s in table.seats if s.account is not None],
        )

    async def bot_account(self, name: str) -> Account:
        """The account of a built-in bot, made on first use and remembered."""
        if name not in self._bot_accounts:
            self._bot_accounts[name] = await accounts.builtin_bot(self.store, name)
        return self._bot_accounts[name]

    def new_table(self, config: TableConfig, policy: TablePolicy | None = None) -> Table:
        """A table of this server (not yet open: `adopt` opens it)."""
        limits = self.config.limits
        table = Table(
            config,
            self.store,
            self.bot_account,
            policy=policy,
            inbox_size=limits.table_inbox_size,
            max_spectators=limits.max_spectators,
            think=decide_off_loop if self.config.bots_in_threads else decide_inline,
            meter=self.meter,
        )
        table.records.on_hand = self.on_hand
        return table

    def local(self, table_id: str) -> Table | None:
        """This server's open table with this id, if any."""
        return self.tables.get(table_id)

    def free_table_slots(self) -> int:
        return self.config.limits.max_tables - len(self.tables)

    async def _open(self, table: Table, creator: int | None) -> None:
        """List `table` and start its task in the tables nursery."""
        assert self._nursery is not None, "the lobby has not started"
        if creator is not None:
            self.creators[table.table_id] = creator
        table.on_change = self._table_changed
        self.tables[table.table_id] = table
        self._listed_as[table.table_id] = self._next_listed
        self._next_listed += 1
        await self._nursery.start(self._run_table, table)

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
            self.creator_networks.pop(table.table_id, None)
            self._listed_as.pop(table.table_id, None)
            self.join_codes.forget_table(table.table_id)
            closed = TableClosed(table=table.table_id, reason=table.closed_reason)
            told = set()
            for _seat, peer in table.audience():
                peer.deliver(closed)
                told.add(peer)
            told.update(table.spectators)  # a delayed table tells them through one peer
            self._notify(closed, table.config.game, skip=told)

    # ---------------------------------------------------------------- requests

    def listing(
        self,
        game: str | None,
        status: TableStatus | None,
        open_seats: bool,
        *,
        cursor: str | None = None,
        limit: int = LISTING_PAGE,
    ) -> tuple[list[TableInfo], str | None]:
        """One page of the tables that match, in the order they opened, from `cursor` on: at most
        `limit`, and never more than fit one frame (`server.listing.Page`); and the cursor of the
        next page (None: this is the last). Raises `TableError` (invalid_field) for a cursor this
        server did not make."""
        start = 0
        remote_from: str | None = None  # in a cluster: the other servers' tables, after ours
        if cursor is not None:
            if self.cluster is not None and cursor.startswith("r") and cursor.isascii():
                remote_from, start = cursor[1:], -1
            elif not cursor.isascii() or not cursor.isdigit():
                raise TableError(
                    ErrorCode.INVALID_FIELD,
                    "the cursor is not one this server gave (list from the start)",
                    detail="cursor",
                )
            else:
                start = int(cursor)
        page = Page(limit, self.config.limits.max_frame_bytes)
        for table in self.tables.values() if start >= 0 else ():  # in opening order
            place = self._listed_as.get(table.table_id, 0)
            if place < start:
                continue
            if game is not None and table.config.game != game:
                continue
            if status is not None and table.status is not status:
                continue
            if open_seats and not table.free_seats():
                continue
            if not page.add(table.info()):
                if page.entries:
                    return page.entries, str(place)
                # Not even alone, without its options: only under a frame limit far below any
                # real one. Left out rather than stop the listing here.
                log.warning("table_not_listable", table=table.table_id)
        if self.cluster is not None:
            for info in self.cluster.listing(game, status, open_seats, remote_from or ""):
                if not page.add(info):
                    if page.entries:
                        return page.entries, f"r{info.table}"
                    log.warning("table_not_listable", table=info.table)
        return page.entries, None

    async def create(
        self, request: CreateTable, creator: Account, network: str | None = None
    ) -> Table:
        """Open a table for `creator`, connected from `network` (`quotas.network_of`); raises
        `TableError` (bad_options, table_limit, rate_limited) with nothing opened."""
        limits = self.config.limits
        if len(self.tables) >= limits.max_tables:
            # Not server_full: that code closes the connection, and a full lobby should not.
            raise TableError(ErrorCode.TABLE_LIMIT, "the server has no room for another table")
        mine = sum(1 for t in self.tables if self.creators.get(t) == creator.id)
        if mine >= limits.max_tables_per_account:
            raise TableError(
                ErrorCode.RATE_LIMITED,
                f"you already have {mine} open tables; let some finish first",
            )
        if network is not None:
            # Accounts are cheap (a guest is one request), so the address counts too: one
            # machine cannot take every table from everyone else.
            ours = sum(1 for n in self.creator_networks.values() if n == network)
            if ours >= limits.max_tables_per_address:
                raise TableError(
                    ErrorCode.RATE_LIMITED,
                    f"your address already has {ours} open tables; let some finish first",
                )
        config = self._config_for(request)
        table = self.new_table(config, LobbyPolicy(reopens=True))
        if network is not None:
            # Counted from before it opens: another request may run while this one is stored.
            self.creator_networks[config.table_id] = network
        try:
            await self.adopt(table, creator=creator.id)
        except BaseException:
            self.creator_networks.pop(config.table_id, None)
            raise
        log.info("table_created", table=config.table_id, game=config.game, bots=list(config.bots))
        return table

    def _config_for(self, request: CreateTable) -> TableConfig:
        options = dict(request.options)
        try:
            ruleset = Ruleset.from_preset(request.preset, **options)
        except RulesetError as exc:
            # `detail` names the option at fault ("preset" for a preset nobody knows).
            raise TableError(ErrorCode.BAD_OPTIONS, exc.message, detail=exc.option[:200]) from None
        except EngineError as exc:
            raise TableError(ErrorCode.BAD_OPTIONS, exc.message, detail="options") from None
        if ruleset.game != request.game.value:
            raise TableError(
                ErrorCode.BAD_OPTIONS,
                f"preset {request.preset!r} plays {ruleset.game}, not {request.game.value}",
                detail="game",
            )
        if request.seats is not None and request.seats != ruleset.players:
            raise TableError(
                ErrorCode.BAD_OPTIONS,
                f"this ruleset seats {ruleset.players}; set the 'players' option to change it",
                detail="seats",
            )
        bots = tuple(sorted(set(request.bots)))
        if any(seat >= ruleset.players for seat in bots):
            raise TableError(
                ErrorCode.BAD_OPTIONS, f"bot seats must be below {ruleset.players}", detail="bots"
            )
        if request.sit is not None and (request.sit >= ruleset.players or request.sit in bots):
            raise TableError(
                ErrorCode.BAD_OPTIONS, f"seat {request.sit} is not free to sit in", detail="sit"
            )
        cfg = self.config
        # An old client names no kind: the server's own built-in bot (heuristic unless its operator
        # chose another), listed by its kind when it is one.
        kind = request.bot if request.bot is not None else kind_of(cfg.builtin_bot)
        turn_ms = request.clock.turn_ms if request.clock is not None else None
        return TableConfig(
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
            code=new_join_code() if request.private else None,
            grace_s=cfg.reconnect_grace,
            builtin_bot=BOT_SPECS[request.bot] if request.bot is not None else cfg.builtin_bot,
            fallback_bot=cfg.fallback_bot,
            bot_kind=str(kind) if kind is not None else None,
            no_watching=bool(request.no_watching),
            spectator_delay=request.spectator_delay or 0,
        )

    async def adopt(self, table: Table, *, creator: int | None = None) -> None:
        """Open `table` (built by `new_table`, here or by the ladder) as the lobby's own: stored,
        listed, run in the tables nursery, and announced (`table_changed`). Raises what the store
        raises (`StorageError`) with nothing opened. Limits are the caller's to check. A table whose
        policy `reopens` is stored with its seats (and `creator`), to be reopened after a restart
        while it waits for players."""
        config = table.config
        seats = table.waiting_seats() if table.policy.reopens else None
        if self.cluster is not None:
            # Ours before it is stored: the servers adopt a stored open table nobody owns.
            await self.cluster.opening(config.table_id)
        try:
            await self.store.call(
                lambda tx: tx.insert_table(
                    config.table_id, config.to_json(), seats=seats, creator=creator
                )
            )
        except BaseException:
            if self.cluster is not None:
                self.cluster.published(config.table_id, None, None)  # not ours after all
            raise
        await self._open(table, creator)
        self._table_changed(table)

    def _new_id(self) -> str:
        for _ in range(16):  # bounded; 48 random bits make a clash vanishingly rare
            table_id = secrets.token_urlsafe(6).replace("-", "x").replace("_", "y")
            if table_id not in self.tables:
                return table_id
        raise TableError(ErrorCode.INTERNAL, "could not pick a table id")  # pragma: no cover

    def get(self, table_id: str) -> Table | RemoteTable:
        """The open table with this id (in a cluster, maybe another server's); raises
        `TableError` (no_such_table) otherwise."""
        table: Table | RemoteTable | None = self.tables.get(table_id)
        if table is None and self.cluster is not None:
            table = self.cluster.remote_table(table_id, None)
        if table is None:
            raise TableError(ErrorCode.NO_SUCH_TABLE, f"no table {table_id!r}")
        return table

    def find(
        self,
        table_id: str,
        code: str | None = None,
        network: str | None = None,
        *,
        account_id: int | None = None,
    ) -> Table | RemoteTable:
        """The table, if it exists and `code` opens it; raises `TableError` otherwise. In a
        cluster it may be another server's; one not yet heard of here is looked up in the store
        when its command is forwarded, and its code checked then.

        The account that holds a seat at a private table (`account_id`: its client died, or it
        comes back from another terminal) needs no code: the table knows it, and the code was
        only ever to keep out those it does not. Everyone else goes through the guard below.

        Wrong codes for a private table are slowed down, per table and per `network` (the
        asker's, `quotas.network_of`): past a few, every code (the right one too, or guessing
        would go on) is refused `rate_limited` with `retry_ms` until the limit has room again.
        Asking without a code is no guess and costs nothing."""
        table = self.get(table_id)
        if isinstance(table, RemoteTable) and table.config is None:
            table.code = code
            return table
        config = table.config
        assert config is not None
        if not config.private:
            return table
        if (
            account_id is not None
            and isinstance(table, Table)
            and seating.account_seat(table.seats, account_id) is not None
        ):
            return table
        now = trio.current_time()
        wait_ms = self.join_codes.retry_ms(table_id, network, now)
        if wait_ms:
            raise TableError(
                ErrorCode.RATE_LIMITED,
                "too many wrong join codes; wait before trying again",
                retry_ms=wait_ms,
            )
        if not code_opens(code, config.code):
            if code is not None:
                self.join_codes.wrong(table_id, network, now)
            raise TableError(
                ErrorCode.PRIVATE_TABLE, "this table is private: the join code is wrong"
            )
        return table

    async def submit(self, table: TableRef, command: Command) -> None:
        """Hand a command to the table task (waits while its bounded inbox is full). Raises
        `TableError` (no_such_table) if the table has closed: then nothing was queued."""
        if isinstance(table, RemoteTable):
            table.submit(command)  # another server's: forwarded (its server answers)
            return
        assert isinstance(table, Table)
        try:
            try:
                table.send_inbox.send_nowait(command)  # no pause when there is room
            except trio.WouldBlock:
                await table.send_inbox.send(command)
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            raise TableError(ErrorCode.NO_SUCH_TABLE, "the table has closed") from None

    def submit_later(self, table: TableRef, command: Command) -> bool:
        """Like `submit`, from code that may not wait (a connection that is going away, the
        cluster's link): into the inbox if it has room, else into the table's backlog, which one
        task per table drains into the inbox in order. False (nothing queued) when that backlog
        holds `BACKLOG` commands already: the caller refuses the command (a table that far
        behind is not helped by more); a closed table's commands are dropped (True)."""
        if isinstance(table, RemoteTable):
            table.submit(command)
            return True
        assert isinstance(table, Table)
        backlog = self._backlogs.get(table)
        if backlog is None:
            try:
                table.send_inbox.send_nowait(command)
                return True
            except trio.WouldBlock:
                if self._nursery is None:
                    return False
                backlog = self._backlogs[table] = collections.deque()
                self._nursery.start_soon(self._drain, table, backlog)
            except (trio.ClosedResourceError, trio.BrokenResourceError):
                return True
        if len(backlog) >= BACKLOG:
            return False
        backlog.append(command)
        return True

    async def _drain(self, table: Table, backlog: collections.deque[Command]) -> None:
        """Feed a table's backlog into its inbox, oldest first, as room comes (one task per table
        with a backlog; it ends when the backlog is empty or the table closed)."""
        try:
            while backlog:  # bounded: BACKLOG commands at most, each sent once
                await table.send_inbox.send(backlog[0])
                backlog.popleft()
        except (trio.ClosedResourceError, trio.BrokenResourceError):
            pass  # the table has closed: what waited has nobody to answer it
        finally:
            del self._backlogs[table]

    async def resume(self, peer: Peer, account: Account) -> None:
        """Give `account`'s seats with no live connection back to `peer` (a login does this):
        each such table answers `joined`, a snapshot and `turn`. Seats another live connection of
        the account holds are left alone."""
        if self.cluster is not None:
            self.cluster.resume(peer, account)  # the other servers' tables too
        await self.resume_here(peer, account)

    async def resume_here(self, peer: Peer, account: Account) -> None:
        """`resume`, at this server's own tables only."""
        for table in [t for t in self.tables.values() if t.resumable_by(account.id)]:
            with contextlib.suppress(TableError):
                await self.submit(table, JoinCommand(peer=peer, account=account, reattach=True))

    def seated_accounts(self) -> set[int]:
        """Every account that has a seat at an open table (held for it, or played for it)."""
        return {
            seat.account.id
            for table in self.tables.values()
            for seat in table.seats
            if seat.account is not None
        }

    def close_unoccupied(self, now: float, ttl: float) -> None:
        """Ask every waiting table that has had nobody seated for `ttl` seconds to close (called by
        the server's sweep; each table checks again in its own task, which alone may change it)."""
        for table in list(self.tables.values()):
            if table.unoccupied_for(now) >= ttl:
                self.submit_later(table, CloseUnoccupiedCommand(ttl=ttl))

    # ---------------------------------------------------------------- who hears the lobby

    def listen(self, peer: Peer, game: str | None) -> None:
        """`peer` asked for the listing: it hears `table_changed` / `table_closed` from now on, for
        tables of `game` (every game when None), as its last listing asked."""
        self._listeners[peer] = game

    def enter(self, peer: Peer) -> None:
        """`peer` logged in: it hears lobby chat."""
        self._members.add(peer)

    def forget(self, peer: Peer) -> None:
        """`peer`'s connection is gone."""
        self._listeners.pop(peer, None)
        self._members.discard(peer)
        if self.cluster is not None:
            self.cluster.forget(peer)

    def chat(self, name: str, text: str) -> None:
        line = ChatMessage(scope=ChatScope.LOBBY, name=name, text=text)
        if self.cluster is not None:
            self.cluster.chat(line)
        self.tell_members(line)

    def tell_members(self, line: ChatMessage) -> None:
        """A lobby chat line to this server's logged-in connections."""
        for member in list(self._members):
            member.deliver(line)

    def _notify(self, message: Message, game: str, skip: set[Peer] | None = None) -> None:
        if self.cluster is not None and isinstance(message, TableChanged | TableClosed):
            table_id = message.table if isinstance(message, TableClosed) else message.table.table
            table = self.tables.get(table_id)
            info = message.table if isinstance(message, TableChanged) else None
            if table is not None or info is None:
                self.cluster.published(table_id, info, table.config if table else None)
        self.tell(message, game, skip)

    def tell(self, message: Message, game: str, skip: set[Peer] | None = None) -> None:
        """A lobby notice to this server's connections that listen for tables of `game`."""
        for peer, wanted in list(self._listeners.items()):
            if (wanted is None or wanted == game) and (skip is None or peer not in skip):
                peer.deliver(message)

    def _table_changed(self, table: Table) -> None:
        # The entry as a listing has it (its options bounded), so the event fits a frame too.
        self._notify(TableChanged(table=bounded_info(table.info())), table.config.game)
