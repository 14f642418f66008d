"""The learned bid: what each bid near the heuristic's is worth, from the hand and the bids before it.

A gradient-boosted regression per candidate (the heuristic's bid -2, -1, +1, +2, and nil) learned
offline (bench/bid_data.py plays the candidates out in 160,000 true deals, bench/bid_train.py fits
the trees) and shipped as data, `bid_model.json.gz` beside this module. Evaluating it is a walk down
each tree in plain Python, under a millisecond a bid: no numpy or scikit-learn at play time.

The search (`SearchBot`) weighs these values against its own sampled worlds (by default as much as
all the worlds it sampled; `bid_model=K`: the model counts as K worlds). The model knows the table
only through `bid_features`: the hand, the bids before it and the bags, under the standard preset's
scoring (`applies`). The score is not among them (it was trained from 0-0), which the sampled
worlds, weighed beside it, do see.
"""

import dataclasses
import gzip
import json
from functools import cache
from importlib import resources
from typing import Any

from bots.samples.bid_features import NAMES
from engine.ruleset import Ruleset

#: The candidates the model values, as offsets from the heuristic's bid (None: nil).
OFFSETS: dict[str, int | None] = {"-2": -2, "-1": -1, "1": 1, "2": 2, "nil": None}

Tree = list[list[Any]]

#: The rules the model was trained under (bench/bid_data.py), and the options that do not change
#: what a bid is worth within a hand: how long the game is, and the rules of the other game.
TRAINED_ON = Ruleset.from_preset("standard")
NOT_IN_A_HAND = (
    "target_score",
    "max_hands",
    "losing_floor_enabled",
    "losing_floor",
    "first_dealer",
    *(f.name for f in dataclasses.fields(Ruleset) if f.name.startswith("hearts_")),
)


def applies(ruleset: Ruleset) -> bool:
    """Whether the model knows these rules: the standard preset's, but for the game's length."""
    same = {name: getattr(TRAINED_ON, name) for name in NOT_IN_A_HAND}
    return dataclasses.replace(ruleset, **same) == TRAINED_ON


class BidModel:
    """Trees per candidate; `gains(features)` is each candidate's expected gain over the base bid."""

    def __init__(self, data: dict[str, Any]) -> None:
        if list(data.get("features", ())) != list(NAMES):
            raise ValueError("the bid model was trained on other features than bid_features.NAMES")
        self.candidates: dict[str, tuple[float, list[Tree]]] = {
            name: (float(part["baseline"]), part["trees"])
            for name, part in data["candidates"].items()
            if name in OFFSETS
        }

    def gains(self, features: list[float]) -> dict[str, float]:
        """Per candidate name ("-2" .. "2", "nil"), its predicted points over the heuristic's bid."""
        return {
            name: baseline + sum(_leaf(tree, features) for tree in trees)
            for name, (baseline, trees) in self.candidates.items()
        }


def _leaf(tree: Tree, features: list[float]) -> float:
    node = tree[0]
    while len(node) == 4:
        node = tree[node[2] if features[node[0]] <= node[1] else node[3]]
    return float(node[0])


@cache
def shipped() -> BidModel:
    """The model in this package (read once per process)."""
    raw = resources.files("bots.samples").joinpath("bid_model.json.gz").read_bytes()
    return BidModel(json.loads(gzip.decompress(raw)))
