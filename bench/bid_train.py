"""Fit the learned bid on bench/bid_data.py's rows and write it as data for bots/samples/bid_model.py.

    .venv/bin/python bench/bid_train.py bench/out/bid_rows.jsonl -o bots/samples/bid_model.json.gz

(With no arguments it reads bench/out/bid_rows.jsonl and writes bench/out/bid_model.json.gz, so that
`make bench` leaves the shipped model alone.)

Needs numpy and scikit-learn (the `bench` extra: offline only; the bot evaluates the trees in plain
Python). One gradient-boosted regressor per candidate (base-2, base-1, base+1, base+2, nil) learns the
candidate's gain over the heuristic's bid from the features; 20 % of the rows are held out, and on
them the script reports what choosing by the model gains over the heuristic's bid (by the rows' own
played-out values), against the best choice with the deal seen (the most any bid rule could gain).
The trees are written as nested lists: an inner node is [feature, threshold, left, right] (go left
when the feature is at most the threshold), a leaf is [value]; a candidate's gain is its baseline
plus the sum of its trees' leaves. The last line printed is one JSON object with the figures.
"""

import argparse
import gzip
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.report import emit
from bots.samples.bid_features import NAMES
from bots.samples.bid_model import OFFSETS

#: The candidates, one regressor each, in the order of their columns here.
CANDIDATES = tuple(OFFSETS)


def load(path: Path) -> tuple[Any, Any]:
    import numpy as np

    xs: list[list[float]] = []
    ys: list[list[float]] = []
    with path.open() as rows:
        for line in rows:
            row = json.loads(line)
            xs.append(row["x"])
            gain = row["gain"]
            ys.append([gain.get(c, np.nan) for c in CANDIDATES])
    return np.array(xs), np.array(ys)


def export(model: Any) -> dict[str, Any]:
    """A fitted HistGradientBoostingRegressor as plain lists (see the docstring)."""
    trees = []
    for (predictor,) in model._predictors:
        nodes = []
        for node in predictor.nodes:
            if node["is_leaf"]:
                nodes.append([round(float(node["value"]), 4)])
            else:
                nodes.append(
                    [
                        int(node["feature_idx"]),
                        round(float(node["num_threshold"]), 6),
                        int(node["left"]),
                        int(node["right"]),
                    ]
                )
        trees.append(nodes)
    return {"baseline": float(model._baseline_prediction[0][0]), "trees": trees}


def main() -> None:
    import numpy as np
    from sklearn.ensemble import HistGradientBoostingRegressor

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rows", type=Path, nargs="?", default=Path("bench/out/bid_rows.jsonl"))
    # Not the shipped model by default: `make bench` runs this with no arguments.
    parser.add_argument("-o", "--output", type=Path, default=Path("bench/out/bid_model.json.gz"))
    parser.add_argument("--trees", type=int, default=400)
    parser.add_argument("--rate", type=float, default=0.08)
    parser.add_argument("--leaves", type=int, default=31)
    parser.add_argument("--min-leaf", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    started = time.perf_counter()
    x, y = load(args.rows)
    if x.shape[1] != len(NAMES):
        raise SystemExit(f"the rows have {x.shape[1]} features, bid_features has {len(NAMES)}")
    rng = np.random.default_rng(args.seed)
    held = rng.random(len(x)) < 0.2
    models: dict[str, Any] = {}
    predicted = np.full(y.shape, -np.inf)
    for k, name in enumerate(CANDIDATES):
        known = ~np.isnan(y[:, k])
        model = HistGradientBoostingRegressor(
            max_iter=args.trees,
            learning_rate=args.rate,
            max_leaf_nodes=args.leaves,
            min_samples_leaf=args.min_leaf,
            early_stopping=True,
            validation_fraction=0.1,
            n_iter_no_change=20,
            random_state=args.seed,
        )
        model.fit(x[known & ~held], y[known & ~held, k])
        models[name] = model
        rows = known & held
        predicted[rows, k] = model.predict(x[rows])
        print(f"  {name}: {model.n_iter_} trees", file=sys.stderr)
    # On the held-out rows: the heuristic's bid is worth 0; each candidate its row's gain.
    test = y[held]
    guess = predicted[held]
    choice = np.argmax(np.where(np.isnan(test), -np.inf, guess), axis=1)
    take = guess[np.arange(len(test)), choice] > 0
    gained = np.where(take, test[np.arange(len(test)), choice], 0.0)
    best = np.nanmax(np.concatenate([np.zeros((len(test), 1)), test], axis=1), axis=1)
    figures = {
        "rows": len(x),
        "held_out": int(held.sum()),
        "gain_per_bid": round(float(gained.mean()), 2),
        "gain_stderr": round(float(gained.std(ddof=1) / np.sqrt(len(gained))), 2),
        "changed_share": round(float(take.mean()), 3),
        "seeing_the_deal": round(float(best.mean()), 2),
        "trees": {name: int(m.n_iter_) for name, m in models.items()},
    }
    # The shipped model is refitted on every row, the held-out ones included, with as many trees
    # as early stopping chose above.
    out: dict[str, Any] = {"features": list(NAMES), "candidates": {}}
    for k, name in enumerate(CANDIDATES):
        known = ~np.isnan(y[:, k])
        final = HistGradientBoostingRegressor(
            max_iter=int(models[name].n_iter_),
            learning_rate=args.rate,
            max_leaf_nodes=args.leaves,
            min_samples_leaf=args.min_leaf,
            early_stopping=False,
            random_state=args.seed,
        )
        final.fit(x[known], y[known, k])
        out["candidates"][name] = export(final)
    text = json.dumps(out, separators=(",", ":"))
    args.output.write_bytes(gzip.compress(text.encode(), mtime=0))
    figures["bytes"] = args.output.stat().st_size
    figures["seconds"] = round(time.perf_counter() - started, 1)
    print(
        f"held out: choosing by the model gains {figures['gain_per_bid']:+.2f} "
        f"(+-{figures['gain_stderr']}) a bid over the heuristic's, changing "
        f"{figures['changed_share']:.1%} of bids; seeing the deal: {figures['seeing_the_deal']:+.2f}",
        file=sys.stderr,
    )
    emit(figures)


if __name__ == "__main__":
    main()
