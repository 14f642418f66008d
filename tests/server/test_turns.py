"""Whose turn, for everyone: `turn` to every seat and spectator; the snapshot's deal commitment;
the Hearts pass direction on `hand_dealt`."""

import trio

from engine.actions import action_from_dict
from engine.game import new_game
from engine.ruleset import Ruleset
from protocol.messages import (
    CreateTable,
    DealCommitment,
    GameOver,
    Guest,
    HandDealt,
    Joined,
    LoggedIn,
    Message,
    Snapshot,
    Spectate,
    TableCreated,
    Turn,
    YourTurn,
)
from protocol.types import Game
from server.app import Server
from server.storage import StoredGame
from tests.server.players import play_until_over, random_choice
from tests.server.test_play import seated_client
from tests.server.truth import check_no_leak, replay_truth
from tests.server.wire_client import WireClient

OPTIONS: dict[str, bool | int | str | list[str]] = {"max_hands": 1, "target_score": 0}


def expected_turns(stored: StoredGame) -> list[tuple[int, list[int]]]:
    """(version, seats to act) at every version of the game at which someone must act, by replay."""
    game = new_game(Ruleset.from_dict(stored.ruleset))
    deals = sorted(stored.hands, key=lambda h: h.hand_no)
    out: list[tuple[int, list[int]]] = []

    def note() -> None:
        acting = sorted(set(game.to_act()))
        if acting and not game.is_over:
            out.append((game.version, acting))

    dealt = 0
    for action in stored.actions:
        while dealt < len(deals) and deals[dealt].first_seq <= action.seq:
            game.deal(bytes.fromhex(deals[dealt].seed))
            dealt += 1
            note()
        game.apply(action_from_dict(action.action))
        note()
    return out


def turns_of(messages: list[Message], table: str) -> list[tuple[int, list[int]]]:
    return [(m.version, m.to_act) for m in messages if isinstance(m, Turn) and m.table == table]


async def watcher(server: Server, table: str) -> WireClient:
    client = await WireClient.connect(server.port)
    await client.hello()
    assert isinstance(await client.request(Guest()), LoggedIn)
    joined = await client.request(Spectate(table=table))
    assert isinstance(joined, Joined) and joined.seat is None, joined
    return client


async def test_every_seat_and_spectator_hears_whose_turn_it_is(server: Server) -> None:
    with trio.fail_after(60):
        first, _ = await seated_client(server, None, "north")
        created = await first.request(
            CreateTable(game=Game.HEARTS, preset="hearts", options=OPTIONS, sit=0)
        )
        assert isinstance(created, TableCreated)
        table = created.table
        early = await watcher(server, table)  # watching before the game starts
        clients = [first]
        for name in ["east", "south", "west"]:
            client, _token = await seated_client(server, table, name)
            clients.append(client)
        commitment = (await early.expect(DealCommitment)).commitment
        dealt = await early.expect(HandDealt)
        assert dealt.pass_direction == "left" and dealt.commitment == commitment
        first_turn = await early.receive()  # the deal's events, then who must act
        assert isinstance(first_turn, Turn), first_turn
        assert first_turn.to_act == [0, 1, 2, 3]  # the pass: everyone at once
        assert len(first_turn.deadline_ms) == len(first_turn.bank_ms) == 4
        assert all(0 < ms <= 30_000 for ms in first_turn.deadline_ms)

        # Nobody has acted yet: a late spectator's snapshot commits to the deal in play, and a
        # `turn` with the clocks follows it.
        late = await watcher(server, table)
        snapshot = await late.expect(Snapshot)
        assert snapshot.commitment == commitment
        after = await late.receive()
        assert isinstance(after, Turn) and after.to_act == [0, 1, 2, 3], after

        overs: list[GameOver] = []

        async def play(seat: int, client: WireClient) -> None:
            overs.append(await play_until_over(client, table, random_choice(seat)))

        async with trio.open_nursery() as nursery:
            for seat, client in enumerate(clients):
                nursery.start_soon(play, seat, client)
        await early.expect(GameOver)
        await late.expect(GameOver)
        assert len(overs) == 4

        game_id = server.lobby.tables[table].game_id
        assert game_id is not None
        stored = await server.store.call(lambda tx: tx.load_game(game_id))
        assert stored is not None
        expected = expected_turns(stored)
        assert len(expected) > 13  # the pass, then every card of the hand
        for seat, client in enumerate(clients):
            assert turns_of(client.received, table) == expected, seat
            dealt_seen = [m for m in client.received if isinstance(m, HandDealt)]
            assert [m.pass_direction for m in dealt_seen] == ["left"]
            # Each `your_turn` comes after the `turn` of its version, which names the seat.
            told: dict[int, list[int]] = {}
            for message in client.received:
                if isinstance(message, Turn):
                    told[message.version] = message.to_act
                if isinstance(message, YourTurn):
                    assert seat in told[message.version], (seat, message.version)
        assert turns_of(early.received, table) == expected
        assert turns_of(late.received, table) == expected  # its first came after its snapshot

        truth = await server.store.call(lambda tx: replay_truth(tx, game_id))
        assert check_no_leak(early.received, None, truth, table) > 0
        for seat, client in enumerate(clients):
            assert check_no_leak(client.received, seat, truth, table) > 0
        for client in [*clients, early, late]:
            await client.aclose()


async def test_a_snapshot_between_deals_has_no_commitment(server: Server) -> None:
    with trio.fail_after(30):
        first, _ = await seated_client(server, None, "solo")
        created = await first.request(
            CreateTable(game=Game.SPADES, preset="standard", options=OPTIONS)
        )
        assert isinstance(created, TableCreated)
        watching = await watcher(server, created.table)
        snapshot = await watching.expect(Snapshot)
        assert snapshot.commitment is None  # the game has not started: no deal in play
        for client in (first, watching):
            await client.aclose()
