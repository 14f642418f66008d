"""The ladder's persistence: what it keeps, as functions over a transaction (`server.storage.Tx`).

Every function runs inside the server's writer transaction (`store.call`) or a command's
(`server.storage.write_transaction`); the SQL is the store's. What is kept:

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

import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from server.ladder.duplicate import TableResult, board_points, deal_points
from server.ladder.ratings import MatchOutcome, Rating, RatingModel, Ratings, recompute
from server.storage import HouseEntrant, MatchRow, StoredAction, Tx

#: The `game` column of the server's `ratings` table for ladder ratings.
RATING_KEY = "ladder"


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
    tx: Tx,
    *,
    preset: str,
    options: Mapping[str, Any],
    hands: int,
    teams: tuple[tuple[int, int], tuple[int, int]],
) -> str:
    """A new running match; returns its id."""
    seq = tx.insert_match(
        preset=preset, options=options, hands=hands, teams=teams, created_at=now()
    )
    return match_id(seq)


def link_game(tx: Tx, match: str, half: int, game_id: int) -> None:
    """Remember that `game_id` is half `half` of `match` (its hand records are that game's)."""
    tx.record_ladder_game(game_id, {"match": match, "half": half})


def finish_match(
    tx: Tx,
    match: str,
    *,
    outcome: MatchOutcome,
    halves: list[dict[str, Any]],
    moves: Mapping[int, tuple[Rating, Rating]],
    ratings: Mapping[int, Rating] | None = None,
    forfeit_reasons: Mapping[int, str] | None = None,
) -> int:
    """Mark a match rated with its result, and write the ratings. Returns its `rated_seq`.

    `outcome` names entrants by account id (as text); `moves` maps account id to (before, after)
    for the match's players (what its record shows); `ratings` is every entrant's rating after it
    (a match moves the others a little too: the ratings are one joint belief), or `None` to write
    the moves' alone. `forfeit_reasons` says why each forfeiter forfeited, by account id (the
    table policy's word: `disconnected`, `left`, `timeouts`). The match is stamped with
    `outcome.finished_at` (required), so a rebuild rates it at the same time. Raises
    `ValueError` (nothing written) for a match that is not running or was planned with another
    number of boards.
    """
    if outcome.finished_at is None:
        # The rebuild rates the match at its stored time (the ratings' drift), so the time it
        # was rated at must be the one stored.
        raise ValueError(f"match {match}: a rated match needs its finished_at")
    seq = match_seq(match)
    planned = tx.match(seq)
    if planned is not None and planned.hands != outcome.planned_boards:
        # The history rebuilds a forfeit from the stored `hands`: rate it on the same number.
        raise ValueError(
            f"match {match} was planned with {planned.hands} boards, not {outcome.planned_boards}"
        )
    changes = {
        str(account): {"before": before.as_dict(), "after": after.as_dict()}
        for account, (before, after) in moves.items()
    }
    rated_seq = tx.rate_match(
        seq,
        points=list(outcome.points),
        forfeits=sorted(int(x) for x in outcome.forfeits),
        halves=halves,
        changes=changes,
        finished_at=outcome.finished_at,
        forfeit_reasons={int(a): why for a, why in (forfeit_reasons or {}).items()},
    )
    if rated_seq is None:
        raise ValueError(f"match {match} is not running")
    written = ratings if ratings is not None else {a: after for a, (_, after) in moves.items()}
    for account, rating in written.items():
        tx.set_rating(account, RATING_KEY, mu=rating.mu, sigma=rating.sigma, games=rating.matches)
    return rated_seq


def void_match(tx: Tx, match: str, reason: str) -> None:
    """A match that cannot be rated (a crashed table, a server stop): kept, never rated."""
    tx.void_match(match_seq(match), reason=reason, finished_at=now())


def void_running(tx: Tx) -> int:
    """At start: matches left running by a stopped server are void. Returns how many."""
    return tx.void_running(reason="server restarted", finished_at=now())


def _outcome(row: MatchRow) -> MatchOutcome:
    a, b = row.teams
    points = row.points or [0, 0]
    teams = ((str(a[0]), str(a[1])), (str(b[0]), str(b[1])))
    stored = row.halves if row.halves is not None else []
    # Each table keeps its hands' points by seed (matches rated before it did have none: they are
    # rated on their combined points, as they were then). A match of one table is rated on its
    # deals (with its twin's, if it had one); one of two halves is an old duplicate pair.
    halves = [TableResult.from_dict(h) for h in stored] if isinstance(stored, list) else []
    one = halves[0] if len(halves) == 1 else None
    return MatchOutcome(
        match_id=match_id(row.seq),
        teams=teams,
        points=(int(points[0]), int(points[1])),
        forfeits=frozenset(str(x) for x in row.forfeits),
        boards=board_points(halves, teams),
        planned_boards=max(1, row.hands),
        finished_at=row.finished_at,
        deals=deal_points(one, teams) if one is not None else (),
        twin=one.twin if one is not None else None,
    )


def rated_outcomes(tx: Tx) -> list[MatchOutcome]:
    """Every rated match in the order it was rated: the history the ratings are a function of."""
    return [_outcome(row) for row in tx.rated_matches()]


def current_ratings(tx: Tx) -> dict[int, Rating]:
    """The stored ladder rating of every account that has one."""
    return {
        account: Rating(r.mu, r.sigma, r.games) for account, r in tx.ratings(RATING_KEY).items()
    }


def rebuild(tx: Tx, model: RatingModel | None = None) -> Ratings:
    """Recompute the ladder's ratings from the rated matches and store every entrant's; returns
    the whole belief (entrants named by account id as text, as in the outcomes)."""
    ratings = recompute(rated_outcomes(tx), model)
    tx.delete_ratings(RATING_KEY)
    for account, rating in ratings.items():
        tx.set_rating(
            int(account), RATING_KEY, mu=rating.mu, sigma=rating.sigma, games=rating.matches
        )
    return ratings


def rebuild_ratings(tx: Tx, model: RatingModel | None = None) -> dict[int, Rating]:
    """`rebuild`, keyed by account id: every stored rating, as it now is."""
    return {int(k): v for k, v in rebuild(tx, model).items()}


def recent_partners(tx: Tx, limit: int = 200) -> dict[int, list[int]]:
    """Each account's partners in the last `limit` rated matches, most recent first."""
    partners: dict[int, list[int]] = {}
    for row in tx.rated_matches(newest_first=True, limit=limit):
        for a, b in row.teams:
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
    bot: bool = False  # a bot account (else a person's)


def standings(tx: Tx, limit: int = 100) -> list[StandingRow]:
    """Rated entrants, best first by the conservative estimate (ties by mean, then name)."""
    lines = sorted(
        (
            (r.name, r.account_id, Rating(r.rating.mu, r.rating.sigma, r.rating.games), r.is_bot)
            for r in tx.rated_accounts(RATING_KEY)
        ),
        key=lambda t: (-t[2].conservative, -t[2].mu, t[0].lower()),
    )
    return [
        StandingRow(rank, account, name, rating, bot)
        for rank, (name, account, rating, bot) in enumerate(lines[:limit], start=1)
    ]


def _accounts(tx: Tx, ids: Iterable[int]) -> dict[int, tuple[str, bool]]:
    """Each account's (name, whether it is a bot account); `#id` for one that is gone."""
    out = {}
    for account in set(ids):
        row = tx.account_by_id(account)
        out[account] = (row.name, row.is_bot) if row is not None else (f"#{account}", False)
    return out


def matches(tx: Tx, entrant: str | None = None, limit: int = 20) -> list[dict[str, Any]]:
    """Recent finished matches (newest first) as plain data, optionally only one entrant's.

    Each: `match`, `status`, `preset`, `teams` (names), `points`, `winner` (0, 1, or None for a
    draw or a void match), `forfeits` (names), `forfeit_reasons` (name: why, for those whose
    reason was kept), `bots` (the players that are bot accounts), `games` (the match's games,
    whose hand records `spades-server export --game` writes), `halves` (the match's table, or an
    old pair's two halves: each one's game, table and per-team points), `changes` (name:
    before/after), `finished_at`, `twin` (the match dealt the same deals at the same time, or
    None).
    """
    account: int | None = None
    if entrant is not None:
        found = tx.account_by_name(entrant)
        if found is None:
            return []
        account = found.id
    out: list[dict[str, Any]] = []
    for row in tx.settled_matches():
        teams = row.teams
        if account is not None and account not in (*teams[0], *teams[1]):
            continue
        players = _accounts(tx, [*teams[0], *teams[1]])
        names = {account: name for account, (name, _bot) in players.items()}
        forfeits = row.forfeits
        out.append(
            {
                "match": match_id(row.seq),
                "status": row.status,
                "preset": row.preset,
                "teams": [[names[a] for a in team] for team in teams],
                "points": row.points,
                "winner": _winner(teams, row.points, forfeits) if row.status == "rated" else None,
                "forfeits": [names.get(x, f"#{x}") for x in forfeits],
                "forfeit_reasons": {
                    names.get(x, f"#{x}"): why for x, why in row.forfeit_reasons.items()
                },
                "bots": [name for name, bot in (players[a] for t in teams for a in t) if bot],
                "games": tx.match_games(match_id(row.seq)),
                "halves": _halves(teams, row.halves),
                "changes": {names.get(int(k), k): v for k, v in row.changes.items()},
                "finished_at": row.finished_at,
                "twin": _twin(row.halves),
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


def _halves(teams: list[list[int]], stored: Any) -> list[dict[str, Any]]:
    """Each half played: its game, table and each team's points (none for a void match)."""
    if not isinstance(stored, list):
        return []  # running (None), or a void match, which keeps only its reason
    keys = [tuple(str(a) for a in team) for team in teams]
    out = []
    for half in stored:
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


def _twin(stored: Any) -> str | None:
    """The twin a match's table names (a match of one table dealt alongside another)."""
    if not isinstance(stored, list) or len(stored) != 1:
        return None
    twin = stored[0].get("twin")
    return str(twin) if twin is not None else None


def record(tx: Tx, name: str) -> dict[str, int]:
    """An entrant's rated matches by result (`wins`, `draws`, `losses`) and its own `forfeits`."""
    tally = {"wins": 0, "draws": 0, "losses": 0, "forfeits": 0}
    for match in matches(tx, name, limit=1_000_000):
        if match["status"] != "rated":
            continue
        team = 0 if name in match["teams"][0] else 1
        winner = match["winner"]
        key = "draws" if winner is None else ("wins" if winner == team else "losses")
        tally[key] += 1
        if name in match["forfeits"]:
            tally["forfeits"] += 1
    return tally


def entrant_detail(tx: Tx, name: str, recent: int = 10) -> dict[str, Any] | None:
    """One entrant: its standing line, partners met, and recent matches; None if unknown."""
    row = tx.account_by_name(name)
    if row is None:
        return None
    rating = tx.rating(row.id, RATING_KEY)
    rank = next((s.rank for s in standings(tx, 1_000_000) if s.account_id == row.id), None)
    partners: dict[str, int] = {}
    for match in matches(tx, name, limit=1_000_000):
        for team in match["teams"]:
            if row.name in team:
                for other in team:
                    if other != row.name:
                        partners[other] = partners.get(other, 0) + 1
    mine = matches(tx, name, limit=recent)
    result: dict[str, Any] = {
        "name": row.name,
        "rank": rank,
        "bot": row.is_bot,
        "account_id": row.id,
    }
    result.update(record(tx, row.name))
    if rating is not None:
        result.update(Rating(rating.mu, rating.sigma, rating.games).as_dict())
    result["partners"] = dict(sorted(partners.items(), key=lambda kv: (-kv[1], kv[0])))
    result["recent"] = mine
    return result


# ---------------------------------------------------------------- a match's hand records


@dataclass(frozen=True, slots=True)
class StoredHalf:
    """A match's table as stored (an old duplicate pair's: one of its halves): its game, table,
    seats, hand records and actions (each with the time it was written)."""

    half: int  # 0 (an old pair's second half: 1)
    game_id: int
    table_id: str
    table_config: dict[str, Any]
    seats: list[dict[str, Any]]  # per seat: {"account": id or None, "bot": name or None, ...}
    started_at: float
    records: list[dict[str, Any]]
    actions: list[StoredAction]


@dataclass(frozen=True, slots=True)
class StoredMatch:
    """What `ladder_records` answers from: the match's status, players and halves."""

    match: str
    status: str
    forfeits: dict[int, str | None]  # account id -> reason (None: not kept)
    accounts: dict[int, tuple[str, bool]]  # every seated account: (name, is a bot account)
    halves: list[StoredHalf]  # the match's table (an old duplicate pair's two halves)
    twin: str | None = None  # the match dealt the same deals at the same time, if any


def stored_match(tx: Tx, match: str) -> StoredMatch | None:
    """A match with its game (an old pair's: the games of its halves), for its hand records; None
    if no match has the id."""
    try:
        row = tx.match(match_seq(match))
    except ValueError:
        return None
    if row is None:
        return None
    halves = []
    for half, game_id in enumerate(tx.match_games(match)):
        game = tx.load_game(game_id)
        if game is None:
            continue
        halves.append(
            StoredHalf(
                half=half,
                game_id=game_id,
                table_id=game.table_id,
                table_config=dict(game.table_config),
                seats=list(game.seats),
                started_at=game.created_at or 0.0,
                records=list(tx.hand_records(game_id)),
                actions=list(game.actions),
            )
        )
    ids = [a for team in row.teams for a in team]
    ids += [s["account"] for h in halves for s in h.seats if s.get("account") is not None]
    return StoredMatch(
        match=match,
        status=row.status,
        forfeits={a: row.forfeit_reasons.get(a) for a in row.forfeits},
        accounts=_accounts(tx, ids),
        halves=halves,
        twin=_twin(row.halves),
    )


# ---------------------------------------------------------------- house bots


def add_house_entrant(tx: Tx, account_id: int, spec: str) -> bool:
    """Enter a built-in bot for good; False if it was already entered."""
    return tx.add_house_entrant(account_id, spec, added_at=now())


def house_entrants(tx: Tx) -> list[HouseEntrant]:
    """(account id, account name, bot spec) of every house entrant."""
    return tx.house_entrants()


HOUSE_PREFIX = "house:"


def house_account_name(spec: str) -> str:
    """`house:heuristic` for the spec `heuristic` (options are kept: `house:search,ms=50`)."""
    return (HOUSE_PREFIX + spec)[:32]


def add_house_bots(tx: Tx, specs: Iterable[str]) -> list[str]:
    """`spades-server ladder add-house-bots`: enter each sample bot; returns the names newly added.

    Creates the `house:<spec>` bot accounts when missing (they have no token: only the server seats
    them). Raises `ValueError` for a spec `bots.registry` cannot build (nothing written for it).
    """
    from bots.registry import BotSpecError, make_bot

    added = []
    for spec in specs:
        try:
            make_bot(spec, 0)
        except BotSpecError as exc:
            raise ValueError(str(exc)) from exc
        name = house_account_name(spec)
        row = tx.account_by_name(name)
        account = (
            row.id
            if row is not None
            else tx.insert_account(name, None, None, is_bot=True, is_guest=False)
        )
        if add_house_entrant(tx, account, spec):
            added.append(name)
    return added
