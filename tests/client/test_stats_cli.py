"""Player statistics end to end: bots play a short game on a real server (127.0.0.1, port 0), the
statistics' job counts each hand off the table's task, and `stats` answers by protocol and by
`spades stats NAME`, with the counters a rebuild from the stored hands gives too."""

from __future__ import annotations

import json

import trio

from engine.hand_stats import TALLY_FIELDS
from protocol.errors import ErrorCode
from protocol.messages import (
    Error,
    GameOver,
    PlayerStats,
    Stats,
    TableClosed,
)
from server.app import Server
from server.stats import player_stats, rebuild
from tests.client.test_cli import one_line_error, spades
from tests.server.wire_client import WireClient, watch_bots_game


async def _bots_game(server: Server) -> tuple[WireClient, list[str]]:
    """A two-hand game of four built-in bots, watched to its end; the bots' account names."""
    client, _ = await watch_bots_game(server.port, {"target_score": 0, "max_hands": 2})
    end = await client.expect(GameOver | TableClosed)
    assert isinstance(end, GameOver), end

    def names(tx: object) -> list[str]:
        from server.storage import Tx

        assert isinstance(tx, Tx)
        game_id = tx.game_ids("finished")[-1]
        game = tx.load_game(game_id)
        assert game is not None
        out = []
        for seat in game.seats:
            account = tx.account_by_id(seat["account"])
            assert account is not None
            out.append(account.name)
        return out

    return client, await server.store.call(names)


async def test_stats_by_protocol_and_by_the_terminal(server: Server) -> None:
    with trio.fail_after(120):
        client, names = await _bots_game(server)
        # The last hand was posted before `game_over` was told; the job counts it on its own task.
        await server.stats.idle.wait()
        name = names[0]
        reply = await client.request(Stats(name=name))
        assert isinstance(reply, PlayerStats), reply
        assert reply.name == name and reply.kind == "bot"
        assert reply.hands == 2 * names.count(name)  # a bot kind may hold two seats
        assert reply.games == 1 and reply.wins in (0, 1)
        assert reply.contracts == reply.contracts_made + reply.contracts_set
        assert reply.contracts + reply.nil_tried + reply.blind_nil_tried >= reply.hands
        assert reply.decisions >= 13 * reply.hands  # a bid and thirteen cards a hand
        # A rebuild from the stored hands gives the same counters.
        before = {f: getattr(reply, f) for f in TALLY_FIELDS}
        assert await server.store.call(rebuild) == 2
        again = await server.store.call(lambda tx: player_stats(tx, name))
        assert again is not None and {f: getattr(again, f) for f in TALLY_FIELDS} == before
        # A guest's own (no name): an account with no hand counted has zeros.
        own = await client.request(Stats())
        assert isinstance(own, PlayerStats) and own.hands == 0 and own.kind == "human"
        unknown = await client.request(Stats(name="nobody-here"))
        assert isinstance(unknown, Error) and unknown.code == ErrorCode.NO_SUCH_ACCOUNT
        await client.aclose()

        await spades("connect", f"127.0.0.1:{server.port}")
        shown = await spades("stats", name, "--json")
        assert shown.exit_code == 0, shown.output
        data = json.loads(shown.output)
        assert {f: data[f] for f in TALLY_FIELDS} == before
        assert data["name"] == name and data["games"] == 1
        text = await spades("stats", name)
        assert text.exit_code == 0, text.output
        assert f"{name} (bot)" in text.output and f"hands {reply.hands}" in text.output
        assert "average bags" in text.output and "time a decision" in text.output
        assert "no_such_account" in one_line_error(await spades("stats", "nobody-here"))
        # Not logged in (connected as a guest only): no account to show without a name.
        assert "name the account" in one_line_error(await spades("stats"))
