"""The sample bots: `random`, `heuristic` and `search` (see `bots.registry`)."""
