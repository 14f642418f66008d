"""Test players that act through real sockets; their decisions come from a callback."""

from __future__ import annotations

import random
from collections.abc import Callable

from protocol.messages import Act, Error, GameOver, HandScored, Ok, TableClosed, YourTurn
from protocol.types import Action
from server.app import Server
from tests.server.wire_client import WireClient

Choose = Callable[[YourTurn], Action]


def random_choice(seed: int) -> Choose:
    rng = random.Random(seed)
    return lambda turn: rng.choice(turn.legal)


def heuristic_choice(server: Server, table_id: str, seat: int, seed: int) -> Choose:
    """Think like the heuristic sample bot, from the seat's own view (what it may know).

    The view is read from the table in-process only to make decisions quick and sensible (so a
    game to 500 ends); every action still travels as an `act` over the socket.
    """
    from engine.actions import action_to_dict
    from protocol.schema import from_map
    from server.seats import make_decider

    table = server.lobby.tables[table_id]
    _name, decide = make_decider("heuristic", seed, table.game.ruleset)

    def choose(turn: YourTurn) -> Action:
        game = table.game
        action = decide(game.view(seat), game.legal_actions(seat))
        return from_map(Action, action_to_dict(action, with_seat=False))

    return choose


async def play_until_over(client: WireClient, table_id: str, choose: Choose) -> GameOver:
    """Answer every `your_turn` with `choose`, until `game_over` (the caller bounds the time)."""
    while True:
        message = await client.receive()
        assert message is not None, "the server closed the connection mid-game"
        if isinstance(message, GameOver) and message.table == table_id:
            return message
        if isinstance(message, TableClosed):
            raise AssertionError("the table closed before the game was over")
        if isinstance(message, YourTurn) and message.table == table_id:
            await client.send(Act(table=table_id, version=message.version, action=choose(message)))
        elif isinstance(message, Error):
            # A late your_turn answered after the game moved on is refused as stale; nothing else.
            assert message.code == "stale_version", message
        else:
            assert not isinstance(message, Ok) or message.id is not None


async def play_into_second_hand(client: WireClient, table_id: str, choose: Choose) -> int:
    """Play our seat with `choose` until one hand is scored and our next card is due; returns the
    highest version we were shown (the caller bounds the time)."""
    hands_done = 0
    seen = 0
    while True:
        message = await client.receive()
        assert message is not None
        if isinstance(message, HandScored):
            hands_done += 1
        if isinstance(message, YourTurn):
            seen = max(seen, message.version)
            if hands_done >= 1 and message.legal[0].kind.value == "play":
                return seen
            await client.send(Act(table=table_id, version=message.version, action=choose(message)))
