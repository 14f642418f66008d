"""Who plays an event and where they sit in a round: the plain values pairing makes and scoring
reads (`server.events.pairing` re-exports them; they live apart so that pairing may rank the field
with `server.events.scoring` without an import cycle).

Seats follow the ladder's duplicate: North-South are seats 0 and 2, East-West seats 1 and 3; the
dealer of every board is seat 0. A round's plan is stored as JSON (`plan_to_json`), so a restarted
server seats the same entrants at the same tables.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

#: The seats of each direction (partners sit opposite).
NS_SEATS = (0, 2)
EW_SEATS = (1, 3)


@dataclass(frozen=True, slots=True)
class Entrant:
    """One entrant: a pair of accounts (pairs formats) or one account (individual).

    `key` names it everywhere (plans, standings, the store); `seed` is its rank for ties and the
    bracket, 1 the highest (the service numbers entrants in registration order and house entrants
    after them); `house` marks the server's bots that fill the field."""

    key: str
    members: tuple[int, ...]
    seed: int
    house: bool = False


@dataclass(frozen=True, slots=True)
class TablePlan:
    """One table of a pairs round: the entrant sitting North-South (seats 0, 2) and East-West."""

    table_no: int
    north_south: str
    east_west: str


@dataclass(frozen=True, slots=True)
class IndividualTable:
    """One table of an individual round: the entrant at each seat 0..3 (0 and 2 partners)."""

    table_no: int
    seats: tuple[str, str, str, str]

    @property
    def north_south(self) -> tuple[str, str]:
        return (self.seats[0], self.seats[2])

    @property
    def east_west(self) -> tuple[str, str]:
        return (self.seats[1], self.seats[3])


Plan = TablePlan | IndividualTable
#: Every round's tables so far, by round number (1-based).
Plans = Mapping[int, Sequence[Plan]]


def sides(plan: Plan) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The entrants of each direction at this table: (North-South, East-West)."""
    if isinstance(plan, TablePlan):
        return ((plan.north_south,), (plan.east_west,))
    return (plan.north_south, plan.east_west)


def plan_to_json(plan: Plan) -> dict[str, Any]:
    if isinstance(plan, TablePlan):
        return {"table": plan.table_no, "ns": plan.north_south, "ew": plan.east_west}
    return {"table": plan.table_no, "seats": list(plan.seats)}


def plan_from_json(data: Mapping[str, Any]) -> Plan:
    """The stored form back; raises `ValueError` for one that is not a table's plan."""
    try:
        table_no = int(data["table"])
        if "seats" in data:
            seats = tuple(str(s) for s in data["seats"])
            if len(seats) != 4:
                raise ValueError(f"an individual table seats four, not {len(seats)}")
            return IndividualTable(table_no, (seats[0], seats[1], seats[2], seats[3]))
        return TablePlan(table_no, str(data["ns"]), str(data["ew"]))
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a table's plan: {exc}") from None


def entrants_by_key(entrants: Sequence[Entrant]) -> dict[str, Entrant]:
    """`entrants` by key; raises `ValueError` when two share one."""
    out: dict[str, Entrant] = {}
    for entrant in entrants:
        if entrant.key in out:
            raise ValueError(f"two entrants share the key {entrant.key!r}")
        out[entrant.key] = entrant
    return out
