"""Training rows for the learned bid (bots/samples/bid_model.py): what each bid is worth, deal by deal.

    .venv/bin/python bench/bid_data.py --deals 160000 --jobs 2 -o bench/out/bid_rows.jsonl

For each random deal (standard preset, from 0-0; half of the deals with bags already on each side)
the four seats bid in turn as the heuristic does; at each seat's turn, the hand is bid and played
out in the *true* deal by the search's own playouts (`finish_bidding_and_play`: the later seats bid
as the heuristic, everyone plays as the heuristic, the bidder with `nil_play`'s nil cases), once
with the heuristic's bid and once with a nil. The tricks of the first score every bid from base-2
to base+2 with the engine's scoring and the side's bags, as the search does in its sampled worlds.
A row is the seat's features (bots/samples/bid_features.py) and, per
candidate, its value minus the heuristic bid's: my side's points minus the best other side's.

Rows are JSON lines: {"x": [...features...], "gain": {"-2": g, "-1": g, "1": g, "2": g, "nil": g}};
a candidate that is not a legal bid (below 1, above 13) is left out. bench/bid_train.py fits the
model on them. The last line printed is one JSON object with the count and the time taken.
"""

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from bots.arena.pool import default_jobs, run_pool
from bots.samples import spades_policy
from bots.samples.bid_features import bid_features
from bots.samples.bid_model import OFFSETS
from bots.samples.world import apply_bid, finish_bidding_and_play, plain_bid, score_bids
from engine.actions import Bid
from engine.cards import STANDARD_DECK
from engine.ruleset import Ruleset
from engine.spades import SpadesGame

#: One hand of the standard preset (the rules the model is for: bid_model.applies).
RULESET = Ruleset.from_preset("standard", target_score=0, max_hands=1)


def deal_rows(deal: int, seed: int) -> list[dict[str, object]]:
    """The four training rows of one deal (one per seat, in bidding order)."""
    rng = random.Random(seed * 1_000_003 + deal)
    cards = list(range(52))
    rng.shuffle(cards)
    hands = [sum(1 << c for c in cards[13 * s : 13 * s + 13]) for s in range(4)]
    assert sum(hands) == STANDARD_DECK
    dealer = deal % 4
    # Half the deals start from no bags, the others with any count below the limit for each side,
    # so that the model learns what a bag more costs near the limit.
    bags = (0, 0) if rng.random() < 0.5 else (rng.randrange(10), rng.randrange(10))
    game = SpadesGame(RULESET, dealer=dealer)
    game.deal_fixed(hands, hand_number=1, scores=(0, 0), bags=bags)
    order = game.ruleset_order
    rows: list[dict[str, object]] = []
    for position in range(4):
        seat = (dealer + 1 + position) % 4
        partner = (seat + 2) % 4
        legal = [a for a in game.legal_actions(seat) if isinstance(a, Bid) and not a.blind]
        base = spades_policy.choose_bid(
            legal,
            hands[seat],
            order,
            players=4,
            partner_bid=game.bids[partner],
            bags=bags[seat % 2],
            bag_limit=RULESET.bag_limit,
            bags_counted=True,
        )
        opponents = ((seat + 1) % 4, (seat + 3) % 4)
        features = bid_features(
            hands[seat],
            order,
            position=position,
            partner_bid=game.bids[partner],
            opponent_bids=(game.bids[opponents[0]], game.bids[opponents[1]]),
            base=base.tricks,
            bags=(bags[seat % 2], bags[1 - seat % 2]),
        )
        plain = {b.tricks: b for b in legal if plain_bid(b)}
        gains: dict[str, float] = {}
        if base.tricks > 0:
            trial = _played(game, base, rng)
            base_value = _value(trial, seat)
            offsets = {
                base.tricks + offset: name
                for name, offset in OFFSETS.items()
                if offset is not None and base.tricks + offset >= 1
            }
            side = trial.side_of(seat)
            scored = score_bids(
                trial,
                seat,
                (side, side + 2),  # four seats: a side is a seat and the one across
                {n: plain[n] for n in offsets if n in plain},
                score=0,
                bags=bags[side],
            )
            theirs = _theirs(trial, side)
            gains.update({offsets[n]: delta - theirs - base_value for n, delta in scored.items()})
            nil = plain.get(0)
            if nil is not None:
                gains["nil"] = _value(_played(game, nil, rng), seat) - base_value
        if gains:
            rows.append({"x": features, "gain": gains})
        apply_bid(game, base)
    return rows


def _played(game: SpadesGame, bid: Bid, rng: random.Random) -> SpadesGame:
    trial = game.copy()
    apply_bid(trial, bid)
    finish_bidding_and_play(trial, 0, random.Random(rng.getrandbits(32)), bid.seat)
    return trial


def _value(game: SpadesGame, seat: int) -> float:
    """The hand's points for the seat's side minus the best other side's (the search's measure)."""
    side = game.side_of(seat)
    return float(game.scores[side] - _theirs(game, side))


def _theirs(game: SpadesGame, side: int) -> int:
    """The best other side's points this hand (every side starts it at 0)."""
    return max(points for other, points in enumerate(game.scores) if other != side)


def _chunk(job: tuple[int, int, int]) -> list[dict[str, object]]:
    start, stop, seed = job
    rows: list[dict[str, object]] = []
    for deal in range(start, stop):
        rows.extend(deal_rows(deal, seed))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=default_jobs())
    parser.add_argument("-o", "--output", type=Path, default=Path("bench/out/bid_rows.jsonl"))
    args = parser.parse_args()
    started = time.perf_counter()
    size = 500
    jobs = [(s, min(s + size, args.deals), args.seed) for s in range(0, args.deals, size)]
    args.output.parent.mkdir(parents=True, exist_ok=True)
    count = 0
    with args.output.open("w") as out:
        for rows in run_pool(_chunk, jobs, processes=args.jobs):
            for row in rows:
                out.write(json.dumps(row, separators=(",", ":")) + "\n")
            count += len(rows)
    elapsed = time.perf_counter() - started
    print(
        f"{count} rows from {args.deals} deals in {elapsed:.0f} s -> {args.output}", file=sys.stderr
    )
    emit({"rows": count, "deals": args.deals, "seconds": round(elapsed, 1), "jobs": args.jobs})


if __name__ == "__main__":
    main()
