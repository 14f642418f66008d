"""A guest gets its seat back after a dropped connection, with the resume token `guest` gave it.

Each test runs a real server on 127.0.0.1 (port 0) on a SQLite file in tmp_path; every wait is
bounded by `trio.fail_after`, every loop by a count too.
"""

import json
import sqlite3
from pathlib import Path

import trio

from protocol.messages import (
    Act,
    ClockExpired,
    CreateTable,
    Error,
    Guest,
    Join,
    Joined,
    LoggedIn,
    Login,
    Ok,
    Snapshot,
    Spectate,
    TableCreated,
    Turn,
    Welcome,
    YourTurn,
)
from protocol.types import ActionKind, Game
from server import accounts
from server.app import Server, local_config, running_server
from server.seating import account_seat
from server.table import Table
from tests.server.players import random_choice
from tests.server.wire_client import WireClient

MAX_TURNS = 200  # far more `your_turn`s than a hand's bids and first cards take


async def _guest(port: int) -> tuple[WireClient, LoggedIn]:
    client = await WireClient.connect(port)
    await client.hello()
    reply = await client.request(Guest())
    assert isinstance(reply, LoggedIn) and reply.guest, reply
    assert reply.token is not None  # the resume token, shown this once
    return client, reply


async def _guest_mid_game(server: Server) -> tuple[WireClient, LoggedIn, Table, YourTurn]:
    """A guest at seat 0 with three built-in bots, still connected, at the moment its second card
    of the first hand is due (the game well under way, its hand partly played)."""
    client, guest = await _guest(server.port)
    created = await client.request(
        CreateTable(game=Game.SPADES, preset="standard", bots=[1, 2, 3], sit=0)
    )
    assert isinstance(created, TableCreated) and created.seat == 0, created
    table = server.lobby.tables[created.table]
    choose = random_choice(5)
    plays = 0
    for _ in range(MAX_TURNS):
        turn = await client.expect(YourTurn)
        if turn.legal[0].kind is ActionKind.PLAY:
            plays += 1
            if plays == 2:
                return client, guest, table, turn
        await client.send(Act(table=created.table, version=turn.version, action=choose(turn)))
    raise AssertionError("the guest's second card never came due")


async def test_a_dropped_guest_gets_its_seat_and_hand_back_with_its_token(
    server: Server,
) -> None:
    with trio.fail_after(90):
        client, guest, table, turn = await _guest_mid_game(server)
        knew = table.game.view(0).to_dict()
        others = [card for seat in (1, 2, 3) for card in table.game.view(seat).to_dict()["hand"]]
        await client.aclose()

        back = await WireClient.connect(server.port)
        welcome = await back.hello(token=guest.token)
        assert isinstance(welcome, Welcome) and welcome.user == guest.name
        joined = await back.expect(Joined)
        assert (joined.table, joined.seat, joined.id) == (table.table_id, 0, None)
        snapshot = await back.expect(Snapshot)
        assert snapshot.seat == 0 and snapshot.version == turn.version
        assert snapshot.view == knew
        # Its own cards, and not one card of another seat's hand.
        assert snapshot.view["hand"] and snapshot.view["hand"] == knew["hand"]
        shown = json.dumps(snapshot.view)
        assert not [card for card in others if f'"{card}"' in shown]
        told = await back.receive()
        assert isinstance(told, Turn) and told.to_act == [0], told
        again = await back.receive()
        assert isinstance(again, YourTurn) and again.version == turn.version, again
        # The seat is the guest's again: its card is taken from this connection.
        action = random_choice(6)(again)
        played = await back.request(Act(table=table.table_id, version=again.version, action=action))
        assert isinstance(played, Ok), played
        game_id = table.game_id
        assert game_id is not None
        stored = await server.store.call(lambda tx: tx.load_game(game_id))
        assert stored is not None
        assert (stored.actions[-1].seat, stored.actions[-1].source) == (0, "player")
        await back.aclose()


async def test_login_with_the_token_resumes_the_guest_too(server: Server) -> None:
    with trio.fail_after(60):
        client, guest, table, turn = await _guest_mid_game(server)
        await client.aclose()
        back = await WireClient.connect(server.port)
        await back.hello()
        assert guest.token is not None
        again = await back.request(Login(token=guest.token))
        # A guest's login says it is one, and does not repeat the token.
        assert isinstance(again, LoggedIn), again
        assert (again.name, again.guest, again.token) == (guest.name, True, None)
        joined = await back.expect(Joined)
        assert (joined.table, joined.seat) == (table.table_id, 0)
        snapshot = await back.expect(Snapshot)
        assert snapshot.seat == 0 and snapshot.version == turn.version
        await back.aclose()


async def test_a_wrong_or_unknown_token_gets_no_seat(server: Server, tmp_path: Path) -> None:
    with trio.fail_after(60):
        client, guest, table, _turn = await _guest_mid_game(server)
        await client.aclose()
        assert guest.token is not None
        guest_id = guest.token.partition(".")[0]
        # A guest from before resume tokens (nothing stored to check against): no way in either.
        old = await server.store.call(
            lambda tx: tx.insert_account("old-guest", None, None, is_bot=False, is_guest=True)
        )
        wrong = [
            f"{guest_id}.{'A' * 32}",  # the guest's id, another secret
            guest.token + "x",
            f"{old}.{guest.token.partition('.')[2]}",  # the secret under another guest's id
        ]
        for token in wrong:
            # By login: refused with the same error as a bad account token.
            intruder = await WireClient.connect(server.port)
            await intruder.hello()
            refused = await intruder.request(Login(token=token))
            assert isinstance(refused, Error) and refused.code == "bad_token", refused
            # By hello: welcomed without a user, then bad_token; no seat, no snapshot.
            other = await WireClient.connect(server.port)
            welcome = await other.hello(token=token)
            assert isinstance(welcome, Welcome) and welcome.user is None
            error = await other.receive()
            assert isinstance(error, Error) and error.code == "bad_token" and error.id is None
            # Nor can it take the held seat by joining as a guest of its own.
            assert isinstance(await other.request(Guest()), LoggedIn)
            taken = await other.request(Join(table=table.table_id, seat=0))
            assert isinstance(taken, Error) and taken.code == "table_full", taken
            for peer in (intruder, other):
                assert not [m for m in peer.received if isinstance(m, Joined | Snapshot)]
                await peer.aclose()
        # Another guest's own good token logs in as that guest, and gets nothing of this seat.
        stranger, stranger_guest = await _guest(server.port)
        await stranger.aclose()
        assert stranger_guest.token is not None
        stranger_back = await WireClient.connect(server.port)
        welcome = await stranger_back.hello(token=stranger_guest.token)
        assert welcome.user == stranger_guest.name
        await stranger_back.request(Guest())  # a request after hello: any resume came first
        assert not [m for m in stranger_back.received if isinstance(m, Joined | Snapshot)]
        await stranger_back.aclose()
        # The seat is still held for the real guest.
        assert table.seats[0].holder is None and not table.seats[0].abandoned
        assert account_seat(table.seats, int(guest_id)) == 0


async def test_after_the_grace_the_guest_seat_is_gone(tmp_path: Path) -> None:
    config = local_config(tmp_path / "grace.db", reconnect_grace=1.0)
    with trio.fail_after(60):
        async with running_server(config) as server:
            client, guest, table, _turn = await _guest_mid_game(server)
            # A spectator hears it when the grace (1 s) has run out: the fallback's first card
            # (it is the guest's turn) comes after a notice that the seat was abandoned.
            watcher, _ = await _guest(server.port)
            watching = await watcher.request(Spectate(table=table.table_id))
            assert isinstance(watching, Joined) and watching.seat is None, watching
            await client.aclose()
            assert guest.token is not None
            guest_id = int(guest.token.partition(".")[0])
            notice = await watcher.expect(ClockExpired)
            assert (notice.seat, notice.reason) == (0, "abandoned"), notice
            await watcher.aclose()
            assert table.seats[0].abandoned, "the grace never ran out"
            assert account_seat(table.seats, guest_id) is None
            back = await WireClient.connect(server.port)
            welcome = await back.hello(token=guest.token)
            assert welcome.user == guest.name  # the token still logs the guest in ...
            refused = await back.request(Join(table=table.table_id))
            assert isinstance(refused, Error) and refused.code == "table_full", refused
            # ... but the seat is the fallback's for the rest of the game, as for an account.
            assert not [m for m in back.received if isinstance(m, Joined | Snapshot)]
            await back.aclose()


async def test_a_guest_seat_at_a_waiting_table_is_held_over_a_restart(tmp_path: Path) -> None:
    db = tmp_path / "restart.db"
    with trio.fail_after(60):
        async with running_server(local_config(db)) as server:
            owner, _owner_guest = await _guest(server.port)
            created = await owner.request(CreateTable(game=Game.HEARTS, preset="hearts"))
            assert isinstance(created, TableCreated), created
            client, guest = await _guest(server.port)
            sat = await client.request(Join(table=created.table, seat=2))
            assert isinstance(sat, Joined) and sat.seat == 2, sat
            await client.aclose()
            await owner.aclose()
        async with running_server(local_config(db)) as server:
            table = server.lobby.tables[created.table]
            assert table.seats[2].account is not None
            assert table.seats[2].account.name == guest.name
            back = await WireClient.connect(server.port)
            welcome = await back.hello(token=guest.token)
            assert welcome.user == guest.name
            joined = await back.expect(Joined)
            assert (joined.table, joined.seat) == (created.table, 2)
            await back.aclose()
    # Only the salted hash is stored, never the guest's secret.
    assert guest.token is not None
    raw = sqlite3.connect(db)
    try:
        dump = "\n".join(raw.iterdump())
    finally:
        raw.close()
    assert guest.token.partition(".")[2] not in dump


async def test_guest_tokens_are_stored_and_checked_like_account_tokens(tmp_path: Path) -> None:
    from server.storage import open_store

    with trio.fail_after(20):
        async with open_store(tmp_path / "s.db") as store:
            account, token = await accounts.guest(store, "visitor")
            assert account.is_guest and account.name.startswith("visitor~")
            assert await accounts.login(store, token) == account
            row = await store.call(lambda tx: tx.account_by_id(account.id))
            assert row is not None and row.token_hash is not None
            assert not accounts.cannot_return(row)


async def test_a_guest_from_before_resume_tokens_is_not_waited_for(tmp_path: Path) -> None:
    """A guest with no token stored (made by an older server) cannot come back: after a restart
    its seat at a waiting table is freed, as it always was."""
    db = tmp_path / "old-guest.db"
    with trio.fail_after(60):
        async with running_server(local_config(db)) as server:
            client, guest = await _guest(server.port)
            created = await client.request(CreateTable(game=Game.HEARTS, preset="hearts", sit=1))
            assert isinstance(created, TableCreated) and created.seat == 1, created
            await client.aclose()
        raw = sqlite3.connect(db)
        try:
            raw.execute(
                "UPDATE accounts SET token_salt = NULL, token_hash = NULL WHERE name = ?",
                (guest.name,),
            )
            raw.commit()
        finally:
            raw.close()
        async with running_server(local_config(db)) as server:
            table = server.lobby.tables[created.table]
            assert [s.account for s in table.seats] == [None, None, None, None]
            back = await WireClient.connect(server.port)
            welcome = await back.hello(token=guest.token)
            assert welcome.user is None
            await back.aclose()
