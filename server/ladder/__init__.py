"""The rated bot ladder: pure match-making and ratings, its SQLite tables, and the trio service.

- `ratings`: ratings from the points margins of the boards of completed matches, and their rebuild
  from history;
- `scheduler`: which available entrants meet, and who partners whom (pure, seeded);
- `duplicate`: the duplicate pair: one set of deal seeds, played twice with the teams swapped;
- `store`: the ladder's tables and queries (over the server's `Store`);
- `table`: the ladder's table (planned seeds, house bots, forfeits);
- `service`: the trio task that runs it all; `hooks`: the one-line entry points for the server.

See docs/ladder.md.
"""
