"""Every reply the server sends fits the frame it announces (64 KiB by default), by construction:
the ladder's lists are capped, each of their entries is bounded by the protocol's field types, and a
game view is bounded by the deck. (The lobby's listing is paged: tests/server/unit/test_listing.py.)
These build each reply at its worst and measure it, so raising a cap past what fits fails here."""

from __future__ import annotations

import random

import pytest

from engine.game import Phase, new_game
from engine.ruleset import PRESETS, Ruleset
from protocol.errors import ProtocolError
from protocol.messages import (
    BanInfo,
    Bans,
    Entrant,
    Matches,
    Sender,
    SessionInfo,
    Sessions,
    Snapshot,
    Standings,
)
from protocol.operator_messages import (
    MAX_BANS_LISTED,
    MAX_SESSIONS_LISTED,
    MAX_TABLES_LISTED,
    MAX_WATCHED_LISTED,
)
from protocol.types import (
    ClientKind,
    LadderHalf,
    LadderMatch,
    MatchStatus,
    RatingMove,
    Standing,
)
from protocol.wire import encode_body, from_wire
from server.config import Limits
from server.ladder.desk import MAX_STANDINGS
from tests.engine.helpers import random_action

FRAME = Limits().max_frame_bytes
NAME = "n" * 32  # the longest Name
HUGE = 1.7976931348623157e308
WIDE = -(2**63)  # a points total as wide as msgpack packs an int


def worst_match() -> LadderMatch:
    return LadderMatch(
        match="m" * 64,
        status=MatchStatus.RATED,
        time=2**53 - 1,
        preset="p" * 64,
        teams=[[NAME, NAME], [NAME, NAME]],
        halves=[LadderHalf(game=2**31 - 1, table="t" * 32, points=[WIDE, WIDE])] * 2,
        points=[WIDE, WIDE],
        winner=1,
        forfeits=[NAME] * 4,
        ratings=[RatingMove(name=NAME, before=HUGE, after=HUGE)] * 4,
    )


def test_the_longest_standings_fit_a_frame() -> None:
    line = Standing(
        rank=2**31 - 1,
        name=NAME,
        rating=HUGE,
        mu=HUGE,
        sigma=HUGE,
        games=2**31 - 1,
        bot=True,
        **dict.fromkeys(
            ("hands", "contracts", "contracts_made", "bags", "nil_tried", "nil_made"), 2**31 - 1
        ),
    )
    reply = Standings(id=2**32 - 1, entries=[line] * MAX_STANDINGS)
    assert len(encode_body(reply)) <= FRAME


def test_the_most_matches_a_request_may_ask_for_fit_a_frame() -> None:
    with pytest.raises(ProtocolError):  # the protocol caps `limit` at 50
        from_wire({"t": "ladder_matches", "limit": 51}, Sender.CLIENT)
    reply = Matches(id=2**32 - 1, matches=[worst_match()] * 50)
    assert len(encode_body(reply)) <= FRAME


def test_the_longest_entrant_fits_a_frame() -> None:
    most = 2**31 - 1
    reply = Entrant(
        id=2**32 - 1,
        name=NAME,
        kind=ClientKind.BOT,
        rank=most,
        rating=HUGE,
        mu=HUGE,
        sigma=HUGE,
        games=most,
        wins=most,
        draws=most,
        losses=most,
        forfeits=most,
        recent=[worst_match()] * 10,  # the protocol's bound on `recent`
    )
    assert len(encode_body(reply)) <= FRAME


@pytest.mark.parametrize("preset", sorted(PRESETS))
def test_a_snapshot_stays_far_below_a_frame_through_a_game(preset: str) -> None:
    # A view holds at most a deck's cards in a few lists; through two random hands of every
    # preset, every seat's and a spectator's snapshot stays under a sixteenth of the frame.
    ruleset = Ruleset.from_preset(preset)
    game = new_game(ruleset)
    rng = random.Random(preset)
    largest = 0
    deals = 0
    for _ in range(5000):  # bounded: two hands are far fewer actions
        if game.is_over:
            break
        if game.phase is Phase.DEALING:
            if deals == 2:
                break
            game.deal(rng.randbytes(16))
            deals += 1
            continue
        views = [game.view(seat) for seat in range(ruleset.players)] + [game.spectator_view()]
        for seat, view in enumerate(views):
            snapshot = Snapshot(
                seq=2**53 - 1,
                table="t" * 32,
                version=game.version,
                seat=seat if seat < ruleset.players else None,
                view=view.to_dict(),
                commitment="f" * 64,
            )
            largest = max(largest, len(encode_body(snapshot)))
        game.apply(random_action(game, rng))
    assert 0 < largest <= FRAME // 16, largest


WIDE_CHAR = "\U0001f0a1"  # four bytes in UTF-8: the longest a character of a string field packs to


def test_a_page_of_the_longest_sessions_fits_a_frame() -> None:
    info = SessionInfo(
        session=WIDE_CHAR * 64,
        account=WIDE_CHAR * 32,
        address=WIDE_CHAR * 64,
        transport=WIDE_CHAR * 64,
        tables=["t" * 32] * MAX_TABLES_LISTED,
        watching=["w" * 32] * MAX_WATCHED_LISTED,
        operator=True,
        server=WIDE_CHAR * 64,
    )
    reply = Sessions(id=2**32 - 1, sessions=[info] * MAX_SESSIONS_LISTED, total=2**31 - 1)
    assert len(encode_body(reply)) <= FRAME


def test_a_page_of_the_longest_bans_fits_a_frame() -> None:
    ban = BanInfo(account=WIDE_CHAR * 32, address=WIDE_CHAR * 64, reason=WIDE_CHAR * 200)
    reply = Bans(id=2**32 - 1, bans=[ban] * MAX_BANS_LISTED, total=2**31 - 1)
    assert len(encode_body(reply)) <= FRAME
