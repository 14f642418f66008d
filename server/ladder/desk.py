"""The ladder as a session sees it: answers to ladder requests, with or without a running ladder.

What was stored (standings, matches, an entrant's record) is read from the database the same way
whether or not this server runs the ladder (`LadderArchive`); entering and leaving need the running
service (`server.ladder.service.LadderService`). `NoLadder` is the desk of a server started with the
ladder off: it answers the reads and refuses `ladder_enter` / `ladder_leave` with `not_on_ladder`.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from engine.hand_stats import Tally
from protocol.codec import pack_value
from protocol.errors import ErrorCode
from protocol.messages import (
    Entrant,
    Error,
    LadderMatches,
    LadderRecords,
    LadderShow,
    LadderStandings,
    Matches,
    MatchRecords,
    Message,
    Standings,
)
from protocol.types import ClientKind, LadderHalf, LadderMatch, MatchStatus, RatingMove, Standing
from server.ladder import store as ladder_store
from server.ladder.ratings import Rating
from server.ladder.records import match_hand_records
from server.peers import Peer
from server.ports import Client, LadderRequest

if TYPE_CHECKING:
    from server.storage import Store, Tx

#: The most standings lines sent at once: 300 of the longest (with the player statistics beside
#: the rating, 190 bytes a line) fit one 64 KiB frame, 500 do not.
MAX_STANDINGS = 300
#: The hand records of one `match_records` page, encoded, take at most this many bytes: with the
#: envelope that is well inside the default 64 KiB frame (a ladder hand's record is about 4 KiB).
RECORDS_PAGE_BYTES = 56 * 1024

#: The requests the stored history answers, with or without a running ladder.
ArchiveRequest = LadderStandings | LadderMatches | LadderShow | LadderRecords
ARCHIVE_REQUESTS = (LadderStandings, LadderMatches, LadderShow, LadderRecords)


class LadderArchive:
    """The ladder's stored history, read in the store's writer (so it sees every commit)."""

    def __init__(self, store: Store, *, page_bytes: int = RECORDS_PAGE_BYTES) -> None:
        self.store = store
        self.page_bytes = page_bytes

    async def answer(self, request: ArchiveRequest) -> Message:
        if isinstance(request, LadderRecords):
            return await self._records(request)
        if isinstance(request, LadderStandings):
            limit = min(request.limit, MAX_STANDINGS)
            rows = await self.store.call(lambda tx: _stored_standings(tx, limit))
            return Standings(id=request.id, entries=rows)
        if isinstance(request, LadderMatches):
            found = await self.store.call(
                lambda tx: _stored_matches(tx, request.entrant, request.limit)
            )
            return Matches(id=request.id, matches=found)
        entrant = await self.store.call(lambda tx: _stored_entrant(tx, request.name))
        if entrant is None:
            return Error(
                id=request.id,
                code=ErrorCode.NO_SUCH_ENTRANT.value,
                message=f"no account is called {request.name!r}",
            )
        return dataclasses.replace(entrant, id=request.id)

    async def _records(self, request: LadderRecords) -> Message:
        """One page of a finished match's hand records. A running match's are never shown: its
        twin, or the rest of its own table, may still be playing those deals (a pair of twins is
        stored as finished only once both tables are over)."""
        found = await self.store.call(lambda tx: ladder_store.stored_match(tx, request.match))
        if found is None or found.status == "running":
            why = (
                f"no ladder match is called {request.match!r} (`ladder_matches` lists them)"
                if found is None
                else f"match {request.match} is still being played: its hand records are shown"
                " once it has ended"
            )
            return Error(id=request.id, code=ErrorCode.NO_SUCH_MATCH.value, message=why)
        records = match_hand_records(found)
        page: list[dict[str, Any]] = []
        used = 0
        for record in records[request.start :]:
            size = len(pack_value(record))
            if page and used + size > self.page_bytes:
                break
            page.append(record)
            used += size
        following = request.start + len(page)
        return MatchRecords(
            id=request.id,
            match=request.match,
            records=page,
            total=len(records),
            next=following if following < len(records) else None,
        )


class NoLadder:
    """The ladder desk of a server that runs no ladder: past ladders can still be read."""

    def __init__(self, store: Store) -> None:
        self.archive = LadderArchive(store)

    async def handle(self, client: Client, request: LadderRequest) -> Message:
        if isinstance(request, ARCHIVE_REQUESTS):
            return await self.archive.answer(request)
        return Error(
            id=request.id,
            code=ErrorCode.NOT_ON_LADDER.value,
            message="the rated ladder does not run on this server",
        )

    def connection_closed(self, peer: Peer) -> None:
        return None


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
        **_beside_rating(tx.player_stats(int(detail["account_id"]))),
    )


def _beside_rating(counters: list[int] | None) -> dict[str, int]:
    """The player statistics an entrant's line carries beside its rating."""
    stats = Tally() if counters is None else Tally.from_values(counters)
    return {
        "hands": stats.hands,
        "contracts": stats.contracts,
        "contracts_made": stats.contracts_made,
        "bags": stats.bags,
        "nil_tried": stats.nil_tried + stats.blind_nil_tried,
        "nil_made": stats.nil_made + stats.blind_nil_made,
    }


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
        forfeit_reasons={
            name[:32]: why[:16] for name, why in row.get("forfeit_reasons", {}).items() if why
        },
        bots=[name[:32] for name in row.get("bots", [])],
        ratings=[
            RatingMove(
                name=name[:32],
                before=float(move["before"]["rating"]),
                after=float(move["after"]["rating"]),
            )
            for name, move in changes.items()
        ],
        twin=row.get("twin"),
    )


def _stored_standings(tx: Tx, limit: int) -> list[Standing]:
    counters = tx.rated_player_stats(ladder_store.RATING_KEY)
    lines = []
    for r in ladder_store.standings(tx, limit):
        lines.append(
            Standing(
                rank=r.rank,
                name=r.name[:32],
                rating=r.rating.conservative,
                mu=r.rating.mu,
                sigma=r.rating.sigma,
                games=r.rating.matches,
                bot=r.bot,
                **_beside_rating(counters.get(r.account_id)),
            )
        )
    return lines
