"""PostgreSQL stopped under load, then started again: what two `serve --cluster` servers do.

A throwaway PostgreSQL cluster (tests/postgres.py), two `serve --cluster` processes on 127.0.0.2
and 127.0.0.3 and, on each, `--players` connections each playing seat 0 of its own table against
three built-in bots (random legal actions, as fast as the server answers) beside a table of four
bots. Once play is under way PostgreSQL is stopped (`pg_ctl stop -m fast`) for `--stop` seconds
and started again; then, with `--restart`, restarted at once (`stop` and `start` back to back).
Prints one JSON line: processes that exited, connections dropped, actions answered `ok` against
actions stored for each player's seat (lost: answered but not stored; duplicated: stored more
than answered), clock expiries of the players' seats, and the seconds from PostgreSQL's return
to the last player's first `ok` (play resumed), for each outage. Exits 1 if any count is not 0.

Run: .venv/bin/python bench/outage.py [--stop 30] [--players 4] [--restart]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import trio

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from protocol.messages import ClockExpired
from tests.postgres import Cluster, started
from tests.server.outage.test_cluster_outage import (
    Player,
    owners,
    seated,
    serve_at,
    stored_actions,
)


async def outage(players: list[Player], stop: float, pg: Cluster) -> float:
    """Stop PostgreSQL for `stop` seconds (0: a restart, start right after stop); seconds from its
    return until every player has had an answer again."""
    for player in players:
        await player.wait_oks(player.oks + 3)  # play is under way
    await trio.to_thread.run_sync(pg.stop_server)
    if stop > 0:
        await trio.sleep(stop)
    for player in players:
        player.mark()
    await trio.to_thread.run_sync(pg.start_server)
    back = time.monotonic()
    for player in players:
        await player.wait_oks(player.oks + 1)
    return max(p.ok_after[-1] for p in players) - back


async def main(stop: float, count: int, restart: bool) -> int:
    with started() as pg, tempfile.TemporaryDirectory() as folder:
        url = pg.fresh_database()
        logs = Path(folder)
        first, port2 = await serve_at("127.0.0.2", url, logs / "first.log")
        second, port3 = await serve_at("127.0.0.3", url, logs / "second.log")
        figures: dict[str, object] = {"stop_s": stop, "players": 2 * count}
        try:
            players = [await seated("127.0.0.2", port2, f"a{i}") for i in range(count)]
            players += [await seated("127.0.0.3", port3, f"b{i}") for i in range(count)]
            before = owners(url)
            async with trio.open_nursery() as nursery:
                for seed, player in enumerate(players):
                    nursery.start_soon(player.play, seed)
                figures["resumed_after_stop_s"] = round(await outage(players, stop, pg), 2)
                if restart:
                    figures["resumed_after_restart_s"] = round(await outage(players, 0.0, pg), 2)
                for player in players:
                    await player.rest()
                nursery.cancel_scope.cancel()
            figures["processes_exited"] = sum(p.returncode is not None for p in (first, second))
            figures["connections_dropped"] = sum(p.client.closed for p in players)
            lost = duplicated = 0
            for player in players:
                mine = [a for a in stored_actions(url, player.table) if a[1] == 0]
                answered = [a for a in mine if a[2] != "fallback"]
                lost += max(0, player.oks - len(answered))
                duplicated += max(0, len(answered) - player.oks)
            figures["actions_ok"] = sum(p.oks for p in players)
            figures["actions_lost"] = lost
            figures["actions_duplicated"] = duplicated
            figures["refused"] = sum(len(p.refused) for p in players)
            figures["players_clocks_expired"] = sum(
                1
                for p in players
                for m in p.client.received
                if isinstance(m, ClockExpired) and m.seat == 0 and m.table == p.table
            )
            after = owners(url)
            figures["tables_moved"] = sum(
                1 for t, w in before.items() if t in after and after[t] != w
            )
            text = (logs / "first.log").read_text() + (logs / "second.log").read_text()
            figures["tracebacks"] = text.count("Traceback")
            for player in players:
                await player.client.aclose()
        finally:
            for process in (first, second):
                if process.returncode is None:
                    process.terminate()
                    with trio.move_on_after(20):
                        await process.wait()
                    if process.returncode is None:
                        process.kill()
                        await process.wait()
    print(json.dumps(figures), flush=True)
    bad = [
        "processes_exited",
        "connections_dropped",
        "actions_lost",
        "actions_duplicated",
        "refused",
        "players_clocks_expired",
        "tables_moved",
        "tracebacks",
    ]
    return 1 if any(figures[k] for k in bad) else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--stop", type=float, default=30.0, help="seconds PostgreSQL is stopped")
    parser.add_argument("--players", type=int, default=4, help="players on each server")
    parser.add_argument("--restart", action="store_true", help="then restart it at once too")
    args = parser.parse_args()
    sys.exit(trio.run(main, args.stop, args.players, args.restart))
