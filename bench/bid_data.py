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
from bots.samples.world import apply_bid, finish_bidding_and_play
from engine.actions import Bid
from engine.cards import STANDARD_DECK
from engine.ruleset import Ruleset
from engine.scoring import score_side
from engine.spades import SpadesGame

#: The bid numbers tried around the heuristic's, as offsets (the model has one tree set for each).
OFFSETS = (-2, -1, 1, 2)


def deal_rows(deal: int, seed: int) -> list[dict[str, object]]:
    """The four training rows of one deal (one per seat, in bidding order)."""
    rng = random.Random(seed * 1_000_003 + deal)
    ruleset = Ruleset.from_preset("standard", target_score=0, max_hands=1)
    cards = list(range(52))
    rng.shuffle(cards)
    hands = [sum(1 << c for c in cards[13 * s : 13 * s + 13]) for s in range(4)]
    assert sum(hands) == STANDARD_DECK
    dealer = deal % 4
    # Half the deals start from no bags, the others with any count below the limit for each side,
    # so that the model learns what a bag more costs near the limit.
    bags = (0, 0) if rng.random() < 0.5 else (rng.randrange(10), rng.randrange(10))
    game = SpadesGame(ruleset, dealer=dealer)
    game.deal_fixed(hands, hand_number=1, scores=(0, 0), bags=bags)
    order = game.ruleset_order
    rows: list[dict[str, object]] = []
    for position in range(4):
        seat = (dealer + 1 + position) % 4
        partner = (seat + 2) % 4
        legal = [a for a in game.legal_actions(seat) if isinstance(a, Bid) and not a.blind]
        if not legal:
            apply_bid(game, Bid(seat, 0))  # looks at the hand first; never reached in this preset
            continue
        base = spades_policy.choose_bid(
            legal,
            hands[seat],
            order,
            players=4,
            partner_bid=game.bids[partner],
            bags=bags[seat % 2],
            bag_limit=ruleset.bag_limit,
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
        plain = {
            b.tricks: b for b in legal if not (b.moe or b.bemo or b.double_nil or b.ten_for_200)
        }
        gains: dict[str, float] = {}
        base_value = 0.0
        if base.tricks > 0:
            trial = _played(game, base, rng)
            base_value, numbers = _number_values(trial, seat, plain, base.tricks, bags[seat % 2])
            gains.update({str(d): v - base_value for d, v in numbers.items()})
        nil = plain.get(0)
        if nil is not None and base.tricks > 0:
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
    side = game.side_of(seat)
    deltas = list(game.scores)
    return float(deltas[side] - max(d for s, d in enumerate(deltas) if s != side))


def _number_values(
    game: SpadesGame, seat: int, plain: dict[int, Bid], base: int, bags: int
) -> tuple[float, dict[int, float]]:
    """The value of the base bid and of each offset bid, scored on the tricks the base bid's play took."""
    side = game.side_of(seat)
    deltas = list(game.scores)
    theirs = max(d for s, d in enumerate(deltas) if s != side)
    bids = [b if b is not None else Bid(s, 0) for s, b in enumerate(game.bids)]
    values: dict[int, float] = {}
    for offset in OFFSETS:
        number = base + offset
        if number < 1 or number not in plain:
            continue
        bids[seat] = plain[number]
        result = score_side(
            game.ruleset,
            (side, side + 2),  # four seats: a side is a seat and the one across
            bids,
            game.tricks,
            list(game.histories[-1].trick_winners),
            score=0,
            bags=bags,
        )
        values[offset] = float(result.delta - theirs)
    return float(deltas[side] - theirs), values


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
