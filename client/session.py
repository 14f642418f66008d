"""A play (or watch) session: connection, reconnects, keys, and redraws around one table.

`PlaySession.run()` owns three tasks in one nursery:

- the connection loop: connect, take the seat (create, join, watch, or resume), then feed every server
  message to the `TableState` and redraw. When the connection drops it reconnects by itself with
  bounded back-off; the server resumes a logged-in account's seat on `hello` (a guest's too, by
  the resume token it was given, kept in memory) and sends a fresh snapshot, and the state says
  what changed meanwhile;
- the input loop: keys (or lines) into the prompt; a finished line becomes a command (commands.py);
- the ticker: redraws once a second while a clock is running, and within a quarter second of the
  terminal being resized.

Everything the screen shows is `render(state, screen, now)`; this module only moves messages and keys.
"""

from __future__ import annotations

import enum
import textwrap
import time
from dataclasses import dataclass, field
from typing import Protocol

import trio
from rich.console import Group

from client import codes
from client.commands import Act, Problem, Slash, read_line
from client.config import ServerAddress
from client.connection import (
    Connection,
    ConnectionLost,
    ServerError,
    lone_errors,
    open_connection,
)
from client.events import checked_in_line, round_notice, standings_panel
from client.journal import Journal
from client.lobby import every_table
from client.local import play_command
from client.render import Screen, render
from client.state import TableState
from client.terminal import BACKSPACE, CTRL_C, CTRL_D, CTRL_U, ENTER, Key, Line
from protocol import messages as m
from protocol.types import ChatScope, TableInfo, TableStatus

MAX_RECONNECTS = 30  # with the back-off below, about two minutes of trying
BACKOFF_CAP = 5.0
RESIZE_POLL_S = 0.25  # how often the ticker looks for a resized terminal
RESUME_WAIT = 3.0  # how long to wait for the server to hand back a held seat
NOTE_WIDTH = 78  # a server's note is wrapped to fit an 80-column screen's log


class SessionError(Exception):
    """The session could not start or could not go on; the message is one line for the user."""


class UnfinishedGame(SessionError):
    """`spades play` asked for another game while one is unfinished: nothing was changed. On a
    terminal `spades play` asks whether to start the new one; elsewhere it says how."""


class Mode(enum.Enum):
    CREATE = "create"
    JOIN = "join"
    WATCH = "watch"
    RESUME = "resume"  # sit back down at the seat the account holds, or create (spades play)
    LADDER = "ladder"  # enter the rated ladder and play the matches it seats us in
    EVENT = "event"  # check in to an event and play the tables of its rounds (`event_play`)


#: The modes that go from table to table: a game over is not the end of the session.
ROUND_AFTER_ROUND = frozenset({Mode.LADDER, Mode.EVENT})


@dataclass
class Seating:
    """How to get to the table."""

    mode: Mode
    create: m.CreateTable | None = None
    table: str | None = None
    seat: int | None = None
    code: str | None = None
    explicit: bool = False  # spades play: the player named the rules (a preset, options, a bot)
    new_game: bool = False  # spades play --new: leave an unfinished game to the server's bot
    event: str | None = None  # Mode.EVENT: the event's id


def _same_game(info: TableInfo, wanted: m.CreateTable | None) -> bool:
    """Whether an unfinished table plays what `spades play` was asked for."""
    if wanted is None:
        return True
    # `--bot` named: the table's built-in bots must be of that kind (an older server lists none).
    kinds = {seat.bot_kind for seat in info.seats if seat.bot and seat.bot_kind is not None}
    same_bots = wanted.bot is None or kinds <= {wanted.bot}
    return same_bots and (info.game, info.preset, dict(info.options)) == (
        wanted.game,
        wanted.preset,
        dict(wanted.options),
    )


def unfinished_game(info: TableInfo, wanted: m.CreateTable) -> str:
    """The line `spades play --preset X` says when another game is unfinished."""
    asked = " ".join(
        [f"--preset {wanted.preset}"]
        + [f"--opt {k}={v}" for k, v in dict(wanted.options).items()]
        + ([f"--bot {wanted.bot.value}"] if wanted.bot is not None else [])
    )
    return (
        f"your {info.game.value} game ({info.preset}) at table {info.table} is unfinished: "
        f"`{play_command()}` goes back to it; `{play_command(asked + ' --new')}` leaves it to"
        " the server's bot and starts the new one"
    )


class Display(Protocol):
    """What the session needs of a terminal (client.terminal.Terminal, or a test's fake)."""

    interactive: bool

    def size(self) -> tuple[int, int]: ...

    def draw(self, frame: Group, width: int) -> None: ...

    def keys(self) -> object: ...


@dataclass
class PlaySession:
    """One table, from sitting down to /quit."""

    address: ServerAddress
    token: str | None
    seating: Seating
    display: Display
    journal: Journal | None = None
    guest_name: str | None = None
    # A guest's resume token (`logged_in.token`), kept in memory only: the reconnects of this
    # session log in with it, so the server gives the guest its seat back as it does an account.
    guest_token: str | None = None
    state: TableState = field(default_factory=TableState)
    screen: Screen = field(default_factory=Screen)
    conn: Connection | None = None
    quitting: bool = False
    name: str = ""
    _cancel: trio.CancelScope = field(default_factory=trio.CancelScope)
    _journaled: int = 0
    _nursery: trio.Nursery | None = None
    connected: trio.Event = field(default_factory=trio.Event)
    seated: trio.Event = field(default_factory=trio.Event)  # the table's first snapshot is in
    reconnects: int = 0
    _drawn_size: tuple[int, int] | None = None  # the terminal's size at the last redraw
    _restored: set[str] = field(default_factory=set)  # tables whose journal was read back
    ended: m.EventEnded | None = None  # Mode.EVENT: the event's end, once it came
    _auto_standings: bool = False  # the standings overlay was opened by a round's notice

    # ---------------------------------------------------------------- the whole session

    async def run(self) -> None:
        """Play until /quit (or end of input); raises SessionError when it cannot start or go on."""
        self.screen.title = self.address.key
        with lone_errors():
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                nursery.start_soon(self._input_loop)
                nursery.start_soon(self._ticker)
                try:
                    with self._cancel:
                        await self._connection_loop()
                finally:
                    nursery.cancel_scope.cancel()

    def quit(self) -> None:
        self.quitting = True
        self._cancel.cancel()

    async def _connection_loop(self) -> None:
        first = True
        attempt = 0
        said = ""  # why the server closed the last connection, if it said (`the server is ...`)
        while not self.quitting:
            reason = "the connection ended"
            try:
                token = self.token or self.guest_token
                async with open_connection(self.address, token=token) as conn:
                    self.conn = conn
                    if first:
                        await self._enter(conn)
                    else:
                        await self._reenter(conn)
                    first, attempt, said = False, 0, ""
                    self.state.status = ""
                    self.connected.set()
                    self.redraw()
                    await self._pump(conn)
                    reason = conn.close_reason or reason
                    said = conn.close_reason or ""
            except (ConnectionLost, ServerError) as exc:
                if first:
                    raise SessionError(str(exc)) from None
                # What the server said when it closed (`the server is shutting down`) says more
                # than the refused reconnects after it (`cannot reach ...: Connection refused`).
                reason = said or str(exc)
            finally:
                self.conn = None
                self.connected = trio.Event()
                self.state.went_away()  # the next snapshot says what changed meanwhile
            if self.quitting:
                return
            if self.state.game_over is not None and self.seating.mode not in ROUND_AFTER_ROUND:
                self.state.status = f"The server closed the connection ({reason})."
                self.redraw()
                return
            attempt += 1
            self.reconnects += 1
            if attempt > MAX_RECONNECTS:
                raise SessionError(f"lost the connection ({reason}) and could not get it back")
            self.state.status = f"Connection lost ({reason}); reconnecting (try {attempt})…"
            self.state.turn = None
            self.redraw()
            await trio.sleep(min(BACKOFF_CAP, 0.25 * 2 ** (attempt - 1)))

    # ---------------------------------------------------------------- sitting down

    async def _login(self, conn: Connection) -> None:
        assert conn.welcome is not None
        if conn.welcome.user is not None:
            self.name = conn.welcome.user
            return
        if not conn.welcome.guests:
            raise SessionError("this server has no guest play: run `spades register NAME` first")
        reply = await conn.expect(m.Guest(name=self.guest_name), m.LoggedIn)
        self.name = reply.name
        self.guest_token = reply.token  # None from a server older than resume tokens

    async def _enter(self, conn: Connection) -> None:
        await self._login(conn)
        seating, state = self.seating, self.state
        if seating.mode is Mode.LADDER:
            await self._enter_ladder(conn)
            return
        if seating.mode is Mode.EVENT:
            await self._enter_event(conn)
            return
        if seating.mode is Mode.RESUME and await self._resume(conn):
            pass
        elif seating.mode in (Mode.CREATE, Mode.RESUME):
            assert seating.create is not None
            created = await conn.expect(seating.create, m.TableCreated)
            self._restore(created.table)
            state.seat = created.seat
            if created.code:
                codes.remember(self.address.key, created.table, created.code)
                state.say(f"Private table: others join with --code {created.code} (/code again)")
        elif seating.mode is Mode.JOIN:
            assert seating.table is not None
            self._restore(seating.table)
            # A code kept here (we opened or joined it before) saves asking its creator again.
            code = seating.code or codes.known(self.address.key).get(seating.table)
            join = m.Join(table=seating.table, seat=seating.seat, code=code)
            joined = await self._expect_seat(conn, join)
            state.table, state.seat = joined.table, joined.seat
            if code:
                codes.remember(self.address.key, joined.table, code)
        else:
            assert seating.table is not None
            self._restore(seating.table)
            watch = m.Spectate(table=seating.table, code=seating.code)
            joined = await self._expect_seat(conn, watch)
            state.table, state.seat = joined.table, None
        await self._refresh_info(conn)

    async def _resume(self, conn: Connection) -> bool:
        """If this account holds a seat (an unfinished game), wait for the server to hand it back.

        `spades play` with a preset or options that are not the unfinished game's does not go
        back to it silently: it stops and says how to go on (`--new` leaves the old game to the
        server's bot, which plays the seat to the end, and starts the new one)."""
        held = [
            info
            for info in await every_table(conn)
            if info.status is not TableStatus.FINISHED
            and any(s.player == self.name and not s.bot for s in info.seats)
        ]
        journal = self.journal
        gone = [info.table for info in held if journal is not None and journal.has_left(info.table)]
        held = [info for info in held if info.table not in gone]
        if journal is not None:  # the game played last first
            held.sort(key=lambda info: journal.last_seen(info.table), reverse=True)
        if not held:
            await self._leave_again(conn, gone)
            return False
        wanted = self.seating.create
        table = held[0]
        if self.seating.explicit and wanted is not None:
            same = [info for info in held if _same_game(info, wanted)]
            if same and not self.seating.new_game:
                table = same[0]
            elif not same and not self.seating.new_game:
                raise UnfinishedGame(unfinished_game(table, wanted))
        if not await self._take_back(conn, table.table):
            self.state = TableState()
            self.state.say(
                f"Your seat at table {table.table} was given to the server's bot; a new game."
            )
            return False
        await self._leave_again(conn, gone)
        if self.seating.new_game:
            await conn.expect(m.Leave(table=table.table), m.Ok)
            if journal is not None:
                journal.mark_left(table.table)
            self.state = TableState()
            self.state.say(
                f"Left your unfinished game at table {table.table}: the server's bot plays "
                "your seat to its end."
            )
            return False
        self.state.say(f"Welcome back: your unfinished game at table {table.table}.")
        self.seated.set()
        return True

    async def _leave_again(self, conn: Connection, tables: list[str]) -> None:
        """Leave again the games this player left before (`--new`): a server that restarted
        since (`spades play`'s own, each time) seats the account there once more."""
        for table in tables:
            try:
                await conn.expect(m.Leave(table=table), m.Ok)
            except ServerError:
                continue  # not seated there (any more): nothing to leave

    async def _take_back(self, conn: Connection, table: str) -> bool:
        """Wait for the server to hand back the seat held at `table` (its snapshot)."""
        self._restore(table)  # and only this table's messages are taken from here on
        with trio.move_on_after(RESUME_WAIT):
            while True:
                message = await conn.events.receive()
                self.state.apply(message, trio.current_time())
                if isinstance(message, m.Snapshot) and message.table == table:
                    return True
        return False

    async def _enter_ladder(self, conn: Connection) -> None:
        """Enter the ladder; the matches come as `match_started` (see `_ladder_event`)."""
        if self.token is None:
            raise SessionError(
                "guests cannot enter the ladder: `spades register NAME` (or `spades login`) first"
            )
        note = "waiting for a match"
        try:
            entered = await conn.expect(m.LadderEnter(), m.Ok)
            note = entered.note or note
        except ServerError as exc:
            if exc.code != "already_on_ladder" or self.reconnects == 0:
                raise
        self.state.say(f"{self.name} is on the rated ladder.")
        # The server's note can run to two screen lines (how many more a match waits for, and
        # what the host can do about it): wrapped, so none of it is cut off at the screen's edge.
        for line in textwrap.wrap(note[:1].upper() + note[1:] + ".", NOTE_WIDTH):
            self.state.say(line)
        self.state.say("/quit leaves the ladder (in a match, that forfeits it).")
        self.seated.set()  # nothing to sit at yet, but typed lines (/quit) are read from now on

    async def _ladder_event(self, conn: Connection, message: m.Message) -> None:
        """A match begins (a fresh table to follow) or the match is over."""
        if isinstance(message, m.MatchStarted) and message.table != self.state.table:
            log = list(self.state.log)[-4:]
            self.state = TableState()
            self._journaled = 0  # the new table's hands go to the history from the first
            self.state.log.extend(log)
            self.state.table = message.table
            self.state.say(
                f"Rated match {message.match} at table {message.table}: "
                + ", ".join(message.players)
            )
            await self._refresh_info(conn)
        elif isinstance(message, m.MatchEnded):
            mine = [r for r in message.results if r.name == self.name]
            if mine:
                r = mine[0]
                level = all(other.place == r.place for other in message.results)
                outcome = "lost" if r.place != 1 else ("drew" if level else "won")
                self.state.say(
                    f"Match {message.match} over: your team {outcome} with {r.score} points; "
                    f"rating {r.rating_before:.1f} → {r.rating_after:.1f}. Waiting for the next."
                )

    # ---------------------------------------------------------------- an event's rounds

    async def _enter_event(self, conn: Connection) -> None:
        """Check in to the event (`event_play`): its rounds come as `event_round`, each followed
        by the seat (`joined`, `snapshot`); see `_event_notice`."""
        event = self.seating.event
        assert event is not None
        if self.token is None:
            raise SessionError(
                f"guests cannot play in an event: `spades register NAME`, then"
                f" `spades event {event} --register`"
            )
        try:
            await conn.expect(m.EventPlay(event=event), m.Ok)
        except ServerError as exc:
            if exc.code == "not_registered":
                raise SessionError(
                    f"{self.name} is not an entrant of {event}: `spades event {event} --register`"
                    " first (before it starts)"
                ) from None
            raise
        if self.reconnects:
            self.state.say(f"Reconnected and checked in to {event} again.")
            return
        self.state.say(f"{self.name} is checked in to event {event}.")
        try:
            info = await conn.expect(m.EventShow(event=event), m.EventInfo)
            for line in textwrap.wrap(checked_in_line(info.summary, time.time()), NOTE_WIDTH):
                self.state.say(line)
        except ServerError:
            pass  # the check-in stands; only the line about the event is missing
        self.state.say("Each round seats you here; /standings shows the standings.")
        self.state.say("/quit stops (a seat is held a while; past that the round is forfeited).")
        self.seated.set()  # nothing to sit at yet, but typed lines (/quit) are read from now on

    async def _event_notice(self, conn: Connection, message: m.Message) -> None:
        """A round of the event is paired (a fresh table to follow), a seat at its table is taken,
        our table's boards are played, or the event is over."""
        event = self.seating.event
        if (
            isinstance(message, m.EventRoundPaired)
            and message.event == event
            and message.table != self.state.table  # told again after a drop: the same table
        ):
            log = list(self.state.log)[-4:]
            self.state = TableState()
            self._journaled = 0  # the new table's hands go to the history from the first
            self.state.log.extend(log)
            self.state.table, self.state.seat = message.table, message.seat
            # Wrapped: with long names the notice runs past an 80-column screen's log.
            for line in textwrap.wrap(round_notice(message), NOTE_WIDTH):
                self.state.say(line)
            if message.round > 1:  # between rounds: the standings until the table opens
                await self._show_standings(conn, auto=True)
        elif isinstance(message, m.Joined) and message.table == self.state.table:
            await self._refresh_info(conn)
        elif (
            isinstance(message, m.GameOver)
            and message.table == self.state.table
            and self.state.seat is not None
        ):
            self.state.say("Your table's boards are played; the next round waits for every table.")
        elif isinstance(message, m.EventEnded) and message.event == event:
            self.ended = message
            self.quit()

    async def _show_standings(self, conn: Connection | None, *, auto: bool = False) -> None:
        """The event's standings in place of the table (the overlay /standings opens); `auto`:
        opened by a round's notice, so closed again when that round's table opens."""
        event = self.seating.event
        if event is None:
            self.state.notice = "/standings is for an event's rounds (`spades event EVENT --play`)"
            return
        if conn is None:
            self.state.notice = "not connected: wait for the reconnect"
            return
        try:
            info = await conn.expect(m.EventShow(event=event), m.EventInfo)
        except (ServerError, ConnectionLost) as exc:
            self.state.notice = f"could not fetch the standings: {exc}"
            return
        self.screen.panel = tuple(standings_panel(info, self.name))
        self.screen.overlay = "standings"
        self._auto_standings = auto
        self.redraw()

    async def _expect_seat(self, conn: Connection, request: m.Join | m.Spectate) -> m.Joined:
        """`join` or `spectate`, with a private table's refusal saying what to do about it."""
        try:
            return await conn.expect(request, m.Joined)
        except ServerError as exc:
            if exc.code == "table_full" and self.token is None and isinstance(request, m.Join):
                raise SessionError(
                    f"{exc.message}. If you sat here as a guest, that seat cannot come back once"
                    " its client has stopped:"
                    " a new client is a new guest. `spades register NAME` first, and a seat you"
                    " take comes back to you with `spades join TABLE`"
                ) from None
            if exc.code != "private_table":
                raise
            if request.code is None:
                raise SessionError(
                    f"table {request.table} is private: add --code CODE "
                    "(the join code its creator's screen shows)"
                ) from None
            raise SessionError(
                f"the join code {request.code} is wrong for table {request.table} "
                "(ask its creator for the code on their screen)"
            ) from None

    async def _reenter(self, conn: Connection) -> None:
        if self.seating.mode is Mode.LADDER:
            await self._enter_ladder(conn)
            self.state.say("Reconnected and entered the ladder again.")
            return
        if self.seating.mode is Mode.EVENT:
            await self._enter_event(conn)
            await self._refresh_info(conn)
            return
        if self.token is None and self.guest_token is None:
            # A server older than guest resume tokens gave us nothing to come back with.
            raise SessionError("guests cannot get a seat back after a lost connection")
        if self.state.seat is None:
            await conn.expect(m.Spectate(table=self.state.table, code=self.seating.code), m.Joined)
        self.state.say("Reconnected.")
        await self._refresh_info(conn)

    def _restore(self, table: str) -> None:
        """Before the table's first snapshot: what an earlier run of the client kept of it."""
        self.state.table = table
        if self.journal is not None and table not in self._restored:
            self._restored.add(table)
            records, progress = self.journal.load(table)
            self.state.restore(records, progress)

    async def _refresh_info(self, conn: Connection) -> None:
        for info in await every_table(conn):
            if info.table == self.state.table:
                self.state.set_info(info)

    # ---------------------------------------------------------------- messages in

    async def _pump(self, conn: Connection) -> None:
        async for message in conn.events:
            if isinstance(message, m.MatchStarted | m.MatchEnded):
                await self._ladder_event(conn, message)
            elif self.seating.mode is Mode.EVENT:
                await self._event_notice(conn, message)
            self.state.apply(message, trio.current_time())
            self._write_journal()
            if isinstance(message, m.GameEvent) and message.table == self.state.table:
                self._save_progress()
            if isinstance(message, m.TableClosed) and message.table == self.state.table:
                why = f": {message.reason}" if message.reason else ""
                self.state.say(f"The table has closed{why}.")
            self.redraw()
            if isinstance(message, m.Snapshot) and message.table == self.state.table:
                self.seated.set()
                if self._auto_standings:  # the round's table is open: it takes the screen back
                    self._auto_standings = False
                    if self.screen.overlay == "standings":
                        self.screen.overlay = ""
                        self.redraw()

    def _save_progress(self) -> None:
        """The hand in play as seen so far, on disk: a /quit or a crash loses none of it."""
        if self.journal is None or not self.state.table:
            return
        try:
            if self.state.game_over is not None:
                self.journal.clear_progress(self.state.table)
            else:
                self.journal.save_progress(self.state.table, self.state.progress())
        except (OSError, TypeError, ValueError) as exc:
            self.state.notice = f"could not save the hand in play to your history: {exc}"

    def _write_journal(self) -> None:
        hands = self.state.finished_hands
        if self.journal is None or self._journaled >= len(hands):
            return
        for record in hands[self._journaled :]:
            try:
                self.journal.append(record)
            except OSError as exc:
                self.state.notice = f"could not save the hand to your history: {exc}"
        self._journaled = len(hands)

    # ---------------------------------------------------------------- keys in

    async def _input_loop(self) -> None:
        if not self.display.interactive:
            # A script's lines are meant for the table: read them once we sit at it.
            await self.seated.wait()
        keys = self.display.keys()
        async for item in keys:  # type: ignore[attr-defined]
            if isinstance(item, Line):
                await self.submit(item.text)
                continue
            assert isinstance(item, Key)
            char = item.char
            if char == ENTER:
                line, self.screen.buffer = self.screen.buffer, ""
                await self.submit(line)
            elif char == BACKSPACE:
                self.screen.buffer = self.screen.buffer[:-1]
            elif char == CTRL_U:
                self.screen.buffer = ""
            elif char == CTRL_C or (char == CTRL_D and not self.screen.buffer):
                self.quit()
                return
            elif len(self.screen.buffer) < 200:
                self.screen.buffer += char
            self.redraw()
        self.quit()  # end of input

    async def submit(self, line: str) -> None:
        """Act on one typed line."""
        command = read_line(line, self.state)
        had_overlay, self.screen.overlay = self.screen.overlay, ""
        self._auto_standings = False
        if command is None:
            if not had_overlay:
                self.state.result = None  # Enter on an empty line closes the hand's result
        elif isinstance(command, Problem):
            self.state.notice = command.message
        elif isinstance(command, Slash):
            self._slash(command)
        elif isinstance(command, Act):
            self.state.notice = ""
            assert self._nursery is not None
            self._nursery.start_soon(self._send_act, command)
        self.redraw()

    def _slash(self, command: Slash) -> None:
        if command.name == "quit":
            self.quit()
        elif command.name == "say":
            assert self._nursery is not None
            self._nursery.start_soon(self._say, command.arg)
        elif command.name == "code":
            self.state.notice = self._code_sentence()
        elif command.name == "standings":
            assert self._nursery is not None
            self._nursery.start_soon(self._standings_task)
        else:
            self.screen.overlay = command.name

    async def _standings_task(self) -> None:
        await self._show_standings(self.conn)
        self.redraw()

    def _code_sentence(self) -> str:
        """What `/code` says: the code this machine kept for the table (client/codes.py)."""
        table = self.state.table
        info = self.state.info
        if info is not None and not info.private:
            return f"table {table} is not private: anyone joins with `spades join {table}`"
        code = codes.known(self.address.key).get(table)
        if code is None:
            return f"no join code for table {table} was kept here (its creator's client has it)"
        return f"join code of table {table}: {code} (`spades join {table} --code {code}`)"

    async def _send_act(self, command: Act) -> None:
        conn = self.conn
        if conn is None:
            self.state.notice = "not connected: wait for the reconnect"
            self.redraw()
            return
        request = m.Act(table=self.state.table, version=command.version, action=command.action)
        self.state.moved_myself = True  # until answered: a drop now may still have played it
        try:
            await conn.request(request)
        except ServerError as exc:
            if exc.code == "stale_version":
                self.state.notice = "too late: the game moved on (your clock may have run out)"
            else:
                self.state.notice = exc.message
        except ConnectionLost:
            self.state.notice = "the connection dropped before the server answered"
        else:
            turn = self.state.turn
            if turn is not None and turn.version == command.version:
                # Done: `ok` comes before the events it caused and the `turn` that follows them,
                # so until that `turn` we are no longer to act (not "YOUR TURN" with no cards).
                self.state.turn = None
                to_act = self.state.view.get("to_act")
                if isinstance(to_act, list) and self.state.seat in to_act:
                    to_act.remove(self.state.seat)
            if self.state.result is not None and self.state.view.get("hand_number", 0) > (
                self.state.result.hand_number
            ):
                self.state.result = None  # our first move of the next hand: the log comes back
        finally:
            self.state.moved_myself = False
        self.redraw()

    async def _say(self, text: str) -> None:
        conn = self.conn
        if conn is None:
            self.state.notice = "not connected: wait for the reconnect"
            return
        try:
            await conn.request(m.Chat(scope=ChatScope.TABLE, table=self.state.table, text=text))
        except ServerError as exc:
            self.state.notice = exc.message
        except ConnectionLost:
            self.state.notice = "the connection dropped before the server answered"
        self.redraw()

    # ---------------------------------------------------------------- drawing

    async def _ticker(self) -> None:
        # Polling the size is what works everywhere (tmux, ssh, a test's fake display); a SIGWINCH
        # receiver needs the main thread and a real tty. Four looks a second make a resize redraw
        # within a quarter second, and the clock line still moves once a second.
        looks = 0
        while True:
            await trio.sleep(RESIZE_POLL_S)
            looks += 1
            clock_due = looks % round(1 / RESIZE_POLL_S) == 0
            resized = self._drawn_size is not None and self.display.size() != self._drawn_size
            state = self.state
            ticking = state.turn is not None or state.clocks or state.away or state.status
            if resized or (clock_due and ticking):
                self.redraw()

    def redraw(self) -> None:
        width, height = self.display.size()
        self._drawn_size = (width, height)
        frame = render(self.state, self.screen, trio.current_time(), min(width, 120), height)
        self.display.draw(frame, min(width, 120))
