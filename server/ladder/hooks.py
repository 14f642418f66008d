"""The ladder's entry points for code it does not own: each is one line at its call site.

Wired by the server (server/app.py, server/session.py, server/cli.py):

- `serve()` starts `run_ladder(server)` beside the tables when `ServerConfig.ladder` is on;
- `Session._on_ladder` / `_on_standings` call `on_ladder_request(self, request)` (the handler map
  sends `ladder_matches` and `ladder_show` to `_on_standings` too);
- `Session._detach` calls `on_session_closed(self)`;
- `spades-server ladder add-house-bots` calls `add_house_bots_command(db_path, specs)`.

The service of a running server is found through `service_of(server)`, so neither `Server` nor
`Session` needs a new attribute.
"""

from __future__ import annotations

import dataclasses
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from protocol.errors import ErrorCode
from protocol.messages import (
    Entrant,
    Error,
    LadderEnter,
    LadderLeave,
    LadderMatches,
    LadderShow,
    LadderStandings,
    Matches,
    Message,
    Standings,
)
from protocol.types import ClientKind, LadderHalf, LadderMatch, MatchStatus, RatingMove, Standing
from server.ladder import store as ladder_store
from server.ladder.ratings import Rating
from server.ladder.service import MAX_STANDINGS, LadderService, LadderSettings
from server.storage import Tx, write_transaction

if TYPE_CHECKING:
    from server.app import Server
    from server.session import Session

#: The sample bots `add-house-bots` enters when none are named.
DEFAULT_HOUSE_BOTS = ("random", "heuristic", "search")

_services: weakref.WeakKeyDictionary[Server, LadderService] = weakref.WeakKeyDictionary()


def service_of(server: Server) -> LadderService | None:
    """The ladder running on `server`, if any."""
    return _services.get(server)


async def run_ladder(
    server: Server,
    settings: LadderSettings | None = None,
    *,
    task_status: trio.TaskStatus[LadderService] = trio.TASK_STATUS_IGNORED,
) -> None:
    """Run the ladder of `server` until cancelled; `task_status.started(service)`."""
    service = LadderService(server, settings)
    _services[server] = service
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(service.run)
            task_status.started(service)
    finally:
        _services.pop(server, None)


LadderRequest = LadderEnter | LadderLeave | LadderStandings | LadderMatches | LadderShow


async def on_ladder_request(session: Session, request: LadderRequest) -> None:
    """Answer a ladder request (`ladder_enter`, `ladder_leave`, `ladder_standings`,
    `ladder_matches`, `ladder_show`)."""
    if isinstance(request, LadderMatches | LadderShow):
        # What was stored: the same with or without a running ladder.
        session.deliver(await _stored_answer(session, request))
        return
    service = service_of(session.server)
    if service is not None:
        session.deliver(await service.handle(session, request))
        return
    if isinstance(request, LadderStandings):
        # No ladder task, but the standings of past ladders are still in the database.
        limit = min(request.limit, MAX_STANDINGS)
        rows = await session.server.store.call(lambda tx: _stored_standings(tx, limit))
        session.deliver(Standings(id=request.id, entries=rows))
        return
    session.deliver(
        Error(
            id=request.id,
            code=ErrorCode.NOT_ON_LADDER.value,
            message="the rated ladder does not run on this server",
        )
    )


async def _stored_answer(session: Session, request: LadderMatches | LadderShow) -> Message:
    """`matches` or `entrant` from the database, read in the store's worker thread."""
    store = session.server.store
    if isinstance(request, LadderMatches):
        found = await store.call(lambda tx: _stored_matches(tx, request.entrant, request.limit))
        return Matches(id=request.id, matches=found)
    entrant = await store.call(lambda tx: _stored_entrant(tx, request.name))
    if entrant is None:
        return Error(
            id=request.id,
            code=ErrorCode.NO_SUCH_ENTRANT.value,
            message=f"no account is called {request.name!r}",
        )
    return dataclasses.replace(entrant, id=request.id)


def _stored_matches(tx: Tx, entrant: str | None, limit: int) -> list[LadderMatch]:
    return [wire_match(row) for row in ladder_store.matches(tx, entrant, limit)]


def _stored_entrant(tx: Tx, name: str) -> Entrant | None:
    detail = ladder_store.entrant_detail(tx, name, recent=10)
    if detail is None:
        return None
    start = Rating()
    return Entrant(
        name=detail["name"][:32],
        kind=ClientKind.BOT if detail["bot"] else ClientKind.HUMAN,
        rank=detail["rank"],
        rating=float(detail.get("rating", start.conservative)),
        mu=float(detail.get("mu", start.mu)),
        sigma=float(detail.get("sigma", start.sigma)),
        games=int(detail.get("matches", 0)),
        wins=detail["wins"],
        draws=detail["draws"],
        losses=detail["losses"],
        forfeits=detail["forfeits"],
        recent=[wire_match(row) for row in detail["recent"]],
    )


def wire_match(row: dict[str, Any]) -> LadderMatch:
    """One of `server.ladder.store.matches`' rows as the wire's `LadderMatch`."""
    changes: dict[str, dict[str, dict[str, float]]] = row["changes"]
    finished = row.get("finished_at")
    return LadderMatch(
        match=row["match"],
        status=MatchStatus(row["status"]),
        time=int(finished) if finished is not None else None,
        preset=row["preset"][:64],
        teams=[[name[:32] for name in team] for team in row["teams"]],
        halves=[
            LadderHalf(game=half["game"], table=half["table"], points=list(half["points"]))
            for half in row["halves"]
        ],
        points=list(row["points"]) if row["points"] is not None else None,
        winner=row["winner"],
        forfeits=[name[:32] for name in row["forfeits"]],
        ratings=[
            RatingMove(
                name=name[:32],
                before=float(move["before"]["rating"]),
                after=float(move["after"]["rating"]),
            )
            for name, move in changes.items()
        ],
    )


def _stored_standings(tx: Tx, limit: int) -> list[Standing]:
    return [
        Standing(
            rank=r.rank,
            name=r.name[:32],
            rating=r.rating.conservative,
            mu=r.rating.mu,
            sigma=r.rating.sigma,
            games=r.rating.matches,
        )
        for r in ladder_store.standings(tx, limit)
    ]


def on_session_closed(session: Session) -> None:
    """A connection ended: its ladder entry (if any) goes at once rather than at the next round."""
    service = service_of(session.server)
    if service is not None:
        service.session_closed(session)


def add_house_bots_command(db_path: Path, specs: Sequence[str] = ()) -> str:
    """`spades-server ladder add-house-bots [SPEC...]`: enter sample bots; returns what to print.

    Works on the database file directly (with the server stopped or running: see
    `server.storage.write_transaction`); a running ladder picks new house bots up within
    `LadderSettings.house_poll` seconds. Raises `ValueError` for a spec that names no bot (nothing
    written), `server.storage.StorageError` for a bad file.
    """
    with write_transaction(db_path) as tx:
        added = ladder_store.add_house_bots(tx, specs or DEFAULT_HOUSE_BOTS)
    if not added:
        return "the house bots were already entered"
    return "entered on the ladder: " + ", ".join(added)
