"""The pace of each kind of built-in bot a client may choose (`create_table.bot`): how long a hand of
four bots of that kind takes on a real in-process server (SQLite in a temporary folder), from the
`create_table` to the `game_over` a spectator sees, and that over the hand's 56 decisions (4 bids
and 52 cards; the search bot's bank gives the bids more and the forced cards less).

    .venv/bin/python bench/bot_kinds.py [--hands 2]

Prints a line per run, then one JSON object on its last line (bench/report.py).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path

import structlog
import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from protocol.messages import CreateTable, GameOver, Guest, Spectate, TableClosed, TableCreated
from protocol.types import BotKind, Game
from server.app import local_config, running_server
from tests.server.wire_client import WireClient

DECISIONS = 56  # a standard hand: 4 bids and 52 cards


async def one_hand(port: int, kind: BotKind) -> float:
    client = await WireClient.connect(port)
    try:
        await client.hello()
        await client.request(Guest())
        start = time.perf_counter()
        created = await client.request(
            CreateTable(
                game=Game.SPADES,
                preset="standard",
                options={"max_hands": 1},
                bots=[0, 1, 2, 3],
                bot=kind,
            )
        )
        assert isinstance(created, TableCreated), created
        await client.request(Spectate(table=created.table))
        end = await client.expect(GameOver | TableClosed)
        assert isinstance(end, GameOver), end
        return time.perf_counter() - start
    finally:
        await client.aclose()


async def run(hands: int) -> dict[str, float]:
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        async with running_server(local_config(Path(folder) / "bench.db")) as server:
            for kind in BotKind:
                times = [await one_hand(server.port, kind) for _ in range(hands)]
                median = statistics.median(times)
                print(
                    f"{kind.value}: a hand of four bots in {median:.2f} s"
                    f" ({1000 * median / DECISIONS:.0f} ms a decision), runs {times}",
                    flush=True,
                )
                figures[f"hand_s_{kind.value}"] = round(median, 3)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hands", type=int, default=2, help="hands of each kind (median)")
    args = parser.parse_args()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING))
    emit(trio.run(run, args.hands))


if __name__ == "__main__":
    main()
