"""The rated bot ladder: pure match-making and ratings, what it stores, and the trio service.

- `settings`: how the ladder plays (`LadderSettings`, carried by `ServerConfig.ladder_settings`);
- `scheduler`: which available entrants meet, and who partners whom (pure, seeded);
- `duplicate`: board sets (each match's deals, shared by twins), a table's result, and the old
  duplicate pairs still in the history;
- `belief`, `ratings`: the joint belief over every entrant's skill, rated from each deal's margin,
  and its rebuild from history;
- `policy`: the ladder's `TablePolicy` (the board set's seeds, house bots, reserved seats,
  forfeits, the spectators' gate); `gate`: what a twin table's spectators may see, and when;
- `store`: what the ladder keeps, as functions over a transaction (`server.storage.Tx`);
  `records`: a finished match's hand records as `ladder_records` sends them;
- `desk`: the stored history's answers (`LadderArchive`) and `NoLadder`, the desk of a server
  that runs none; `house`: `spades-server ladder add-house-bots`;
- `service`: the trio task that runs it all (`LadderService`, the server's `LadderDesk`).

See docs/ladder.md ("How the ladder plugs into the server").
"""
