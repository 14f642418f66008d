"""CPU time of the search bot's decisions, this tree against another checkout, in the same run.

    .venv/bin/python bench/search_speed.py --peer /path/to/other/checkout [--hands 24 --rounds 3]

Plays `--hands` hands of plain Spades (search bots at a fixed number of worlds, so the work does not
depend on the load, beside heuristic and random ones) in this tree and in the peer's, alternating
`--rounds` times, each in a fresh process; reports each tree's CPU seconds (the least of its
rounds: the least disturbed by the machine's other work) and a digest of every decision made. Equal
digests mean the two trees' bots decide alike: a speed-up that keeps the digest changed no play.
The last line of stdout is one JSON object (bench/report.py).
"""

import argparse
import hashlib
import json
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent


def play(root: str, hands: int) -> dict[str, object]:
    """Every decision of `hands` hands with the bots of the tree at `root` (run in a child)."""
    sys.path.insert(0, root)
    from bots.registry import make_bot
    from bots.sdk.view import BotView, HandMemory
    from engine.game import Phase, new_game
    from engine.ruleset import Ruleset

    ruleset = Ruleset.from_preset("standard", target_score=0, max_hands=1)
    digest = hashlib.sha256()
    decisions = 0
    started = time.process_time()
    for hand in range(hands):
        specs = (
            ["search,worlds=12", "heuristic", "search,worlds=12", "random"]
            if hand % 2
            else ["search,worlds=8", "search,worlds=8", "heuristic", "heuristic"]
        )
        bots = [make_bot(specs[seat], 77 + 10 * hand + seat) for seat in range(4)]
        memories = [HandMemory() for _ in range(4)]
        game = new_game(ruleset, dealer=hand % 4)
        for step in range(400):  # a hand is a deal, 4 bids and 52 cards
            if game.is_over:
                break
            if game.phase is Phase.DEALING:
                game.deal(f"search-speed/{hand}/{step}".encode())
                continue
            seat = game.to_act()[0]
            view = BotView.from_dict(game.view(seat).to_dict(), ruleset, memory=memories[seat])
            action = bots[seat].decide(view)
            digest.update(repr(action).encode())
            decisions += 1
            game.apply(action)  # type: ignore[arg-type]
    return {
        "cpu_s": round(time.process_time() - started, 3),
        "digest": digest.hexdigest()[:16],
        "decisions": decisions,
    }


def child(root: str, hands: int) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, __file__, "--child", root, "--hands", str(hands)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--peer", required=False, help="another checkout of the project")
    parser.add_argument("--hands", type=int, default=24)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(play(args.child, args.hands)))
        return
    from bench.report import emit

    trees = {"this": str(HERE)}
    if args.peer:
        trees["peer"] = str(Path(args.peer).resolve())
    runs: dict[str, list[dict[str, object]]] = {name: [] for name in trees}
    for _ in range(max(1, args.rounds)):
        for name, root in trees.items():
            runs[name].append(child(root, args.hands))
    figures: dict[str, object] = {"hands": args.hands, "rounds": args.rounds}
    for name, results in runs.items():
        best = min(float(r["cpu_s"]) for r in results)  # type: ignore[arg-type]
        figures[name] = {
            "root": trees[name],
            "cpu_s": best,
            "digest": results[0]["digest"],
            "decisions": results[0]["decisions"],
        }
        print(f"{name:5s} {trees[name]}: {best:.2f} s of CPU, digest {results[0]['digest']}")
    if "peer" in runs:
        this, peer = figures["this"], figures["peer"]
        assert isinstance(this, dict) and isinstance(peer, dict)
        figures["speedup"] = round(peer["cpu_s"] / this["cpu_s"], 3)
        figures["same_decisions"] = this["digest"] == peer["digest"]
        print(
            f"peer / this: {figures['speedup']:.2f}x; same decisions: {figures['same_decisions']}"
        )
    emit(figures)


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
