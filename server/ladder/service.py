"""The ladder service: entrants, the scheduling loop, matches on real tables, ratings.

One trio task (`LadderService.run`) owns the ladder. Every `interval` seconds, or as soon as an entrant
enters or a match ends, it asks the scheduler for matches among the available entrants (entered,
connected, not playing, not benched) and starts them. A match is one table of four playing a board
set of `hands` deals made for it (`server.ladder.duplicate`); matches that start together are twins,
two by two, dealt the same board set at their two tables at once, and each pair runs in one task. A
remote entrant is told `match_started`, then seated like any join (`joined`, `snapshot`), and house
bots play in-process. When every table of the set is over, its matches are rated together
(`server.ladder.ratings`), stored with their games (`server.ladder.store`) and told to their remote
entrants (`match_ended`). Nobody plays a deal twice, and a twin table's spectators see a deal only once
both tables have played it (`server.deal_gate`).

Fair play: one entry per account (so no account ever holds two seats, and none plays at both twins),
at most `max_per_owner` entrants per network address, and a forfeit for an entrant that disconnects or
leaves mid-match or times out `max_timeouts` times (see `server.planned_table`); an entrant that
forfeits by timeouts sits out for `cooldown` seconds. A match cut short by a crashed table is void
(stored, never rated); its twin is then rated as a match played alone.
"""

from __future__ import annotations

import dataclasses
import random
import secrets
from collections import deque
from collections.abc import Callable
from functools import partial
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
from server.deal_gate import DealGate
from server.ladder import store as ladder_store
from server.ladder.desk import ARCHIVE_REQUESTS, LadderArchive
from server.ladder.duplicate import (
    TWINS,
    BoardSet,
    TableResult,
    deal_points,
    team_points,
    twin_groups,
)
from server.ladder.entrants import Entrant, RunningMatch, waiting_note
from server.ladder.ratings import MatchOutcome, Rating, RatingModel, Ratings, apply_board_set
from server.ladder.scheduler import Candidate, PlannedMatch, form_matches
from server.ladder.settings import LadderSettings
from server.peers import Peer
from server.planned_table import PlannedTablePolicy
from server.ports import Client, LadderRequest, TableHost
from server.storage import StorageError
from server.table import Table
from server.table_commands import JoinCommand, LeaveCommand, LeaveReason, TableConfig, TableError
from server.table_tasks import closed_table_ok, first_of

if TYPE_CHECKING:
    from server.storage import Store, Tx

log = structlog.get_logger("server.ladder")


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
        self._alone_since: float | None = None  # since when a match has waited for a twin
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
        # Said at once, so a lone entrant knows why it waits (and what the host can do).
        present = [e for e in self.entrants.values() if self._connected(e)]
        return Ok(id=rid, note=waiting_note(present))

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
        # A match holds one table; leave the lobby's last free tables to it.
        free_tables = self.tables.free_table_slots()
        room = min(self.settings.max_matches - self.running, free_tables)
        if room <= 0:
            return
        planned = form_matches(
            self._candidates(), seed=self._rng.getrandbits(64), settings=self.settings.scheduler
        )
        starting: list[tuple[PlannedMatch, list[Entrant]]] = []
        for match in planned:
            seated = [self.entrants[c.account] for c in match.seats]
            if not self.settings.house_only and all(e.peer is None for e in seated):
                continue
            if len(starting) >= room:
                break
            starting.append((match, seated))
        if self._hold_for_twin(len(starting), room):
            starting.pop()
        # Matches that start together are twins, two by two: each pair is dealt one board set.
        for group in twin_groups(starting):
            for _match, seated in group:
                for entrant in seated:
                    entrant.busy = True
            self.running += len(group)
            nursery.start_soon(self._run_set, group)

    def _hold_for_twin(self, starting: int, room: int) -> bool:
        """Whether the last of `starting` matches, which would start alone, waits for a twin.

        It waits (up to `twin_wait` seconds from when a match first could not be paired) while
        other entrants are playing and there is room for two tables: when their match ends, the
        two start together, and twins finish together too, so a ladder of eight or more stays in
        step. A lone bot with the house bots (nobody else playing) never waits."""
        now = trio.current_time()
        others_playing = any(e.busy for e in self.entrants.values())
        if starting % TWINS == 0 or not others_playing or room <= starting:
            self._alone_since = None
            return False
        if self._alone_since is None:
            self._alone_since = now
        if now - self._alone_since < self.settings.twin_wait:
            return True
        self._alone_since = None
        return False

    # ---------------------------------------------------------------- one board set

    async def _run_set(self, group: list[tuple[PlannedMatch, list[Entrant]]]) -> None:
        try:
            await self._play_set([seated for _match, seated in group])
        except (TableError, ValueError, StorageError) as exc:
            # One match that cannot be played must not stop the ladder; it stays unrated.
            names = [[e.account.name for e in seated] for _match, seated in group]
            log.error("match_failed", error=str(exc), players=names)
        finally:
            self.running -= len(group)
            for _match, seated in group:
                for entrant in seated:
                    entrant.busy = False
            self.wake()

    async def _play_set(self, group: list[list[Entrant]]) -> None:
        """Play one board set: each match of `group` (one, or twins) at its own table, all at
        once, dealt the same deals; then rate them together."""
        settings = self.settings
        matches = [await self._insert_match(seated) for seated in group]
        first_seq = ladder_store.match_seq(matches[0].match)
        boards = (
            BoardSet.fresh(settings.hands)
            if settings.seed is None
            else BoardSet.seeded(settings.hands, settings.seed * 1_000_003 + first_seq)
        )
        gate = DealGate(len(group)) if len(group) > 1 else None
        for index, running in enumerate(matches):
            try:
                running.table = await self._open_table(boards, running.seated, gate, index)
            except (TableError, StorageError) as exc:  # no room for a table: nothing was played
                log.warning("match_not_played", match=running.match, error=str(exc))
                if gate is not None:
                    gate.finished(index)
        log.info(
            "board_set_started",
            matches=[m.match for m in matches],
            players=[[e.account.name for e in m.seated] for m in matches],
        )
        async with trio.open_nursery() as nursery:
            for index, running in enumerate(matches):
                if running.table is not None:
                    nursery.start_soon(self._play_table, running, index, gate)
        stopping = self._is_stopping()
        done = [m for m in matches if m.result is not None and not stopping]
        for running in matches:
            if running not in done:
                # The server is hanging up on everyone (those are not forfeits), or the table
                # could not finish: nothing of this match is rated.
                why = "the server stopped" if stopping else "a table could not finish"
                await self.store.call(
                    partial(ladder_store.void_match, match=running.match, reason=why)
                )
                self.voided += 1
                log.warning("match_void", match=running.match, reason=why)
        if done:
            await self._rate(done)
        else:
            self._match_settled()

    async def _insert_match(self, seated: list[Entrant]) -> RunningMatch:
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
        return RunningMatch(match=match, seated=seated)

    async def _play_table(self, running: RunningMatch, index: int, gate: DealGate | None) -> None:
        """Seat the match's remote entrants at its table and wait for the game to end; its
        `result` is left None if the game did not finish or could not be kept (never raises what
        a table or the store raise: the twin's task runs beside it)."""
        table = running.table
        assert table is not None
        seats = running.seated
        names = [e.account.name[:32] for e in seats]
        remote = [(s, e, e.peer) for s, e in enumerate(seats) if e.peer is not None]
        try:
            for _seat, _entrant, peer in remote:
                peer.deliver(
                    MatchStarted(
                        match=running.match,
                        table=table.table_id,
                        players=names,
                        hands=self.settings.hands,
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
        finally:
            if gate is not None:
                # This table plays no more deals: the twin's spectators may see them all.
                gate.finished(index)
        if not (table.game.is_over and table.game_id is not None):
            return
        for _seat, _entrant, peer in remote:
            # The seat goes back to the ladder: its connection is told (`seat_lost`).
            with closed_table_ok():
                await self.tables.submit(
                    table, LeaveCommand(peer=peer, reason=LeaveReason.RELEASED)
                )
        game_id = table.game_id
        try:
            await self.store.call(lambda tx: ladder_store.link_game(tx, running.match, 0, game_id))
        except StorageError as exc:
            # Not raised into the set's nursery (its twin plays on): this match stays unrated.
            log.error("match_not_stored", match=running.match, error=str(exc))
            return
        running.result = TableResult(
            seats=tuple(e.key for e in seats),
            sides=table.game.ruleset.sides,
            scores=table.game.scores,
            game_id=game_id,
            table_id=table.table_id,
            # Each hand's points by its seed: the deals the ratings compare with the twin's.
            hands=tuple((h.seed.hex(), h.score_delta) for h in table.game.histories),
        )
        running.forfeits = {seats[s].account.id: why for s, why in table.forfeits.items()}

    async def _rate(self, done: list[RunningMatch]) -> None:
        """Rate the finished matches of one board set together (twins that both finished are
        stored as each other's twin, one after the other), store them, tell their entrants."""
        outcomes = []
        for running in done:
            assert running.result is not None
            if len(done) > 1:
                others = [m.match for m in done if m is not running]
                running.result = dataclasses.replace(running.result, twin=others[0])
            ids = [e.key for e in running.seated]
            teams = ((ids[0], ids[2]), (ids[1], ids[3]))
            outcomes.append(
                MatchOutcome(
                    match_id=running.match,
                    teams=teams,
                    points=team_points([running.result], teams),
                    forfeits=frozenset(str(a) for a in running.forfeits),
                    deals=deal_points(running.result, teams),
                    planned_boards=self.settings.hands,
                    finished_at=ladder_store.now(),
                    twin=running.result.twin,
                )
            )
        async with self._lock:
            before = dict(self.ratings)
            moves = apply_board_set(self.model, self.ratings, outcomes)
            # Every entrant's rating is written: one match moves the others' a little too.
            everyone = {int(k): v for k, v in self.ratings.items()}
            rows = [
                (
                    outcome,
                    running.result.to_dict() if running.result is not None else {},
                    {int(e): moves[e] for e in outcome.entrants if e in moves},
                    dict(running.forfeits),
                )
                for outcome, running in zip(outcomes, done, strict=True)
            ]

            def write(tx: Tx) -> None:
                for outcome, half, by_account, reasons in rows:
                    ladder_store.finish_match(
                        tx,
                        outcome.match_id,
                        outcome=outcome,
                        halves=[half],
                        moves=by_account,
                        ratings=everyone,
                        forfeit_reasons=reasons,
                    )

            await self.store.call(write)
        now = trio.current_time()
        for outcome, running in zip(outcomes, done, strict=True):
            for team in outcome.teams:
                for a, b in ((team[0], team[1]), (team[1], team[0])):
                    memory = self.partners.setdefault(
                        int(a), deque(maxlen=self.settings.partner_memory)
                    )
                    memory.appendleft(int(b))
            for entrant in running.seated:
                if running.forfeits.get(entrant.account.id) == "timeouts":
                    entrant.benched_until = now + self.settings.cooldown
            self.rated += 1
            log.info(
                "match_rated",
                match=outcome.match_id,
                twin=outcome.twin,
                points=list(outcome.points),
                forfeits=sorted(outcome.forfeits),
            )
            self._tell_ended(outcome, running, before)
        self._match_settled()

    def _tell_ended(
        self, outcome: MatchOutcome, running: RunningMatch, before: dict[str, Rating]
    ) -> None:
        ranks = outcome.ranks
        if outcome.forfeits:
            lost = {outcome.team_of(e) for e in outcome.forfeits}
            ranks = (1, 1) if len(lost) == 2 else ((1, 0) if 0 in lost else (0, 1))
        results = []
        for seat, entrant in enumerate(running.seated):
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
        table = running.result.table_id if running.result is not None else None
        message = MatchEnded(match=outcome.match_id, table=table or "ladder", results=results)
        for entrant in running.seated:
            if entrant.peer is not None and self._connected(entrant):
                entrant.peer.deliver(message)

    async def _open_table(
        self, boards: BoardSet, seats: list[Entrant], gate: DealGate | None, index: int
    ) -> Table:
        """A new table for one match, stored, listed and started; raises `TableError`
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
        policy = PlannedTablePolicy(
            deal_seed=boards.deal_seed,
            house={
                s: (e.house_spec or "random", e.account)
                for s, e in enumerate(seats)
                if e.peer is None
            },
            reserved={s: e.account.id for s, e in enumerate(seats) if e.peer is not None},
            max_timeouts=settings.max_timeouts,
            gate=gate,
            table=index,
        )
        if self.tables.free_table_slots() <= 0:
            raise TableError(ErrorCode.SERVER_FULL, "the server has no room for a ladder table")
        table = self.tables.new_table(config, policy)
        await self.tables.adopt(table)
        return table
