"""The ladder service: entrants, the scheduling loop, duplicate matches on real tables, ratings.

One trio task (`LadderService.run`) owns the ladder. Every `interval` seconds, or as soon as an entrant
enters or a match ends, it asks the scheduler for matches among the available entrants (entered,
connected, not playing, not benched) and starts each in its own task. A match is two tables one after
the other (the halves of a duplicate pair, `server.ladder.duplicate`); a remote entrant is told
`match_started`, then seated like any join (`joined`, `snapshot`), and house bots play in-process. When
both halves are over the result is rated (`server.ladder.ratings`), stored with its games
(`server.ladder.store`) and told to the remote entrants (`match_ended`).

Fair play: one entry per account (so no account ever holds two seats), at most `max_per_owner` entrants
per network address, and a forfeit for an entrant that disconnects or leaves mid-match or times out
`max_timeouts` times (see `server.ladder.table`); an entrant that forfeits by timeouts sits out for
`cooldown` seconds. A match cut short by a crashed table is void (stored, never rated).
"""

from __future__ import annotations

import random
import secrets
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import structlog
import trio

from protocol.errors import ErrorCode
from protocol.messages import (
    Error,
    LadderLeave,
    MatchEnded,
    MatchStarted,
    Message,
    Ok,
)
from protocol.types import MatchResult
from server.accounts import Account
from server.config import ServerConfig
from server.ladder import store as ladder_store
from server.ladder.desk import ARCHIVE_REQUESTS, LadderArchive
from server.ladder.duplicate import DuplicatePlan, HalfResult, board_points, team_points
from server.ladder.policy import MatchPolicy
from server.ladder.ratings import MatchOutcome, Rating, RatingModel, Ratings, apply_match
from server.ladder.scheduler import Candidate, PlannedMatch, form_matches
from server.ladder.settings import LadderSettings
from server.peers import Peer
from server.ports import Client, LadderRequest, TableHost
from server.storage import StorageError
from server.table import Table
from server.table_commands import JoinCommand, LeaveCommand, LeaveReason, TableConfig, TableError

if TYPE_CHECKING:
    from server.storage import Store, Tx

log = structlog.get_logger("server.ladder")

TABLE_CLOSE_WAIT = 5.0  # seconds a finished half's table may take to close before the next opens


@dataclass(eq=False)
class Entrant:
    """One account on the ladder: a connection of it, or a house bot (`peer` None)."""

    account: Account
    peer: Peer | None
    house_spec: str | None = None
    owner: str = "house"
    busy: bool = False
    leaving: bool = False
    benched_until: float = 0.0

    @property
    def key(self) -> str:
        return str(self.account.id)


class LadderService:
    """The ladder of one server. Run `run()` in a nursery; sessions call `handle()`."""

    def __init__(
        self,
        store: Store,
        tables: TableHost,
        config: ServerConfig,
        *,
        is_stopping: Callable[[], bool] = lambda: False,
    ) -> None:
        self.store = store
        self.tables = tables
        self.config = config
        self._is_stopping = is_stopping
        self.archive = LadderArchive(store)
        self.settings = config.ladder_settings or LadderSettings()
        self.ruleset = self.settings.ruleset()
        self.model = RatingModel(tau=self.settings.tau)
        self.entrants: dict[int, Entrant] = {}
        self.ratings = Ratings()
        self.partners: dict[int, deque[int]] = {}
        self.rated = 0  # matches rated since start
        self.voided = 0
        self.running = 0
        self._rng = random.Random(self.settings.seed)
        self._wake = trio.Event()
        self._settled = trio.Event()  # set (and replaced) whenever a match is rated or voided
        self._lock = trio.Lock()  # one rating update at a time, in the order they are stored

    # ---------------------------------------------------------------- life

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Load the ladder's state, then schedule matches until cancelled."""
        store = self.store

        def load(tx: Tx) -> tuple[int, Ratings, dict[int, list[int]], list[Any]]:
            voided = ladder_store.void_running(tx)
            return (
                voided,
                # Rebuilt from the rated history at every start: the ratings always follow the
                # rules (and the `tau`) this server rates by, also after an upgrade changed them.
                ladder_store.rebuild(tx, self.model),
                ladder_store.recent_partners(tx),
                ladder_store.house_entrants(tx),
            )

        voided, ratings, partners, house = await store.call(load)
        self.ratings = ratings
        self.partners = {
            k: deque(v[: self.settings.partner_memory], maxlen=self.settings.partner_memory)
            for k, v in partners.items()
        }
        for account_id, name, spec in house:
            self._add(Entrant(Account(account_id, name, True, False), None, house_spec=spec))
        log.info("ladder_started", voided=voided, house=len(house), rated=len(self.ratings))
        async with trio.open_nursery() as nursery:
            task_status.started()
            next_house_check = trio.current_time() + self.settings.house_poll
            # Bounded by the server's life: each pass waits for a wake-up or the interval.
            while True:
                if trio.current_time() >= next_house_check:
                    # `spades-server ladder add-house-bots` writes the file while we run.
                    next_house_check = trio.current_time() + self.settings.house_poll
                    await self._load_house()
                self._schedule(nursery)
                with trio.move_on_after(self.settings.interval):
                    await self._wake.wait()
                self._wake = trio.Event()

    async def _load_house(self) -> None:
        house = await self.store.call(ladder_store.house_entrants)
        for account_id, name, spec in house:
            if account_id not in self.entrants:
                self._add(Entrant(Account(account_id, name, True, False), None, house_spec=spec))

    def wake(self) -> None:
        self._wake.set()

    async def wait_rated(self, count: int) -> None:
        """Until at least `count` matches have been rated since start (for tests and tools)."""
        while self.rated < count:
            await self._settled.wait()

    async def wait_voided(self, count: int) -> None:
        """Until at least `count` matches have been voided since start."""
        while self.voided < count:
            await self._settled.wait()

    def _match_settled(self) -> None:
        self._settled.set()
        self._settled = trio.Event()

    # ---------------------------------------------------------------- entrants

    def _add(self, entrant: Entrant) -> None:
        self.entrants[entrant.account.id] = entrant
        self.wake()

    def _connected(self, entrant: Entrant) -> bool:
        return entrant.peer is None or entrant.peer.connected

    def connection_closed(self, peer: Peer) -> None:
        """The connection ended: its entry goes (a match in progress sees its own forfeit)."""
        for account_id, entrant in list(self.entrants.items()):
            if entrant.peer is peer and not entrant.busy:
                del self.entrants[account_id]

    def _prune(self) -> None:
        for account_id, entrant in list(self.entrants.items()):
            if not entrant.busy and (entrant.leaving or not self._connected(entrant)):
                del self.entrants[account_id]

    async def handle(self, client: Client, request: LadderRequest) -> Message:
        """The reply to a ladder request from `client` (the session delivers it)."""
        rid = request.id
        if isinstance(request, ARCHIVE_REQUESTS):
            return await self.archive.answer(request)
        account = client.account
        if account is None or account.is_guest:
            return Error(
                id=rid,
                code=ErrorCode.NOT_AUTHENTICATED.value,
                message="log in (not as a guest) to enter the ladder",
            )
        self._prune()
        entrant = self.entrants.get(account.id)
        if isinstance(request, LadderLeave):
            if entrant is None or entrant.leaving:
                return Error(id=rid, code=ErrorCode.NOT_ON_LADDER.value, message="not entered")
            if entrant.busy:
                entrant.leaving = True  # after the match in progress, which it plays on
                log.info("ladder_leaving", account=account.name)
                return Ok(id=rid, note="you leave the ladder when the match in progress ends")
            del self.entrants[account.id]
            log.info("ladder_left", account=account.name)
            return Ok(id=rid, note="you have left the ladder")
        if entrant is not None and not entrant.leaving:
            return Error(
                id=rid,
                code=ErrorCode.ALREADY_ON_LADDER.value,
                message="this account is already entered (one entry per account)",
            )
        owner = client.owner
        mine = sum(1 for e in self.entrants.values() if e.owner == owner)
        if mine >= self.settings.max_per_owner:
            return Error(
                id=rid,
                code=ErrorCode.LADDER_LIMIT.value,
                message=f"{owner} already has {mine} entrants on the ladder (the limit)",
            )
        if entrant is not None:  # leaving after its match, and back again: stay
            entrant.leaving = False
            entrant.peer = client.peer
        else:
            self._add(Entrant(account, client.peer, owner=owner))
        log.info("ladder_entered", account=account.name, owner=owner)
        return Ok(id=rid)

    async def add_house_bot(self, spec: str) -> Entrant:
        """Enter a sample bot for good (as `spades-server ladder add-house-bots` does, live)."""

        await self.store.call(lambda tx: ladder_store.add_house_bots(tx, [spec]))
        name = ladder_store.house_account_name(spec)
        row = await self.store.call(lambda tx: tx.account_by_name(name))
        assert row is not None
        entrant = Entrant(Account(row.id, row.name, True, False), None, house_spec=spec)
        self._add(entrant)
        return entrant

    # ---------------------------------------------------------------- scheduling

    def _candidates(self) -> list[Candidate]:
        now = trio.current_time()
        out = []
        for entrant in self.entrants.values():
            if entrant.busy or entrant.leaving or entrant.benched_until > now:
                continue
            if not self._connected(entrant):
                continue
            rating = self.ratings.get(entrant.key) or self.model.initial()
            partners = self.partners.get(entrant.account.id, ())
            out.append(
                Candidate(
                    entrant=entrant.key,
                    account=entrant.account.id,
                    mu=rating.mu,
                    sigma=rating.sigma,
                    played=rating.matches,
                    recent_partners=tuple(str(p) for p in partners),
                )
            )
        return out

    def _schedule(self, nursery: trio.Nursery) -> None:
        self._prune()
        # A match holds one table at a time; leave the lobby's last free tables to it.
        free_tables = self.tables.free_table_slots()
        room = min(self.settings.max_matches - self.running, free_tables)
        if room <= 0:
            return
        planned = form_matches(
            self._candidates(), seed=self._rng.getrandbits(64), settings=self.settings.scheduler
        )
        for match in planned:
            seated = [self.entrants[c.account] for c in match.seats]
            if not self.settings.house_only and all(e.peer is None for e in seated):
                continue
            if room <= 0:
                break
            room -= 1
            for entrant in seated:
                entrant.busy = True
            self.running += 1
            nursery.start_soon(self._run_match, match, seated)

    # ---------------------------------------------------------------- one match

    async def _run_match(self, planned: PlannedMatch, seated: list[Entrant]) -> None:
        try:
            await self._play_match(planned, seated)
        except (TableError, ValueError, StorageError) as exc:
            # One match that cannot be played must not stop the ladder; it stays unrated.
            log.error("match_failed", error=str(exc), players=[e.account.name for e in seated])
        finally:
            self.running -= 1
            for entrant in seated:
                entrant.busy = False
            self.wake()

    async def _play_match(self, planned: PlannedMatch, seated: list[Entrant]) -> None:
        settings = self.settings
        ids = [e.account.id for e in seated]
        teams = ((ids[0], ids[2]), (ids[1], ids[3]))
        match = await self.store.call(
            lambda tx: ladder_store.insert_match(
                tx,
                preset=settings.preset,
                options=settings.table_options(),
                hands=settings.hands,
                teams=teams,
            )
        )
        seq = ladder_store.match_seq(match)
        plan = (
            DuplicatePlan.fresh(settings.hands)
            if settings.seed is None
            else DuplicatePlan.seeded(settings.hands, settings.seed * 1_000_003 + seq)
        )
        names = [e.account.name for e in seated]
        log.info("match_started", match=match, players=names)
        halves: list[HalfResult] = []
        forfeits: dict[int, str] = {}
        for half in (0, 1):
            order = DuplicatePlan.seating([str(i) for i in range(4)], half)
            at_seats = [seated[int(i)] for i in order]
            try:
                played = await self._play_half(match, half, at_seats, plan)
            except TableError as exc:  # no room for a table: nothing was played
                log.warning("match_not_played", match=match, error=exc.message)
                played = None
            if played is None:
                await self.store.call(
                    lambda tx: ladder_store.void_match(tx, match, "a table could not finish")
                )
                self.voided += 1
                self._match_settled()
                log.warning("match_void", match=match)
                return
            result, lost = played
            halves.append(result)
            forfeits.update(lost)
            if forfeits:
                break  # the result is decided; the second half would rate nothing
        if self._is_stopping():
            # The server is hanging up on everyone: those are not forfeits, and nothing is rated.
            await self.store.call(
                lambda tx: ladder_store.void_match(tx, match, "the server stopped")
            )
            self.voided += 1
            self._match_settled()
            return
        str_teams = ((str(ids[0]), str(ids[2])), (str(ids[1]), str(ids[3])))
        outcome = MatchOutcome(
            match_id=match,
            teams=str_teams,
            points=team_points(halves, str_teams),
            forfeits=frozenset(str(a) for a in forfeits),
            boards=board_points(halves, str_teams),
            planned_boards=settings.hands,
            finished_at=ladder_store.now(),
        )
        await self._rate(outcome, halves, seated, forfeits)

    async def _rate(
        self,
        outcome: MatchOutcome,
        halves: list[HalfResult],
        seated: list[Entrant],
        forfeits: dict[int, str],
    ) -> None:
        async with self._lock:
            before = dict(self.ratings)
            moves = apply_match(self.model, self.ratings, outcome)
            by_account = {int(k): v for k, v in moves.items()}
            # Every entrant's rating is written: one match moves the others' a little too.
            everyone = {int(k): v for k, v in self.ratings.items()}
            await self.store.call(
                lambda tx: ladder_store.finish_match(
                    tx,
                    outcome.match_id,
                    outcome=outcome,
                    halves=[h.to_dict() for h in halves],
                    moves=by_account,
                    ratings=everyone,
                    forfeit_reasons=forfeits,
                )
            )
        for team in outcome.teams:
            for a, b in ((team[0], team[1]), (team[1], team[0])):
                memory = self.partners.setdefault(
                    int(a), deque(maxlen=self.settings.partner_memory)
                )
                memory.appendleft(int(b))
        now = trio.current_time()
        for entrant in seated:
            if forfeits.get(entrant.account.id) == "timeouts":
                entrant.benched_until = now + self.settings.cooldown
        self.rated += 1
        self._match_settled()
        log.info(
            "match_rated",
            match=outcome.match_id,
            points=list(outcome.points),
            forfeits=sorted(outcome.forfeits),
        )
        self._tell_ended(outcome, halves[0], seated, before)

    def _tell_ended(
        self,
        outcome: MatchOutcome,
        first: HalfResult,
        seated: list[Entrant],
        before: dict[str, Rating],
    ) -> None:
        ranks = outcome.ranks
        if outcome.forfeits:
            lost = {outcome.team_of(e) for e in outcome.forfeits}
            ranks = (1, 1) if len(lost) == 2 else ((1, 0) if 0 in lost else (0, 1))
        results = []
        for seat, entrant in enumerate(seated):
            team = outcome.team_of(entrant.key)
            old = before.get(entrant.key) or self.model.initial()
            new = self.ratings.get(entrant.key) or old
            results.append(
                MatchResult(
                    seat=seat,
                    name=entrant.account.name[:32],
                    place=1 + ranks[team],
                    score=outcome.points[team],
                    rating_before=old.conservative,
                    rating_after=new.conservative,
                )
            )
        message = MatchEnded(
            match=outcome.match_id, table=first.table_id or "ladder", results=results
        )
        for entrant in seated:
            if entrant.peer is not None and self._connected(entrant):
                entrant.peer.deliver(message)

    async def _play_half(
        self, match: str, half: int, seats: list[Entrant], plan: DuplicatePlan
    ) -> tuple[HalfResult, dict[int, str]] | None:
        """Play one half at a new table; None if the table ended without finishing the game."""
        table = await self._open_half(plan, seats)
        names = [e.account.name[:32] for e in seats]
        remote = [(s, e, e.peer) for s, e in enumerate(seats) if e.peer is not None]
        for _seat, _entrant, peer in remote:
            peer.deliver(
                MatchStarted(
                    match=match, table=table.table_id, players=names, hands=self.settings.hands
                )
            )
        for seat, entrant, peer in remote:
            with closed_table_ok():
                await self.tables.submit(
                    table, JoinCommand(peer=peer, account=entrant.account, seat=seat)
                )
            if not self._connected(entrant):
                # Gone before it sat down: its session will not tell the table, so we do.
                self.tables.submit_later(
                    table, LeaveCommand(peer=peer, reason=LeaveReason.DISCONNECTED)
                )
        await first_of(table.game_over, table.ended)
        finished = table.game.is_over and table.game_id is not None
        if not finished:
            return None
        for _seat, _entrant, peer in remote:
            # The seat goes back to the ladder: its connection is told (`seat_lost`).
            with closed_table_ok():
                await self.tables.submit(
                    table, LeaveCommand(peer=peer, reason=LeaveReason.RELEASED)
                )
        # Its seat in the lobby is free once the table's task ends (spectators may hold it open a
        # little longer; the next half does not wait for them for long).
        with trio.move_on_after(TABLE_CLOSE_WAIT):
            await table.ended.wait()
        game_id = table.game_id
        assert game_id is not None
        await self.store.call(lambda tx: ladder_store.link_game(tx, match, half, game_id))
        result = HalfResult(
            seats=tuple(e.key for e in seats),
            sides=table.game.ruleset.sides,
            scores=table.game.scores,
            game_id=game_id,
            table_id=table.table_id,
            # Each hand's points by its seed: the boards the ratings compare.
            hands=tuple((h.seed.hex(), h.score_delta) for h in table.game.histories),
        )
        lost = {seats[s].account.id: why for s, why in table.forfeits.items()}
        return result, lost

    async def _open_half(self, plan: DuplicatePlan, seats: list[Entrant]) -> Table:
        """A new table for one half, stored, listed and started; raises `TableError`
        (server_full) with nothing opened when the server has no room for another table."""
        cfg = self.config
        settings = self.settings
        config = TableConfig(
            table_id=f"L{secrets.token_hex(5)}",
            game=self.ruleset.game,
            preset=settings.preset,
            options=settings.table_options(),
            players=4,
            bots=tuple(s for s, e in enumerate(seats) if e.peer is None),
            human_turn_ms=int(cfg.human_clock * 1000),
            bot_turn_ms=int(cfg.bot_clock * 1000),
            grace_s=cfg.reconnect_grace,
            builtin_bot=cfg.fallback_bot,
            fallback_bot=cfg.fallback_bot,
        )
        policy = MatchPolicy(
            deal_seed=plan.deal_seed,
            house={
                s: (e.house_spec or "random", e.account)
                for s, e in enumerate(seats)
                if e.peer is None
            },
            reserved={s: e.account.id for s, e in enumerate(seats) if e.peer is not None},
            max_timeouts=settings.max_timeouts,
        )
        if self.tables.free_table_slots() <= 0:
            raise TableError(ErrorCode.SERVER_FULL, "the server has no room for a ladder table")
        table = self.tables.new_table(config, policy)
        await self.tables.adopt(table)
        return table


class closed_table_ok:
    """Suppress `TableError` from a table that closed under us (it is over either way)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: object, exc: object, tb: object) -> bool:
        return isinstance(exc, TableError)


async def first_of(*events: trio.Event) -> None:
    """Return as soon as any of `events` is set."""
    async with trio.open_nursery() as nursery:

        async def wait(event: trio.Event) -> None:
            await event.wait()
            nursery.cancel_scope.cancel()

        for event in events:
            nursery.start_soon(wait, event)
