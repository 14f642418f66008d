"""The policy of an event's table: the ladder's `PlannedTablePolicy`, set for an event's rules.

An event's table differs from a lobby's as a ladder match's does (`server.planned_table`), so it is
the same policy object, given what the event decides:

- each deal's seed comes from the round's board set (`EventSettings.board_set`: SHA-256 of the
  event's secret and the round), so every table of a round, and the same table after a restart,
  is dealt the same boards; a knockout's extra board is a later deal of the same set;
- house entrants' seats are the server's bots; the other seats are reserved for the entrants'
  accounts (anyone may watch);
- a dropped connection is held for the table's grace like any other, and a clock that runs out
  is no forfeit by itself: the seat becomes the fallback's, and the event counts it a forfeit,
  only once the grace (or, for a seat never taken, the event's `no_show_grace`) is over. A `leave`
  mid-game forfeits at once;
- spectators are told through the round's `DealGate`: a deal is shown only once every table of
  the round has played it.
"""

from __future__ import annotations

from server.accounts import Account
from server.deal_gate import DealGate
from server.events.settings import EventSettings
from server.planned_table import PlannedTablePolicy


def event_policy(
    settings: EventSettings,
    secret: bytes,
    round_no: int,
    *,
    house: dict[int, tuple[str, Account]],
    reserved: dict[int, int],
    gate: DealGate | None,
    index: int,
    first_deal: int = 0,
) -> PlannedTablePolicy:
    """The policy of one table of round `round_no`: `house` seats (seat -> bot spec and account),
    `reserved` seats (seat -> account id), its `index` at the round's `gate`; its first deal is
    deal `first_deal` of the round's board set (0; a knockout's extra board: a later one)."""
    boards = settings.board_set(secret, round_no)

    def deal_seed(deal: int) -> bytes:
        return boards.deal_seed(first_deal + deal)

    return PlannedTablePolicy(
        deal_seed=deal_seed,
        house=house,
        reserved=reserved,
        max_timeouts=None,
        gate=gate,
        table=index,
        forfeit_drops=False,
        what="an event's table",
    )
