"""Ladder history written straight into a database (through a `Tx`), for tests of what the ladder
shows."""

from collections.abc import Mapping, Sequence

from server.ladder import store
from server.ladder.duplicate import TableResult, pair_seating, team_points
from server.ladder.ratings import MatchOutcome, RatingModel, apply_match, recompute
from server.storage import Tx


def account(tx: Tx, name: str, *, bot: bool = True) -> int:
    """The id of account `name`, created when missing."""
    row = tx.account_by_name(name)
    if row is not None:
        return row.id
    return tx.insert_account(name, None, None, is_bot=bot, is_guest=False)


def rated_match(
    tx: Tx,
    names: Sequence[str],
    half_scores: Sequence[tuple[int, int]],
    *,
    forfeits: Sequence[str] = (),
    humans: Sequence[str] = (),
    reasons: Mapping[str, str] | None = None,
) -> str:
    """A rated match of `names` (team 0: names[0], names[2]) whose halves scored `half_scores`
    (team 0's side, team 1's side): an old ladder's duplicate pair (or its first half, forfeited),
    as stored then. Returns its id; the ratings move as the ladder's would. `reasons` says why
    forfeiters forfeited, by name."""
    ids = [account(tx, name, bot=name not in humans) for name in names]
    teams = ((ids[0], ids[2]), (ids[1], ids[3]))
    match = store.insert_match(tx, preset="standard", options={}, hands=1, teams=teams)
    keys = [str(i) for i in ids]
    halves = []
    for half, (a, b) in enumerate(half_scores):
        seats = pair_seating(keys, half)
        # Side 0 is seats 0 and 2: in the second half team 1 sits there.
        side0_is_team0 = seats[0] in (keys[0], keys[2])
        scores = (a, b) if side0_is_team0 else (b, a)
        halves.append(TableResult(seats=seats, sides=((0, 2), (1, 3)), scores=scores, game_id=None))
    str_teams = ((keys[0], keys[2]), (keys[1], keys[3]))
    outcome = MatchOutcome(
        match_id=match,
        teams=str_teams,
        points=team_points(halves, str_teams),
        forfeits=frozenset(keys[names.index(n)] for n in forfeits),
        finished_at=store.now(),
    )
    ratings = recompute(store.rated_outcomes(tx), RatingModel())
    moves = apply_match(RatingModel(), ratings, outcome)
    store.finish_match(
        tx,
        match,
        outcome=outcome,
        halves=[h.to_dict() for h in halves],
        moves={int(k): v for k, v in moves.items()},
        ratings={int(k): v for k, v in ratings.items()},
        forfeit_reasons={ids[names.index(n)]: why for n, why in (reasons or {}).items()},
    )
    return match


def void_match(tx: Tx, names: Sequence[str]) -> str:
    ids = [account(tx, name) for name in names]
    match = store.insert_match(
        tx, preset="standard", options={}, hands=1, teams=((ids[0], ids[2]), (ids[1], ids[3]))
    )
    store.void_match(tx, match, "a table could not finish")
    return match
