"""Server scenarios about the ladder as a client without a match sees it: anyone may read the
standings, the matches and one entrant, and only an account may enter. (Nothing here enters the
ladder: that would start matches on the server under test.)"""

from __future__ import annotations

import secrets

from bots.conformance import claims
from bots.conformance.report import Failed, Findings, check
from bots.conformance.target import Target, shown
from bots.conformance.wire import KitClient, ServerSilent
from protocol.errors import ErrorCode
from protocol.messages import (
    Error,
    Guest,
    LadderEnter,
    LadderLeave,
    LadderMatches,
    LadderShow,
    LadderStandings,
    LoggedIn,
    Matches,
    Standings,
)


async def ladder_queries(target: Target, notes: Findings) -> None:
    """Anyone may look at the ladder, logged in or not (standings, matches, one entrant); a guest or
    a connection not logged in cannot enter it (not_authenticated); leaving it without an entry is
    not_on_ladder. (Nothing here enters the ladder: that would start matches on the server.)"""
    async with target.session() as visit:
        anon, _ = await visit.welcomed()
        for request, kind in (
            (LadderStandings(limit=5), Standings),
            (LadderMatches(limit=5), Matches),
        ):
            try:
                reply = await anon.request(request)
            except ServerSilent as exc:
                raise Failed(f"{request.TYPE}: {exc}", claims.LADDER) from None
            check(
                isinstance(reply, kind),
                f"{request.TYPE} from a connection not logged in was answered {shown(reply)}, not "
                f"{kind.TYPE}",
                claims.LADDER,
            )
        nobody = f"ck{secrets.token_hex(5)}"
        reply = await anon.request(LadderShow(name=nobody))
        check(
            isinstance(reply, Error) and reply.code == ErrorCode.NO_SUCH_ENTRANT,
            f"ladder_show of a name no account has was answered {shown(reply)}, not no_such_entrant",
            claims.LADDER,
        )
        await _no_entry(anon, "ladder_enter before logging in", notes)
        guest, welcome = await visit.welcomed()
        if welcome.guests:
            logged = await guest.request(Guest(name="kitguest"))
            check(isinstance(logged, LoggedIn), f"guest was answered {shown(logged)}", claims.GUEST)
            await _no_entry(guest, "ladder_enter by a guest", notes)
        player = await visit.player()
        reply = await player.request(LadderLeave())
        check(
            isinstance(reply, Error) and reply.code == ErrorCode.NOT_ON_LADDER,
            f"ladder_leave without an entry was answered {shown(reply)}, not not_on_ladder",
            claims.LADDER,
        )


async def _no_entry(client: KitClient, what: str, notes: Findings) -> None:
    """`ladder_enter` from a connection without an account: not_authenticated (or not_on_ladder
    when the server runs no ladder at all, which it may say first)."""
    try:
        reply = await client.request(LadderEnter())
    except ServerSilent as exc:
        raise Failed(f"{what}: {exc}", claims.LADDER) from None
    code = reply.code if isinstance(reply, Error) else None
    check(
        code in (ErrorCode.NOT_AUTHENTICATED, ErrorCode.NOT_ON_LADDER),
        f"{what} was answered {shown(reply)}, not not_authenticated",
        claims.LADDER,
    )
    if code == ErrorCode.NOT_ON_LADDER:
        notes(f"{what}: not_on_ladder (the server runs no ladder); not_authenticated not checked")
