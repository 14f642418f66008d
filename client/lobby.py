"""One-shot lobby requests for the CLI (connect, register, login, tables, open a table) and how their
answers are shown. Each function opens its own connection, asks, and closes.
"""

from __future__ import annotations

import time
from dataclasses import fields
from typing import Any

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from client.config import Credentials, ServerAddress
from client.connection import Connection, all_record_pages, open_connection
from client.journal import GameSummary
from engine.errors import RulesetError
from engine.option_docs import rule_lines
from engine.ruleset import PRESETS, Ruleset, describe_preset
from engine.seat_names import seat_label, who
from protocol import messages as m
from protocol.schema import to_map
from protocol.types import (
    MAX_SPECTATOR_DELAY,
    BotKind,
    Clock,
    Game,
    LadderMatch,
    MatchStatus,
    Standing,
    TableInfo,
    TableStatus,
)


async def check_server(address: ServerAddress, token: str | None) -> m.Welcome:
    """Say hello (with the saved token, if any) and return the server's welcome."""
    async with open_connection(address, token=token) as conn:
        assert conn.welcome is not None
        return conn.welcome


async def register(address: ServerAddress, name: str) -> Credentials:
    async with open_connection(address) as conn:
        reply = await conn.expect(m.Register(name=name), m.Registered)
    return Credentials(reply.name, reply.token)


async def login(address: ServerAddress, token: str) -> str:
    """The account name the token logs in to; raises ConnectionLost (bad_token) otherwise."""
    async with open_connection(address) as conn:
        reply = await conn.expect(m.Login(token=token), m.LoggedIn)
    return reply.name


# Pages of the listing `every_table` follows at most (each holds up to 100 tables, fewer when
# they would not fit a frame): far more than any server lists, and a bound on a broken one.
MAX_PAGES = 100


async def every_table(conn: Connection, game: Game | None = None) -> list[TableInfo]:
    """Every table (of `game`, if given) on this connection, page after page, in the order they
    opened (the server sends the listing in pages that fit a frame: `tables.next`)."""
    infos: list[TableInfo] = []
    seen: set[str] = set()
    cursor = None
    for _page in range(MAX_PAGES):
        reply = await conn.expect(m.ListTables(game=game, cursor=cursor), m.Tables)
        # A table shows once; a server that listed one twice is not believed twice.
        infos.extend(info for info in reply.tables if info.table not in seen)
        seen.update(info.table for info in reply.tables)
        cursor = reply.next
        if cursor is None:
            break
    return infos


async def list_tables(address: ServerAddress, game: str | None) -> list[TableInfo]:
    async with open_connection(address) as conn:
        return await every_table(conn, Game(game) if game else None)


async def standings(address: ServerAddress, token: str | None, limit: int) -> list[Standing]:
    """The rated ladder's standings, best first (the ladder is for bot accounts; anyone may look)."""
    async with open_connection(address, token=token) as conn:
        reply = await conn.expect(m.LadderStandings(limit=limit), m.Standings)
    return list(reply.entries)


async def ladder_matches(
    address: ServerAddress, token: str | None, entrant: str | None, limit: int
) -> list[LadderMatch]:
    """The ladder's finished matches, newest first (one entrant's, when named)."""
    async with open_connection(address, token=token) as conn:
        reply = await conn.expect(m.LadderMatches(entrant=entrant, limit=limit), m.Matches)
    return list(reply.matches)


async def ladder_matches_of(
    address: ServerAddress, token: str | None, names: list[str], limit: int
) -> list[LadderMatch]:
    """The finished matches of any of `names` (one's own accounts), newest first, each once."""
    found: dict[str, LadderMatch] = {}
    async with open_connection(address, token=token) as conn:
        for name in names:
            reply = await conn.expect(m.LadderMatches(entrant=name, limit=limit), m.Matches)
            for match in reply.matches:
                found.setdefault(match.match, match)
    newest = sorted(
        found.values(), key=lambda x: (x.time or 0, _match_number(x.match)), reverse=True
    )
    return newest[:limit]


def _match_number(match: str) -> int:
    """`m-12` -> 12 (the order matches were made in), 0 for an id of another shape."""
    number = match.rpartition("-")[2]
    return int(number) if number.isdigit() else 0


#: Pages of one match's records asked for at most (a page holds several hands; a match has
#: `2 × hands` records, a few dozen at most).
MAX_RECORD_PAGES = 1000


async def ladder_records(
    address: ServerAddress, token: str | None, match: str
) -> list[dict[str, Any]]:
    """Every hand record of a finished ladder match, both halves, page by page (`ladder_records`);
    `ServerError` `no_such_match` for an unknown or unfinished match."""
    async with open_connection(address, token=token) as conn:
        return await all_record_pages(
            conn,
            lambda start: m.LadderRecords(match=match, start=start),
            m.MatchRecords,
            most=MAX_RECORD_PAGES,
            what=f"match {match}'s records",
        )


async def ladder_show(address: ServerAddress, token: str | None, name: str) -> m.Entrant:
    """One entrant's rating, record and recent matches; `ServerError` `no_such_entrant` if unknown."""
    async with open_connection(address, token=token) as conn:
        return await conn.expect(m.LadderShow(name=name), m.Entrant)


async def ladder_leave(address: ServerAddress, token: str) -> str:
    """Take this account off the ladder (after any match in progress); returns the account name."""
    async with open_connection(address, token=token) as conn:
        assert conn.welcome is not None
        await conn.expect(m.LadderLeave(), m.Ok)
        return conn.welcome.user or ""


async def logged_in(conn: Connection) -> str:
    """Make sure the connection has an account: the token's, or a guest one."""
    assert conn.welcome is not None
    if conn.welcome.user is not None:
        return conn.welcome.user
    reply = await conn.expect(m.Guest(), m.LoggedIn)
    return reply.name


async def open_table(
    address: ServerAddress, token: str | None, request: m.CreateTable
) -> m.TableCreated:
    async with open_connection(address, token=token) as conn:
        await logged_in(conn)
        return await conn.expect(request, m.TableCreated)


def looks_like_address(text: str) -> bool:
    """Table ids are letters, digits, `_` and `-`; an address has a `:` or a `.` (or is localhost)."""
    return ":" in text or "." in text or text == "localhost"


def open_table_of(infos: list[TableInfo]) -> str | None:
    """The first public, not yet started table with a free seat."""
    for info in infos:
        if info.private or info.status is not TableStatus.WAITING:
            continue
        if any(seat.player is None and not seat.bot for seat in info.seats):
            return info.table
    return None


# ---------------------------------------------------------------- building requests


def parse_options(pairs: list[str]) -> dict[str, Any]:
    """`name=value` pairs as ruleset options, typed like the option's default (the engine then
    judges the values): true/false, whole numbers, text, comma-separated lists. Raises ValueError."""
    known = {f.name: f.default for f in fields(Ruleset)}
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name:
            raise ValueError(f"--opt takes name=value, not {pair!r}")
        if name not in known:
            raise ValueError(f"no option {name!r} (see docs/rules.md for the options)")
        default = known[name]
        value = value.strip()
        if isinstance(default, bool):
            if value.lower() not in ("true", "false", "yes", "no", "on", "off", "1", "0"):
                raise ValueError(f"{name} is true or false, not {value!r}")
            out[name] = value.lower() in ("true", "yes", "on", "1")
        elif isinstance(default, int):
            try:
                out[name] = int(value)
            except ValueError:
                raise ValueError(f"{name} is a whole number, not {value!r}") from None
        elif isinstance(default, tuple):
            out[name] = [item.strip() for item in value.split(",") if item.strip()]
        else:
            out[name] = value
    return out


# A person's seconds a decision, as `--clock` takes them: the server refuses nothing in this range.
CLOCK_RANGE = (5, 3600)
# `spades play`'s clock: against bots nobody waits on a person, so three times the server's 30 s
# (a first game, with /help open, needs more than 30 s a decision).
PLAY_CLOCK = 90


def create_request(
    preset: str,
    options: dict[str, Any],
    bots: int,
    private: bool,
    seat: int,
    *,
    sit: bool = True,
    clock: int | None = None,
    bot: BotKind | None = None,
    no_watching: bool = False,
    spectator_delay: int = 0,
) -> m.CreateTable:
    """The `create_table` request. Bots take the seats other than `seat` (yours; with `sit` false,
    the one they fill last); `bots` < 0 fills every other seat; `bot` is their kind (None: the
    server's own); `clock` is the seconds each decision may take (None: the server's default);
    `no_watching` refuses spectators, `spectator_delay` holds them that many tricks behind.
    Raises ValueError with a sentence."""
    if clock is not None and not CLOCK_RANGE[0] <= clock <= CLOCK_RANGE[1]:
        raise ValueError(f"--clock is {CLOCK_RANGE[0]}..{CLOCK_RANGE[1]} seconds a decision")
    if not 0 <= spectator_delay <= MAX_SPECTATOR_DELAY:
        raise ValueError(f"--spectator-delay is 0..{MAX_SPECTATOR_DELAY} tricks")
    if no_watching and spectator_delay:
        raise ValueError(
            "--no-watching takes no spectators: a --spectator-delay has no one to hold"
        )
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; known: {', '.join(PRESETS)}")
    try:
        ruleset = Ruleset.from_preset(preset, **options)
    except Exception as exc:  # the engine's RulesetError: the sentence names the option
        raise ValueError(str(exc)) from None
    players = ruleset.players
    if not 0 <= seat < players:
        raise ValueError(f"--seat is 0..{players - 1} at this table")
    free = [other for other in range(players) if other != seat]
    if not sit:
        free.append(seat)  # a table of bots alone is fine when nobody sits: `seat` goes last
    count = len(free) if bots < 0 else bots
    if not 0 <= count <= len(free):
        raise ValueError(f"--bots is 0..{len(free)} here")
    return m.CreateTable(
        game=Game(ruleset.game),
        preset=preset,
        options=options,
        bots=free[:count],
        private=private,
        sit=seat if sit else None,
        clock=Clock(turn_ms=clock * 1000, bank_ms=0) if clock is not None else None,
        bot=bot,
        # Sent only when set: a table as before is asked for in the same bytes.
        no_watching=True if no_watching else None,
        spectator_delay=spectator_delay or None,
    )


def rules_text(preset: str, options: dict[str, Any]) -> str:
    """`spades rules`: the preset's description, then one line per option that matters in the game
    (`label: value in words`) with what it does, from the engine's table (engine/option_docs.py).
    Raises ValueError with a sentence for an unknown preset or a refused option."""
    try:
        ruleset = Ruleset.from_preset(preset, **options)
        about = describe_preset(preset)
    except RulesetError as exc:
        raise ValueError(str(exc)) from None
    changed = f" with {', '.join(sorted(options))} changed" if options else ""
    lines = [f"{preset}{changed}: {about}", ""]
    for line in rule_lines(ruleset):
        lines.append(f"{line.label}: {line.value}")
        lines.append(f"    {line.about}")
    return "\n".join(lines)


def free_seats_line(request: m.CreateTable, created: m.TableCreated) -> str:
    """What `create --no-sit` leaves open and how to fill it: `seat 0 (South) is free: spades
    join t8 sits there`, or a table of bots alone to watch."""
    players = Ruleset.from_preset(request.preset, **dict(request.options)).players
    free = [s for s in range(players) if s not in request.bots]
    code = f" --code {created.code}" if created.code else ""
    if not free:
        return f"every seat is a bot's: `spades watch {created.table}{code}` to watch it"
    seats = ", ".join(seat_label(s, players, None) for s in free)
    if len(free) == 1:
        return f"seat {free[0]} ({seats}) is free: `spades join {created.table}{code}` sits there"
    listed = ", ".join(str(s) for s in free)
    return (
        f"seats {listed} are free: `spades join {created.table}{code}` takes one"
        f" (`--seat {free[0]}` for a given one)"
    )


# ---------------------------------------------------------------- showing answers


def table_dict(info: TableInfo | Standing | LadderMatch | m.Entrant) -> dict[str, Any]:
    """A wire structure as plain JSON-ready data."""
    return to_map(info)


def tables_view(infos: list[TableInfo], codes: dict[str, str] | None = None) -> Table:
    """The tables; a private one with its code when this machine kept it (`codes`, by table)."""
    view = Table(title="Tables", title_justify="left", expand=False)
    for column in ("table", "game", "preset", "status", "seats", "watching"):
        view.add_column(column)
    kept = codes or {}
    for info in infos:
        # A built-in bot by its kind (`1:heuristic*`), as every seat is named (engine/seat_names.py).
        seats = ", ".join(
            f"{s.seat}:{who(s.player) or '—'}{'*' if s.bot else ''}" for s in info.seats
        )
        code = kept.get(info.table)
        flag = (f" (private, code {code})" if code else " (private)") if info.private else ""
        view.add_row(
            info.table + flag,
            info.game.value,
            info.preset,
            info.status.value,
            seats,
            watching_text(info),
        )
    view.caption = "* a bot · join with `spades join TABLE`, watch with `spades watch TABLE`"
    return view


def watching_text(info: TableInfo) -> str:
    """The listing's watching column: how many watch, and what the table lets them see."""
    if info.no_watching:
        return "no spectators"
    delay = info.spectator_delay
    if delay:
        tricks = "trick" if delay == 1 else "tricks"
        return f"{info.spectators}, spectators {delay} {tricks} behind"
    return str(info.spectators)


#: Terminal width from which the standings also show the rating's μ and σ (`spades ladder show`
#: has them at any width): on 80 columns they pushed the entrants' names into "my-b…".
STANDINGS_WIDE = 100


def standings_view(entries: list[Standing], width: int = 80) -> Table:
    """The standings as a table that fits `width` columns with every name whole: no vertical
    rules, and the rating's μ and σ only on a terminal of `STANDINGS_WIDE` columns or more."""
    view = Table(title="Ladder", title_justify="left", box=box.SIMPLE_HEAD)
    wide = width >= STANDINGS_WIDE
    columns = ["rank", "entrant", "kind", "rating"]
    columns += ["μ", "σ"] if wide else []
    columns += ["games", "hands", "made", "bags", "nil"]
    longest = max((len(entry.name) for entry in entries), default=7)
    for column in columns:
        view.add_column(
            column,
            justify="left" if column in ("entrant", "kind") else "right",
            no_wrap=True,
            min_width=len(column) if column != "entrant" else min(max(longest, 7), 32),
        )
    for entry in entries:
        # Its player statistics beside the rating: contracts made, bags a contract, nils made.
        made = f"{100 * entry.contracts_made / entry.contracts:.0f}%" if entry.contracts else "-"
        bags = f"{entry.bags / entry.contracts:.2f}" if entry.contracts else "-"
        nil = f"{entry.nil_made}/{entry.nil_tried}" if entry.nil_tried else "-"
        rating = [f"{entry.mu:.1f}", f"{entry.sigma:.2f}"] if wide else []
        view.add_row(
            str(entry.rank),
            entry.name,
            "bot" if entry.bot else "person",
            f"{entry.rating:.1f}",
            *rating,
            str(entry.games),
            str(entry.hands),
            made,
            bags,
            nil,
        )
    return view


# Printed under the standings on a line of its own: as the table's caption it wrapped at the
# table's width, which is narrower than the line, and cut a command in two.
STANDINGS_FOOTER = "bots enter with `spades-bot run --ladder`, people with `spades ladder enter`"


#: Why an entrant forfeited, in words (the server's reasons: docs/ladder.md, "What a forfeit is").
FORFEIT_WORDS = {
    "disconnected": "its connection dropped",
    "left": "it left the table",
    "timeouts": "its clock ran out too often",
}


def match_result(match: LadderMatch) -> str:
    """`A won 362:21`, `draw 40:40` or `void`, with `(forfeit)` when someone forfeited."""
    if match.status is MatchStatus.VOID or match.points is None:
        return "void"
    a, b = match.points
    text = f"draw {a}:{b}" if match.winner is None else f"{'AB'[match.winner]} won {a}:{b}"
    return text + (" (forfeit)" if match.forfeits else "")


def forfeit_lines(matches: list[LadderMatch]) -> list[str]:
    """One line per forfeit: who, in which match, and why (when the server kept the reason)."""
    out = []
    for match in matches:
        for name in match.forfeits:
            why = match.forfeit_reasons.get(name)
            reason = f": {FORFEIT_WORDS.get(why, why)}" if why else ""
            out.append(f"{match.match}: {name} forfeited{reason}; its team lost the match")
    return out


def _team(match: LadderMatch, team: int) -> str:
    """A team's names, a bot's marked `*` (as `spades tables` marks them)."""
    return " + ".join(f"{name}*" if name in match.bots else name for name in match.teams[team])


def matches_view(matches: list[LadderMatch], title: str = "Ladder matches") -> Group:
    """The matches as a table, then a line for each forfeit saying why."""
    view = Table(title=title, title_justify="left")
    # Team names wrap at the `+`s (else anywhere) rather than lose their ends at 80 columns; the
    # points wrap at their spaces too (an older match has two halves), so a forfeit's longer
    # result leaves the teams their room.
    for column in ("match", "ended", "team A", "team B", "points", "result"):
        wraps = column.startswith("team") or column == "points"
        view.add_column(column, no_wrap=not wraps, overflow="fold" if wraps else "ellipsis")
    for match in matches:
        when = (
            time.strftime("%m-%d %H:%M", time.localtime(match.time))
            if match.time is not None
            else "—"
        )
        halves = " ".join(f"{h.points[0]}:{h.points[1]}" for h in match.halves) or "—"
        view.add_row(
            match.match,
            when,
            _team(match, 0),
            _team(match, 1),
            halves,
            match_result(match),
        )
    view.caption = (
        "* a bot · points: team A's:team B's at the match's table (an older match: in each of its"
        " halves) · a void match is not rated · `spades ladder records MATCH -o FILE` fetches its"
        " hands"
    )
    return Group(view, *(Text(line) for line in forfeit_lines(matches)))


def entrant_lines(entrant: m.Entrant) -> list[str]:
    """The head of `spades ladder show`: who, where, how sure, how it went."""
    rank = f"rank {entrant.rank}" if entrant.rank is not None else "unrated"
    return [
        f"{entrant.name} ({entrant.kind.value}) · {rank}",
        f"rating {entrant.rating:.1f}  (μ {entrant.mu:.2f}, σ {entrant.sigma:.2f}, μ - 3σ shown)",
        f"{entrant.games} rated matches: {entrant.wins} won, {entrant.draws} drawn, "
        f"{entrant.losses} lost; {entrant.forfeits} forfeited",
        f"{entrant.hands} hands on this server: contracts made {entrant.contracts_made} of "
        f"{entrant.contracts}, {entrant.bags} bags, nils made {entrant.nil_made} of "
        f"{entrant.nil_tried} (`spades stats {entrant.name}` for the rest)",
    ]


def history_view(games: list[GameSummary]) -> Table:
    view = Table(title="Your games", title_justify="left")
    for column in ("game", "when", "server", "type", "hands", "scores", "deals"):
        view.add_column(column)
    for game in games:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(game.modified))
        scores = ", ".join(f"{s} {v}" for s, v in zip(game.sides, game.scores, strict=False))
        view.add_row(
            game.game_id, when, game.server, game.game, str(game.hands), scores, game.verified
        )
    view.caption = "replay one with `spades replay GAME`"
    return view
