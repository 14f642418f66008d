"""Issue 41 item 2, the server's side: the holder of a seat at a private table comes back with a bare
`join` (her client died with the code on its screen); everyone else still needs the code, and the
code is read in either case (people read it out)."""

import trio

from protocol.messages import (
    CreateTable,
    Error,
    Guest,
    Join,
    Joined,
    Register,
    Registered,
    Spectate,
    TableCreated,
)
from protocol.types import Game
from server.app import Server
from server.lobby import code_opens, normal_code
from tests.server.wire_client import WireClient


async def registered(server: Server, name: str) -> tuple[WireClient, str]:
    client = await WireClient.connect(server.port)
    await client.hello()
    reply = await client.request(Register(name=name))
    assert isinstance(reply, Registered), reply
    return client, reply.token


async def test_the_holder_comes_back_to_her_private_table_without_the_code(server: Server) -> None:
    with trio.fail_after(20):
        ada, token = await registered(server, "ada")
        created = await ada.request(
            CreateTable(game=Game.SPADES, preset="standard", private=True, sit=0, bots=[1, 2, 3])
        )
        assert isinstance(created, TableCreated) and created.code and created.seat == 0
        await ada.aclose()  # her client dies; the seat is held for her
        stranger = await WireClient.connect(server.port)
        await stranger.hello()
        await stranger.request(Guest())
        for request in (Join(table=created.table), Spectate(table=created.table)):
            refused = await stranger.request(request)
            assert isinstance(refused, Error) and refused.code == "private_table", refused
        back = await WireClient.connect(server.port)
        await back.hello(token=token)
        joined = await back.request(Join(table=created.table))
        assert isinstance(joined, Joined) and joined.seat == 0, joined
        await back.aclose()
        await stranger.aclose()


async def test_a_join_code_is_read_in_either_case(server: Server) -> None:
    with trio.fail_after(20):
        owner, _ = await registered(server, "bea")
        created = await owner.request(
            CreateTable(game=Game.SPADES, preset="standard", private=True, sit=0)
        )
        assert isinstance(created, TableCreated) and created.code
        assert created.code == created.code.upper()
        guest = await WireClient.connect(server.port)
        await guest.hello()
        await guest.request(Guest())
        spoken = created.code.lower()  # spaces are the client's to take out (the wire refuses them)
        joined = await guest.request(Join(table=created.table, code=spoken))
        assert isinstance(joined, Joined) and joined.seat == 1, joined
        # A wrong code in any case is still refused.
        other = await WireClient.connect(server.port)
        await other.hello()
        await other.request(Guest())
        wrong = await other.request(Join(table=created.table, code="abcdefgh"))
        assert isinstance(wrong, Error) and wrong.code == "private_table"
        for client in (owner, guest, other):
            await client.aclose()


def test_the_normal_form_of_a_code() -> None:
    assert normal_code(" wuti miba ") == "WUTIMIBA" and normal_code(None) is None
    assert code_opens("wutimiba", "WUTIMIBA") and not code_opens("wutimibb", "WUTIMIBA")
    assert not code_opens(None, "WUTIMIBA") and not code_opens("x", None)
