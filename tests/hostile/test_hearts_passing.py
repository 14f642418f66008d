"""Three-handed Hearts passing four cards cannot be created (issue 22, item 4): its `your_turn`
would list 13-choose-4 passes, a frame far over the announced `max_frame_size`, which the
project's own decoder refuses. `create_table` refuses it `bad_options` naming the option, and the
largest pass three players may make (three of 17 cards: 680 choices) is dealt in frames that fit.
Against a real `spades-server serve` on 127.0.0.1."""

from __future__ import annotations

import trio

from protocol.messages import CreateTable, Error, Guest, LoggedIn, TableCreated, YourTurn
from protocol.types import Game
from protocol.wire import encode_body
from tests.hostile.peer import Peer
from tests.hostile.proc import ServerProcess


async def test_three_players_passing_four_is_refused_and_passing_three_fits_a_frame(
    shared_server: ServerProcess,
) -> None:
    with trio.fail_after(60):
        peer = await Peer.connect(shared_server.port)
        await peer.hello()
        assert isinstance(await peer.request(Guest()), LoggedIn)
        four = CreateTable(
            game=Game.HEARTS,
            preset="hearts",
            options={
                "players": 3,
                "hearts_pass_count": 4,
                "hearts_pass_cycle": ["left", "right", "none"],
            },
        )
        refused = await peer.request(four)
        assert isinstance(refused, Error) and refused.code == "bad_options", refused
        assert refused.detail == "hearts_pass_count", refused
        assert "three players pass at most 3" in refused.message, refused.message

        three = CreateTable(
            game=Game.HEARTS,
            preset="hearts",
            options={
                "players": 3,
                "hearts_pass_count": 3,
                "hearts_pass_cycle": ["left", "right", "none"],
            },
            bots=[1, 2],
            sit=0,
        )
        created = await peer.request(three)
        assert isinstance(created, TableCreated), created
        turn = await peer.expect(YourTurn)  # the pass: the first decision of the first hand
        assert len(turn.legal) == 680  # 17 choose 3 (the two of diamonds set aside: 17 cards each)
        assert len(encode_body(turn)) <= peer.welcome.limits.max_frame_size
        await peer.aclose()
