"""The ladder's persistence: its tables, and plain query functions over a `sqlite3.Connection`.

Like `server.queries`, every function runs inside the server's writer transaction (`store.call`) or,
for the synchronous CLI, on a connection of its own. What is kept:

- `ratings` (the server's table, under the game key `ladder`): each entrant's current mu and sigma;
- `ladder_matches`: every match with its teams, its status (`running`, `rated`, `void`), its
  result (points per team, forfeits, and in `halves` each half's seats, scores and points per hand
  keyed by the hand's seed: the boards the ratings compare) and the rating moves it caused, in
  rating order (`rated_seq`);
- `ladder_games` (the server's table): each half's game, so the hand records of a match are the
  `hand_records` of its games;
- `ladder_entrants`: standing entries the host made (the house bots), which survive restarts.

Ratings can always be rebuilt: `rated_outcomes` returns the history in order and
`server.ladder.ratings.recompute` folds it (`rebuild_ratings` writes the result back).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from server import queries
from server.ladder.duplicate import TableResult, board_points, deal_points
from server.ladder.ratings import MatchOutcome, Rating, RatingModel, Ratings, recompute

#: The `game` column of the server's `ratings` table for ladder ratings.
RATING_KEY = "ladder"

# Idempotent (IF NOT EXISTS) so it can run at every start, and also as a numbered migration in
# server.storage.MIGRATIONS once the server adopts it; no ';' inside a statement, as migrate() splits.
LADDER_MIGRATION = """
CREATE TABLE IF NOT EXISTS ladder_matches (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    status      TEXT NOT NULL CHECK (status IN ('running', 'rated', 'void')),
    preset      TEXT NOT NULL,
    options     TEXT NOT NULL,
    hands       INTEGER NOT NULL,
    teams       TEXT NOT NULL,
    points      TEXT,
    forfeits    TEXT,
    halves      TEXT,
    changes     TEXT,
    rated_seq   INTEGER UNIQUE,
    created_at  REAL NOT NULL,
    finished_at REAL
);
CREATE INDEX IF NOT EXISTS ladder_matches_rated ON ladder_matches(rated_seq);
CREATE TABLE IF NOT EXISTS ladder_entrants (
    account_id  INTEGER PRIMARY KEY REFERENCES accounts(id),
    house_spec  TEXT,
    added_at    REAL NOT NULL
)
"""


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create the ladder's tables when missing (safe to call on every start)."""
    for statement in LADDER_MIGRATION.split(";"):
        if statement.strip():
            conn.execute(statement)


def now() -> float:
    """The time the ladder's rows are stamped with; a rated match is also rated at it (the
    ratings' drift reads it back from `finished_at`)."""
    return round(time.time(), 3)


def match_id(seq: int) -> str:
    return f"m-{seq}"


def match_seq(match: str) -> int:
    """The row number of a match id `m-<n>`; raises `ValueError` for anything else."""
    prefix, _, number = match.partition("-")
    if prefix != "m" or not number.isdigit():
        raise ValueError(f"{match!r} is not a match id")
    return int(number)


# ---------------------------------------------------------------- matches


def insert_match(
    conn: sqlite3.Connection,
    *,
    preset: str,
    options: Mapping[str, Any],
    hands: int,
    teams: tuple[tuple[int, int], tuple[int, int]],
) -> str:
    """A new running match; returns its id."""
    cur = conn.execute(
        "INSERT INTO ladder_matches (status, preset, options, hands, teams, created_at)"
        " VALUES ('running', ?, ?, ?, ?, ?)",
        (preset, json.dumps(dict(options)), hands, json.dumps(teams), now()),
    )
    assert cur.lastrowid is not None
    return match_id(cur.lastrowid)


def link_game(conn: sqlite3.Connection, match: str, half: int, game_id: int) -> None:
    """Remember that `game_id` is half `half` of `match` (its hand records are that game's)."""
    queries.record_ladder_game(conn, game_id, {"match": match, "half": half})


def finish_match(
    conn: sqlite3.Connection,
    match: str,
    *,
    outcome: MatchOutcome,
    halves: list[dict[str, Any]],
    moves: Mapping[int, tuple[Rating, Rating]],
    ratings: Mapping[int, Rating] | None = None,
) -> int:
    """Mark a match rated with its result, and write the ratings. Returns its `rated_seq`.

    `outcome` names entrants by account id (as text); `moves` maps account id to (before, after)
    for the match's players (what its record shows); `ratings` is every entrant's rating after it
    (a match moves the others a little too: the ratings are one joint belief), or `None` to write
    the moves' alone. The match is stamped with `outcome.finished_at` (required), so a rebuild
    rates it at the same time.
    """
    if outcome.finished_at is None:
        # The rebuild rates the match at its stored time (the ratings' drift), so the time it
        # was rated at must be the one stored.
        raise ValueError(f"match {match}: a rated match needs its finished_at")
    planned = conn.execute(
        "SELECT hands FROM ladder_matches WHERE seq = ?", (match_seq(match),)
    ).fetchone()
    if planned is not None and int(planned[0]) != outcome.planned_boards:
        # The history rebuilds a forfeit from the stored `hands`: rate it on the same number.
        raise ValueError(
            f"match {match} was planned with {planned[0]} boards, not {outcome.planned_boards}"
        )
    row = conn.execute("SELECT COALESCE(MAX(rated_seq), 0) + 1 FROM ladder_matches").fetchone()
    rated_seq = int(row[0])
    changes = {
        str(account): {"before": before.as_dict(), "after": after.as_dict()}
        for account, (before, after) in moves.items()
    }
    updated = conn.execute(
        "UPDATE ladder_matches SET status = 'rated', points = ?, forfeits = ?, halves = ?,"
        " changes = ?, rated_seq = ?, finished_at = ? WHERE seq = ? AND status = 'running'",
        (
            json.dumps(list(outcome.points)),
            json.dumps(sorted(outcome.forfeits)),
            json.dumps(halves),
            json.dumps(changes),
            rated_seq,
            outcome.finished_at,
            match_seq(match),
        ),
    ).rowcount
    if updated != 1:
        raise ValueError(f"match {match} is not running")
    written = ratings if ratings is not None else {a: after for a, (_, after) in moves.items()}
    for account, rating in written.items():
        queries.set_rating(
            conn, account, RATING_KEY, mu=rating.mu, sigma=rating.sigma, games=rating.matches
        )
    return rated_seq


def void_match(conn: sqlite3.Connection, match: str, reason: str) -> None:
    """A match that cannot be rated (a crashed table, a server stop): kept, never rated."""
    conn.execute(
        "UPDATE ladder_matches SET status = 'void', halves = ?, finished_at = ?"
        " WHERE seq = ? AND status = 'running'",
        (json.dumps({"void": reason}), now(), match_seq(match)),
    )


def void_running(conn: sqlite3.Connection) -> int:
    """At start: matches left running by a stopped server are void. Returns how many."""
    return conn.execute(
        "UPDATE ladder_matches SET status = 'void', halves = ?, finished_at = ?"
        " WHERE status = 'running'",
        (json.dumps({"void": "server restarted"}), now()),
    ).rowcount


def _outcome(row: sqlite3.Row) -> MatchOutcome:
    a, b = json.loads(row["teams"])
    points = json.loads(row["points"])
    teams = ((str(a[0]), str(a[1])), (str(b[0]), str(b[1])))
    stored = json.loads(row["halves"] or "[]")
    # Each table keeps its hands' points by seed (matches rated before it did have none: they are
    # rated on their combined points, as they were then). A match of one table is rated on its
    # deals (with its twin's, if it had one); one of two halves is an old duplicate pair.
    halves = [TableResult.from_dict(h) for h in stored] if isinstance(stored, list) else []
    one = halves[0] if len(halves) == 1 else None
    return MatchOutcome(
        match_id=match_id(row["seq"]),
        teams=teams,
        points=(int(points[0]), int(points[1])),
        forfeits=frozenset(str(x) for x in json.loads(row["forfeits"] or "[]")),
        boards=board_points(halves, teams),
        planned_boards=max(1, int(row["hands"])),
        finished_at=None if row["finished_at"] is None else float(row["finished_at"]),
        deals=deal_points(one, teams) if one is not None else (),
        twin=one.twin if one is not None else None,
    )


def rated_outcomes(conn: sqlite3.Connection) -> list[MatchOutcome]:
    """Every rated match in the order it was rated: the history the ratings are a function of."""
    rows = conn.execute(
        "SELECT * FROM ladder_matches WHERE status = 'rated' ORDER BY rated_seq"
    ).fetchall()
    return [_outcome(row) for row in rows]


def current_ratings(conn: sqlite3.Connection) -> dict[int, Rating]:
    """The stored ladder rating of every account that has one."""
    return {
        int(r["account_id"]): Rating(float(r["mu"]), float(r["sigma"]), int(r["games"]))
        for r in conn.execute(
            "SELECT account_id, mu, sigma, games FROM ratings WHERE game = ?", (RATING_KEY,)
        )
    }


def rebuild(conn: sqlite3.Connection, model: RatingModel | None = None) -> Ratings:
    """Recompute the ladder's ratings from the rated matches and store every entrant's; returns
    the whole belief (entrants named by account id as text, as in the outcomes)."""
    ratings = recompute(rated_outcomes(conn), model)
    conn.execute("DELETE FROM ratings WHERE game = ?", (RATING_KEY,))
    for account, rating in ratings.items():
        queries.set_rating(
            conn, int(account), RATING_KEY, mu=rating.mu, sigma=rating.sigma, games=rating.matches
        )
    return ratings


def rebuild_ratings(
    conn: sqlite3.Connection, model: RatingModel | None = None
) -> dict[int, Rating]:
    """`rebuild`, keyed by account id: every stored rating, as it now is."""
    return {int(k): v for k, v in rebuild(conn, model).items()}


def recent_partners(conn: sqlite3.Connection, limit: int = 200) -> dict[int, list[int]]:
    """Each account's partners in the last `limit` rated matches, most recent first."""
    partners: dict[int, list[int]] = {}
    rows = conn.execute(
        "SELECT teams FROM ladder_matches WHERE status = 'rated' ORDER BY rated_seq DESC LIMIT ?",
        (limit,),
    )
    for row in rows:
        for a, b in json.loads(row["teams"]):
            partners.setdefault(int(a), []).append(int(b))
            partners.setdefault(int(b), []).append(int(a))
    return partners


# ---------------------------------------------------------------- what the client shows


@dataclass(frozen=True, slots=True)
class StandingRow:
    rank: int
    account_id: int
    name: str
    rating: Rating


def standings(conn: sqlite3.Connection, limit: int = 100) -> list[StandingRow]:
    """Rated entrants, best first by the conservative estimate (ties by mean, then name)."""
    rows = conn.execute(
        "SELECT r.account_id, a.name, r.mu, r.sigma, r.games FROM ratings r"
        " JOIN accounts a ON a.id = r.account_id WHERE r.game = ?",
        (RATING_KEY,),
    ).fetchall()
    lines = sorted(
        (
            (row["name"], int(row["account_id"]), Rating(row["mu"], row["sigma"], row["games"]))
            for row in rows
        ),
        key=lambda t: (-t[2].conservative, -t[2].mu, t[0].lower()),
    )
    return [
        StandingRow(rank, account, name, rating)
        for rank, (name, account, rating) in enumerate(lines[:limit], start=1)
    ]


def _names(conn: sqlite3.Connection, ids: Iterable[int]) -> dict[int, str]:
    out = {}
    for account in set(ids):
        row = queries.account_by_id(conn, account)
        out[account] = row.name if row is not None else f"#{account}"
    return out


def matches(
    conn: sqlite3.Connection, entrant: str | None = None, limit: int = 20
) -> list[dict[str, Any]]:
    """Recent finished matches (newest first) as plain data, optionally only one entrant's.

    Each: `match`, `status`, `preset`, `teams` (names), `points`, `winner` (0, 1, or None for a
    draw or a void match), `forfeits` (names), `games` (the half games, whose hand records
    `spades-server export --game` writes), `halves` (the match's table, or an old pair's two
    halves: each one's game, table and per-team points),
    `changes` (name: before/after), `finished_at`, `twin` (the match dealt the same deals at the
    same time, or None).
    """
    account: int | None = None
    if entrant is not None:
        row = queries.account_by_name(conn, entrant)
        if row is None:
            return []
        account = row.id
    out: list[dict[str, Any]] = []
    cursor = conn.execute(
        "SELECT * FROM ladder_matches WHERE status != 'running' ORDER BY seq DESC"
    )
    for row in cursor:
        teams = json.loads(row["teams"])
        if account is not None and account not in (*teams[0], *teams[1]):
            continue
        names = _names(conn, [*teams[0], *teams[1]])
        changes = json.loads(row["changes"] or "{}")
        games = [
            int(g["game_id"])
            for g in conn.execute(
                "SELECT game_id, changes FROM ladder_games WHERE json_extract(changes, '$.match') = ?"
                " ORDER BY json_extract(changes, '$.half')",
                (match_id(row["seq"]),),
            )
        ]
        points = json.loads(row["points"]) if row["points"] else None
        forfeits = [int(x) for x in json.loads(row["forfeits"] or "[]")]
        out.append(
            {
                "match": match_id(row["seq"]),
                "status": row["status"],
                "preset": row["preset"],
                "teams": [[names[a] for a in team] for team in teams],
                "points": points,
                "winner": _winner(teams, points, forfeits) if row["status"] == "rated" else None,
                "forfeits": [names.get(x, f"#{x}") for x in forfeits],
                "games": games,
                "halves": _halves(teams, row["halves"]),
                "changes": {names.get(int(k), k): v for k, v in changes.items()},
                "finished_at": row["finished_at"],
                "twin": _twin(row["halves"]),
            }
        )
        if len(out) >= limit:
            break
    return out


def _winner(teams: list[list[int]], points: list[int] | None, forfeits: list[int]) -> int | None:
    """The winning team of a rated match (0 or 1), None for a draw: a forfeit loses for its team."""
    if forfeits:
        lost = {0 if f in teams[0] else 1 for f in forfeits}
        return None if len(lost) == 2 else 1 - lost.pop()
    if points is None or points[0] == points[1]:
        return None
    return 0 if points[0] > points[1] else 1


def _halves(teams: list[list[int]], stored: str | None) -> list[dict[str, Any]]:
    """Each half played: its game, table and each team's points (none for a void match)."""
    halves = json.loads(stored) if stored else []
    if not isinstance(halves, list):
        return []  # a void match keeps only its reason
    keys = [tuple(str(a) for a in team) for team in teams]
    out = []
    for half in halves:
        result = TableResult(
            seats=tuple(half["seats"]),
            sides=tuple(tuple(side) for side in half["sides"]),
            scores=tuple(half["scores"]),
        )
        out.append(
            {
                "game": half.get("game"),
                "table": half.get("table"),
                "points": [result.points_of(keys[0]), result.points_of(keys[1])],
            }
        )
    return out


def _twin(stored: str | None) -> str | None:
    """The twin a match's table names (a match of one table dealt alongside another)."""
    halves = json.loads(stored) if stored else []
    if not isinstance(halves, list) or len(halves) != 1:
        return None
    twin = halves[0].get("twin")
    return str(twin) if twin is not None else None


def record(conn: sqlite3.Connection, name: str) -> dict[str, int]:
    """An entrant's rated matches by result (`wins`, `draws`, `losses`) and its own `forfeits`."""
    tally = {"wins": 0, "draws": 0, "losses": 0, "forfeits": 0}
    for match in matches(conn, name, limit=1_000_000):
        if match["status"] != "rated":
            continue
        team = 0 if name in match["teams"][0] else 1
        winner = match["winner"]
        key = "draws" if winner is None else ("wins" if winner == team else "losses")
        tally[key] += 1
        if name in match["forfeits"]:
            tally["forfeits"] += 1
    return tally


def entrant_detail(conn: sqlite3.Connection, name: str, recent: int = 10) -> dict[str, Any] | None:
    """One entrant: its standing line, partners met, and recent matches; None if unknown."""
    row = queries.account_by_name(conn, name)
    if row is None:
        return None
    rating = queries.rating(conn, row.id, RATING_KEY)
    rank = next((s.rank for s in standings(conn, 1_000_000) if s.account_id == row.id), None)
    partners: dict[str, int] = {}
    for match in matches(conn, name, limit=1_000_000):
        for team in match["teams"]:
            if row.name in team:
                for other in team:
                    if other != row.name:
                        partners[other] = partners.get(other, 0) + 1
    mine = matches(conn, name, limit=recent)
    result: dict[str, Any] = {"name": row.name, "rank": rank, "bot": row.is_bot}
    result.update(record(conn, row.name))
    if rating is not None:
        mu, sigma, games = rating
        result.update(Rating(mu, sigma, games).as_dict())
    result["partners"] = dict(sorted(partners.items(), key=lambda kv: (-kv[1], kv[0])))
    result["recent"] = mine
    return result


# ---------------------------------------------------------------- house bots


def add_house_entrant(conn: sqlite3.Connection, account_id: int, spec: str) -> bool:
    """Enter a built-in bot for good; False if it was already entered."""
    cur = conn.execute(
        "INSERT OR IGNORE INTO ladder_entrants (account_id, house_spec, added_at) VALUES (?, ?, ?)",
        (account_id, spec, now()),
    )
    return cur.rowcount == 1


def house_entrants(conn: sqlite3.Connection) -> list[tuple[int, str, str]]:
    """(account id, account name, bot spec) of every house entrant."""
    return [
        (int(r["account_id"]), str(r["name"]), str(r["house_spec"]))
        for r in conn.execute(
            "SELECT e.account_id, a.name, e.house_spec FROM ladder_entrants e"
            " JOIN accounts a ON a.id = e.account_id WHERE e.house_spec IS NOT NULL"
            " ORDER BY e.account_id"
        )
    ]


HOUSE_PREFIX = "house:"


def house_account_name(spec: str) -> str:
    """`house:heuristic` for the spec `heuristic` (options are kept: `house:search,ms=50`)."""
    return (HOUSE_PREFIX + spec)[:32]


def add_house_bots(conn: sqlite3.Connection, specs: Iterable[str]) -> list[str]:
    """`spades-server ladder add-house-bots`: enter each sample bot; returns the names newly added.

    Creates the `house:<spec>` bot accounts when missing (they have no token: only the server seats
    them). Raises `ValueError` for a spec `bots.registry` cannot build (nothing written for it).
    """
    from bots.registry import BotSpecError, make_bot

    ensure_schema(conn)
    added = []
    for spec in specs:
        try:
            make_bot(spec, 0)
        except BotSpecError as exc:
            raise ValueError(str(exc)) from exc
        name = house_account_name(spec)
        row = queries.account_by_name(conn, name)
        account = (
            row.id
            if row is not None
            else queries.insert_account(conn, name, None, None, is_bot=True, is_guest=False)
        )
        if add_house_entrant(conn, account, spec):
            added.append(name)
    return added
