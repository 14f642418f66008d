"""The rated bot ladder: pure match-making and ratings, what it stores, and the trio service.

- `ratings`: ratings from the points margins of the boards of completed matches, and their rebuild
  from history;
- `scheduler`: which available entrants meet, and who partners whom (pure, seeded);
- `duplicate`: the duplicate pair: one set of deal seeds, played twice with the teams swapped;
- `store`: what the ladder keeps, as functions over a transaction (`server.storage.Tx`);
- `table`: the ladder's table (planned seeds, house bots, forfeits);
- `service`: the trio task that runs it all; `hooks`: the one-line entry points for the server.

See docs/ladder.md.
"""
