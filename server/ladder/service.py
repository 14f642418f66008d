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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog
import trio

from engine.ruleset import Ruleset
from protocol.errors import ErrorCode
from protocol.messages import (
    Error,
    LadderEnter,
    LadderLeave,
    LadderStandings,
    MatchEnded,
    MatchStarted,
    Message,
    Ok,
    Standings,
)
from protocol.types import MatchResult, Standing
from server.accounts import Account
from server.ladder import store as ladder_store
from server.ladder.duplicate import DuplicatePlan, HalfResult, board_points, team_points
from server.ladder.ratings import MatchOutcome, Rating, RatingModel, Ratings, apply_match
from server.ladder.scheduler import Candidate, PlannedMatch, SchedulerSettings, form_matches
from server.ladder.table import LadderTable, adopt_table, closed_table_ok, first_of
from server.storage import StorageError, Tx
from server.table import JoinCommand, LeaveCommand, TableConfig, TableError

if TYPE_CHECKING:
    from server.app import Server
    from server.lobby import Lobby
    from server.session import Session

log = structlog.get_logger("server.ladder")

#: The most standings lines sent at once: 500 of the longest fit one 64 KiB frame, 1000 do not.
MAX_STANDINGS = 500
TABLE_CLOSE_WAIT = 5.0  # seconds a finished half's table may take to close before the next opens


@dataclass(frozen=True)
class LadderSettings:
    """How the ladder plays. The preset must seat four in two partnerships."""

    preset: str = "standard"
    options: dict[str, Any] = field(default_factory=dict)
    hands: int = 4  # hands per half: a match is 2 x hands deals
    interval: float = 1.0  # seconds between scheduling rounds when nothing wakes the loop
    max_matches: int = 16  # matches running at once
    max_timeouts: int = 3  # clock expiries in one half that forfeit the match
    max_per_owner: int = 8  # entrants one network address may have on the ladder at once
    cooldown: float = 60.0  # seconds a timeout forfeiter sits out
    house_poll: float = 5.0  # seconds between looks for house bots the CLI entered meanwhile
    house_only: bool = False  # may four house bots play each other (burns CPU for little)
    partner_memory: int = 8  # recent partnerships remembered for rotation
    seed: int | None = None  # fixed: reproducible schedules and deals (tests); None: secret
    scheduler: SchedulerSettings = field(default_factory=SchedulerSettings)
    tau: float | None = None  # rating drift per square root of a day; None: ratings.DEFAULT_TAU

    def table_options(self) -> dict[str, Any]:
        """The preset's options with a fixed number of hands (no target score)."""
        return {**self.options, "target_score": 0, "max_hands": self.hands}

    def ruleset(self) -> Ruleset:
        """The rules of every ladder game; raises `ValueError` for a preset the ladder cannot use."""
        ruleset = Ruleset.from_preset(self.preset, **self.table_options())
        if ruleset.players != 4 or not ruleset.partnerships:
            raise ValueError(
                f"the ladder needs a four-player partnership preset, not {self.preset}"
            )
        return ruleset


@dataclass(eq=False)
class Entrant:
    """One account on the ladder: a connected session, or a house bot (`session` None)."""

    account: Account
    session: Session | None
    house_spec: str | None = None
    owner: str = "house"
    busy: bool = False
    leaving: bool = False
    benched_until: float = 0.0

    @property
    def key(self) -> str:
        return str(self.account.id)


def owner_of(session: Session) -> str:
    """Whose entrants count together for the per-owner limit: the peer's address."""
    return session.peer.rsplit(":", 1)[0]


class LadderService:
    """The ladder of one server. Run `run()` in a nursery; sessions call `handle()`."""

    def __init__(self, server: Server, settings: LadderSettings | None = None) -> None:
        self.server = server
        self.settings = settings or LadderSettings()
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

    @property
    def lobby(self) -> Lobby:
        return self.server.lobby

    # ---------------------------------------------------------------- life

    async def run(self, *, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        """Load the ladder's state, then schedule matches until cancelled."""
        store = self.server.store

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
        house = await self.server.store.call(ladder_store.house_entrants)
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
        session = entrant.session
        if session is None:
            return True
        return session in self.server.sessions and session.connection.close_reason is None

    def session_closed(self, session: Session) -> None:
        """The connection ended: its entry goes (a match in progress sees its own forfeit)."""
        for account_id, entrant in list(self.entrants.items()):
            if entrant.session is session and not entrant.busy:
                del self.entrants[account_id]

    def _prune(self) -> None:
        for account_id, entrant in list(self.entrants.items()):
            if not entrant.busy and (entrant.leaving or not self._connected(entrant)):
                del self.entrants[account_id]

    async def handle(
        self, session: Session, request: LadderEnter | LadderLeave | LadderStandings
    ) -> Message:
        """The reply to a ladder request from `session` (the session delivers it)."""
        rid = request.id
        if isinstance(request, LadderStandings):
            limit = min(request.limit, MAX_STANDINGS)
            return Standings(id=rid, entries=await self.standings(limit))
        account = session.account
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
                entrant.leaving = True  # after the match in progress
            else:
                del self.entrants[account.id]
            return Ok(id=rid)
        if entrant is not None and not entrant.leaving:
            return Error(
                id=rid,
                code=ErrorCode.ALREADY_ON_LADDER.value,
                message="this account is already entered (one entry per account)",
            )
        owner = owner_of(session)
        mine = sum(1 for e in self.entrants.values() if e.owner == owner)
        if mine >= self.settings.max_per_owner:
            return Error(
                id=rid,
                code=ErrorCode.LADDER_LIMIT.value,
                message=f"{owner} already has {mine} entrants on the ladder (the limit)",
            )
        if entrant is not None:  # leaving after its match, and back again: stay
            entrant.leaving = False
            entrant.session = session
        else:
            self._add(Entrant(account, session, owner=owner))
        log.info("ladder_entered", account=account.name, owner=owner)
        return Ok(id=rid)

    async def add_house_bot(self, spec: str) -> Entrant:
        """Enter a sample bot for good (as `spades-server ladder add-house-bots` does, live)."""

        await self.server.store.call(lambda tx: ladder_store.add_house_bots(tx, [spec]))
        name = ladder_store.house_account_name(spec)
        row = await self.server.store.call(lambda tx: tx.account_by_name(name))
        assert row is not None
        entrant = Entrant(Account(row.id, row.name, True, False), None, house_spec=spec)
        self._add(entrant)
        return entrant

    async def standings(self, limit: int = 100) -> list[Standing]:
        rows = await self.server.store.call(lambda tx: ladder_store.standings(tx, limit))
        return [
            Standing(
                rank=row.rank,
                name=row.name[:32],
                rating=row.rating.conservative,
                mu=row.rating.mu,
                sigma=row.rating.sigma,
                games=row.rating.matches,
            )
            for row in rows
        ]

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
        free_tables = self.server.config.limits.max_tables - len(self.lobby.tables)
        room = min(self.settings.max_matches - self.running, free_tables)
        if room <= 0:
            return
        planned = form_matches(
            self._candidates(), seed=self._rng.getrandbits(64), settings=self.settings.scheduler
        )
        for match in planned:
            seated = [self.entrants[c.account] for c in match.seats]
            if not self.settings.house_only and all(e.session is None for e in seated):
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
        match = await self.server.store.call(
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
                await self.server.store.call(
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
        if self.server.stopping:
            # The server is hanging up on everyone: those are not forfeits, and nothing is rated.
            await self.server.store.call(
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
            await self.server.store.call(
                lambda tx: ladder_store.finish_match(
                    tx,
                    outcome.match_id,
                    outcome=outcome,
                    halves=[h.to_dict() for h in halves],
                    moves=by_account,
                    ratings=everyone,
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
            if entrant.session is not None and self._connected(entrant):
                entrant.session.deliver(message)

    async def _play_half(
        self, match: str, half: int, seats: list[Entrant], plan: DuplicatePlan
    ) -> tuple[HalfResult, dict[int, str]] | None:
        """Play one half at a new table; None if the table ended without finishing the game."""
        cfg = self.server.config
        settings = self.settings
        config = TableConfig(
            table_id=f"L{secrets.token_hex(5)}",
            game=self.ruleset.game,
            preset=settings.preset,
            options=settings.table_options(),
            players=4,
            bots=tuple(s for s, e in enumerate(seats) if e.session is None),
            human_turn_ms=int(cfg.human_clock * 1000),
            bot_turn_ms=int(cfg.bot_clock * 1000),
            grace_s=cfg.reconnect_grace,
            builtin_bot=cfg.fallback_bot,
            fallback_bot=cfg.fallback_bot,
        )
        table = LadderTable(
            config=config,
            store=self.server.store,
            bot_account=self.lobby.bot_account,
            inbox_size=cfg.limits.table_inbox_size,
            max_spectators=cfg.limits.max_spectators,
            deal_seed=plan.deal_seed,
            house={
                s: (e.house_spec or "random", e.account)
                for s, e in enumerate(seats)
                if e.session is None
            },
            max_timeouts=settings.max_timeouts,
            reserved={s: e.account.id for s, e in enumerate(seats) if e.session is not None},
        )
        await adopt_table(self.lobby, table)
        names = [e.account.name[:32] for e in seats]
        remote = [(s, e, e.session) for s, e in enumerate(seats) if e.session is not None]
        for _seat, _entrant, session in remote:
            session.deliver(MatchStarted(match=match, table=table.table_id, players=names))
        for seat, entrant, session in remote:
            with closed_table_ok():
                await self.lobby.submit(
                    table,
                    JoinCommand(
                        account=entrant.account, occupant=session, seat=seat, reply=session.deliver
                    ),
                )
            if not self._connected(entrant):
                # Gone before it sat down: its session will not tell the table, so we do.
                self.lobby.submit_later(table, LeaveCommand(occupant=session, disconnected=True))
        await first_of(table.game_over, table.ended)
        finished = table.game.is_over and table.game_id is not None
        for _seat, _entrant, session in remote:
            session.release_seat(table.table_id)
            if finished:
                with closed_table_ok():
                    await self.lobby.submit(table, LeaveCommand(occupant=session))
        if finished:
            # Its seat in the lobby is free once the table's task ends (spectators may hold it
            # open a little longer; the next half does not wait for them for long).
            with trio.move_on_after(TABLE_CLOSE_WAIT):
                await table.ended.wait()
        else:
            return None
        game_id = table.game_id
        assert game_id is not None
        await self.server.store.call(lambda tx: ladder_store.link_game(tx, match, half, game_id))
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
