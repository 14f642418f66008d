"""Join codes cannot be guessed at speed (issue 22, item 8): wrong codes are slowed down per address
and per table, and codes are eight characters. Against a real `spades-server serve` on 127.0.0.1."""

from __future__ import annotations

import re

import trio

from protocol.messages import (
    CreateTable,
    Error,
    Guest,
    Joined,
    LoggedIn,
    Spectate,
    TableCreated,
)
from protocol.types import Game
from tests.hostile.peer import Peer, errors, round_trip, welcomed
from tests.hostile.proc import ServerProcess


async def guest_peer(port: int, source: str) -> Peer:
    peer = await welcomed(port, source=source)
    assert isinstance(await peer.request(Guest()), LoggedIn)
    return peer


def wrong(code: str, number: int) -> str:
    guess = f"WRONG{number:03d}"
    return guess if guess != code else "WRONG999"


async def test_wrong_join_codes_are_slowed_down_per_address(shared_server: ServerProcess) -> None:
    with trio.fail_after(30):
        owner = await guest_peer(shared_server.port, "127.0.4.1")
        created = await owner.request(
            CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0, private=True)
        )
        assert isinstance(created, TableCreated) and created.code is not None, created
        table, code = created.table, created.code

        guesser = await guest_peer(shared_server.port, "127.0.4.2")
        for number in range(5):  # a few wrong codes are answered as such
            reply = await guesser.request(Spectate(table=table, code=wrong(code, number)))
            assert isinstance(reply, Error) and reply.code == "private_table", reply
        # Then every code from that address, the right one too, waits (or guessing goes on).
        for guess in (wrong(code, 5), code):
            reply = await guesser.request(Spectate(table=table, code=guess))
            assert isinstance(reply, Error) and reply.code == "rate_limited", reply
            assert reply.retry_ms is not None and 0 < reply.retry_ms <= 5000, reply
        assert errors(await round_trip(guesser)) == []  # refused, not hung up on

        # A friend elsewhere is not locked out by that address's guessing.
        friend = await guest_peer(shared_server.port, "127.0.4.3")
        reply = await friend.request(Spectate(table=table, code=wrong(code, 6)))
        assert isinstance(reply, Error) and reply.code == "private_table", reply
        reply = await friend.request(Spectate(table=table, code=code))
        assert isinstance(reply, Joined), reply
        # And the code is eight letters and digits, none of them easy to misread: 32**8 codes.
        assert re.fullmatch(r"[A-HJ-NP-Z2-9]{8}", code), code
        for peer in (owner, guesser, friend):
            await peer.aclose()
