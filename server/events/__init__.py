"""Events: Swiss and knockout tournaments (issue 43). The pure core lives here beside the service.

- `settings`: how an event plays (`EventSettings`, `EventFormat`, `EntryKind`), validated, as JSON;
  each round's `BoardSet`;
- `plans`: entrants and a round's tables (`Entrant`, `TablePlan`, `IndividualTable`), as JSON;
- `pairing`: who meets whom each round (Swiss by pairs, individual, the knockout bracket) and
  `fill_field`, how many house entrants make a field whole;
- `scoring`: boards to matchpoints, standings, knockout matches (extra boards), the winner.

Those four are pure (no trio, no IO, no clock) and deterministic: the same stored plans and boards
give the same standings bit for bit. See docs/events.md.
"""
