"""What the search's bid loses by scoring a nearby bid on the tricks another bid's playout took.

    .venv/bin/python bench/bid_bias.py [--deals 2000] [--seed 777] [--jobs 2]

The search's bid (bots/samples/search.py) and the learned bid's training rows (bench/bid_data.py)
play a world out once with the heuristic's bid, then score every bid from base-2 to base+2 on the
tricks that playout took (`world.score_bids`). But the bid changes the play: a side that bid one
more fights for it, one that bid less ducks sooner. In random true deals (standard preset, from
0-0, the seats bidding in turn as the heuristic does) this plays each candidate out itself, with
the same random draws as the base bid's playout, and reports, per offset, the mean of its played
value minus its scored value (my side's points minus the other side's), with its 95 % interval.
A positive figure means scoring off the base bid under-rates that candidate.

The last line printed is one JSON object (bench/report.py) with the figures.
"""

import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.bid_data import RULESET, _played, _theirs, _value
from bench.report import emit
from bots.arena.pool import default_jobs, run_pool
from bots.samples import spades_policy
from bots.samples.world import apply_bid, plain_bid, score_bids
from engine.actions import Bid
from engine.spades import SpadesGame

#: The offsets from the heuristic's bid that the search and the learned bid score.
OFFSETS = (-2, -1, 1, 2)


def deal_differences(deal: int, seed: int) -> list[tuple[int, float]]:
    """(offset, played minus scored) for every seat's legal nearby bids in one deal."""
    rng = random.Random(seed * 1_000_003 + deal)
    cards = list(range(52))
    rng.shuffle(cards)
    hands = [sum(1 << c for c in cards[13 * s : 13 * s + 13]) for s in range(4)]
    dealer = deal % 4
    game = SpadesGame(RULESET, dealer=dealer)
    game.deal_fixed(hands, hand_number=1, scores=(0, 0), bags=(0, 0))
    out: list[tuple[int, float]] = []
    for position in range(4):
        seat = (dealer + 1 + position) % 4
        legal = [a for a in game.legal_actions(seat) if isinstance(a, Bid) and not a.blind]
        base = spades_policy.choose_bid(
            legal,
            hands[seat],
            game.ruleset_order,
            players=4,
            partner_bid=game.bids[(seat + 2) % 4],
            bags=0,
            bag_limit=RULESET.bag_limit,
            bags_counted=True,
        )
        plain = {b.tricks: b for b in legal if plain_bid(b)}
        if base.tricks > 0:
            draws = rng.getrandbits(32)
            trial = _played(game, base, random.Random(draws))
            side = trial.side_of(seat)
            nearby = {
                base.tricks + o: plain[base.tricks + o]
                for o in OFFSETS
                if base.tricks + o >= 1 and base.tricks + o in plain
            }
            scored = score_bids(trial, seat, (side, side + 2), nearby, score=0, bags=0)
            theirs = _theirs(trial, side)
            for number, bid in nearby.items():
                played = _value(_played(game, bid, random.Random(draws)), seat)
                out.append((number - base.tricks, played - (scored[number] - theirs)))
        apply_bid(game, base)
    return out


def _chunk(job: tuple[int, int, int]) -> list[tuple[int, float]]:
    start, stop, seed = job
    out: list[tuple[int, float]] = []
    for deal in range(start, stop):
        out.extend(deal_differences(deal, seed))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--deals", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=777)
    parser.add_argument("--jobs", type=int, default=default_jobs())
    args = parser.parse_args()
    started = time.perf_counter()
    step = 250
    jobs = [(s, min(s + step, args.deals), args.seed) for s in range(0, args.deals, step)]
    by_offset: dict[int, list[float]] = {o: [] for o in OFFSETS}
    for chunk in run_pool(_chunk, jobs, processes=max(1, min(args.jobs, len(jobs)))):
        for offset, difference in chunk:
            by_offset[offset].append(difference)
    figures: dict[str, object] = {}
    for offset, samples in by_offset.items():
        n = len(samples)
        mean = sum(samples) / n
        half = 1.96 * math.sqrt(sum((x - mean) ** 2 for x in samples) / (n - 1) / n)
        figures[f"{offset:+d}"] = {
            "bids": n,
            "played_minus_scored": round(mean, 2),
            "interval": [round(mean - half, 2), round(mean + half, 2)],
        }
        print(
            f"base{offset:+d}: played minus scored {mean:+.2f} [{mean - half:+.2f}, "
            f"{mean + half:+.2f}] over {n} bids"
        )
    emit(
        {
            "deals": args.deals,
            "seed": args.seed,
            "jobs": args.jobs,
            "offsets": figures,
            "seconds": round(time.perf_counter() - started, 1),
        }
    )


if __name__ == "__main__":
    main()
