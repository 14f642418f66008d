"""How the ladder plays: its settings (a value the server's configuration carries)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.ruleset import Ruleset
from server.ladder.scheduler import SchedulerSettings


@dataclass(frozen=True)
class LadderSettings:
    """How the ladder plays. The preset must seat four in two partnerships."""

    preset: str = "standard"
    options: dict[str, Any] = field(default_factory=dict)
    hands: int = 4  # deals per match (twins are dealt the same ones)
    interval: float = 1.0  # seconds between scheduling rounds when nothing wakes the loop
    max_matches: int = 16  # matches running at once
    max_timeouts: int = 3  # clock expiries in one match that forfeit it
    max_per_owner: int = 8  # entrants one network address may have on the ladder at once
    cooldown: float = 60.0  # seconds a timeout forfeiter sits out
    house_poll: float = 5.0  # seconds between looks for house bots the CLI entered meanwhile
    house_only: bool = False  # may four house bots play each other (burns CPU for little)
    # Seconds a match that would start alone waits for a twin (a second match to share its deals)
    # while other entrants are still playing: twins then start, and finish, together.
    twin_wait: float = 3.0
    partner_memory: int = 8  # recent partnerships remembered for rotation
    seed: int | None = None  # fixed: reproducible schedules and deals (tests); None: secret
    scheduler: SchedulerSettings = field(default_factory=SchedulerSettings)
    tau: float | None = None  # rating drift per square root of a day; None: ratings.DEFAULT_TAU

    def table_options(self) -> dict[str, Any]:
        """The preset's options with a fixed number of hands (no target score) and a fixed first
        dealer: a duplicate board is the same deal from the same dealer at every table that plays
        it (the seat of the dealer, not a draw from the seed)."""
        return {**self.options, "target_score": 0, "max_hands": self.hands, "first_dealer": 0}

    def ruleset(self) -> Ruleset:
        """The rules of every ladder game; raises `ValueError` for a preset the ladder cannot use."""
        ruleset = Ruleset.from_preset(self.preset, **self.table_options())
        if ruleset.players != 4 or not ruleset.partnerships:
            raise ValueError(
                f"the ladder needs a four-player partnership preset, not {self.preset}"
            )
        return ruleset
