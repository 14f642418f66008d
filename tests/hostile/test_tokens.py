"""Tokens that are not tokens: refused `bad_token` on a connection that stays open, by `login` and by
`hello.token` alike, never `internal` (issue 22, items 1 and 9). A real server process on 127.0.0.1."""

from __future__ import annotations

import pytest
import trio

from protocol.messages import (
    PROTOCOL_VERSION_TEXT,
    Error,
    Guest,
    Hello,
    LoggedIn,
    Login,
    Welcome,
)
from protocol.types import ClientKind
from tests.hostile.peer import Peer, round_trip
from tests.hostile.proc import ServerProcess

NOT_TOKENS = [
    "².x",  # a superscript digit: str.isdigit() says yes, int() says no
    "9" * 25 + ".xxxxxxxxxxxxxxxxxxxx",  # an id no SQLite integer can hold
    "1.",  # no secret
    "٣.xxxxxxxxxxxxxxxxxxxx",  # an Arabic-Indic digit
    "1.xxxxxxxxxxxxxxxx\x00",  # a NUL: HMAC pads a short key with zeros
]


@pytest.mark.parametrize("token", NOT_TOKENS)
async def test_login_with_a_malformed_token_is_bad_token(
    shared_server: ServerProcess, token: str
) -> None:
    with trio.fail_after(20):
        async with await Peer.connect(shared_server.port) as peer:
            await peer.hello()
            refused = await peer.request(Login(token=token))
            assert isinstance(refused, Error) and refused.code == "bad_token", refused
            assert await round_trip(peer) == []  # still connected


@pytest.mark.parametrize("token", NOT_TOKENS)
async def test_hello_with_a_malformed_token_is_welcomed_then_bad_token(
    shared_server: ServerProcess, token: str
) -> None:
    with trio.fail_after(20):
        async with await Peer.connect(shared_server.port) as peer:
            hello = Hello(
                protocol=PROTOCOL_VERSION_TEXT, client="t", kind=ClientKind.HUMAN, token=token
            )
            welcome = await peer.request(hello)
            assert isinstance(welcome, Welcome) and welcome.user is None, welcome
            refusal = await peer.expect(Error)
            assert (refusal.code, refusal.id) == ("bad_token", None), refusal
            assert isinstance(await peer.request(Guest()), LoggedIn)


async def test_a_real_token_with_a_trailing_nul_does_not_log_in(
    shared_server: ServerProcess, fresh_name: str
) -> None:
    with trio.fail_after(20):
        async with await Peer.connect(shared_server.port) as maker:
            await maker.hello()
            token = await maker.register(fresh_name)
        for padded in (token + "\x00", token + "\x00\x00\x00"):
            async with await Peer.connect(shared_server.port) as peer:
                await peer.hello()
                refused = await peer.request(Login(token=padded))
                assert isinstance(refused, Error) and refused.code == "bad_token", refused
        async with await Peer.connect(shared_server.port) as peer:
            await peer.hello()
            assert isinstance(await peer.request(Login(token=token)), LoggedIn)
