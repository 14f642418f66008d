"""The ladder's biggest replies fit one frame of the default size, at their longest names and limits."""

import pytest

from protocol import DEFAULT_LIMITS, DEFAULT_MAX_FRAME_SIZE, ProtocolError, Sender, decode, encode
from protocol.messages import Entrant, LadderMatches, Matches, Standings
from protocol.types import (
    ClientKind,
    LadderHalf,
    LadderMatch,
    MatchStatus,
    RatingMove,
    Standing,
)
from protocol.wire import from_wire

NAME = "n" * 32  # the longest Name


def biggest_match() -> LadderMatch:
    half = LadderHalf(game=2**31 - 1, table="L" * 32, points=[-(2**31), 2**31 - 1])
    return LadderMatch(
        match="m-" + "9" * 62,
        status=MatchStatus.RATED,
        time=2**53 - 1,
        preset="p" * 64,
        teams=[[NAME, NAME], [NAME, NAME]],
        halves=[half, half],
        points=[-(2**31), 2**31 - 1],
        winner=1,
        forfeits=[NAME] * 4,
        ratings=[RatingMove(name=NAME, before=-1.0 / 3, after=1.0 / 3)] * 4,
        # Four forfeiters with the longest reason (distinct names: it is a map by name).
        forfeit_reasons={f"{i}{NAME}"[:32]: "r" * 16 for i in range(4)},
        bots=[NAME] * 4,
    )


def fits(message: Matches | Entrant | Standings) -> None:
    wire = encode(message)
    assert len(wire) - 4 <= DEFAULT_MAX_FRAME_SIZE, len(wire)
    assert decode(wire[4:], Sender.SERVER, DEFAULT_LIMITS) == message


def test_the_longest_matches_reply_fits() -> None:
    most = 50
    assert from_wire({"t": "ladder_matches", "limit": most}) == LadderMatches(limit=most)
    with pytest.raises(ProtocolError):
        from_wire({"t": "ladder_matches", "limit": most + 1})
    fits(Matches(id=2**32 - 1, matches=[biggest_match()] * most))


def test_the_longest_entrant_reply_fits() -> None:
    fits(
        Entrant(
            id=2**32 - 1,
            name=NAME,
            kind=ClientKind.HUMAN,
            rank=2**31 - 1,
            rating=-1.0 / 3,
            mu=1.0 / 3,
            sigma=1.0 / 7,
            games=2**31 - 1,
            wins=2**31 - 1,
            draws=2**31 - 1,
            losses=2**31 - 1,
            forfeits=2**31 - 1,
            recent=[biggest_match()] * 10,
        )
    )


def test_the_longest_standings_the_server_sends_fit() -> None:
    line = Standing(
        rank=2**31 - 1,
        name=NAME,
        rating=-1.0 / 3,
        mu=1.0 / 3,
        sigma=1.0 / 7,
        games=1,
        bot=True,
        **dict.fromkeys(
            ("hands", "contracts", "contracts_made", "bags", "nil_tried", "nil_made"), 2**31 - 1
        ),
    )
    fits(Standings(id=2**32 - 1, entries=[line] * 300))
