"""What spectators may see, end to end (issue 43 item 5): the terminal's `create --no-watching` and
`--spectator-delay N` against a real server on 127.0.0.1, the listing that says so, a spectator
refused, and a spectator over TCP held N tricks behind a table of bots (every frame judged against
the server's live game as it arrives: the game only moves on, so a frame judged late is judged
leniently, never wrongly; tests/server/unit/test_spectator_delay.py judges each one as it is sent).
"""

from __future__ import annotations

import json

import trio

from engine.game import Phase
from protocol.envelope import GameEvent
from protocol.messages import CreateTable, Error, Guest, LoggedIn, Snapshot, Spectate
from protocol.types import Game
from server.app import Server
from tests.client.test_cli import one_line_error, spades
from tests.server.wire_client import WireClient

DELAY = 2


async def a_guest(server: Server) -> WireClient:
    client = await WireClient.connect(server.port)
    await client.hello()
    assert isinstance(await client.request(Guest()), LoggedIn)
    return client


async def test_the_create_options_the_listing_and_a_refused_spectator(server: Server) -> None:
    await spades("connect", f"127.0.0.1:{server.port}")
    closed = await spades("create", "--bots", "4", "--no-sit", "--no-watching")
    assert closed.exit_code == 0, closed.output
    delayed = await spades("create", "--bots", "4", "--no-sit", "--spectator-delay", str(DELAY))
    assert delayed.exit_code == 0, delayed.output
    listed = {t["table"]: t for t in json.loads((await spades("tables", "--json")).output)}
    by_kind = {
        (t.get("no_watching"), t.get("spectator_delay")): t["table"] for t in listed.values()
    }
    assert set(by_kind) == {(True, None), (None, DELAY)}, listed
    shown = (await spades("tables")).output
    assert "no spectators" in shown
    # (The column wraps at 80 columns.)
    assert f"spectators {DELAY}" in shown and "tricks behind" in shown, shown
    # `spades watch` there: the server's sentence, on one line.
    line = one_line_error(await spades("watch", by_kind[True, None]))
    assert "takes no spectators" in line, line
    # Out of range, or both at once: one line, nothing opened.
    line = one_line_error(await spades("create", "--no-sit", "--spectator-delay", "14"), 2)
    assert "--spectator-delay is 0..13 tricks" in line
    line = one_line_error(
        await spades("create", "--no-sit", "--no-watching", "--spectator-delay", "1"), 2
    )
    assert "no one to hold" in line
    # On the wire: a delay out of range is the field's error; no_watching refuses a spectator.
    client = await a_guest(server)
    with trio.fail_after(30):
        bad = await client.request(
            CreateTable(
                game=Game.SPADES, preset="standard", spectator_delay=14
            )  # out of range: sent as is
        )
    assert isinstance(bad, Error) and (bad.code, bad.detail) == ("invalid_field", "spectator_delay")
    with trio.fail_after(30):
        refused = await client.request(Spectate(table=by_kind[True, None]))
    assert isinstance(refused, Error) and refused.code == "no_watching", refused
    assert "takes no spectators" in refused.message
    assert len(server.lobby.tables) == 2
    await client.aclose()


async def test_a_spectator_over_tcp_is_held_behind_a_table_of_bots(server: Server) -> None:
    client = await a_guest(server)
    with trio.fail_after(30):
        created = await client.request(
            CreateTable(
                game=Game.SPADES,
                preset="standard",
                bots=[0, 1, 2, 3],
                bot="random",  # type: ignore[arg-type]
                spectator_delay=DELAY,
            )
        )
    table_id = created.table  # type: ignore[attr-defined]
    table = server.lobby.tables[table_id]
    watcher = await a_guest(server)
    with trio.fail_after(30):
        await watcher.request(Spectate(table=table_id))
    hand, tricks, early, kinds = 0, 0, [], []
    with trio.fail_after(60):
        for _ in range(5000):  # a hand is a few hundred frames
            message = await watcher.receive()
            assert message is not None
            kinds.append(message.TYPE)
            game = table.game
            in_play = game.phase not in (Phase.DEALING, Phase.GAME_OVER)
            live_done = sum(game.spectator_view().tricks) if in_play else None
            if isinstance(message, Snapshot):
                hand, tricks = message.view["hand_number"], sum(message.view["tricks"])
                continue
            if not isinstance(message, GameEvent):
                continue
            number = getattr(message, "hand_number", None)
            if message.TYPE == "deal_seed":
                if live_done is not None and number == game.hand_number:
                    early.append("the seed of the hand in play")
                break  # a whole hand watched
            if message.TYPE in ("deal_commitment", "hand_dealt") and number and number > hand:
                hand, tricks = number, 0
            tricks += message.TYPE == "trick_won"
            if live_done is not None and hand == game.hand_number:
                needed = tricks + (message.TYPE == "card_played")
                if live_done - DELAY < needed:
                    early.append(f"{message.TYPE} at {tricks}, live {live_done}")
        else:
            raise AssertionError("no hand ended")
    assert early == []
    assert kinds.count("card_played") >= 4 * (13 - DELAY) and "hand_scored" in kinds
    await watcher.aclose()
    await client.aclose()
