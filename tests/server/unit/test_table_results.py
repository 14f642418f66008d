"""What a finished game stores is what the engine's outcome says: in Hearts the lowest score places
first (issue 15, item 6: the table used to place by the highest)."""

from __future__ import annotations

import trio

from engine.game import Outcome
from tests.server.unit.tables import running_table, table_config


def test_the_engines_places_put_the_lowest_hearts_score_first() -> None:
    outcome = Outcome(
        winners=(2,),
        scores=(51, 100, 37, 72),
        sides=((0,), (1,), (2,), (3,)),
        reason="target",
        lowest_wins=True,
    )
    assert [outcome.place_of(seat) for seat in range(4)] == [2, 4, 1, 3]


async def test_a_finished_hearts_game_stores_the_engines_places(
    autojump_clock: trio.abc.Clock,
) -> None:
    async with running_table(table_config(bots=(0, 1, 2, 3), target_score=40)) as table:
        with trio.fail_after(36_000):  # trio time: four bots play it out
            await table.game_over.wait()
        assert table.game_id is not None
        outcome = table.game.outcome
        assert outcome is not None and outcome.lowest_wins
        game_id = table.game_id
        rows = await table.records.store.call(lambda tx: tx.results(game_id))
        places = {seat: place for seat, _account, _score, place in rows}
        scores = {seat: score for seat, _account, score, _place in rows}
        assert places == {seat: outcome.place_of(seat) for seat in range(4)}
        best = min(scores.values())
        assert all(places[seat] == 1 for seat, score in scores.items() if score == best)
        assert all(places[seat] > 1 for seat, score in scores.items() if score > best)
